package datasets

import (
	"testing"

	"github.com/surgebench/surge/datasets/tokenizer"
	"github.com/surgebench/surge/datasets/tokenizer/chattemplate"
)

// TestSyntheticTemplateOverhead: with a chat template's overhead the first
// turn's bare prompt gives up Fixed+Wrap tokens and later turns Wrap, so
// what Qwen3's template makes of a single-turn request is the ISL asked
// for; a tiny ISL keeps one token.
func TestSyntheticTemplateOverhead(t *testing.T) {
	tok, err := tokenizer.Default()
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := chattemplate.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	fixed, wrap, err := tpl.Overheads(tok)
	if err != nil {
		t.Fatal(err)
	}
	over := TemplateOverhead{Fixed: fixed, Wrap: wrap}
	d, err := Synthetic(SyntheticOptions{Count: 4, ISL: 100, Turns: 3, Seed: 3, Tokenizer: tok, Template: over})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range d.Conversations {
		for j, turn := range c.Turns {
			want := 100 - wrap
			if j == 0 {
				want -= fixed
			}
			if turn.InputTokens != want {
				t.Errorf("%s turn %d: %d bare tokens, want %d", c.ID, j, turn.InputTokens, want)
			}
		}
		n, err := tpl.Count(tok, []chattemplate.Message{{Role: "user", Content: c.Turns[0].Content()}})
		if err != nil {
			t.Fatal(err)
		}
		if n != 100 {
			t.Errorf("%s: the templated first turn is %d tokens, want the ISL 100", c.ID, n)
		}
	}
	bare, err := Synthetic(SyntheticOptions{Count: 1, ISL: 100, Seed: 3, Tokenizer: tok})
	if err != nil {
		t.Fatal(err)
	}
	if got := bare.Conversations[0].Turns[0].InputTokens; got != 100 {
		t.Errorf("no template: %d tokens, want 100", got)
	}
	tiny, err := Synthetic(SyntheticOptions{Count: 1, ISL: 4, Seed: 3, Tokenizer: tok, Template: over})
	if err != nil {
		t.Fatal(err)
	}
	if got := tiny.Conversations[0].Turns[0].InputTokens; got != 1 {
		t.Errorf("ISL 4 under an overhead of %d: %d tokens, want the floor 1", fixed+wrap, got)
	}
}
