package profile

import (
	"context"
	"errors"
	"fmt"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/datasets/tokenizer"
	"github.com/surgebench/surge/datasets/tokenizer/chattemplate"
	"github.com/surgebench/surge/datasets/tokenizer/hub"
	"github.com/surgebench/surge/metrics"
)

// chatTemplateInfo is run_info.tokenizer.chat_template: where the template
// came from and what it adds around a conversation (--apply-chat-template).
type chatTemplateInfo struct {
	Source string `json:"source"`
	// Fixed and Wrap are the probe's tokens a request and a message,
	// taken off synthetic turns.
	Fixed int `json:"fixed_tokens"`
	Wrap  int `json:"message_tokens"`
}

// chatCounter counts as the model's tokenizer does with its chat
// template's special tokens one token each, and a chat request's messages
// as the template renders them (metrics.ChatCounter).
type chatCounter struct {
	tok *tokenizer.Tokenizer
	tpl *chattemplate.Template
}

func (c chatCounter) Count(s string) int { return c.tpl.CountText(c.tok, s) }

func (c chatCounter) CountChat(msgs []metrics.ChatMessage) (int, error) {
	m := make([]chattemplate.Message, len(msgs))
	for i, x := range msgs {
		m[i] = chattemplate.Message(x)
	}
	return c.tpl.Count(c.tok, m)
}

// applyChatTemplate sets up --apply-chat-template once the tokenizer is
// known: it reads the model's chat template beside its tokenizer (the
// embedded Qwen3's for builtin, tokenizer_config.json or
// chat_template.jinja from the Hub cache or the Hub for a model id),
// measures its wrapping for the synthetic prompts (s.Dataset.ChatOverhead)
// and returns the counter that counts ISL on the rendered messages (nil
// under --use-server-token-count: the server's counts stand). A model whose
// template cannot be had or rendered is a usage error, before any request.
func applyChatTemplate(ctx context.Context, s *spec.Spec, builder datasets.Tokenizer, src *tokenizerSource) (metrics.TokenCounter, error) {
	t := &s.Tokenizer
	fail := func(err error) error {
		return &cmdline.UsageError{Err: fmt.Errorf("--apply-chat-template: %w", err)}
	}
	tok, _ := builder.(*tokenizer.Tokenizer)
	var tpl *chattemplate.Template
	var err error
	switch src.Source {
	case tokFallback:
		return nil, fail(fmt.Errorf("the tokenizer of %s could not be had (see the warning above): give --tokenizer PATH or builtin", t.Name))
	case tokBuiltin:
		if tok == nil { // --use-server-token-count skipped parsing it
			if tok, err = tokenizer.Default(); err != nil {
				return nil, err
			}
		}
		tpl, err = chattemplate.Embedded()
	case tokPath:
		tpl, err = chattemplate.Load(src.Path)
	default: // a Hub id, from the cache or downloaded
		tpl, err = hubChatTemplate(ctx, t.Name, hub.Options{Revision: t.Revision})
	}
	if err != nil {
		return nil, fail(err)
	}
	if tok == nil {
		return nil, fail(errors.New("no tokenizer to count with"))
	}
	fixed, wrap, err := tpl.Overheads(tok)
	if err != nil {
		return nil, fail(err)
	}
	s.Dataset.ChatOverhead = datasets.TemplateOverhead{Fixed: fixed, Wrap: wrap}
	src.ChatTemplate = &chatTemplateInfo{Source: tpl.Name(), Fixed: fixed, Wrap: wrap}
	if t.UseServerCount {
		return nil, nil
	}
	return chatCounter{tok: tok, tpl: tpl}, nil
}

// hubChatTemplate reads a Hub model's chat template: its
// tokenizer_config.json, and chat_template.jinja where the config has none.
func hubChatTemplate(ctx context.Context, repo string, o hub.Options) (*chattemplate.Template, error) {
	cfg, _, err := hub.Fetch(ctx, hub.Model, repo, chattemplate.ConfigName, o)
	if err != nil {
		return nil, err
	}
	tpl, err := chattemplate.Load(cfg)
	if errors.Is(err, chattemplate.ErrNoTemplate) {
		if _, _, jerr := hub.Fetch(ctx, hub.Model, repo, chattemplate.TemplateName, o); jerr == nil {
			return chattemplate.Load(cfg)
		}
	}
	return tpl, err
}
