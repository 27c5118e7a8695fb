package metrics

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// words counts space-separated words: a stand-in tokenizer.
type words struct{}

func (words) Count(s string) int { return len(strings.Fields(s)) }

// streamed is a successful streamed record of chunks text events whose
// usage says osl tokens.
func streamed(i int, text string, chunks, osl int) *Record {
	toks := make([]int64, chunks)
	for j := range toks {
		toks[j] = int64(10+j) * 1e6
	}
	return &Record{Index: int64(i), SentNs: 1e6, EndNs: toks[chunks-1] + 1e6, Streamed: true, TokenNs: toks, FirstContentNs: toks[0],
		Text: text, InputTokens: 8, Usage: Usage{Present: true, PromptTokens: 8, CompletionTokens: osl, Fields: UsagePromptField | UsageCompletionField}}
}

func warningWith(t *testing.T, warns []string, part string) string {
	t.Helper()
	i := slices.IndexFunc(warns, func(w string) bool { return strings.Contains(w, part) })
	if i < 0 {
		t.Fatalf("no warning says %q: %q", part, warns)
	}
	return warns[i]
}

// TestChunkWarningNamesTheCause: extra tokens that fit in the text's
// multi-byte characters are a token held back until its character was
// complete (llama.cpp), not speculative decoding; ASCII text cannot hide
// one.
func TestChunkWarningNamesTheCause(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		texts       []string
		want, never string
	}{
		// "sạch" holds 2 extra bytes, "纯" 2: one extra token each fits.
		{"all held back", []string{" sạch", "纯 x"}, "holds a token back until the next one completes its character", "speculative"},
		{"ASCII only", []string{"abc", "de f"}, "speculative decoding or batched sends", "completes its character"},
		{"mixed", []string{" sạch", "de f"}, "in 1 of them the extra tokens fit in their multi-byte characters", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := NewCollector(WithShards(1))
			for i, text := range tc.texts {
				c.Add(streamed(i, text, 2, 3)) // 3 tokens in 2 chunks
			}
			w := warningWith(t, c.Close().Warnings, "more tokens than chunks")
			if !strings.Contains(w, tc.want) || (tc.never != "" && strings.Contains(w, tc.never)) {
				t.Errorf("warning %q: want %q, never %q", w, tc.want, tc.never)
			}
		})
	}
	if got := heldBackBound("aé纯😀"); got != 1+2+3 {
		t.Errorf("heldBackBound = %d, want 6", got)
	}
}

// TestTokenizerWarningKnowsTheModelsOwn: counts 20% apart ask whether the
// tokenizer is the model's only when nobody said it was.
func TestTokenizerWarningKnowsTheModelsOwn(t *testing.T) {
	t.Parallel()
	for _, own := range []bool{false, true} {
		opts := []Option{WithShards(1), WithTokenizer(words{})}
		if own {
			opts = append(opts, WithModelTokenizer())
		}
		c := NewCollector(opts...)
		for i := range 3 {
			c.Add(streamed(i, "one two three four", 4, 5)) // 4 words, usage 5
		}
		w := warningWith(t, c.Close().Warnings, "output token counts disagree")
		asks := strings.Contains(w, "not known to be the model's: give the model's with --tokenizer")
		if asks == own || (own && !strings.Contains(w, "the tokenizer is the model's")) {
			t.Errorf("model's own %v: %q", own, w)
		}
		// The state's sidecar (surge merge) keeps what the run knew.
		b, err := json.Marshal(c.State())
		if err != nil {
			t.Fatal(err)
		}
		var back State
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if w2 := warningWith(t, back.Summary().Warnings, "output token counts disagree"); w2 != w {
			t.Errorf("after the state's round trip: %q, want %q", w2, w)
		}
	}
}

// TestEmptyResponsesCountedAndWarned: answers with no output are errors,
// counted by the summary and warned of once.
func TestEmptyResponsesCountedAndWarned(t *testing.T) {
	t.Parallel()
	c := NewCollector(WithShards(1))
	c.Add(streamed(0, "a b", 2, 2))
	for i := 1; i <= 3; i++ {
		c.Add(&Record{Index: int64(i), SentNs: 1e6, EndNs: 5e6, Streamed: true,
			Err: &Error{Code: 200, Type: ErrEmptyResponse, Message: "the response ended without any output"}})
	}
	s := c.Close()
	if s.EmptyResponses() != 3 || s.Run[ErrorRequestCount] != 3 || s.Run[RequestCount] != 1 {
		t.Errorf("empty %d, errors %v, successes %v; want 3, 3, 1", s.EmptyResponses(), s.Run[ErrorRequestCount], s.Run[RequestCount])
	}
	if w := warningWith(t, s.Warnings, "3 responses ended with no tokens"); !strings.Contains(w, "outside latency, OSL and goodput") {
		t.Errorf("warning %q", w)
	}
	if osl := s.Metrics[OSL]; osl.Count != 1 || osl.Avg != 2 {
		t.Errorf("OSL %+v, want the one answer's 2", osl)
	}
}

// TestAllErrorRunHasItsDuration: a run none of whose requests succeeded
// still took its time: benchmark_duration is its requests' span (the
// first sent to the last ended), not 0, and no throughput is made of it.
func TestAllErrorRunHasItsDuration(t *testing.T) {
	t.Parallel()
	c := NewCollector(WithShards(2))
	for i := range 4 {
		c.Add(&Record{Index: int64(i), SentNs: int64(i+1) * 1e9, EndNs: int64(i+1)*1e9 + 5e8, Streamed: true,
			Err: &Error{Code: 200, Type: "stream_error", Message: "stream cut in the middle of an event"}})
	}
	s := c.Close()
	if got := s.Run[BenchmarkDuration]; got != 3.5 {
		t.Errorf("benchmark_duration %v, want 3.5 (1 s to 4.5 s)", got)
	}
	if _, ok := s.Run[RequestThroughput]; ok {
		t.Errorf("request_throughput %v of a run with no success", s.Run[RequestThroughput])
	}
}
