package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// serveFile is an exporter answering every request with a capture.
func serveFile(t *testing.T, name, contentType string) *httptest.Server {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

const promType = "text/plain; version=0.0.4; charset=utf-8"

func TestServerNormalisesCaptures(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	tests := []struct {
		file string
		want ServerSample
	}{
		{"vllm.txt", ServerSample{Family: "vllm", Running: 46, Waiting: 8, KVCacheUsage: 0.375, PrefixCacheHitRate: 0.4,
			PrefixCacheHits: 40000, PrefixCacheQueries: 100000, GenerationTokens: 85000, PromptTokens: 218700, CachedPromptTokens: nan}},
		{"vllm_v0.txt", ServerSample{Family: "vllm", Running: 7, Waiting: 0, KVCacheUsage: 0.0823, PrefixCacheHitRate: 0.375,
			PrefixCacheHits: nan, PrefixCacheQueries: nan, GenerationTokens: 12288, PromptTokens: 5521, CachedPromptTokens: nan}},
		{"sglang.txt", ServerSample{Family: "sglang", Running: 162, Waiting: 2826, KVCacheUsage: 0.28, PrefixCacheHitRate: 0.007507552643049313,
			PrefixCacheHits: nan, PrefixCacheQueries: nan, GenerationTokens: 7557572, PromptTokens: 8128537, CachedPromptTokens: nan}},
		{"tgi.txt", ServerSample{Family: "tgi", Running: 28, Waiting: 4, KVCacheUsage: nan, PrefixCacheHitRate: nan,
			PrefixCacheHits: nan, PrefixCacheQueries: nan, GenerationTokens: 412077, PromptTokens: 734512, CachedPromptTokens: nan}},
		{"llamacpp.txt", ServerSample{Family: "llamacpp", Running: 4, Waiting: 1, KVCacheUsage: 0.1875, PrefixCacheHitRate: nan,
			PrefixCacheHits: nan, PrefixCacheQueries: nan, GenerationTokens: 9120, PromptTokens: 18342, CachedPromptTokens: nan}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			srv := serveFile(t, tt.file, promType)
			url := srv.URL + "/metrics"
			got, err := Server(url, srv.Client()).Sample(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			tt.want.URL = url
			if len(got.Families) < 5 {
				t.Errorf("%d families kept, want every one the capture has", len(got.Families))
			}
			if d := cmp.Diff(tt.want, got, cmpopts.EquateNaNs(), cmpopts.EquateApprox(1e-12, 0),
				cmpopts.IgnoreFields(ServerSample{}, "Families")); d != "" {
				t.Errorf("sample (-want +got):\n%s", d)
			}
		})
	}
}

func TestServerHitRateOverInterval(t *testing.T) {
	t.Parallel()
	// Cumulative counters: 40 000/100 000, then +600/+1000, then no change.
	bodies := []string{
		"vllm:prefix_cache_hits_total 40000\nvllm:prefix_cache_queries_total 100000\nvllm:num_requests_running 1\n",
		"vllm:prefix_cache_hits_total 40600\nvllm:prefix_cache_queries_total 101000\nvllm:num_requests_running 1\n",
		"vllm:prefix_cache_hits_total 40600\nvllm:prefix_cache_queries_total 101000\nvllm:num_requests_running 1\n",
	}
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(bodies[min(int(n.Add(1))-1, len(bodies)-1)]))
	}))
	defer srv.Close()
	src := Server(srv.URL, srv.Client())
	var got []float64
	for range bodies {
		s, err := src.Sample(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s.PrefixCacheHitRate)
	}
	want := []float64{0.4, 0.6, math.NaN()}
	if d := cmp.Diff(want, got, cmpopts.EquateNaNs(), cmpopts.EquateApprox(1e-12, 0)); d != "" {
		t.Errorf("hit rates (-want +got):\n%s", d)
	}
}

func TestServerErrors(t *testing.T) {
	t.Parallel()
	html, err := os.ReadFile("testdata/not_metrics.html")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		is      error
		text    string
	}{
		{"404", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, nil, "HTTP 404 Not Found"},
		{"html", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write(html)
		}, ErrNotPrometheus, "not Prometheus text (Content-Type text/html)"},
		{"html as text/plain", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write(html)
		}, ErrNotPrometheus, "not Prometheus text (text format parsing error in line 1"},
		{"json", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"error":"metrics not enabled"}`))
		}, ErrNotPrometheus, "not Prometheus text (Content-Type application/json)"},
		{"50 MB", func(w http.ResponseWriter, r *http.Request) {
			line := []byte("# TYPE big_total counter\n")
			_, _ = w.Write(line)
			row := []byte(strings.Repeat("x", 100) + "\n")
			for range 500_000 {
				if _, err := w.Write(row); err != nil {
					return
				}
			}
		}, ErrNotPrometheus, "not Prometheus text: the answer is over the 16 MiB limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			_, err := Server(srv.URL, srv.Client()).Sample(context.Background())
			if err == nil {
				t.Fatal("no error")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if !strings.HasPrefix(err.Error(), tt.text) {
				t.Errorf("error %q, want prefix %q", err, tt.text)
			}
		})
	}
}

func FuzzNormalize(f *testing.F) {
	for _, name := range []string{"vllm.txt", "vllm_v0.txt", "sglang.txt", "tgi.txt", "llamacpp.txt", "dcgm_exporter.txt", "not_metrics.html"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("vllm:num_requests_running NaN\nvllm:kv_cache_usage_perc +Inf\n")
	f.Add("# TYPE x histogram\nx_bucket{le=\"+Inf\"} 1\nx_sum 2\nx_count 1\n")
	f.Fuzz(func(t *testing.T, text string) {
		fams, err := parseText(strings.NewReader(text))
		if err != nil {
			if !errors.Is(err, ErrNotPrometheus) {
				t.Fatalf("error %v does not wrap ErrNotPrometheus", err)
			}
			return
		}
		s, found := normalize("u", fams)
		if found == 0 && !math.IsNaN(s.Running) {
			t.Fatalf("nothing found but Running = %v", s.Running)
		}
		// Every family survives the JSONL line and a summary of itself.
		s.Families = families(fams)
		b, err := s.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var back ServerSample
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("line %s does not read back: %v", b, err)
		}
		if len(back.Families) != len(s.Families) {
			t.Fatalf("%d families read back, %d written", len(back.Families), len(s.Families))
		}
		if _, err := json.Marshal(summarizeSeries(s.Families, s.Families)); err != nil {
			t.Fatal(err)
		}
		for _, g := range dcgmSamples("u", fams) {
			if _, err := g.MarshalJSON(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func BenchmarkServerNormalize(b *testing.B) {
	body, err := os.ReadFile("testdata/vllm.txt")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		fams, err := parseText(strings.NewReader(string(body)))
		if err != nil {
			b.Fatal(err)
		}
		normalize("u", fams)
	}
}

// TestServerScrapeHangs: an endpoint that accepts and never answers, one
// that starts a body and never ends it, and one that closes every
// connection each fail within the scrape's context, with a clear error.
func TestServerScrapeHangs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler http.HandlerFunc
		has     string
	}{
		{"never answers", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, "context deadline exceeded"},
		{"never ends", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte("# TYPE a gauge\na 1\n"))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, "context deadline exceeded"},
		{"closes every connection", func(w http.ResponseWriter, r *http.Request) {
			c, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				c.Close()
			}
		}, "EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			began := time.Now()
			_, err := Server(srv.URL, srv.Client()).Sample(ctx)
			if err == nil || !strings.Contains(err.Error(), tt.has) {
				t.Errorf("error %v, want one saying %q", err, tt.has)
			}
			if d := time.Since(began); d > 5*time.Second {
				t.Errorf("took %v with a 300 ms timeout", d)
			}
		})
	}
}

// TestServerKeepsEveryFamily: names surge does not know are kept, every
// sample with its labels; histograms with their buckets.
func TestServerKeepsEveryFamily(t *testing.T) {
	t.Parallel()
	body := `# HELP node_load1 1m load average.
# TYPE node_load1 gauge
node_load1 0.5
# TYPE my_requests_total counter
my_requests_total{code="200",model="m"} 7
my_requests_total{code="500",model="m"} 1
# TYPE my_latency_seconds histogram
my_latency_seconds_bucket{le="0.1"} 2
my_latency_seconds_bucket{le="1"} 5
my_latency_seconds_bucket{le="+Inf"} 6
my_latency_seconds_sum 4.2
my_latency_seconds_count 6
`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", promType)
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	s, err := Server(srv.URL, srv.Client()).Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	inf := math.Inf(1)
	want := []Family{
		{Name: "my_latency_seconds", Type: "histogram", Samples: []Sample{{Value: math.NaN(), Count: 6, Sum: 4.2,
			Buckets: []Bucket{{0.1, 2}, {1, 5}, {inf, 6}}}}},
		{Name: "my_requests_total", Type: "counter", Samples: []Sample{
			{Labels: map[string]string{"code": "200", "model": "m"}, Value: 7, Count: math.NaN(), Sum: math.NaN()},
			{Labels: map[string]string{"code": "500", "model": "m"}, Value: 1, Count: math.NaN(), Sum: math.NaN()}}},
		{Name: "node_load1", Type: "gauge", Help: "1m load average.", Samples: []Sample{{Value: 0.5, Count: math.NaN(), Sum: math.NaN()}}},
	}
	if d := cmp.Diff(want, s.Families, cmpopts.EquateNaNs()); d != "" {
		t.Errorf("families (-want +got):\n%s", d)
	}
	if !math.IsNaN(s.Running) {
		t.Errorf("Running %v from an exporter without a known name", s.Running)
	}
	// A JSONL line round-trips.
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back ServerSample
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(s.Families, back.Families, cmpopts.EquateNaNs()); d != "" {
		t.Errorf("families after a JSON round trip (-before +after):\n%s\n%s", d, b)
	}
}

func TestSummarizeSeries(t *testing.T) {
	t.Parallel()
	h := func(counts ...float64) Sample {
		return Sample{Count: counts[3], Sum: counts[3] * 0.5,
			Buckets: []Bucket{{0.1, counts[0]}, {1, counts[1]}, {10, counts[2]}, {math.Inf(1), counts[3]}}}
	}
	first := []Family{
		{Name: "req_total", Type: "counter", Samples: []Sample{{Labels: map[string]string{"m": "a"}, Value: 10}}},
		{Name: "reset_total", Type: "counter", Samples: []Sample{{Value: 100}}},
		{Name: "lat", Type: "histogram", Samples: []Sample{h(10, 10, 10, 10)}},
		{Name: "g", Type: "gauge", Samples: []Sample{{Value: 3}}},
	}
	last := []Family{
		{Name: "req_total", Type: "counter", Samples: []Sample{{Labels: map[string]string{"m": "a"}, Value: 25}}},
		{Name: "reset_total", Type: "counter", Samples: []Sample{{Value: 4}}},
		// 100 new observations: 0 ≤ 0.1, 50 in (0.1, 1], 50 in (1, 10].
		{Name: "lat", Type: "histogram", Samples: []Sample{h(10, 60, 110, 110)}},
		{Name: "g", Type: "gauge", Samples: []Sample{{Value: 9}}},
	}
	got := summarizeSeries(first, last)
	f := func(v float64) *jfloat { x := jfloat(v); return &x }
	want := map[string]SeriesSummary{
		`req_total{m="a"}`: {Type: "counter", Delta: f(15)},
		"reset_total":      {Type: "counter", Delta: f(4)},
		"lat": {Type: "histogram", Count: f(100), Sum: f(50), Mean: f(0.5),
			P50: f(1), P90: f(1 + 9*0.8), P99: f(1 + 9*0.98)},
	}
	if d := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); d != "" {
		t.Errorf("series (-want +got):\n%s", d)
	}
}
