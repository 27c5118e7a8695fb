package inferenceperf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/surgebench/surge/app/peers"
	"github.com/surgebench/surge/internal/bounded"
)

// lifecycle is one request as inference-perf's reports see it
// (RequestLifecycleMetric), built from surge's record of it.
type lifecycle struct {
	r                         peers.Request
	stage                     int
	scheduled, start, end     float64 // Unix seconds
	failed                    bool
	errType, errMsg           string
	inputTokens               float64 // the server's prompt_tokens, else surge's count
	clientOutput              float64 // the client-side count of the output
	serverOutput              float64 // usage completion_tokens (NaN: none)
	tokenTimes                []float64
	requestBody, responseText string
}

// newLifecycle is a surge request as inference-perf records it; streamed
// says whether token times exist (api.streaming).
func newLifecycle(r peers.Request, stage int, streamed bool) lifecycle {
	l := lifecycle{r: r, stage: stage, scheduled: float64(r.IntendedNs) / 1e9, start: float64(r.StartNs) / 1e9, end: float64(r.EndNs) / 1e9,
		inputTokens: float64(r.Prompt()), clientOutput: float64(r.OSL), serverOutput: math.NaN(), responseText: r.Text}
	if l.scheduled == 0 {
		l.scheduled = l.start
	}
	if r.CompletionTokens >= 0 {
		l.serverOutput = float64(r.CompletionTokens)
	}
	if r.Err != nil || r.Cancelled {
		l.failed = true
		l.errType, l.errMsg = errorInfo(r)
		return l
	}
	if streamed && r.TTFT > 0 {
		// Every token of a chunk gets the chunk's time: a chunk of k tokens
		// adds k−1 zero gaps (inference-perf's rule), the first chunk's
		// at the first token.
		t := l.start + r.TTFT/1e3
		l.tokenTimes = append(l.tokenTimes, t)
		for _, c := range r.Chunks {
			t += c / 1e3
			l.tokenTimes = append(l.tokenTimes, t)
		}
		last := l.tokenTimes[len(l.tokenTimes)-1]
		for extra := r.OSL - len(l.tokenTimes); extra > 0; extra-- {
			l.tokenTimes = append(l.tokenTimes, last)
		}
	}
	return l
}

// errorInfo is inference-perf's ErrorResponseInfo of a failure: an HTTP
// status as "HTTP Error N" with the body, else the exception's class.
func errorInfo(r peers.Request) (string, string) {
	if r.Cancelled && r.Err == nil {
		return "CancelledError", "cancelled"
	}
	e := r.Err
	if code, ok := httpCode(e.Code); ok && code >= 400 {
		return fmt.Sprintf("HTTP Error %d", code), e.Message
	}
	switch e.Type {
	case "cancelled":
		return "CancelledError", e.Message
	case "timeout", "request_timeout":
		return "TimeoutError", "Request timed out"
	}
	t := e.Type
	if t == "" {
		t = "ClientError"
	}
	return t, e.Message
}

func httpCode(c any) (int, bool) {
	switch v := c.(type) {
	case float64:
		return int(v), true
	case int:
		return v, true
	case string:
		n, err := strconv.Atoi(v)
		return n, err == nil
	}
	return 0, false
}

// effectiveOutput is effective_output_tokens: the client-side count, or
// the server's when use_server_output_tokens and it gave one.
func (l lifecycle) effectiveOutput(useServer bool) float64 {
	if useServer && !math.IsNaN(l.serverOutput) && l.serverOutput > 0 {
		return l.serverOutput
	}
	return l.clientOutput
}

// summarize is inference-perf's summarize(): mean, min, max and each
// percentile (numpy's), or null with no values.
func summarize(xs []float64, percentiles []float64) any {
	if len(xs) == 0 {
		return nil
	}
	s := peers.NewSample(xs)
	o := &peers.Object{}
	o.Set("mean", s.Mean())
	o.Set("min", s.Min())
	o.Set("max", s.Max())
	for _, p := range percentiles {
		key := "p" + strconv.FormatFloat(p, 'g', -1, 64)
		if p == 50 {
			key = "median"
		}
		o.Set(key, s.Percentile(p))
	}
	return o
}

// tokenUsage is summarize_prompt_token_usage / summarize_output_token_usage:
// the total (and cached split) then the per-request distribution.
func tokenUsage(per []float64, percentiles []float64, prompt bool) *peers.Object {
	o := &peers.Object{}
	var total float64
	for _, x := range per {
		total += x
	}
	o.Set("total", total)
	if prompt {
		o.Set("cached", 0.0)
		o.Set("uncached", total)
	}
	if d, ok := summarize(per, percentiles).(*peers.Object); ok {
		for _, k := range d.Keys() {
			v, _ := d.Get(k)
			o.Set(k, v)
		}
	}
	return o
}

// summarizeRequests is inference-perf's summarize_requests over requests
// (a stage's, or every stage's): the load summary, the successes' latency,
// throughput and token counts, the failures by label.
func (p *plan) summarizeRequests(ls []lifecycle, stageRate *float64, concurrency *int) *peers.Object {
	pc := p.percentiles
	var ok, failed []lifecycle
	minStart, maxStart, maxEnd := math.Inf(1), math.Inf(-1), math.Inf(-1)
	var delays []float64
	for _, l := range ls {
		minStart, maxStart, maxEnd = math.Min(minStart, l.start), math.Max(maxStart, l.start), math.Max(maxEnd, l.end)
		delays = append(delays, l.start-l.scheduled)
		if l.failed {
			failed = append(failed, l)
		} else {
			ok = append(ok, l)
		}
	}
	total := maxEnd - minStart
	send := maxStart - minStart
	load := &peers.Object{}
	load.Set("count", len(ls))
	load.Set("schedule_delay", summarize(delays, pc))
	if stageRate != nil {
		achieved := 0.0
		if send > 0 {
			achieved = float64(len(ls)) / send
		}
		load.Set("send_duration", send)
		load.Set("requested_rate", *stageRate)
		load.Set("achieved_rate", achieved)
		if concurrency != nil {
			load.Set("concurrency", *concurrency)
		}
	}
	var latency, ntpot, tpot, ttft, itl, in, out, serverOut, zeros []float64
	var inTotal, outTotal float64
	mismatches := 0
	for _, l := range ok {
		latency = append(latency, l.end-l.start)
		n := l.effectiveOutput(p.useServerOutputTokens)
		if n > 0 {
			ntpot = append(ntpot, (l.end-l.start)/n)
		} else {
			ntpot = append(ntpot, 0)
		}
		if len(l.tokenTimes) > 1 {
			ttft = append(ttft, l.tokenTimes[0]-l.start)
			if n > 1 {
				tpot = append(tpot, (l.tokenTimes[len(l.tokenTimes)-1]-l.tokenTimes[0])/(n-1))
			}
			for i := 1; i < len(l.tokenTimes); i++ {
				itl = append(itl, l.tokenTimes[i]-l.tokenTimes[i-1])
			}
		}
		in = append(in, l.inputTokens)
		out = append(out, l.clientOutput)
		so := l.serverOutput
		if math.IsNaN(so) {
			so = l.clientOutput
		} else if so != l.clientOutput && p.streaming {
			mismatches++
		}
		serverOut = append(serverOut, so)
		zeros = append(zeros, 0)
		inTotal += l.inputTokens
		outTotal += n
	}
	rate := func(x float64) float64 {
		if total > 0 {
			return x / total
		}
		return 0
	}
	succ := &peers.Object{}
	succ.Set("count", len(ok))
	lat := &peers.Object{}
	lat.Set("request_latency", summarize(latency, pc))
	lat.Set("normalized_time_per_output_token", summarize(ntpot, pc))
	lat.Set("time_per_output_token", summarize(tpot, pc))
	lat.Set("time_to_first_token", summarize(ttft, pc))
	lat.Set("inter_token_latency", summarize(itl, pc))
	succ.Set("latency", lat)
	tp := &peers.Object{}
	tp.Set("input_tokens_per_sec", rate(inTotal))
	tp.Set("output_tokens_per_sec", rate(outTotal))
	tp.Set("total_tokens_per_sec", rate(inTotal+outTotal))
	tp.Set("requests_per_sec", rate(float64(len(ok))))
	tp.Set("images_per_sec", 0.0)
	tp.Set("videos_per_sec", 0.0)
	tp.Set("audios_per_sec", 0.0)
	succ.Set("throughput", tp)
	var sizes []float64
	for _, l := range ok {
		sizes = append(sizes, float64(len(l.requestBody)))
	}
	succ.Set("request_size_bytes", summarize(sizes, pc))
	media := func(keys ...string) *peers.Object {
		o := &peers.Object{}
		o.Set("count", summarize(zeros, pc))
		for _, k := range keys {
			o.Set(k, nil)
		}
		return o
	}
	succ.Set("image", media("pixels", "bytes", "aspect_ratio"))
	succ.Set("video", media("frames", "pixels", "bytes", "aspect_ratio"))
	succ.Set("audio", media("seconds", "bytes"))
	succ.Set("prompt_tokens", tokenUsage(in, pc, true))
	succ.Set("output_len", summarize(out, pc))
	succ.Set("output_tokens", tokenUsage(serverOut, pc, false))
	succ.Set("token_count_mismatches", mismatches)
	fail := &peers.Object{}
	fail.Set("count", len(failed))
	var flat, fin []float64
	for _, l := range failed {
		flat = append(flat, l.end-l.start)
		fin = append(fin, l.inputTokens)
	}
	fail.Set("request_latency", summarize(flat, pc))
	fail.Set("prompt_tokens", tokenUsage(fin, pc, true))
	fail.Set("by_label", p.errorCounts(failed))
	o := &peers.Object{}
	o.Set("benchmark_time_seconds", total)
	o.Set("load_summary", load)
	o.Set("successes", succ)
	o.Set("failures", fail)
	return o
}

// The labels of inference-perf's failure breakdown (reportgen/base.py).
var (
	httpCodeLabels = map[string]string{"429": "Rate Limit", "500": "Internal Server Error", "502": "Bad Gateway",
		"503": "Service Unavailable", "504": "Gateway Timeout"}
	httpMessageLabels = []struct {
		re    *regexp.Regexp
		label string
	}{
		{regexp.MustCompile(`(?i)context.window|context length|maximum context|max.?tokens|token.?limit`), "Context Window"},
		{regexp.MustCompile(`(?i)invalid.?json|json.?parse|malformed.?json|unexpected.?token|expecting value|unterminated string|expecting ',' delimiter`), "Invalid JSON"},
		{regexp.MustCompile(`(?i)timeout|timed.?out`), "Timeout"},
		{regexp.MustCompile(`(?i)model.?not.?found|no such model`), "Model Not Found"},
	}
	otherLabels = []struct {
		re    *regexp.Regexp
		label string
	}{
		{regexp.MustCompile(`(?i)timeout|timed.?out`), "Timeout"},
		{regexp.MustCompile(`(?i)connection.?refused|connect`), "Connection Error"},
	}
)

// parseErrorMessage is the message inside a JSON error body, else the
// body.
func parseErrorMessage(raw string) string {
	var body map[string]any
	if json.Unmarshal([]byte(raw), &body) == nil {
		e := body
		if inner, ok := body["error"].(map[string]any); ok {
			e = inner
		}
		if m, ok := e["message"]; ok {
			return fmt.Sprint(m)
		}
	}
	return raw
}

// conciseLabel is make_concise_label.
func conciseLabel(typ, msg string) string {
	if code, ok := strings.CutPrefix(typ, "HTTP Error "); ok {
		if l, ok := httpCodeLabels[code]; ok {
			return code + " - " + l
		}
		for _, m := range httpMessageLabels {
			if m.re.MatchString(msg) {
				return code + " - " + m.label
			}
		}
		return code + " - other"
	}
	for _, m := range otherLabels {
		if m.re.MatchString(msg) {
			return m.label
		}
	}
	return strings.TrimSpace(strings.ToLower(typ))
}

// errorCounts is build_error_counts: by label, most frequent first, each
// label's distinct messages (at most max_error_messages).
func (p *plan) errorCounts(failed []lifecycle) *peers.Object {
	counts := map[string]int{}
	var order []string
	msgs := map[string][]string{}
	for _, l := range failed {
		m := parseErrorMessage(l.errMsg)
		label := conciseLabel(l.errType, m)
		if counts[label] == 0 {
			order = append(order, label)
		}
		counts[label]++
		seen := false
		for _, x := range msgs[label] {
			seen = seen || x == m
		}
		if !seen && len(msgs[label]) < p.maxErrorMessages {
			msgs[label] = append(msgs[label], m)
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return counts[order[i]] > counts[order[j]] })
	o := &peers.Object{}
	for _, label := range order {
		e := &peers.Object{}
		e.Set("count", counts[label])
		var list []any
		for _, m := range msgs[label] {
			entry := &peers.Object{}
			entry.Set("message", m)
			list = append(list, entry)
		}
		if list == nil {
			list = []any{}
		}
		e.Set("messages", list)
		o.Set(label, e)
	}
	return o
}

// perRequest is one entry of per_request_lifecycle_metrics.json.
func (l lifecycle) perRequest(streamed bool) *peers.Object {
	o := &peers.Object{}
	o.Set("start_time", l.start)
	o.Set("end_time", l.end)
	o.Set("request", l.requestBody)
	if l.failed {
		o.Set("response", nil)
	} else {
		o.Set("response", l.responseText)
	}
	info := &peers.Object{}
	rm := &peers.Object{}
	text := &peers.Object{}
	text.Set("input_tokens", int(l.inputTokens))
	rm.Set("text", text)
	rm.Set("image", nil)
	rm.Set("video", nil)
	rm.Set("audio", nil)
	info.Set("request_metrics", rm)
	if l.failed {
		info.Set("response_metrics", nil)
	} else {
		resp := &peers.Object{}
		resp.Set("output_tokens", int(l.clientOutput))
		if !math.IsNaN(l.serverOutput) {
			u := &peers.Object{}
			u.Set("prompt_tokens", int(l.inputTokens))
			u.Set("completion_tokens", int(l.serverOutput))
			u.Set("total_tokens", int(l.inputTokens+l.serverOutput))
			resp.Set("server_usage", u)
		} else {
			resp.Set("server_usage", nil)
		}
		if streamed {
			resp.Set("response_chunks", []any{})
			chunks := []float64{}
			if len(l.tokenTimes) > 0 {
				chunks = append(chunks, l.tokenTimes[0])
				for _, c := range l.r.Chunks {
					chunks = append(chunks, chunks[len(chunks)-1]+c/1e3)
				}
			}
			resp.Set("chunk_times", chunks)
			times := l.tokenTimes
			if times == nil {
				times = []float64{}
			}
			resp.Set("output_token_times", times)
		}
		info.Set("response_metrics", resp)
	}
	info.Set("extra_info", &peers.Object{})
	info.Set("lora_adapter", nil)
	info.Set("labels", &peers.Object{})
	o.Set("info", info)
	if l.failed {
		e := &peers.Object{}
		e.Set("error_type", l.errType)
		e.Set("error_msg", l.errMsg)
		o.Set("error", e)
	} else {
		o.Set("error", nil)
	}
	return o
}

// bodies reads a finished run's inputs.json: each conversation's request
// bodies by turn (the requests' bytes as sent).
func bodies(ctx context.Context, dir string) (map[string][]string, error) {
	f, err := bounded.Open(ctx, filepath.Join(dir, "inputs.json"), 64<<30)
	if errors.Is(err, os.ErrNotExist) {
		return map[string][]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var doc struct {
		Data []struct {
			SessionID string            `json:"session_id"`
			Payloads  []json.RawMessage `json:"payloads"`
		} `json:"data"`
	}
	if err := json.NewDecoder(f).Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "inputs.json"), err)
	}
	out := map[string][]string{}
	for _, e := range doc.Data {
		if _, ok := out[e.SessionID]; ok {
			continue
		}
		var list []string
		for _, p := range e.Payloads {
			list = append(list, string(p))
		}
		out[e.SessionID] = list
	}
	return out, nil
}
