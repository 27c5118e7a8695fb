package datasets

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAddPassagesShape checks the passages' count and token lengths under
// the tokenizer, that ISL grows by them when known, and that turns which
// came with passages keep theirs.
func TestAddPassagesShape(t *testing.T) {
	t.Parallel()
	tok := qwen(t)
	tests := []struct {
		name string
		o    PassageOptions
	}{
		{"one passage (AIPerf's default count)", PassageOptions{Count: 1, ISL: 550}},
		{"fixed", PassageOptions{Count: 4, ISL: 30, Seed: 1}},
		{"spread", PassageOptions{Count: 5, CountStddev: 3, ISL: 80, ISLStddev: 40, Seed: 2}},
		{"one-token passages", PassageOptions{Count: 2, ISL: 1, Seed: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := Synthetic(SyntheticOptions{Count: 30, ISL: 20, Seed: 9, Tokenizer: tok})
			if err != nil {
				t.Fatal(err)
			}
			d.Conversations[0].Turns[0].Passages = []string{"given"}
			d.Conversations[1].Turns[0].InputTokens = 0 // a length the dataset did not know
			tc.o.Tokenizer = tok
			if err := AddPassages(d, tc.o); err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			var counts []float64
			for i, c := range d.Conversations {
				tr := &c.Turns[0]
				switch i {
				case 0:
					if !cmp.Equal(tr.Passages, []string{"given"}) || tr.InputTokens != 20 {
						t.Errorf("a turn's own passages were changed: %q, ISL %d", tr.Passages, tr.InputTokens)
					}
					continue
				case 1:
					if tr.InputTokens != 0 {
						t.Errorf("an unknown ISL became %d", tr.InputTokens)
					}
				}
				if len(tr.Passages) < 1 {
					t.Fatalf("%s: no passages", c.ID)
				}
				if tc.o.CountStddev == 0 && len(tr.Passages) != tc.o.Count {
					t.Errorf("%s: %d passages, want %d", c.ID, len(tr.Passages), tc.o.Count)
				}
				counts = append(counts, float64(len(tr.Passages)))
				tokens := 0
				for _, p := range tr.Passages {
					n := len(tok.Encode(p))
					tokens += n
					if tc.o.ISLStddev == 0 && (n < tc.o.ISL-1 || n > tc.o.ISL) {
						t.Errorf("%s: a passage of %d tokens, want %d", c.ID, n, tc.o.ISL)
					}
					if seen[p] {
						t.Errorf("%s: passage repeated: %.40q", c.ID, p)
					}
					seen[p] = true
				}
				if i != 1 && math.Abs(float64(tr.InputTokens-20-tokens)) > float64(len(tr.Passages)) {
					t.Errorf("%s: ISL %d, want the query's 20 and the passages' %d", c.ID, tr.InputTokens, tokens)
				}
			}
			if tc.o.CountStddev > 0 && allSame(counts) {
				t.Errorf("every query has %v passages despite a stddev of %d", counts[0], tc.o.CountStddev)
			}
		})
	}
}

func allSame(xs []float64) bool {
	for _, x := range xs {
		if x != xs[0] {
			return false
		}
	}
	return true
}

// The same seed gives the same passages; another seed others.
func TestAddPassagesSeeded(t *testing.T) {
	t.Parallel()
	tok := qwen(t)
	build := func(seed uint64) *Dataset {
		d, err := Synthetic(SyntheticOptions{Count: 5, ISL: 10, Seed: 1, Tokenizer: tok})
		if err != nil {
			t.Fatal(err)
		}
		if err := AddPassages(d, PassageOptions{Count: 3, CountStddev: 1, ISL: 40, ISLStddev: 10, Seed: seed, Tokenizer: tok}); err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := cmp.Diff(build(7), build(7)); d != "" {
		t.Errorf("same seed, different passages:\n%s", d)
	}
	if cmp.Equal(build(7), build(8)) {
		t.Error("seeds 7 and 8 give the same passages")
	}
}

func TestAddPassagesOptionErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		o      PassageOptions
		option string
	}{
		{PassageOptions{Count: 0, ISL: 10}, "Passages.Count"},
		{PassageOptions{Count: 1, CountStddev: -1, ISL: 10}, "Passages.CountStddev"},
		{PassageOptions{Count: 1, ISL: 0}, "Passages.ISL"},
		{PassageOptions{Count: 1, ISL: 10, ISLStddev: -2}, "Passages.ISLStddev"},
	}
	for _, tc := range tests {
		d := &Dataset{Conversations: []Conversation{{Turns: []Turn{{Text: "q"}}}}}
		err := AddPassages(d, tc.o)
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Option != tc.option {
			t.Errorf("%+v: error %v, want one naming %s", tc.o, err, tc.option)
		}
	}
}
