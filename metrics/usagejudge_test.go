package metrics

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
)

// answer is a successful non-streamed record: its text has n words (the
// words tokenizer's count), its prompt sent prompt tokens, its usage says
// usage (nil: none) and it asked for at most capTokens.
func answer(i, n, sent, capTokens int, usage *Usage) *Record {
	r := &Record{Index: int64(i), RequestID: fmt.Sprintf("r%d", i), SentNs: 1e6, EndNs: 50e6, TokenNs: []int64{50e6},
		FirstContentNs: 50e6, Text: strings.TrimSpace(strings.Repeat(fmt.Sprintf("w%d ", i), n)), InputTokens: sent,
		RequestedOSL: capTokens}
	if usage != nil {
		r.Usage = *usage
	}
	return r
}

func usage(prompt, completion int) *Usage {
	return &Usage{Present: true, PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion,
		Fields: UsagePromptField | UsageCompletionField | UsageTotalField}
}

// TestUsageJudge: the signs that give a server's usage away, and the
// usage of real servers that gives none.
func TestUsageJudge(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		recs []*Record
		sign string // "": believed
	}{
		// koboldcpp 1.76: 100/100/200 whatever was asked or generated.
		{"koboldcpp's constant, a cap of 32", []*Record{answer(0, 32, 40, 32, usage(100, 100)), answer(1, 32, 40, 32, usage(100, 100))}, SignOverCap},
		{"koboldcpp's constant, no cap, answers of different lengths", []*Record{answer(0, 12, 40, 0, usage(100, 100)), answer(1, 70, 40, 0, usage(100, 100))}, SignSameUsage},
		{"koboldcpp's constant, no cap, answers of one length far from it", []*Record{answer(0, 400, 40, 0, usage(100, 100)), answer(1, 398, 40, 0, usage(100, 100))}, SignSameUsage},
		{"koboldcpp's constant, prompts of different lengths", []*Record{answer(0, 100, 30, 0, usage(100, 100)), answer(1, 100, 90, 0, usage(100, 100))}, SignSamePrompt},
		// Real servers.
		{"usage that tracks the text", []*Record{answer(0, 30, 40, 0, usage(52, 31)), answer(1, 12, 70, 0, usage(83, 12))}, ""},
		{"answers that all hit the cap, one prompt length", []*Record{answer(0, 32, 40, 32, usage(52, 32)), answer(1, 33, 40, 32, usage(52, 32)), answer(2, 31, 40, 32, usage(52, 32))}, ""},
		// Random text re-tokenizes a few tokens off the count of answers
		// that all hit the cap (distributed-llama's: 31 to 46 for 32).
		{"cap-hit answers whose re-tokenized counts spread", []*Record{answer(0, 28, 40, 32, usage(52, 32)), answer(1, 40, 40, 32, usage(52, 32)), answer(2, 46, 40, 32, usage(52, 32))}, ""},
		{"a constant between the answers' counts is too close to tell from re-tokenizing", []*Record{answer(0, 90, 40, 0, usage(100, 100)), answer(1, 130, 40, 0, usage(100, 100))}, ""},
		{"a server that ran past the cap streams the text too", []*Record{answer(0, 100, 40, 32, usage(52, 100))}, ""},
		{"a cap that the usage misses by a token or two", []*Record{answer(0, 32, 40, 32, usage(52, 34))}, ""},
		{"prompts of different lengths both cut to the context", []*Record{answer(0, 10, 3000, 0, usage(1024, 10)), answer(1, 20, 5000, 0, usage(1024, 20))}, ""},
		{"the same answer twice (a deterministic server)", []*Record{answer(0, 12, 40, 0, usage(100, 100)), answer(0, 12, 40, 0, usage(100, 100))}, ""},
		{"hidden reasoning counted in completion_tokens", []*Record{
			answer(0, 20, 40, 0, &Usage{Present: true, PromptTokens: 52, CompletionTokens: 500, ReasoningTokens: 480, Fields: UsagePromptField | UsageCompletionField | UsageReasoningField}),
			answer(1, 22, 40, 0, &Usage{Present: true, PromptTokens: 52, CompletionTokens: 502, ReasoningTokens: 480, Fields: UsagePromptField | UsageCompletionField | UsageReasoningField}),
		}, ""},
		{"no usage", []*Record{answer(0, 12, 40, 32, nil), answer(1, 40, 40, 32, nil)}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			j := newUsageJudge()
			var got *UsageDistrust
			for _, r := range tc.recs {
				if o, ok := j.observe(r, countOutput(r, words{}), words{}); ok {
					got, _ = j.judge(&o)
				}
			}
			switch {
			case tc.sign == "" && got != nil:
				t.Errorf("usage not believed: %+v", got)
			case tc.sign != "" && (got == nil || got.Sign != tc.sign):
				t.Errorf("verdict %+v, want sign %s", got, tc.sign)
			}
		})
	}
}

// recordSink keeps the records and values a collector hands its sinks.
type recordSink struct {
	mu   sync.Mutex
	recs []*Record
	vals []Values
}

func (s *recordSink) WriteRecord(r *Record, v *Values, _ bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs, s.vals = append(s.recs, r), append(s.vals, *v)
}

// TestUnbelievableUsageEndToEnd: koboldcpp's constant usage through a
// collector. Every request, the first too (held until a second could
// judge it), counts its output with the tokenizer and says so; one
// warning names the sign; no prompt-cut or over-cap verdict rests on the
// usage. The same collector believes a server whose usage tracks the text.
func TestUnbelievableUsageEndToEnd(t *testing.T) {
	t.Parallel()
	for _, shards := range []int{1, 2} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			t.Parallel()
			sink := &recordSink{}
			var live []string
			var mu sync.Mutex
			c := NewCollector(WithShards(shards), WithTokenizer(words{}), WithSink(sink),
				WithLiveWarning(func(m string) { mu.Lock(); live = append(live, m); mu.Unlock() }))
			lengths := []int{32, 28, 32, 30}
			for i, n := range lengths {
				r := answer(i, n, 400, 32, usage(100, 100)) // a prompt of 400 "cut" to 100
				r.UsageOverrun = "responses run past the requested output length: request r0 asked for 32 tokens (max_tokens), got 100 completion tokens by the server's usage"
				c.Add(r)
			}
			s := c.Close()
			if len(sink.recs) != len(lengths) {
				t.Fatalf("%d records reached the sink, want %d", len(sink.recs), len(lengths))
			}
			for i, v := range sink.vals {
				r := sink.recs[i]
				if v.Source != SourceTokenizer || v.OSL != float64(lengths[r.Index]) || v.Distrust == nil || v.Truncated || !math.IsNaN(v.UsageOSL) {
					t.Errorf("request %d: OSL %v from %s (distrust %v, truncated %v, usage OSL %v), want %d from the tokenizer",
						r.Index, v.OSL, v.Source, v.Distrust, v.Truncated, v.UsageOSL, lengths[r.Index])
				}
			}
			if s.UsageDistrust == nil || s.UsageDistrust.Sign != SignOverCap || s.UsageIgnored != 4 || s.TokenSource != SourceTokenizer {
				t.Errorf("summary: distrust %+v, %d ignored, source %s", s.UsageDistrust, s.UsageIgnored, s.TokenSource)
			}
			if _, ok := s.Run[PromptTruncatedCount]; ok {
				t.Errorf("prompt_truncated_count %v rests on the usage", s.Run[PromptTruncatedCount])
			}
			w := warningWith(t, s.Warnings, "usage is not believable")
			if !strings.Contains(w, "asked for at most 32 output tokens and its usage says 100 completion tokens") {
				t.Errorf("the warning does not name the sign's counts: %s", w)
			}
			for _, w := range append(s.Warnings, live...) {
				if strings.Contains(w, "not believable") {
					continue
				}
				if strings.Contains(w, "cut") || strings.Contains(w, "run past") || strings.Contains(w, "disagree") {
					t.Errorf("a verdict rests on the usage: %s", w)
				}
			}
			if n := strings.Count(strings.Join(s.Warnings, "\n"), "not believable"); n != 1 {
				t.Errorf("%d usage warnings, want 1", n)
			}
		})
	}
	// A believable server: usage counts, its overrun warned of.
	c := NewCollector(WithShards(2), WithTokenizer(words{}))
	for i := range 3 {
		r := answer(i, 40, 30, 32, usage(42, 40))
		r.UsageOverrun = "responses run past the requested output length: request r0 asked for 32 tokens (max_tokens), got 40 completion tokens by the server's usage"
		c.Add(r)
	}
	s := c.Close()
	if s.UsageDistrust != nil || s.TokenSource != SourceUsage {
		t.Errorf("believable usage: distrust %+v, source %s", s.UsageDistrust, s.TokenSource)
	}
	warningWith(t, s.Warnings, "run past the requested output length")
}

// TestHeldRecordAlone: a run's only record with usage is held for a
// second that never comes, and taken in at Close, its usage believed.
func TestHeldRecordAlone(t *testing.T) {
	t.Parallel()
	sink := &recordSink{}
	c := NewCollector(WithShards(1), WithTokenizer(words{}), WithSink(sink))
	c.Add(answer(0, 12, 40, 0, usage(52, 12)))
	s := c.Close()
	if len(sink.recs) != 1 || s.Run[RequestCount] != 1 || s.TokenSource != SourceUsage {
		t.Errorf("%d records, request_count %v, source %s", len(sink.recs), s.Run[RequestCount], s.TokenSource)
	}
}

// TestVerdictsSurviveTheState: the usage verdict and the tokens per event
// travel in the state sidecar, so a merged or re-read run says them too.
func TestVerdictsSurviveTheState(t *testing.T) {
	t.Parallel()
	c := NewCollector(WithShards(2), WithTokenizer(words{}))
	c.Add(answer(0, 32, 40, 32, usage(100, 100)))
	c.Add(answer(1, 30, 40, 32, usage(100, 100)))
	c.Add(eventStream(2, []string{strings.Repeat("w ", 10), "x y ", "x y "}, 0))
	c.Close()
	b, err := json.Marshal(c.State())
	if err != nil {
		t.Fatal(err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	s := st.Summary()
	if s.UsageDistrust == nil || s.UsageDistrust.Sign != SignOverCap || s.UsageIgnored != 2 || s.TokensPerEvent == nil {
		t.Fatalf("read back: distrust %+v (%d ignored), tokens per event %+v", s.UsageDistrust, s.UsageIgnored, s.TokensPerEvent)
	}
	warningWith(t, s.Warnings, "usage is not believable")
	warningWith(t, s.Warnings, "sends its tokens in batches")
}
