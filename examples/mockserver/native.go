package mockserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// The servers' native APIs whose answers carry their account of a
// request's time, in each one's shape (timings.go has the OpenAI routes'):
// SGLang's /generate (a body with "text"; meta_info with queue_time and
// the stamps --enable-metrics adds), Ollama's /api/chat (newline-delimited
// JSON; load_duration, prompt_eval_duration, eval_duration,
// total_duration) and TGI's /generate (x-queue-time, x-inference-time,
// x-validation-time, x-total-time, x-time-per-token headers). Each is the
// mock's own queue (the wait behind MaxRunning), prefill and decode.

// unixSeconds is t as SGLang stamps it: Unix seconds with a fraction.
func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// sglangMeta is meta_info for g after its sent tokens, ended at end (zero:
// not yet).
func (s *Server) sglangMeta(g *generation, end time.Time) map[string]any {
	m := map[string]any{
		"id": "mock-" + strconv.FormatUint(g.n, 10), "prompt_tokens": g.prompt, "completion_tokens": g.sent,
		"cached_tokens": 0, "finish_reason": nil,
		"queue_time": g.queued().Seconds(), "request_received_ts": unixSeconds(g.arrival),
		"forward_entry_time": unixSeconds(g.admitted),
	}
	if !g.firstAt.IsZero() {
		m["prefill_finished_time"] = unixSeconds(g.firstAt)
	}
	if !end.IsZero() {
		m["finish_reason"] = map[string]any{"type": g.finish, "length": g.out}
		if g.finish == "stop" {
			m["finish_reason"] = map[string]any{"type": "stop", "matched": nil}
		}
		m["request_finished_ts"] = unixSeconds(end)
		m["response_sent_to_client_ts"] = unixSeconds(end)
		m["e2e_latency"] = end.Sub(g.arrival).Seconds()
		if g.firstAt.IsZero() { // a whole body: its planned first token
			m["prefill_finished_time"] = unixSeconds(g.first)
		}
	}
	return m
}

// serveSGLang answers SGLang's /generate: one event per chunk of tokens
// with the text so far and meta_info, then [DONE]; or one body.
func (s *Server) serveSGLang(ctx context.Context, w http.ResponseWriter, g *generation, stream bool) error {
	var timer *time.Timer
	if !stream {
		if err := sleepUntil(ctx, &timer, g.due(g.out-1, s.cfg.ITL)); err != nil {
			return err
		}
		g.sent = g.out
		end := time.Now()
		w.Header().Set("Content-Type", "application/json")
		s.genTokens.Add(uint64(g.out))
		return json.NewEncoder(w).Encode(map[string]any{"text": string(appendWords(nil, g.words, 0, g.out)),
			"output_ids": []int{}, "meta_info": s.sglangMeta(g, end)})
	}
	fl := w.(http.Flusher) // startStream checked
	k := s.cfg.TokensPerChunk
	for i := 0; i < g.out; {
		end := min(i+k, g.out)
		if err := sleepUntil(ctx, &timer, g.due(i, s.cfg.ITL)); err != nil {
			return err
		}
		if i == 0 {
			g.firstAt = time.Now()
			s.ttft.record(g.firstAt.Sub(g.arrival))
		}
		g.sent = end
		var done time.Time
		if end == g.out {
			done = time.Now()
		}
		b, _ := json.Marshal(map[string]any{"text": string(appendWords(nil, g.words, 0, end)), "output_ids": []int{},
			"meta_info": s.sglangMeta(g, done)})
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return err
		}
		fl.Flush()
		s.genTokens.Add(uint64(end - i))
		i = end
	}
	_, err := fmt.Fprint(w, "data: [DONE]\n\n")
	fl.Flush()
	return err
}

// ollamaDone is the durations and counts of Ollama's last object.
func (s *Server) ollamaDone(m map[string]any, g *generation, end time.Time) {
	first := g.firstAt
	if first.IsZero() {
		first = g.first
	}
	m["done"] = true
	m["done_reason"] = g.finish
	m["total_duration"] = end.Sub(g.arrival).Nanoseconds()
	m["load_duration"] = g.queued().Nanoseconds()
	m["prompt_eval_count"] = g.prompt
	m["prompt_eval_duration"] = first.Sub(g.admitted).Nanoseconds()
	m["eval_count"] = g.out
	m["eval_duration"] = end.Sub(first).Nanoseconds()
}

// serveOllama answers Ollama's /api/chat: one JSON object per line, the
// last done with its durations; or one object.
func (s *Server) serveOllama(ctx context.Context, w http.ResponseWriter, g *generation, stream bool) error {
	var timer *time.Timer
	obj := func(content string) map[string]any {
		return map[string]any{"model": g.model, "created_at": time.Now().UTC().Format(time.RFC3339Nano),
			"message": map[string]any{"role": "assistant", "content": content}, "done": false}
	}
	if !stream {
		if err := sleepUntil(ctx, &timer, g.due(g.out-1, s.cfg.ITL)); err != nil {
			return err
		}
		m := obj(string(appendWords(nil, g.words, 0, g.out)))
		s.ollamaDone(m, g, time.Now())
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		s.genTokens.Add(uint64(g.out))
		return json.NewEncoder(w).Encode(m)
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		return errNoFlush
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	enc := json.NewEncoder(w) // one object, one line
	k := s.cfg.TokensPerChunk
	for i := 0; i < g.out; {
		end := min(i+k, g.out)
		if err := sleepUntil(ctx, &timer, g.due(i, s.cfg.ITL)); err != nil {
			return err
		}
		if i == 0 {
			g.firstAt = time.Now()
			s.ttft.record(g.firstAt.Sub(g.arrival))
		}
		if err := enc.Encode(obj(string(appendWords(nil, g.words, i, end)))); err != nil {
			return err
		}
		fl.Flush()
		g.sent = end
		s.genTokens.Add(uint64(end - i))
		i = end
	}
	last := obj("")
	s.ollamaDone(last, g, time.Now())
	err := enc.Encode(last)
	fl.Flush()
	return err
}

// tgiHeaders sets TGI's timing headers on a whole body's answer, ended at
// end: all in milliseconds, as TGI rounds them down.
func tgiHeaders(h http.Header, g *generation, end time.Time) {
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	inference := end.Sub(g.admitted)
	h.Set("X-Total-Time", ms(end.Sub(g.arrival)))
	h.Set("X-Validation-Time", ms(0))
	h.Set("X-Queue-Time", ms(g.queued()))
	h.Set("X-Inference-Time", ms(inference))
	h.Set("X-Time-Per-Token", ms(inference/time.Duration(max(g.out, 1))))
	h.Set("X-Prompt-Tokens", strconv.Itoa(g.prompt))
	h.Set("X-Generated-Tokens", strconv.Itoa(g.out))
}
