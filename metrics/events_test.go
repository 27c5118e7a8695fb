package metrics

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// eventStream is a successful streamed record whose text events carry
// the words of events, one event every 20 ms after the first at 100 ms;
// usage, when given, says completion tokens.
func eventStream(i int, events []string, usageOSL int) *Record {
	r := &Record{Index: int64(i), SentNs: 1e6, Streamed: true}
	var text string
	for j, e := range events {
		text += e
		at := int64(100+20*j) * 1e6
		r.TokenNs = append(r.TokenNs, at)
		r.EventEnds = append(r.EventEnds, EventEnd(len(text), 0))
		r.EndNs = at
	}
	r.FirstContentNs, r.Text = r.TokenNs[0], text
	if usageOSL > 0 {
		r.Usage = Usage{Present: true, CompletionTokens: usageOSL, Fields: UsageCompletionField}
	}
	return r
}

// TestEventTokens: each event's tokens by the tokenizer's count of its
// text; a server that sends most of an answer in its first event
// (koboldcpp), or several tokens an event, has batched answers, whose ITL
// leaves the first event's tokens out; an answer in one event has no ITL.
func TestEventTokens(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		events  []string
		usage   int
		first   int // first event's tokens (0: not counted)
		batched bool
		itl     float64 // NaN: none
	}{
		{"one token an event", []string{"a ", "b ", "c ", "d "}, 0, 0, false, 20},
		// 10 tokens in the first event, then 2 an event: the 60 ms after
		// the first event are 6 tokens.
		{"koboldcpp: a first batch, then a few an event", []string{strings.Repeat("w ", 10), "x y ", "x y ", "x y "}, 0, 10, true, 10},
		// A first event of several tokens held back (koboldcpp's 350 ms
		// sleep), then one an event.
		{"a first batch of 5, then a token an event", []string{"a b c d e ", "f ", "g ", "h ", "i "}, 0, 5, true, 80.0 / 4},
		{"several tokens an event", []string{"a b c ", "d e f ", "g h i "}, 0, 3, true, 40.0 / 6},
		{"one event of several tokens has no ITL", []string{"a b c d e "}, 0, 5, true, math.NaN()},
		{"one event of one token", []string{"a "}, 0, 0, false, math.NaN()},
		// The server's usage gives OSL (12); the first event's share (10 of
		// 16 counted) leaves 8 tokens in it, 4 after it.
		{"usage's OSL, the tokenizer's shares", []string{strings.Repeat("w ", 10), "x y ", "x y ", "x y "}, 12, 10, true, 60.0 / 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := eventStream(0, tc.events, tc.usage)
			v := Compute(r, words{})
			if v.Events.First != tc.first || v.Batched != tc.batched {
				t.Errorf("first event %d tokens, batched %v; want %d, %v (%+v)", v.Events.First, v.Batched, tc.first, tc.batched, v.Events)
			}
			if math.IsNaN(tc.itl) != math.IsNaN(v.ITL) || !math.IsNaN(tc.itl) && math.Abs(v.ITL-tc.itl) > 1e-9 {
				t.Errorf("ITL %v, want %v", v.ITL, tc.itl)
			}
			if math.IsNaN(v.ITL) && !math.IsNaN(v.PerUser) {
				t.Errorf("no ITL but a per-user throughput %v", v.PerUser)
			}
		})
	}
}

// TestBatchedWarning: a run whose answers came in batches says what ITL
// means for the server, with the tokens-per-event distribution; one
// whose server sends a token an event says nothing of it.
func TestBatchedWarning(t *testing.T) {
	t.Parallel()
	c := NewCollector(WithShards(2), WithTokenizer(words{}))
	c.Add(eventStream(0, []string{strings.Repeat("w ", 10), "x y ", "x y ", "x y "}, 0))
	c.Add(eventStream(1, []string{strings.Repeat("w ", 20), "x ", "x y z "}, 0))
	c.Add(eventStream(2, []string{"a b c d e "}, 0))
	s := c.Close()
	tpe := s.TokensPerEvent
	if tpe == nil || tpe.Batched != 3 || tpe.Counted != 3 || tpe.Single != 1 || tpe.Max != 20 {
		t.Fatalf("tokens per event %+v, want 3 batched of 3, 1 in one event, up to 20", tpe)
	}
	// 8 events: 1 of one token, 4 of two, 1 of three, 1 of five, 1 of ten,
	// 1 of twenty (1, 2, 3-4, 5-8, 9-16, 17-32, 33+).
	if want := []int64{1, 3, 1, 1, 1, 1, 0}; !slices.Equal(tpe.Hist, want) {
		t.Errorf("events by tokens %v, want %v (%v)", tpe.Hist, want, tpe.Buckets)
	}
	w := warningWith(t, s.Warnings, "sends its tokens in batches")
	for _, want := range []string{"3 of 3 streamed answers", "up to 20", "ITL the server's delivery cadence", "1 answer came in one event and has no ITL", "17-32: 1"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning does not say %q: %s", want, w)
		}
	}
	if strings.Contains(strings.Join(s.Warnings, "\n"), "more tokens than chunks") {
		t.Errorf("the multi-token chunk warning repeats it: %q", s.Warnings)
	}
	// A token an event.
	c = NewCollector(WithShards(1), WithTokenizer(words{}))
	c.Add(eventStream(0, []string{"a ", "b ", "c "}, 0))
	if s := c.Close(); s.TokensPerEvent != nil {
		t.Errorf("a token an event: %+v", s.TokensPerEvent)
	}
}

// TestRetokenizedChunksAreNoise: a server that sends a token a chunk and
// no usage (distributed-llama's streams) has text that re-tokenizes to a
// few tokens more than its chunks: no warning says its chunks carried
// several tokens. The same excess by the server's usage is one.
func TestRetokenizedChunksAreNoise(t *testing.T) {
	t.Parallel()
	events := []string{"a ", "b ", "c ", "d ", "e ", "f ", "g ", "h ", "i ", "j ", "k ", "l ", "m ", "n ", "o ", "p ", "q ", "r ", "s ", "t b "}
	c := NewCollector(WithShards(1), WithTokenizer(words{}))
	c.Add(eventStream(0, events, 0)) // 21 words in 20 chunks
	s := c.Close()
	for _, w := range s.Warnings {
		if strings.Contains(w, "more tokens than chunks") || strings.Contains(w, "batches") {
			t.Errorf("re-tokenizing noise warned of: %s", w)
		}
	}
	c = NewCollector(WithShards(1), WithTokenizer(words{}))
	c.Add(eventStream(0, events, 21))
	warningWith(t, c.Close().Warnings, "1 requests had more tokens than chunks")
}
