package telemetry

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

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
		{"vllm.txt", ServerSample{Running: 46, Waiting: 8, KVCacheUsage: 0.375, PrefixCacheHitRate: 0.4,
			PrefixCacheHits: 40000, PrefixCacheQueries: 100000, GenerationTokens: 85000, PromptTokens: 218700}},
		{"vllm_v0.txt", ServerSample{Running: 7, Waiting: 0, KVCacheUsage: 0.0823, PrefixCacheHitRate: 0.375,
			PrefixCacheHits: nan, PrefixCacheQueries: nan, GenerationTokens: 12288, PromptTokens: 5521}},
		{"sglang.txt", ServerSample{Running: 162, Waiting: 2826, KVCacheUsage: 0.28, PrefixCacheHitRate: 0.007507552643049313,
			PrefixCacheHits: nan, PrefixCacheQueries: nan, GenerationTokens: 7557572, PromptTokens: 8128537}},
		{"tgi.txt", ServerSample{Running: 28, Waiting: 4, KVCacheUsage: nan, PrefixCacheHitRate: nan,
			PrefixCacheHits: nan, PrefixCacheQueries: nan, GenerationTokens: 412077, PromptTokens: 734512}},
		{"llamacpp.txt", ServerSample{Running: 4, Waiting: 1, KVCacheUsage: 0.1875, PrefixCacheHitRate: nan,
			PrefixCacheHits: nan, PrefixCacheQueries: nan, GenerationTokens: 9120, PromptTokens: 18342}},
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
			if d := cmp.Diff(tt.want, got, cmpopts.EquateNaNs(), cmpopts.EquateApprox(1e-12, 0)); d != "" {
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
		{"other exporter", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte("# TYPE node_load1 gauge\nnode_load1 0.5\n"))
		}, ErrNoKnownMetrics, "no vLLM, SGLang, TGI or llama.cpp metrics"},
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
		if _, err := s.MarshalJSON(); err != nil {
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
