package datasets

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSyntheticExactLengths checks every prompt has its sampled length
// under the tokenizer, with and without prefixes.
func TestSyntheticExactLengths(t *testing.T) {
	t.Parallel()
	tok := qwen(t)
	tests := []struct {
		name string
		o    SyntheticOptions
	}{
		{"tiny", SyntheticOptions{Count: 20, ISL: 1, Seed: 1}},
		{"spread", SyntheticOptions{Count: 40, ISL: 200, ISLStddev: 150, OSL: 50, OSLStddev: 10, Seed: 2}},
		{"longer than the ring", SyntheticOptions{Count: 3, ISL: 20000, Seed: 3}},
		{"prefix pool", SyntheticOptions{Count: 30, ISL: 100, Seed: 4, PrefixPoolSize: 4, PrefixLength: 64}},
		{"system prompt", SyntheticOptions{Count: 5, ISL: 50, Seed: 5, SharedSystemPromptLength: 300}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.o.Tokenizer = tok
			d, err := Synthetic(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Conversations) != tc.o.Count {
				t.Fatalf("%d conversations, want %d", len(d.Conversations), tc.o.Count)
			}
			prefixes := map[string]bool{}
			for _, c := range d.Conversations {
				tr := &c.Turns[0]
				got := len(tok.Encode(tr.Content()))
				if got < tr.InputTokens-1 || got > tr.InputTokens+1 {
					t.Errorf("%s: %d tokens, InputTokens %d", c.ID, got, tr.InputTokens)
				}
				if tc.o.ISLStddev == 0 && tr.InputTokens != tc.o.ISL+tc.o.PrefixLength {
					t.Errorf("%s: InputTokens %d, want %d", c.ID, tr.InputTokens, tc.o.ISL+tc.o.PrefixLength)
				}
				if tc.o.OSL > 0 && tr.MaxTokens < 1 {
					t.Errorf("%s: MaxTokens %d", c.ID, tr.MaxTokens)
				}
				if tc.o.PrefixPoolSize > 0 {
					prefixes[tr.Parts[0]] = true
					if n := len(tok.Encode(tr.Parts[0])); n != tc.o.PrefixLength {
						t.Errorf("%s: prefix of %d tokens", c.ID, n)
					}
				}
				if tc.o.SharedSystemPromptLength > 0 {
					if n := len(tok.Encode(c.SystemPrompt)); n != tc.o.SharedSystemPromptLength || c.SystemPrompt != d.Conversations[0].SystemPrompt {
						t.Errorf("%s: system prompt of %d tokens", c.ID, n)
					}
				}
			}
			if tc.o.PrefixPoolSize > 0 && len(prefixes) != tc.o.PrefixPoolSize {
				t.Errorf("%d distinct prefixes, want %d", len(prefixes), tc.o.PrefixPoolSize)
			}
		})
	}
}

// TestSyntheticSeeded checks the same seed gives identical prompts and
// another seed different ones, and that no two prompts share a start.
func TestSyntheticSeeded(t *testing.T) {
	t.Parallel()
	tok := qwen(t)
	build := func(seed uint64) []string {
		d, err := Synthetic(SyntheticOptions{Count: 200, ISL: 64, ISLStddev: 8, Seed: seed, Tokenizer: tok})
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, c := range d.Conversations {
			s = append(s, c.Turns[0].Content())
		}
		return s
	}
	a, b, c := build(9), build(9), build(10)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("same seed differs:\n%s", diff)
	}
	if cmp.Equal(a, c) {
		t.Error("seeds 9 and 10 gave the same prompts")
	}
	// Distinct heads: no two prompts share their first 3 tokens' text.
	starts := map[string]int{}
	for i, s := range a {
		f := strings.Fields(s)
		k := strings.Join(f[:3], " ")
		if j, dup := starts[k]; dup {
			t.Errorf("prompts %d and %d both start %q", j, i, k)
		}
		starts[k] = i
	}
}

// TestSyntheticErrors covers option validation.
func TestSyntheticErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		o    SyntheticOptions
		want string
	}{
		{SyntheticOptions{ISL: 1}, "Synthetic.Count must be positive, got 0"},
		{SyntheticOptions{Count: 1, ISL: 1, ISLStddev: -1}, "Synthetic.ISLStddev must not be negative, got -1"},
		{SyntheticOptions{Count: 1, ISL: 1, OSL: -1}, "Synthetic.OSL must not be negative, got -1"},
		{SyntheticOptions{Count: 1, ISL: 1, PrefixPoolSize: 2}, "Synthetic.PrefixPoolSize and the prefix length must be given together"},
		{SyntheticOptions{Count: 1, ISL: 1, SharedSystemPromptLength: -2}, "Synthetic.SharedSystemPromptLength must not be negative, got -2"},
	}
	for _, tc := range tests {
		if _, err := Synthetic(tc.o); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: got %v, want %q", tc.o, err, tc.want)
		}
	}
}

// TestCorpusTokenizesCleanly checks the property exactness rests on: the
// ring encodes to the sum of its sentences' tokens.
func TestCorpusTokenizesCleanly(t *testing.T) {
	t.Parallel()
	tok := qwen(t)
	p, err := newPrompter(tok, 1)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tok.Encode(p.ring)); n != p.ringTok {
		t.Errorf("ring encodes to %d tokens, sentences sum to %d", n, p.ringTok)
	}
	h := p.head(123456, 3, 3)
	if n := len(tok.Encode(h)); n != 3 {
		t.Errorf("head %q is %d tokens", h, n)
	}
}
