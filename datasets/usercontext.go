package datasets

import (
	"context"
	"fmt"
	"strings"
)

// addUserContexts gives every conversation of a synthetic dataset a user
// context prompt of its own, n tokens cut from the corpus with a distinct
// head (AIPerf's --user-context-prompt-length: sent as a user message
// after the system prompt, before the turns, in every request of the
// conversation). A dataset built on demand gets each as it is built.
func addUserContexts(ctx context.Context, d *Dataset, o *Options) (*Dataset, error) {
	n := o.UserContextLength
	if n <= 0 {
		return d, nil
	}
	if err := tokensOption("UserContextLength", n); err != nil {
		return nil, err
	}
	if d.Type != TypeSynthetic {
		return nil, optionErrorf("UserContextLength", "shapes synthetic prompts, not a %s dataset", d.Type)
	}
	if o.Synthetic.PrefixPoolSize > 0 || o.Synthetic.PrefixLength > 0 {
		return nil, optionErrorf("UserContextLength", "excludes the prefix prompt pool (give one way to share context)")
	}
	corpus, err := promptCorpus(o.PromptCorpus)
	if err != nil {
		return nil, err
	}
	p, err := newCorpusPrompter(ctx, o.Tokenizer, o.Seed^0x75736572, corpus) // "user"
	if err != nil {
		return nil, fmt.Errorf("user context prompts: %w", err)
	}
	digits := p.digits(int64(d.Len()))
	return Each(d, func(i int, c *Conversation) {
		start := int(mix64(uint64(i)^o.Seed) % uint64(len(p.starts)))
		parts, _ := p.prompt(nil, int64(i), digits, n, start)
		c.UserContext = strings.Join(parts, "")
	}), nil
}
