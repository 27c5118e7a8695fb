package telemetry

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTokenTotals sums the servers' counters' increase over the run: the
// prompt and generated tokens, and the prompt tokens from a prefix cache
// (SGLang's cached_tokens counter, vLLM's hits); a server without
// counters adds nothing.
func TestTokenTotals(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	sample := func(url, fam string, at int, prompt, gen, cached, hits float64) ServerSample {
		s := nanServerSample(url)
		s.At, s.WallNs, s.Family = 0, int64(at), fam
		s.PromptTokens, s.GenerationTokens, s.CachedPromptTokens, s.PrefixCacheHits = prompt, gen, cached, hits
		return s
	}
	servers := []ServerSample{
		sample("http://a/metrics", "sglang", 1, 100, 10, 40, nan),
		sample("http://b/metrics", "vllm", 1, 1000, 50, nan, 300),
		sample("http://c/metrics", "", 1, nan, nan, nan, nan),
		sample("http://a/metrics", "sglang", 2, 600, 70, 240, nan),
		sample("http://b/metrics", "vllm", 2, 3000, 150, nan, 1300),
		sample("http://c/metrics", "", 2, nan, nan, nan, nan),
	}
	got, ok := summarize(nil, servers).TokenTotals()
	p := func(v float64) *float64 { return &v }
	want := TokenTotals{Prompt: p(500 + 2000), Output: p(60 + 100), CachedPrompt: p(200 + 1000), Families: []string{"sglang", "vllm"}}
	if d := cmp.Diff(want, got); d != "" || !ok {
		t.Errorf("totals (-want +got), ok %v:\n%s", ok, d)
	}
	if _, ok := summarize(nil, servers[2:3]).TokenTotals(); ok {
		t.Error("a server without token counters gave totals")
	}
	var none *Data
	if _, ok := none.TokenTotals(); ok {
		t.Error("no telemetry gave totals")
	}
}

// TestSGLangCachedTokens: SGLang's cached_tokens counter carries a
// cache_source label; its series add up.
func TestSGLangCachedTokens(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("# TYPE sglang:cached_tokens_total counter\n" +
			`sglang:cached_tokens_total{model_name="m",cache_source="device"} 120` + "\n" +
			`sglang:cached_tokens_total{model_name="m",cache_source="host"} 30` + "\n" +
			"sglang:num_running_reqs 1\n"))
	}))
	defer srv.Close()
	s, err := Server(srv.URL, srv.Client()).Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.CachedPromptTokens != 150 || s.Family != "sglang" {
		t.Errorf("cached prompt tokens %v (family %q), want 150 (sglang)", s.CachedPromptTokens, s.Family)
	}
}
