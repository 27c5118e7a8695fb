package loadgen

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// TestOutputCapIgnored runs against a mock that, like some llama.cpp
// builds, ignores max_completion_tokens: each answer runs to 40 tokens for
// a cap of 8. The generator must warn once, when the first such stream
// ends (with its whole count), before the last one, and name the flag; --use-legacy-max-tokens (max_tokens)
// must fix it. The export's osl_mismatch metrics record the difference.
func TestOutputCapIgnored(t *testing.T) {
	t.Parallel()
	for _, legacy := range []bool{false, true} {
		name := "max_completion_tokens"
		if legacy {
			name = "max_tokens"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(mockserver.New(mockserver.Config{IgnoreMaxCompletionTokens: true, DefaultOutputTokens: 40}))
			defer ts.Close()
			var mu sync.Mutex
			var warnings []string
			var warnedAt int64
			var g *Generator
			ep := &endpoint.Endpoint{Kind: endpoint.Chat, Model: "m", Streaming: true, LegacyMaxTokens: legacy}
			s, sink := runOnce(t, ts.URL, ep, []Stage{{Limit: schedule.Constant(4), Count: 12}}, WithoutCapGuard(),
				func(gen *Generator) { g = gen },
				WithWarning(func(msg string) {
					mu.Lock()
					defer mu.Unlock()
					warnings = append(warnings, msg)
					warnedAt = g.Now()
				}))
			if s.Run[metrics.ErrorRequestCount] != 0 || len(sink.recs) != 12 {
				t.Fatalf("%d records, errors %+v", len(sink.recs), s.Errors)
			}
			mu.Lock()
			defer mu.Unlock()
			if legacy {
				if len(warnings) != 0 {
					t.Errorf("warnings %q with max_tokens, which the server honours", warnings)
				}
				if osl := s.Metrics[metrics.OSL]; osl.Min != 8 || osl.Max != 8 {
					t.Errorf("OSL %v..%v, want 8", osl.Min, osl.Max)
				}
				if got := s.Run[metrics.OSLMismatchCount]; got != 0 {
					t.Errorf("osl_mismatch_count %v, want 0", got)
				}
				return
			}
			if len(warnings) != 1 {
				t.Fatalf("%d warnings, want exactly one: %q", len(warnings), warnings)
			}
			for _, want := range []string{"asked for 8 tokens (max_completion_tokens)", "got 40 text events", "--use-legacy-max-tokens"} {
				if !strings.Contains(warnings[0], want) {
					t.Errorf("warning %q does not say %q", warnings[0], want)
				}
			}
			// Live: the warning came before the last stream ended.
			var lastEnd int64
			for _, r := range sink.recs {
				lastEnd = max(lastEnd, r.EndNs)
			}
			if warnedAt >= lastEnd {
				t.Errorf("warned at %d ns, after every stream had ended (%d ns)", warnedAt, lastEnd)
			}
			if got := s.Run[metrics.OSLMismatchCount]; got != 12 {
				t.Errorf("osl_mismatch_count %v, want 12", got)
			}
			if d := s.Metrics[metrics.OSLMismatch]; d.Avg != 400 || d.Unit != "%" {
				t.Errorf("osl_mismatch_diff_pct %+v, want avg 400%% ((40-8)/8)", d)
			}
		})
	}
}

// TestOverCapWarningAgreesWithTheGuard: with the cap guard on, an answer
// that ignores its cap of 8 is ended after 4 × 8 + 1 tokens, and the
// warning gives the count the guard's error gives (not the count at which
// it first ran past the cap).
func TestOverCapWarningAgreesWithTheGuard(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(mockserver.New(mockserver.Config{IgnoreMaxCompletionTokens: true, DefaultOutputTokens: 40}))
	defer ts.Close()
	var mu sync.Mutex
	var warnings []string
	ep := &endpoint.Endpoint{Kind: endpoint.Chat, Model: "m", Streaming: true}
	_, sink := runOnce(t, ts.URL, ep, []Stage{{Limit: schedule.Constant(2), Count: 4}}, WithWarning(func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		warnings = append(warnings, msg)
	}))
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) != 1 {
		t.Fatalf("%d warnings, want one: %q", len(warnings), warnings)
	}
	got := CapGuardFactor*8 + 1
	for _, r := range sink.recs {
		if r.Err == nil || r.Err.Type != ErrOverCap {
			t.Fatalf("record error %+v, want %s", r.Err, ErrOverCap)
		}
		if want := fmt.Sprintf("(%d tokens for a cap of 8)", got); !strings.Contains(r.Err.Message, want) {
			t.Errorf("error %q does not say %s", r.Err.Message, want)
		}
	}
	if want := fmt.Sprintf("asked for 8 tokens (max_completion_tokens), got %d tokens, and the cap guard ended it", got); !strings.Contains(warnings[0], want) {
		t.Errorf("warning %q does not say %q", warnings[0], want)
	}
}
