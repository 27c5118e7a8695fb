package endpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/surgebench/surge/metrics"
)

// The server's own account of a request's time, in each shape servers
// give it: read once per response (its last chunk, its headers), never
// per token, and without allocating. Durations that are not believable
// (negative, NaN, past a day) are dropped, not kept: a part the server
// did not give believably is unknown.

// maxServerNs bounds a believable server duration: a day.
const maxServerNs = int64(24 * 3600 * 1e9)

// setDur sets field f of t to x units of unit ns, when believable.
func setDur(t *metrics.ServerTiming, f metrics.ServerFields, x, unit float64) {
	ns := x * unit
	if math.IsNaN(ns) || ns < 0 || ns > float64(maxServerNs) {
		return
	}
	t.Set(f, int64(math.Round(ns)))
}

// parseTimings reads llama.cpp's `timings` object (prompt_n, prompt_ms,
// predicted_n, predicted_ms, ...): the prompt's processing and the
// generation after it. surge's mock adds queue_ms, its queue, which no
// llama.cpp build sends: its account is then the mock's own.
func parseTimings(s *scanner, t *metrics.ServerTiming) error {
	if s.peek() != '{' {
		return s.skip()
	}
	var got metrics.ServerTiming
	err := s.object(func(key []byte) error {
		var f metrics.ServerFields
		switch string(key) {
		case "prompt_ms":
			f = metrics.ServerPrefill
		case "predicted_ms":
			f = metrics.ServerDecode
		case "queue_ms":
			f = metrics.ServerQueue
		default:
			return s.skip()
		}
		x, ok, err := s.float()
		if ok {
			setDur(&got, f, x, 1e6)
		}
		return err
	})
	if err != nil || got.Has == 0 {
		return err
	}
	got.Source = metrics.TimingLlamaCpp
	if got.Has&metrics.ServerQueue != 0 {
		got.Source = metrics.TimingMock
	}
	*t = got
	return nil
}

// parseMetaInfo reads SGLang's meta_info. With --enable-metrics it holds
// queue_time (s) and the stamps of the request's life (Unix seconds:
// request_received_ts, forward_entry_time, prefill_finished_time,
// request_finished_ts), from which its prefill (forward entry to prefill
// finished), decode (prefill finished to finished) and time to first token
// follow; e2e_latency (s) comes with the last chunk either way.
func parseMetaInfo(s *scanner, t *metrics.ServerTiming) error {
	if s.peek() != '{' {
		return s.skip()
	}
	var queue, e2e, received, forward, prefilled, finished float64
	var has uint8
	const (
		hasQueue = 1 << iota
		hasE2E
		hasReceived
		hasForward
		hasPrefilled
		hasFinished
	)
	err := s.object(func(key []byte) error {
		var dst *float64
		var bit uint8
		switch string(key) {
		case "queue_time":
			dst, bit = &queue, hasQueue
		case "e2e_latency":
			dst, bit = &e2e, hasE2E
		case "request_received_ts":
			dst, bit = &received, hasReceived
		case "forward_entry_time":
			dst, bit = &forward, hasForward
		case "prefill_finished_time":
			dst, bit = &prefilled, hasPrefilled
		case "request_finished_ts":
			dst, bit = &finished, hasFinished
		default:
			return s.skip()
		}
		x, ok, err := s.float()
		if ok {
			*dst, has = x, has|bit
		}
		return err
	})
	if err != nil {
		return err
	}
	var got metrics.ServerTiming
	if has&hasQueue != 0 {
		setDur(&got, metrics.ServerQueue, queue, 1e9)
	}
	if has&hasE2E != 0 {
		setDur(&got, metrics.ServerTotal, e2e, 1e9)
	}
	if has&(hasForward|hasPrefilled) == hasForward|hasPrefilled {
		setDur(&got, metrics.ServerPrefill, prefilled-forward, 1e9)
	}
	if has&(hasPrefilled|hasFinished) == hasPrefilled|hasFinished {
		setDur(&got, metrics.ServerDecode, finished-prefilled, 1e9)
	}
	if has&(hasReceived|hasPrefilled) == hasReceived|hasPrefilled {
		setDur(&got, metrics.ServerFirstToken, prefilled-received, 1e9)
	}
	if got.Has == 0 {
		return nil
	}
	// Chunks carry meta_info each: a later one adds what it knows.
	got.Source = metrics.TimingSGLang
	mergeTiming(t, &got)
	return nil
}

// mergeTiming updates dst with what src gives.
func mergeTiming(dst, src *metrics.ServerTiming) {
	if src.Has == 0 {
		return
	}
	if dst.Source != src.Source {
		*dst = metrics.ServerTiming{}
	}
	dst.Source = src.Source
	for _, f := range []metrics.ServerFields{metrics.ServerQueue, metrics.ServerPrefill, metrics.ServerDecode, metrics.ServerFirstToken, metrics.ServerTotal} {
		if src.Has&f == 0 {
			continue
		}
		var v int64
		switch f {
		case metrics.ServerQueue:
			v = src.Queue
		case metrics.ServerPrefill:
			v = src.Prefill
		case metrics.ServerDecode:
			v = src.Decode
		case metrics.ServerFirstToken:
			v = src.FirstToken
		default:
			v = src.Total
		}
		dst.Set(f, v)
	}
}

// The headers of TGI's account, canonical so a lookup allocates nothing.
const (
	tgiQueue      = "X-Queue-Time"
	tgiValidation = "X-Validation-Time"
	tgiInference  = "X-Inference-Time"
	tgiTotal      = "X-Total-Time"
	tgiCompute    = "X-Compute-Time"
)

// ServerHeaders reads the server's account from a response's headers:
// TGI's x-queue-time, x-validation-time, x-inference-time and
// x-total-time (or x-compute-time), in ms, which it sends with a whole
// body (a stream's headers go out before its time is known). Its queue
// part is its validation and queue; it does not split prefill from
// decode. Without them it returns the zero ServerTiming.
func ServerHeaders(h http.Header) metrics.ServerTiming {
	var t metrics.ServerTiming
	q, okQ := headerMs(h, tgiQueue)
	_, okI := headerMs(h, tgiInference)
	if !okQ && !okI {
		return t
	}
	if okQ {
		if v, ok := headerMs(h, tgiValidation); ok {
			q += v
		}
		setDur(&t, metrics.ServerQueue, q, 1e6)
	}
	if tot, ok := headerMs(h, tgiTotal); ok {
		setDur(&t, metrics.ServerTotal, tot, 1e6)
	} else if tot, ok := headerMs(h, tgiCompute); ok {
		setDur(&t, metrics.ServerTotal, tot, 1e6)
	}
	if t.Has != 0 {
		t.Source = metrics.TimingTGI
	}
	return t
}

// headerMs reads a header of milliseconds.
func headerMs(h http.Header, key string) (float64, bool) {
	vs := h[key]
	if len(vs) == 0 {
		return 0, false
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(vs[0]), 64)
	return x, err == nil
}

// KoboldPerf is koboldcpp's GET /api/extra/perf: the pace of its last
// generation and how many it made (total_gens), which tells whether the
// last is the request just made. koboldcpp gives its paces per token
// (last_process: ms per prompt token; last_eval: ms per generated token,
// of last_token_count tokens), so its decode is known (last_eval ×
// last_token_count) and its prefill is not: it does not say how many
// prompt tokens it processed.
type KoboldPerf struct {
	Timing metrics.ServerTiming
	Gens   int64
}

// ParseKoboldPerf reads /api/extra/perf's body; a body without last_eval
// and last_token_count is an error.
func ParseKoboldPerf(b []byte) (KoboldPerf, error) {
	var v struct {
		LastEval  *float64 `json:"last_eval"`
		LastCount *float64 `json:"last_token_count"`
		TotalGens int64    `json:"total_gens"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return KoboldPerf{}, fmt.Errorf("koboldcpp perf: %w", err)
	}
	if v.LastEval == nil || v.LastCount == nil {
		return KoboldPerf{}, errors.New("koboldcpp perf: no last_eval and last_token_count")
	}
	var p KoboldPerf
	if *v.LastCount >= 0 {
		setDur(&p.Timing, metrics.ServerDecode, *v.LastEval**v.LastCount, 1e6)
	}
	if p.Timing.Has != 0 {
		p.Timing.Source = metrics.TimingKobold
	}
	p.Gens = v.TotalGens
	return p, nil
}
