package vllmbench

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/surgebench/surge/app/peers"
)

// metricNames are vLLM's per-request metrics: the attribute, the name in
// its labels, and its header.
var metricNames = []struct{ attr, name, header string }{
	{"ttft", "TTFT", "Time to First Token"},
	{"tpot", "TPOT", "Time per Output Token (excl. 1st token)"},
	{"itl", "ITL", "Inter-token Latency"},
	{"e2el", "E2EL", "End-to-end Latency"},
}

// outcome is vLLM's calculate_metrics over a finished run: its counts,
// throughputs and per-request samples, each defined as vLLM defines it.
type outcome struct {
	completed, failed       int
	totalInput, totalOutput int
	duration                float64 // seconds
	requestThroughput       float64
	requestGoodput          float64
	outputThroughput        float64
	totalTokenThroughput    float64
	// samples are the ms samples by vLLM's attribute: ttft, tpot (the
	// requests of more than one token), itl (every request's chunk gaps,
	// pooled), e2el.
	samples               map[string]peers.Sample
	maxOutputTokensPerS   float64
	maxConcurrentRequests int
	// Per request, in send order (the detailed result's lists).
	inputLens, outputLens []int
	ttfts                 []float64 // seconds
	itls                  [][]float64
	texts, errs           []string
}

// outputLen is a request's output length as vLLM counts it: the server's
// completion_tokens, else (none, or 0) its tokenizer's count.
func outputLen(r peers.Request) int {
	if r.CompletionTokens > 0 {
		return r.CompletionTokens
	}
	return r.OSL
}

// compute is vLLM's calculate_metrics over the run's requests.
func compute(f *peers.Finished, goodput []objective) outcome {
	o := outcome{duration: f.Duration()}
	var ttfts, tpots, itls, e2els []float64
	type span struct {
		start, ttft, latency float64 // seconds
		chunks               []float64
	}
	var spans []span
	for _, r := range f.Requests {
		ok := r.Err == nil && !r.Cancelled
		o.inputLens = append(o.inputLens, r.Prompt())
		o.texts = append(o.texts, r.Text)
		if !ok {
			o.failed++
			o.outputLens = append(o.outputLens, 0)
			o.ttfts = append(o.ttfts, 0)
			o.itls = append(o.itls, []float64{})
			msg := "cancelled"
			if r.Err != nil {
				msg = r.Err.String()
			}
			o.errs = append(o.errs, msg)
			continue
		}
		out := outputLen(r)
		o.completed++
		o.totalInput += r.ISL
		o.outputLens = append(o.outputLens, out)
		tpot := 0.0
		if out > 1 {
			tpot = (r.Latency - r.TTFT) / float64(out-1)
			tpots = append(tpots, tpot)
		}
		chunks := r.Chunks
		if chunks == nil {
			chunks = []float64{}
		}
		itls = append(itls, chunks...)
		ttfts = append(ttfts, r.TTFT)
		e2els = append(e2els, r.Latency)
		secs := make([]float64, len(chunks))
		for i, c := range chunks {
			secs[i] = c / 1e3
		}
		o.ttfts = append(o.ttfts, r.TTFT/1e3)
		o.itls = append(o.itls, secs)
		o.errs = append(o.errs, "")
		o.totalOutput += out
		if len(goodput) > 0 && meets(goodput, r.TTFT, tpot, r.Latency) {
			o.requestGoodput++
		}
		spans = append(spans, span{float64(r.StartNs) / 1e9, r.TTFT / 1e3, r.Latency / 1e3, secs})
	}
	o.samples = map[string]peers.Sample{"ttft": peers.NewSample(ttfts), "tpot": peers.NewSample(tpots), "itl": peers.NewSample(itls), "e2el": peers.NewSample(e2els)}
	if d := o.duration; d > 0 {
		o.requestThroughput = float64(o.completed) / d
		o.requestGoodput /= d
		o.outputThroughput = float64(o.totalOutput) / d
		o.totalTokenThroughput = float64(o.totalInput+o.totalOutput) / d
	} else {
		o.requestGoodput = 0
	}
	// vLLM's peak: tokens (one per chunk) and requests active in each
	// second from the first start.
	if len(spans) > 0 {
		minStart, maxEnd := math.Inf(1), math.Inf(-1)
		for _, s := range spans {
			minStart = min(minStart, s.start)
			maxEnd = max(maxEnd, s.start+s.latency)
		}
		n := int(math.Ceil(maxEnd-minStart)) + 1
		tokens, active := make([]float64, n), make([]int, n)
		for _, s := range spans {
			t := s.start + s.ttft
			if b := int(t - minStart); b >= 0 && b < n {
				tokens[b]++
			}
			for _, c := range s.chunks {
				t += c
				if b := int(t - minStart); b >= 0 && b < n {
					tokens[b]++
				}
			}
			for sec := int(s.start - minStart); sec <= int(s.start+s.latency-minStart) && sec < n; sec++ {
				active[sec]++
			}
		}
		for i := range n {
			o.maxOutputTokensPerS = max(o.maxOutputTokensPerS, tokens[i])
			o.maxConcurrentRequests = max(o.maxConcurrentRequests, active[i])
		}
	}
	return o
}

// meets is vLLM's goodput test: every objective at least its value (a
// request of one token has TPOT 0).
func meets(goodput []objective, ttft, tpot, e2el float64) bool {
	for _, g := range goodput {
		v := map[string]float64{"ttft": ttft, "tpot": tpot, "e2el": e2el}[g.name]
		if v > g.ms {
			return false
		}
	}
	return true
}

// pWord is vLLM's name of a percentile: 99, or 99.9.
func pWord(p float64) string {
	if p == math.Trunc(p) {
		return strconv.Itoa(int(p))
	}
	return peers.PyFloat(p)
}

// line writes one of vLLM's summary lines: "{:<40} {:<10}" (a float with
// two decimals).
func line(w io.Writer, label string, v any) {
	var s string
	switch x := v.(type) {
	case float64:
		s = strconv.FormatFloat(x, 'f', 2, 64)
	default:
		s = fmt.Sprint(x)
	}
	fmt.Fprintf(w, "%-40s %-10s\n", label, s)
}

// center is Python's "{s:{c}^{n}}": s centred in n, the odd pad right.
func center(s string, n int, c string) string {
	pad := n - len(s)
	if pad <= 0 {
		return s
	}
	return strings.Repeat(c, pad/2) + s + strings.Repeat(c, pad-pad/2)
}

// writeSummary prints vLLM's result block, its labels exactly as vLLM
// prints them (scripts grep them), and fills result with the keys vLLM
// writes alongside.
func (b *bench) writeSummary(w io.Writer, o outcome, result *peers.Object) {
	fmt.Fprintln(w, center(" Serving Benchmark Result ", 50, "="))
	line(w, "Successful requests:", o.completed)
	line(w, "Failed requests:", o.failed)
	if b.maxConc > 0 {
		line(w, "Maximum request concurrency:", b.maxConc)
	}
	if !math.IsInf(b.rate, 1) {
		line(w, "Request rate configured (RPS):", b.rate)
	}
	line(w, "Benchmark duration (s):", o.duration)
	line(w, "Total input tokens:", o.totalInput)
	line(w, "Total generated tokens:", o.totalOutput)
	line(w, "Request throughput (req/s):", o.requestThroughput)
	if len(b.goodput) > 0 {
		line(w, "Request goodput (req/s):", o.requestGoodput)
	}
	line(w, "Output token throughput (tok/s):", o.outputThroughput)
	line(w, "Peak output token throughput (tok/s):", o.maxOutputTokensPerS)
	line(w, "Peak concurrent requests:", float64(o.maxConcurrentRequests))
	line(w, "Total token throughput (tok/s):", o.totalTokenThroughput)

	result.Set("duration", o.duration)
	result.Set("completed", o.completed)
	result.Set("failed", o.failed)
	result.Set("total_input_tokens", o.totalInput)
	result.Set("total_output_tokens", o.totalOutput)
	result.Set("request_throughput", o.requestThroughput)
	if len(b.goodput) > 0 {
		result.Set("request_goodput", o.requestGoodput)
	} else {
		result.Set("request_goodput", nil)
	}
	result.Set("output_throughput", o.outputThroughput)
	result.Set("total_token_throughput", o.totalTokenThroughput)
	if b.saveDetailed {
		result.Set("input_lens", o.inputLens)
		result.Set("output_lens", o.outputLens)
		result.Set("ttfts", o.ttfts)
		itls := make([]any, len(o.itls))
		for i, l := range o.itls {
			itls[i] = l
		}
		result.Set("itls", itls)
		result.Set("generated_texts", o.texts)
		result.Set("errors", o.errs)
	}
	result.Set("max_output_tokens_per_s", o.maxOutputTokensPerS)
	result.Set("max_concurrent_requests", o.maxConcurrentRequests)
	for _, m := range metricNames {
		if !containsStr(b.percentileMetrics, m.attr) {
			continue
		}
		s := o.samples[m.attr]
		fmt.Fprintln(w, center(m.header, 50, "-"))
		line(w, fmt.Sprintf("Mean %s (ms):", m.name), s.Mean())
		line(w, fmt.Sprintf("Median %s (ms):", m.name), s.Median())
		result.Set("mean_"+m.attr+"_ms", s.Mean())
		result.Set("median_"+m.attr+"_ms", s.Median())
		result.Set("std_"+m.attr+"_ms", s.Std())
		for _, p := range b.percentiles {
			v := s.Percentile(p)
			line(w, fmt.Sprintf("P%s %s (ms):", pWord(p), m.name), v)
			result.Set("p"+pWord(p)+"_"+m.attr+"_ms", v)
		}
	}
	fmt.Fprintln(w, strings.Repeat("=", 50))
}

func containsStr(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
