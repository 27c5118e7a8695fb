package mockserver

import (
	"strconv"
	"time"
)

// The mock's own account of a request's time, in the shapes servers give
// theirs, so a client can split its latency with no GPU: its queue is the
// wait behind MaxRunning (from the handler's entry to admission), its
// prefill from admission to the first token's flush, its decode from the
// first token's flush to the last's.

// queued is g's time in the queue.
func (g *generation) queued() time.Duration { return g.admitted.Sub(g.arrival) }

// prefilled is g's time from admission to its first token (the planned
// one when no token was flushed: a whole body).
func (g *generation) prefilled() time.Duration {
	if g.firstAt.IsZero() {
		return g.first.Sub(g.admitted)
	}
	return g.firstAt.Sub(g.admitted)
}

// decoded is g's time from its first token to end.
func (g *generation) decoded(end time.Time) time.Duration {
	if g.firstAt.IsZero() {
		return end.Sub(g.first)
	}
	return end.Sub(g.firstAt)
}

// appendTimings appends `,"timings":{…}`, llama.cpp's object (with the
// queue as queue_ms when the format is the mock's own), for g ended at
// end; nothing when the OpenAI routes report no timings.
func (s *Server) appendTimings(b []byte, g *generation, end time.Time) []byte {
	if s.cfg.Timings == TimingsNone {
		return b
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	num := func(key string, x float64) {
		b = append(b, `,"`...)
		b = append(b, key...)
		b = append(b, `":`...)
		b = strconv.AppendFloat(b, x, 'f', -1, 64)
	}
	prompt, out := max(g.prompt, 1), max(g.out, 1)
	pre, dec := ms(g.prefilled()), ms(g.decoded(end))
	b = append(b, `,"timings":{"prompt_n":`...)
	b = strconv.AppendInt(b, int64(g.prompt), 10)
	num("prompt_ms", pre)
	num("prompt_per_token_ms", pre/float64(prompt))
	num("predicted_n", float64(g.out))
	num("predicted_ms", dec)
	num("predicted_per_token_ms", dec/float64(out))
	if s.cfg.Timings == TimingsMock {
		num("queue_ms", ms(g.queued()))
	}
	return append(b, '}')
}
