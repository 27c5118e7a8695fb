package datasets

import (
	"strings"
	"testing"
	"time"

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

// TestSyntheticMultiTurn: AIPerf's synthetic conversations: a sampled
// number of turns each, every turn a prompt of its own exact length, the
// prefix on the first turn only, think times before the later turns.
func TestSyntheticMultiTurn(t *testing.T) {
	t.Parallel()
	tok := qwen(t)
	o := SyntheticOptions{Count: 60, ISL: 40, OSL: 8, Seed: 9, Turns: 3, TurnsStddev: 1,
		TurnDelay: 200 * time.Millisecond, TurnDelayStddev: 50 * time.Millisecond,
		PrefixPoolSize: 2, PrefixLength: 16, Tokenizer: tok}
	d, err := Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	turns, heads := 0, map[string]bool{}
	var delays []time.Duration
	for _, c := range d.Conversations {
		if len(c.Turns) < 1 {
			t.Fatalf("%s has no turns", c.ID)
		}
		turns += len(c.Turns)
		for j, tr := range c.Turns {
			want := o.ISL
			if j == 0 {
				want += o.PrefixLength
				if tr.Delay != 0 {
					t.Errorf("%s turn 0 waits %s, want no delay before a conversation's first turn", c.ID, tr.Delay)
				}
			} else {
				delays = append(delays, tr.Delay)
				if tr.Delay%time.Millisecond != 0 {
					t.Errorf("%s turn %d delay %s is not whole milliseconds", c.ID, j, tr.Delay)
				}
			}
			if got := len(tok.Encode(tr.Content())); tr.InputTokens != want || got < want-1 || got > want+1 {
				t.Errorf("%s turn %d: %d tokens, InputTokens %d, want %d", c.ID, j, got, tr.InputTokens, want)
			}
			head := tr.Parts[0]
			if j == 0 {
				head = tr.Parts[1]
			}
			if heads[head] {
				t.Errorf("%s turn %d repeats another prompt's head %q", c.ID, j, head)
			}
			heads[head] = true
		}
	}
	if avg := float64(turns) / float64(len(d.Conversations)); avg < 2.5 || avg > 3.5 {
		t.Errorf("%.2f turns a conversation on average, want about 3", avg)
	}
	var sum time.Duration
	for _, dl := range delays {
		sum += dl
	}
	if avg := sum / time.Duration(len(delays)); avg < 170*time.Millisecond || avg > 230*time.Millisecond {
		t.Errorf("average delay %s, want about 200ms", avg)
	}
	// One turn a conversation draws exactly the prompts it always drew.
	one, err := Synthetic(SyntheticOptions{Count: 5, ISL: 40, Seed: 9, Tokenizer: tok})
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Synthetic(SyntheticOptions{Count: 5, ISL: 40, Seed: 9, Turns: 1, TurnDelay: time.Second, Tokenizer: tok})
	if diff := cmp.Diff(one, again); diff != "" {
		t.Errorf("one-turn conversations changed with the turn options (-want +got):\n%s", diff)
	}
}

func TestSampler(t *testing.T) {
	t.Parallel()
	const n = 7
	draw := func(strategy string, seed uint64, k int) []int {
		s := NewSampler(strategy, n, seed)
		out := make([]int, k)
		for i := range out {
			out[i] = s.Pick(i)
		}
		return out
	}
	if got := draw(SampleSequential, 1, 10); !cmp.Equal(got, []int{0, 1, 2, 3, 4, 5, 6, 0, 1, 2}) {
		t.Errorf("sequential: %v", got)
	}
	sh := draw(SampleShuffle, 1, 3*n)
	for pass := range 3 {
		seen := map[int]bool{}
		for _, v := range sh[pass*n : (pass+1)*n] {
			seen[v] = true
		}
		if len(seen) != n {
			t.Errorf("shuffle pass %d %v is not a permutation", pass, sh[pass*n:(pass+1)*n])
		}
	}
	if cmp.Equal(sh[:n], sh[n:2*n]) || cmp.Equal(sh[:n], []int{0, 1, 2, 3, 4, 5, 6}) {
		t.Errorf("shuffle passes %v: want each pass shuffled anew", sh)
	}
	r := draw(SampleRandom, 1, 200)
	counts := map[int]int{}
	for _, v := range r {
		counts[v]++
	}
	if len(counts) != n || cmp.Equal(r[:n], draw(SampleRandom, 2, n)) {
		t.Errorf("random: %v", counts)
	}
	for _, st := range []string{SampleRandom, SampleShuffle} {
		if !cmp.Equal(draw(st, 5, 30), draw(st, 5, 30)) {
			t.Errorf("%s is not reproducible from its seed", st)
		}
	}
	// Picks out of order (a later stage planned first) agree with in order.
	s := NewSampler(SampleShuffle, n, 1)
	if a, b := s.Pick(15), s.Pick(2); a != sh[15] || b != sh[2] {
		t.Errorf("out-of-order picks %d %d, want %d %d", a, b, sh[15], sh[2])
	}
	for _, bad := range []string{"roundrobin", "seq"} {
		if _, err := ParseSampling(bad); err == nil {
			t.Errorf("ParseSampling(%q) accepted it", bad)
		}
	}
	if v, err := ParseSampling(" Shuffle "); err != nil || v != SampleShuffle {
		t.Errorf("ParseSampling(Shuffle) = %q, %v", v, err)
	}
}

func TestTurnDelayRatio(t *testing.T) {
	t.Parallel()
	f := writeFile(t, "m.jsonl", `{"turns": [{"text": "a"}, {"text": "b", "delay": 1000}]}`+"\n")
	d, rep, err := Load(Options{InputFile: f, TurnDelayRatio: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Conversations[0].Turns[1].Delay; got != 250*time.Millisecond {
		t.Errorf("delay %s, want 1s scaled to 250ms", got)
	}
	if !strings.Contains(strings.Join(rep.Lines, "\n"), "scaled by 0.25") {
		t.Errorf("report %q does not say the delays were scaled", rep.Lines)
	}
	// Removed from a trace, the delays are still known as recorded (a
	// replay's priming needs them).
	weka := Options{InputFile: "testdata/weka", CustomDatasetType: TypeWeka}
	asRecorded, _, err := Load(weka)
	if err != nil {
		t.Fatal(err)
	}
	weka.NoTurnDelays = true
	d, _, err = Load(weka)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range d.Conversations {
		for j, tn := range c.Turns {
			if want := asRecorded.Conversations[i].Turns[j].Delay; tn.Delay != 0 || tn.RecordedThink() != want {
				t.Errorf("%s turn %d, delays removed: delay %s, recorded %s; want 0 and %s", c.ID, j, tn.Delay, tn.RecordedThink(), want)
			}
		}
	}
	if _, _, err := Load(Options{InputFile: f, TurnDelayRatio: -1}); err == nil {
		t.Error("a negative ratio was accepted")
	}
}

// TestShuffleOfAnySize: past shuffleHeld conversations the shuffle holds
// no table: each pass is still a permutation, passes differ, and a pick
// out of order agrees.
func TestShuffleOfAnySize(t *testing.T) {
	t.Parallel()
	for _, n := range []uint64{1, 2, 3, 1000, 1023, 1024, 1025} {
		seen := make([]bool, n)
		for k := range n {
			v := shuffleAt(n, 7, k)
			if v >= n || seen[v] {
				t.Fatalf("n %d: position %d gives %d, out of range or twice", n, k, v)
			}
			seen[v] = true
		}
	}
	s := NewSampler(SampleShuffle, OnDemandLen, 3)
	a, b := s.Pick(5), s.Pick(OnDemandLen+5)
	if a == b || a < 0 || a >= OnDemandLen || s.Pick(5) != a {
		t.Errorf("picks %d, %d: want two passes' different, reproducible positions", a, b)
	}
	if s.perm != nil {
		t.Error("a shuffle of 2^40 conversations built a table")
	}
}
