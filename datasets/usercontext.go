package datasets

import (
	"fmt"
	"strings"
)

// addUserContexts gives every conversation of a synthetic dataset a user
// context prompt of its own, n tokens cut from the corpus with a distinct
// head (AIPerf's --user-context-prompt-length: sent as a user message
// after the system prompt, before the turns, in every request of the
// conversation).
func addUserContexts(d *Dataset, o *Options) error {
	n := o.UserContextLength
	if n <= 0 {
		return nil
	}
	if err := tokensOption("UserContextLength", n); err != nil {
		return err
	}
	if d.Type != TypeSynthetic {
		return optionErrorf("UserContextLength", "shapes synthetic prompts, not a %s dataset", d.Type)
	}
	if o.Synthetic.PrefixPoolSize > 0 || o.Synthetic.PrefixLength > 0 {
		return optionErrorf("UserContextLength", "excludes the prefix prompt pool (give one way to share context)")
	}
	corpus, err := promptCorpus(o.PromptCorpus)
	if err != nil {
		return err
	}
	p, err := newCorpusPrompter(o.Tokenizer, o.Seed^0x75736572, corpus) // "user"
	if err != nil {
		return fmt.Errorf("user context prompts: %w", err)
	}
	digits := p.digits(int64(len(d.Conversations)))
	for i := range d.Conversations {
		start := int(mix64(uint64(i)^o.Seed) % uint64(len(p.starts)))
		parts, _ := p.prompt(nil, int64(i), digits, n, start)
		d.Conversations[i].UserContext = strings.Join(parts, "")
	}
	return nil
}
