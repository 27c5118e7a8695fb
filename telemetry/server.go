package telemetry

import (
	"context"
	"math"
	"net/http"
	"strings"
	"sync"

	dto "github.com/prometheus/client_model/go"

	"github.com/surgebench/surge/internal/outbound"
)

// ServerSource is an inference server's metrics endpoint.
type ServerSource interface {
	// Sample scrapes the endpoint once.
	Sample(ctx context.Context) (ServerSample, error)
}

// ServerSourceFunc adapts a function to ServerSource.
type ServerSourceFunc func(ctx context.Context) (ServerSample, error)

// Sample calls f.
func (f ServerSourceFunc) Sample(ctx context.Context) (ServerSample, error) { return f(ctx) }

// agg is how one gauge combines over label sets.
type agg int

const (
	sum  agg = iota // counts: requests, tokens
	mean            // fractions: cache usage, hit rates
)

// serverMetric lists, for one ServerSample field, the names servers use for
// it, in order of preference (the first one present wins). A name may
// select one label value, `family{label="value"}` (Triton's TensorRT-LLM
// metrics keep several quantities in one family).
type serverMetric struct {
	names []string
	agg   agg
	set   func(*ServerSample, float64)
}

// serverMetrics is the name table. vLLM's counters appear with and without
// _total depending on the prometheus_client version and format.
var serverMetrics = []serverMetric{
	{names: []string{"vllm:num_requests_running", "sglang:num_running_reqs", "tgi_batch_current_size", "llamacpp:requests_processing",
		"dynamo_frontend_inflight_requests", "num_requests_running", `nv_trt_llm_request_metrics{request_type="active"}`},
		agg: sum, set: func(s *ServerSample, v float64) { s.Running = v }},
	{names: []string{"vllm:num_requests_waiting", "sglang:num_queue_reqs", "tgi_queue_size", "llamacpp:requests_deferred",
		"dynamo_frontend_queued_requests", "num_requests_waiting", "nv_inference_pending_request_count"},
		agg: sum, set: func(s *ServerSample, v float64) { s.Waiting = v }},
	{names: []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage", "llamacpp:kv_cache_usage_ratio",
		"gpu_cache_usage_perc", `nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="fraction"}`},
		agg: mean, set: func(s *ServerSample, v float64) { s.KVCacheUsage = v }},
	{names: []string{"sglang:cache_hit_rate", "vllm:gpu_prefix_cache_hit_rate", "dynamo_component_kvstats_gpu_prefix_cache_hit_rate"},
		agg: mean, set: func(s *ServerSample, v float64) { s.PrefixCacheHitRate = v }},
	{names: []string{"vllm:prefix_cache_hits_total", "vllm:prefix_cache_hits", "vllm:gpu_prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits"},
		agg: sum, set: func(s *ServerSample, v float64) { s.PrefixCacheHits = v }},
	{names: []string{"vllm:prefix_cache_queries_total", "vllm:prefix_cache_queries", "vllm:gpu_prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries"},
		agg: sum, set: func(s *ServerSample, v float64) { s.PrefixCacheQueries = v }},
	{names: []string{"vllm:generation_tokens_total", "vllm:generation_tokens", "sglang:generation_tokens_total",
		"llamacpp:tokens_predicted_total", "tgi_request_generated_tokens", "generation_tokens_total"},
		agg: sum, set: func(s *ServerSample, v float64) { s.GenerationTokens = v }},
	{names: []string{"vllm:prompt_tokens_total", "vllm:prompt_tokens", "sglang:prompt_tokens_total",
		"llamacpp:prompt_tokens_total", "tgi_request_input_length", "prompt_tokens_total"},
		agg: sum, set: func(s *ServerSample, v float64) { s.PromptTokens = v }},
	{names: []string{"sglang:cached_tokens_total", "sglang:cached_tokens", "vllm:prompt_tokens_cached_total", "vllm:prompt_tokens_cached"},
		agg: sum, set: func(s *ServerSample, v float64) { s.CachedPromptTokens = v }},
}

// familyPrefixes names a server family by its metric names' prefix (the
// first matching name of the running gauge decides).
var familyPrefixes = []struct{ prefix, family string }{
	{"vllm:", "vllm"}, {"sglang:", "sglang"}, {"tgi_", "tgi"}, {"llamacpp:", "llamacpp"},
	{"dynamo_", "dynamo"}, {"nv_trt_llm_", "tensorrt-llm"}, {"nv_inference_", "triton"},
}

// familyOf names the server family whose metric name this is ("" when
// the name is a generic one).
func familyOf(name string) string {
	for _, f := range familyPrefixes {
		if strings.HasPrefix(name, f.prefix) {
			return f.family
		}
	}
	return ""
}

// nanServerSample is a sample with every gauge unknown.
func nanServerSample(url string) ServerSample {
	n := math.NaN()
	return ServerSample{URL: url, Running: n, Waiting: n, KVCacheUsage: n, PrefixCacheHitRate: n,
		PrefixCacheHits: n, PrefixCacheQueries: n, GenerationTokens: n, PromptTokens: n, CachedPromptTokens: n}
}

// normalize maps parsed families onto a ServerSample and reports how many
// of its fields it found. NaN values in the input are skipped.
func normalize(url string, fams map[string]*dto.MetricFamily) (ServerSample, int) {
	s := nanServerSample(url)
	found := 0
	for _, sm := range serverMetrics {
		for _, name := range sm.names {
			name, lname, lvalue := splitSelector(name)
			f, ok := fams[name]
			if !ok {
				continue
			}
			total, n := 0.0, 0
			for _, m := range f.GetMetric() {
				if lname != "" && label(m, lname) != lvalue {
					continue
				}
				v := value(m)
				if math.IsNaN(v) || math.IsInf(v, 0) {
					continue
				}
				total += v
				n++
			}
			if n == 0 {
				continue
			}
			if sm.agg == mean {
				total /= float64(n)
			}
			sm.set(&s, total)
			if s.Family == "" {
				s.Family = familyOf(name)
			}
			found++
			break
		}
	}
	return s, found
}

// splitSelector splits `family{label="value"}` into its parts (a plain
// name has no label).
func splitSelector(sel string) (name, lname, lvalue string) {
	name, rest, ok := strings.Cut(sel, "{")
	if !ok {
		return sel, "", ""
	}
	lname, lvalue, _ = strings.Cut(strings.TrimSuffix(rest, "}"), "=")
	return name, lname, strings.Trim(lvalue, `"`)
}

// serverScraper scrapes one endpoint and derives the interval hit rate
// from vLLM's cumulative counters.
type serverScraper struct {
	url    string
	client *http.Client

	mu                  sync.Mutex
	prevHits, prevQuery float64
	havePrev            bool
}

// Server returns a source scraping the Prometheus /metrics endpoint at url
// (nil client: the outbound policy's). Every family is kept in the sample's
// Families; the names of vLLM, SGLang, TGI, llama.cpp, Dynamo, NIM and
// TensorRT-LLM/Triton also fill its normalised fields. Errors: an
// *HTTPError for a non-2xx answer, ErrNotPrometheus for a body that is not
// Prometheus text (or larger than 16 MiB).
func Server(url string, client *http.Client) ServerSource {
	if client == nil {
		client = outbound.NewClient()
	}
	return &serverScraper{url: url, client: client}
}

// String returns the URL.
func (s *serverScraper) String() string { return s.url }

// Sample scrapes the endpoint once.
func (s *serverScraper) Sample(ctx context.Context) (ServerSample, error) {
	fams, err := scrape(ctx, s.client, s.url)
	if err != nil {
		return ServerSample{}, err
	}
	out, _ := normalize(s.url, fams)
	out.Families = families(fams)
	s.mu.Lock()
	defer s.mu.Unlock()
	if math.IsNaN(out.PrefixCacheHitRate) && !math.IsNaN(out.PrefixCacheHits) && !math.IsNaN(out.PrefixCacheQueries) {
		hits, queries := out.PrefixCacheHits, out.PrefixCacheQueries
		if s.havePrev && queries >= s.prevQuery {
			hits -= s.prevHits
			queries -= s.prevQuery
		}
		if queries > 0 {
			out.PrefixCacheHitRate = hits / queries
		}
		s.prevHits, s.prevQuery, s.havePrev = out.PrefixCacheHits, out.PrefixCacheQueries, true
	}
	return out, nil
}
