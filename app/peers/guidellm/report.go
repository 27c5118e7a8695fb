package guidellm

import (
	"crypto/rand"
	"fmt"
	"math"
	"runtime"
	"sort"

	"github.com/surgebench/surge/app/peers"
)

// strategy is one of GuideLLM's scheduling strategies: one benchmark's
// load.
type strategy struct {
	// kind is synchronous, concurrent, throughput, constant or poisson.
	kind    string
	streams int     // concurrent
	rate    float64 // constant, poisson
	maxConc int     // throughput, constant, poisson (0: none)
	rampup  float64 // seconds
	seed    int
}

// object is the strategy as GuideLLM writes it (SchedulingStrategy).
func (s strategy) object() *peers.Object {
	o := &peers.Object{}
	o.Set("type_", s.kind)
	o.Set("worker_count", nil)
	if s.maxConc > 0 {
		o.Set("max_concurrency", s.maxConc)
	} else {
		o.Set("max_concurrency", nil)
	}
	switch s.kind {
	case "concurrent":
		o.Set("streams", s.streams)
		o.Set("rampup_duration", s.rampup)
	case "throughput":
		o.Set("rampup_duration", s.rampup)
	case "constant":
		o.Set("rate", s.rate)
		o.Set("rampup_duration", s.rampup)
	case "poisson":
		o.Set("rate", s.rate)
		o.Set("random_seed", s.seed)
	}
	return o
}

// transient is a warmup or cooldown (TransientPhaseConfig): a share of
// the benchmark (percent) or an absolute size (value), in seconds or
// requests as mode prefers.
type transient struct {
	percent, value *float64
	mode           string
}

func (t transient) object() *peers.Object {
	o := &peers.Object{}
	o.Set("percent", floatPtr(t.percent))
	if t.value != nil && *t.value == math.Trunc(*t.value) {
		o.Set("value", int(*t.value))
	} else {
		o.Set("value", floatPtr(t.value))
	}
	mode := t.mode
	if mode == "" {
		mode = "prefer_duration"
	}
	o.Set("mode", mode)
	return o
}

func floatPtr(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// limits is compute_limits: the phase's seconds and requests (NaN and -1:
// none) for a benchmark bounded by maxRequests and maxSeconds.
func (t transient) limits(maxRequests int, maxSeconds float64) (secs float64, reqs int) {
	secs, reqs = math.NaN(), -1
	mode := t.mode
	if mode == "" {
		mode = "prefer_duration"
	}
	if mode != "requests" && known(maxSeconds) {
		switch {
		case t.percent != nil:
			secs = *t.percent * maxSeconds
		case t.value != nil:
			secs = *t.value
		}
	}
	if mode != "duration" && maxRequests > 0 {
		switch {
		case t.percent != nil:
			reqs = int(*t.percent * float64(maxRequests))
		case t.value != nil:
			reqs = int(*t.value)
		}
	}
	if mode == "prefer_duration" && known(secs) {
		reqs = -1
	} else if mode == "prefer_requests" && reqs >= 0 {
		secs = math.NaN()
	}
	return secs, reqs
}

// run is one benchmark done: its strategy and the surge run that did it.
type run struct {
	strategy    strategy
	f           *peers.Finished
	constraints *peers.Object
}

// compiler builds GuideLLM's report from finished benchmarks.
type compiler struct {
	// version is the report's schema: 1 (v0.6's benchmark), 2 (v0.7's
	// run).
	version               int
	runID                 string
	warmup, cooldown      transient
	maxSeconds            float64 // NaN: none
	maxRequests           int     // 0: none
	sample                int     // -1: every request
	backend, requestsInfo *peers.Object
	// profile is the profile's object once done runs are complete.
	profile func(done []run) *peers.Object
}

func uuid() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// window is a benchmark's measured period: its requests' start and end,
// and the measurement's start and end inside them (warmup and cooldown
// left out, as GuideLLM's accumulator times them).
type window struct{ requestStart, measureStart, measureEnd, requestEnd float64 }

func (c *compiler) window(stats []reqStat) window {
	w := window{requestStart: math.Inf(1), requestEnd: math.Inf(-1)}
	for _, q := range stats {
		w.requestStart = min(w.requestStart, q.start)
		w.requestEnd = max(w.requestEnd, q.end)
	}
	if len(stats) == 0 {
		return window{-1, -1, -1, -1}
	}
	w.measureStart, w.measureEnd = w.requestStart, w.requestEnd
	byEnd := append([]reqStat(nil), stats...)
	sort.SliceStable(byEnd, func(i, j int) bool { return byEnd[i].end < byEnd[j].end })
	if secs, n := c.warmup.limits(c.maxRequests, c.maxSeconds); known(secs) || n >= 0 {
		ms := math.Inf(-1)
		if known(secs) {
			ms = w.requestStart + secs
		}
		if n >= 0 && n < len(byEnd) {
			ms = max(ms, byEnd[n].start) // the start of the request after the warmup's
		}
		if !math.IsInf(ms, -1) {
			w.measureStart = ms
		}
	}
	if secs, n := c.cooldown.limits(c.maxRequests, c.maxSeconds); known(secs) || n >= 0 {
		me := math.Inf(1)
		if known(secs) && known(c.maxSeconds) {
			me = w.requestStart + c.maxSeconds - secs
		}
		if n >= 0 && c.maxRequests > 0 {
			if k := c.maxRequests - n - 2; k >= 0 && k < len(byEnd) {
				me = min(me, byEnd[k].end) // the completion before the cooldown's
			}
		}
		if !math.IsInf(me, 1) {
			w.measureEnd = me
		}
	}
	return w
}

// benchmark compiles one finished benchmark as GuideLLM's
// GenerativeBenchmark.
func (c *compiler) benchmark(done []run, i int) *peers.Object {
	r := done[i]
	stats := make([]reqStat, 0, len(r.f.Requests))
	for _, q := range r.f.Requests {
		stats = append(stats, newReqStat(q))
	}
	w := c.window(stats)
	var in byStatus[reqStat]
	made := map[string]int{}
	for _, q := range stats {
		made[q.status]++
		if q.end < w.measureStart || q.start > w.measureEnd {
			continue
		}
		switch q.status {
		case "completed":
			in.successful = append(in.successful, q)
		case "cancelled":
			in.incomplete = append(in.incomplete, q)
		default:
			in.errored = append(in.errored, q)
		}
	}
	o := &peers.Object{}
	o.Set("type_", "generative_benchmark")
	o.Set("config", c.config(done, i))
	o.Set("scheduler_state", c.schedulerState(r, stats, w, made))
	o.Set("scheduler_metrics", c.schedulerMetrics(stats, w, made))
	o.Set("metrics", c.metrics(in, w))
	reqs := &peers.Object{}
	for _, s := range []struct {
		name string
		list []reqStat
	}{{"successful", in.successful}, {"errored", in.errored}, {"incomplete", in.incomplete}} {
		list := s.list
		if c.sample >= 0 && len(list) > c.sample {
			list = list[:c.sample]
		}
		objs := make([]any, len(list))
		for k, q := range list {
			objs[k] = q.object(c.version)
		}
		reqs.Set(s.name, objs)
	}
	reqs.Set("total", nil)
	o.Set("requests", reqs)
	o.Set("start_time", w.measureStart)
	o.Set("end_time", w.measureEnd)
	o.Set("duration", w.measureEnd-w.measureStart)
	o.Set("warmup_duration", w.measureStart-w.requestStart)
	o.Set("cooldown_duration", w.requestEnd-w.measureEnd)
	return o
}

func (c *compiler) config(done []run, i int) *peers.Object {
	r := done[i]
	o := &peers.Object{}
	o.Set("id_", uuid())
	o.Set("run_id", c.runID)
	o.Set("run_index", i)
	o.Set("strategy", r.strategy.object())
	if r.constraints != nil {
		o.Set("constraints", r.constraints)
	} else {
		o.Set("constraints", &peers.Object{})
	}
	key := "sample_requests"
	if c.version >= 2 {
		key = "sample_size"
	}
	if c.sample >= 0 {
		o.Set(key, c.sample)
	} else {
		o.Set(key, nil)
	}
	o.Set("warmup", c.warmup.object())
	o.Set("cooldown", c.cooldown.object())
	o.Set("prefer_response_metrics", true)
	o.Set("profile", c.profile(done[:i+1]))
	o.Set("requests", c.requestsInfo)
	o.Set("backend", c.backend)
	env := &peers.Object{}
	env.Set("type_", "surge")
	env.Set("surge_artifacts", r.f.Dir)
	o.Set("environment", env)
	return o
}

func (c *compiler) schedulerState(r run, stats []reqStat, w window, made map[string]int) *peers.Object {
	o := &peers.Object{}
	start, end := w.requestStart, w.requestEnd
	if !r.f.Start.IsZero() {
		start = float64(r.f.Start.UnixNano()) / 1e9
	}
	if !r.f.End.IsZero() {
		end = float64(r.f.End.UnixNano()) / 1e9
	}
	lastStart := math.Inf(-1)
	for _, q := range stats {
		lastStart = max(lastStart, q.start)
	}
	if len(stats) == 0 {
		lastStart = w.requestEnd
	}
	o.Set("node_id", 0)
	o.Set("num_processes", 1)
	o.Set("start_time", start)
	o.Set("end_time", end)
	o.Set("start_requests_time", w.requestStart)
	o.Set("end_requests_time", w.requestEnd)
	o.Set("end_queuing_time", lastStart)
	o.Set("end_queuing_constraints", &peers.Object{})
	o.Set("end_processing_time", w.requestEnd)
	o.Set("end_processing_constraints", &peers.Object{})
	o.Set("scheduler_constraints", &peers.Object{})
	prog := &peers.Object{}
	prog.Set("remaining_requests", 0.0)
	if c.maxRequests > 0 {
		prog.Set("total_requests", float64(c.maxRequests))
	} else {
		prog.Set("total_requests", nil)
	}
	prog.Set("remaining_duration", 0.0)
	prog.Set("total_duration", orNull(c.maxSeconds))
	prog.Set("stop_time", w.requestEnd)
	o.Set("progress", prog)
	n := len(stats)
	o.Set("created_requests", n)
	o.Set("queued_requests", 0)
	o.Set("pending_requests", 0)
	o.Set("processing_requests", 0)
	o.Set("processed_requests", n)
	o.Set("successful_requests", made["completed"])
	o.Set("errored_requests", made["errored"])
	o.Set("cancelled_requests", made["cancelled"])
	return o
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return -1.0 // GuideLLM's "not measured"
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func (c *compiler) schedulerMetrics(stats []reqStat, w window, made map[string]int) *peers.Object {
	var lag, dur []float64
	for _, q := range stats {
		lag = append(lag, q.start-q.targeted)
		dur = append(dur, q.end-q.start)
	}
	o := &peers.Object{}
	o.Set("start_time", w.requestStart)
	o.Set("request_start_time", w.requestStart)
	o.Set("measure_start_time", w.measureStart)
	o.Set("measure_end_time", w.measureEnd)
	o.Set("request_end_time", w.requestEnd)
	o.Set("end_time", w.requestEnd)
	rm := &peers.Object{}
	rm.Set("successful", made["completed"])
	rm.Set("errored", made["errored"])
	rm.Set("incomplete", made["cancelled"])
	rm.Set("total", len(stats))
	o.Set("requests_made", rm)
	o.Set("queued_time_avg", mean(lag))
	o.Set("resolve_start_delay_avg", mean(lag))
	o.Set("resolve_targeted_start_delay_avg", mean(lag))
	o.Set("request_start_delay_avg", mean(lag))
	o.Set("request_targeted_start_delay_avg", mean(lag))
	o.Set("request_time_avg", mean(dur))
	o.Set("resolve_end_delay_avg", 0.0)
	o.Set("resolve_time_avg", mean(dur))
	o.Set("finalized_delay_avg", 0.0)
	o.Set("processed_delay_avg", 0.0)
	return o
}

// valuesOf is a per-request value of each status, a request without one
// left out (from_values_function's None).
func valuesOf(in byStatus[reqStat], f func(reqStat) []weighted) byStatus[weighted] {
	each := func(qs []reqStat) []weighted {
		var out []weighted
		for _, q := range qs {
			out = append(out, f(q)...)
		}
		return out
	}
	return byStatus[weighted]{each(in.successful), each(in.incomplete), each(in.errored)}
}

// one is a value of weight 1 (NaN as 0, as GuideLLM's `or 0.0` makes it).
func one(f float64) []weighted { return []weighted{{zeroIfNaN(f), 1}} }

func (c *compiler) metrics(in byStatus[reqStat], w window) *peers.Object {
	start, end := w.measureStart, w.measureEnd
	o := &peers.Object{}
	rt := &peers.Object{}
	rt.Set("successful", len(in.successful))
	rt.Set("errored", len(in.errored))
	rt.Set("incomplete", len(in.incomplete))
	rt.Set("total", len(in.successful)+len(in.errored)+len(in.incomplete))
	o.Set("request_totals", rt)
	o.Set("requests_per_second", statusRates(valuesOf(in, func(q reqStat) []weighted { return []weighted{{q.end, 1}} }), &start, &end).object())
	ivs := func(qs []reqStat) []interval {
		out := make([]interval, len(qs))
		for i, q := range qs {
			out[i] = interval{q.start, q.end, 1}
		}
		return out
	}
	o.Set("request_concurrency", statusConcurrency(byStatus[interval]{ivs(in.successful), ivs(in.incomplete), ivs(in.errored)}, &start, &end).object())
	o.Set("request_latency", statusValues(valuesOf(in, func(q reqStat) []weighted { return one(q.latency()) })).object())
	o.Set("request_streaming_iterations_count", statusValues(valuesOf(in, func(q reqStat) []weighted { return one(float64(q.iterations)) })).object())
	o.Set("prompt_token_count", statusValues(valuesOf(in, func(q reqStat) []weighted { return one(q.promptTokens()) })).object())
	o.Set("output_token_count", statusValues(valuesOf(in, func(q reqStat) []weighted { return one(q.outputTokens()) })).object())
	o.Set("total_token_count", statusValues(valuesOf(in, func(q reqStat) []weighted { return one(q.totalTokens()) })).object())
	ttft := func(q reqStat) []weighted {
		if !known(q.firstToken) {
			return one(math.NaN())
		}
		return one(q.ttftMS())
	}
	o.Set("time_to_first_token_ms", statusValues(valuesOf(in, ttft)).object())
	if c.version >= 2 {
		o.Set("time_to_first_output_token_ms", statusValues(valuesOf(in, ttft)).object())
	}
	o.Set("time_per_output_token_ms", statusValues(valuesOf(in, func(q reqStat) []weighted {
		return []weighted{{zeroIfNaN(q.tpotMS()), zeroIfNaN(q.outputTokens())}}
	})).object())
	o.Set("inter_token_latency_ms", statusValues(valuesOf(in, func(q reqStat) []weighted {
		n := q.outputTokens()
		if !known(n) {
			n = 1
		}
		return []weighted{{zeroIfNaN(q.itlMS()), n - 1}}
	})).object())
	o.Set("prompt_tokens_per_second", statusRates(valuesOf(in, func(q reqStat) []weighted { return []weighted{q.promptTiming()} }), nil, nil).object())
	o.Set("output_tokens_per_second", statusRates(valuesOf(in, reqStat.outputTimings), nil, nil).object())
	o.Set("tokens_per_second", statusRates(valuesOf(in, reqStat.totalTimings), nil, nil).object())
	o.Set("output_tokens_per_iteration", statusValues(valuesOf(in, func(q reqStat) []weighted {
		var out []weighted
		for _, t := range q.outputTimings() {
			out = append(out, weighted{t.w, 1})
		}
		return out
	})).object())
	o.Set("iter_tokens_per_iteration", statusValues(valuesOf(in, func(q reqStat) []weighted {
		var out []weighted
		for _, t := range q.iterTimings() {
			out = append(out, weighted{t.w, 1})
		}
		return out
	})).object())
	o.Set("text", modality(in, []string{"tokens", "words", "characters"}, "tokens"))
	o.Set("image", modality(in, []string{"tokens", "images", "pixels", "bytes"}, ""))
	o.Set("video", modality(in, []string{"tokens", "frames", "seconds", "bytes"}, ""))
	o.Set("audio", modality(in, []string{"tokens", "samples", "seconds", "bytes"}, ""))
	if c.version >= 2 {
		tc := &peers.Object{}
		for _, k := range []string{"tokens", "mixed_tokens", "count"} {
			tc.Set(k, nil)
		}
		o.Set("tool_call", tc)
	}
	return o
}

// modality is a modality's metrics summary: filled is the one property
// surge counts (text tokens), the others null, as GuideLLM leaves a
// property nobody counted.
func modality(in byStatus[reqStat], props []string, filled string) *peers.Object {
	o := &peers.Object{}
	for _, p := range props {
		if p == filled {
			o.Set(p, timedSummary(in))
		} else {
			o.Set(p, nil)
		}
	}
	return o
}

// timedSummary is GenerativeMetricsSummary.compile for text tokens: the
// input, output and total values, their rates and their concurrency.
func timedSummary(in byStatus[reqStat]) any {
	type timed struct {
		start, end, in, out float64
	}
	conv := func(qs []reqStat) []timed {
		var out []timed
		for _, q := range qs {
			if q.start == 0 || q.end == 0 || (q.prompt < 0 && q.output < 0) {
				continue
			}
			out = append(out, timed{q.start, q.end, zeroIfNaN(q.promptTokens()), float64(max(q.output, 0))})
		}
		return out
	}
	ts := byStatus[timed]{conv(in.successful), conv(in.incomplete), conv(in.errored)}
	part := func(val func(timed) float64) (vals byStatus[weighted], rates byStatus[weighted], ivs byStatus[interval], dists []any) {
		for _, s := range []struct {
			src []timed
			v   *[]weighted
			r   *[]weighted
			c   *[]interval
		}{{ts.successful, &vals.successful, &rates.successful, &ivs.successful}, {ts.incomplete, &vals.incomplete, &rates.incomplete, &ivs.incomplete},
			{ts.errored, &vals.errored, &rates.errored, &ivs.errored}} {
			for _, t := range s.src {
				*s.v = append(*s.v, weighted{val(t), 1})
				*s.r = append(*s.r, weighted{t.end, val(t)})
				*s.c = append(*s.c, interval{t.start, t.end, val(t)})
			}
		}
		vd := statusValues(vals)
		if vd.total.totalSum == 0 {
			return vals, rates, ivs, []any{nil, nil, nil}
		}
		return vals, rates, ivs, []any{vd.object(), statusRates(rates, nil, nil).object(), statusConcurrency(ivs, nil, nil).object()}
	}
	iv, ir, ic, id := part(func(t timed) float64 { return t.in })
	ov, or, oc, od := part(func(t timed) float64 { return t.out })
	o := &peers.Object{}
	o.Set("input", id[0])
	o.Set("input_per_second", id[1])
	o.Set("input_concurrency", id[2])
	o.Set("output", od[0])
	o.Set("output_per_second", od[1])
	o.Set("output_concurrency", od[2])
	if id[0] != nil && od[0] != nil {
		cat := func(a, b byStatus[weighted]) byStatus[weighted] {
			return byStatus[weighted]{append(append([]weighted{}, a.successful...), b.successful...),
				append(append([]weighted{}, a.incomplete...), b.incomplete...), append(append([]weighted{}, a.errored...), b.errored...)}
		}
		cati := func(a, b byStatus[interval]) byStatus[interval] {
			return byStatus[interval]{append(append([]interval{}, a.successful...), b.successful...),
				append(append([]interval{}, a.incomplete...), b.incomplete...), append(append([]interval{}, a.errored...), b.errored...)}
		}
		o.Set("total", statusValues(cat(iv, ov)).object())
		o.Set("total_per_second", statusRates(cat(ir, or), nil, nil).object())
		o.Set("total_concurrency", statusConcurrency(cati(ic, oc), nil, nil).object())
	} else {
		o.Set("total", nil)
		o.Set("total_per_second", nil)
		o.Set("total_concurrency", nil)
	}
	return o
}

// metadata is the report's metadata: its schema version, and surge in
// place of the GuideLLM and Python that wrote GuideLLM's.
func metadata(version int, surge string) *peers.Object {
	o := &peers.Object{}
	o.Set("version", version)
	o.Set("guidellm_version", "surge "+surge)
	o.Set("python_version", "none (written by surge, in Go)")
	o.Set("platform", runtime.GOOS+"-"+runtime.GOARCH)
	return o
}
