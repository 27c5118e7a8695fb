package export

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/surgebench/surge/metrics"
)

// TestServerTokenCounts: the server's counters beside surge's counts, in
// the console's one line and the summary's server_token_counts; the
// warmup counts on surge's side only when the server's window covered it.
func TestServerTokenCounts(t *testing.T) {
	t.Parallel()
	p := func(v float64) *float64 { return &v }
	summary := func() *metrics.Summary {
		return &metrics.Summary{
			Run: map[metrics.Tag]float64{metrics.RequestCount: 9, metrics.ErrorRequestCount: 1,
				metrics.TotalISL: 900, metrics.TotalErrorISL: 100, metrics.TotalOSL: 450, metrics.TotalUsageCacheRead: 380},
			Warmup: &metrics.Summary{Run: map[metrics.Tag]float64{metrics.RequestCount: 1, metrics.TotalISL: 100, metrics.TotalOSL: 50}},
		}
	}
	for _, tc := range []struct {
		name   string
		server metrics.ServerTokens
		line   string
		json   map[string]any
	}{
		{"profile window", metrics.ServerTokens{Prompt: p(1000), Output: p(500), CachedPrompt: p(400), Families: []string{"vllm"}},
			"Server counted 1000 prompt / 500 output tokens (vllm /metrics), surge 1000 / 450 (+0.0% / -10.0%); 400 prompt tokens came from its prefix cache (usage's cached_tokens: 380); surge's output count leaves out the 1 failed requests'",
			map[string]any{"server": map[string]any{"prompt_tokens": 1000.0, "output_tokens": 500.0, "cached_prompt_tokens": 400.0},
				"server_families": []any{"vllm"}, "server_window_includes_warmup": false,
				"surge":           map[string]any{"prompt_tokens": 1000.0, "output_tokens": 450.0, "cached_prompt_tokens": 380.0},
				"prompt_diff_pct": 0.0, "output_diff_pct": -10.0, "failed_requests": 1.0}},
		// llama.cpp: no cache counter; the warmup was scraped too.
		{"with warmup", metrics.ServerTokens{Prompt: p(880), Output: p(500), Families: []string{"llamacpp"}, WithWarmup: true},
			"Server counted 880 prompt / 500 output tokens (llamacpp /metrics), surge 1100 / 500 (+25.0% / +0.0%); 380 prompt tokens came from its cache by usage's cached_tokens; surge's output count leaves out the 1 failed requests'; both count the warmup's requests too",
			map[string]any{"server": map[string]any{"prompt_tokens": 880.0, "output_tokens": 500.0, "cached_prompt_tokens": nil},
				"server_families": []any{"llamacpp"}, "server_window_includes_warmup": true,
				"surge":           map[string]any{"prompt_tokens": 1100.0, "output_tokens": 500.0, "cached_prompt_tokens": 380.0},
				"prompt_diff_pct": 25.0, "output_diff_pct": 0.0, "failed_requests": 1.0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := summary()
			s.CompareServerTokens(tc.server)
			var con strings.Builder
			Console(&con, "t", s)
			if !hasProse(con.String(), tc.line+"\n") {
				t.Errorf("console lacks\n%s\n%s", tc.line, con.String())
			}
			var b bytes.Buffer
			if err := JSON(&b, s, Run{Start: time.Unix(0, 0), End: time.Unix(1, 0)}); err != nil {
				t.Fatal(err)
			}
			var out map[string]any
			if err := json.Unmarshal(b.Bytes(), &out); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.json, out["server_token_counts"]); d != "" {
				t.Errorf("server_token_counts (-want +got):\n%s", d)
			}
		})
	}
	s := summary()
	s.CompareServerTokens(metrics.ServerTokens{CachedPrompt: p(3)}) // no prompt or output counter
	var con strings.Builder
	Console(&con, "t", s)
	if s.ServerTokens != nil || strings.Contains(con.String(), "Server counted") {
		t.Errorf("a server without token counters was compared: %+v", s.ServerTokens)
	}
}
