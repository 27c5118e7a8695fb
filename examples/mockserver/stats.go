package mockserver

import (
	"bufio"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// Stats is the server's own view of what it served. TTFT is measured
// from handler entry to the flush of the first content or reasoning event
// of a streamed request (non-streamed requests are not sampled), so it
// includes time queued behind MaxRunning; it is the reference a client's
// measured TTFT is compared with.
type Stats struct {
	// Requests counts completion requests received, bad ones included.
	Requests uint64 `json:"requests"`
	// Completed counts requests answered in full.
	Completed uint64 `json:"completed"`
	// Errors counts injected HTTP 500 failures (Config.ErrorRate).
	Errors uint64 `json:"errors"`
	// StreamErrors counts streams failed inside (Config.StreamErrorRate).
	StreamErrors uint64 `json:"stream_errors"`
	// BadRequests counts requests answered 400.
	BadRequests uint64 `json:"bad_requests"`
	// Canceled counts requests whose client left before the end:
	// AbortedPrefill before their first token was sent, AbortedStream
	// mid-stream (chat and completions requests; Config.AbortLog logs
	// each).
	Canceled       uint64 `json:"canceled"`
	AbortedPrefill uint64 `json:"aborted_prefill"`
	AbortedStream  uint64 `json:"aborted_stream"`
	// Prefilling counts the chat and completions requests received whose
	// first token has not been sent (queued behind MaxRunning included);
	// PrefillingPeak is the most there were at once: what a client's
	// prefill concurrency cap let through.
	Prefilling     int64 `json:"prefilling"`
	PrefillingPeak int64 `json:"prefilling_peak"`
	// Running and Waiting are the requests generating and queued now.
	Running int64 `json:"running"`
	Waiting int64 `json:"waiting"`
	// PromptTokens and GeneratedTokens are token totals (see the
	// package doc for how prompts are counted).
	PromptTokens    uint64 `json:"prompt_tokens"`
	GeneratedTokens uint64 `json:"generated_tokens"`
	// Images and AudioClips count the media parts of chat requests.
	Images     uint64 `json:"images"`
	AudioClips uint64 `json:"audio_clips"`
	// ToolCalls counts the function calls the mock answered with;
	// ToolResults the tool results requests sent back that answered one
	// of their conversation's calls; ToolRejected the requests refused
	// for a malformed tool call or result (a result for an unknown call
	// included); ContextOverflows those refused for passing MaxModelLen;
	// CachedTokens the prompt tokens the prefix cache reported.
	ToolCalls        uint64 `json:"tool_calls"`
	ToolResults      uint64 `json:"tool_results"`
	ToolRejected     uint64 `json:"tool_rejected"`
	ContextOverflows uint64 `json:"context_overflows"`
	CachedTokens     uint64 `json:"cached_tokens"`
	// SpecSteps, SpecDraftTokens and SpecAcceptedTokens count the draft
	// model's verify steps, the tokens it proposed and those accepted
	// (Config.SpecTokens).
	SpecSteps          uint64 `json:"spec_steps"`
	SpecDraftTokens    uint64 `json:"spec_draft_tokens"`
	SpecAcceptedTokens uint64 `json:"spec_accepted_tokens"`
	// TTFTCount is the number of TTFT samples; the rest are in ms, with
	// quantiles resolved to 0.4%.
	TTFTCount  uint64  `json:"ttft_count"`
	TTFTMeanMS float64 `json:"ttft_mean_ms"`
	TTFTP50MS  float64 `json:"ttft_p50_ms"`
	TTFTP99MS  float64 `json:"ttft_p99_ms"`
	// ResetPrefixCache, FlushCache, StartProfile and StopProfile count
	// the control calls (control.go).
	ResetPrefixCache uint64 `json:"reset_prefix_cache"`
	FlushCache       uint64 `json:"flush_cache"`
	StartProfile     uint64 `json:"start_profile"`
	StopProfile      uint64 `json:"stop_profile"`
}

// Stats returns the counters and TTFT quantiles so far. It may be called
// while requests are in flight.
func (s *Server) Stats() Stats {
	t := s.ttft.summary()
	return Stats{
		Requests:         s.requests.Load(),
		Completed:        s.completed.Load(),
		Errors:           s.injected.Load(),
		StreamErrors:     s.streamErrors.Load(),
		BadRequests:      s.badRequests.Load(),
		Canceled:         s.canceled.Load(),
		AbortedPrefill:   s.abortedPrefill.Load(),
		AbortedStream:    s.abortedStream.Load(),
		Prefilling:       s.prefill.now.Load(),
		PrefillingPeak:   s.prefill.peak.Load(),
		Running:          s.adm.running.Load(),
		Waiting:          s.adm.waiting.Load(),
		PromptTokens:     s.promptTokens.Load(),
		GeneratedTokens:  s.genTokens.Load(),
		Images:           s.images.Load(),
		AudioClips:       s.audioClips.Load(),
		ToolCalls:        s.agents.calls.Load(),
		ToolResults:      s.agents.results.Load(),
		ToolRejected:     s.agents.rejected.Load(),
		ContextOverflows: s.agents.overflows.Load(),
		CachedTokens:     s.agents.cached.Load(),

		SpecSteps:          s.spec.drafts.Load(),
		SpecDraftTokens:    s.spec.draftTokens.Load(),
		SpecAcceptedTokens: s.spec.accepted.Load(),
		TTFTCount:          t.Count,
		TTFTMeanMS:         t.Mean,
		TTFTP50MS:          t.P50,
		TTFTP99MS:          t.P99,

		ResetPrefixCache: s.control.resets.Load(),
		FlushCache:       s.control.flushes.Load(),
		StartProfile:     s.control.starts.Load(),
		StopProfile:      s.control.stops.Load(),
	}
}

// kvUsage is vllm:kv_cache_usage_perc: the share of MaxRunning slots in
// use, or without a cap a saturating curve that reaches 0.5 at 256
// running requests, so the gauge moves with load like a real cache.
func (s *Server) kvUsage(running int64) float64 {
	if s.cfg.MaxRunning > 0 {
		return math.Min(1, float64(running)/float64(s.cfg.MaxRunning))
	}
	return 1 - math.Exp2(-float64(running)/256)
}

// serveMetrics writes Prometheus text format with vLLM's metric names.
func (s *Server) serveMetrics(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	bw := bufio.NewWriter(w)
	labels := `{model_name="` + escapeLabel(s.cfg.Model) + `"}`
	st := s.Stats()
	metric := func(name, typ, help string, v float64) {
		bw.WriteString("# HELP " + name + " " + help + "\n# TYPE " + name + " " + typ + "\n")
		bw.WriteString(name + labels + " " + strconv.FormatFloat(v, 'g', -1, 64) + "\n")
	}
	metric("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", float64(st.Running))
	metric("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", float64(st.Waiting))
	metric("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", s.kvUsage(st.Running))
	metric("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", float64(st.PromptTokens))
	metric("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", float64(st.GeneratedTokens))
	if s.drafting() {
		metric("vllm:spec_decode_num_drafts_total", "counter", "Number of spec decoding drafts.", float64(st.SpecSteps))
		metric("vllm:spec_decode_num_draft_tokens_total", "counter", "Number of draft tokens.", float64(st.SpecDraftTokens))
		metric("vllm:spec_decode_num_accepted_tokens_total", "counter", "Number of accepted tokens.", float64(st.SpecAcceptedTokens))
	}
	name := "vllm:request_success_total"
	bw.WriteString("# HELP " + name + " Count of successfully processed requests.\n# TYPE " + name + " counter\n")
	for _, f := range []struct {
		reason string
		n      uint64
	}{{"length", s.finishLength.Load()}, {"stop", s.finishStop.Load()}} {
		bw.WriteString(name + `{finished_reason="` + f.reason + `",model_name="` + escapeLabel(s.cfg.Model) + `"} ` +
			strconv.FormatUint(f.n, 10) + "\n")
	}
	_ = bw.Flush()
}

// escapeLabel escapes a Prometheus label value.
func escapeLabel(v string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
}

// serveModels answers GET /v1/models in OpenAI's list shape.
func (s *Server) serveModels(w http.ResponseWriter) {
	type model struct {
		ID          string `json:"id"`
		Object      string `json:"object"`
		Created     int64  `json:"created"`
		OwnedBy     string `json:"owned_by"`
		Root        string `json:"root"`
		MaxModelLen int    `json:"max_model_len"`
	}
	body := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{"list", []model{{s.cfg.Model, "model", s.created, "surge", s.cfg.Model, s.cfg.MaxOutputTokens}}}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}
