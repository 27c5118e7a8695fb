package metrics

import (
	"context"
	"time"
)

// A server that traces its requests (vLLM's OTLP spans) sends its account
// of a request apart from the response, seconds later (an exporter sends
// batches). The shard that takes a record whose server said nothing in
// the response looks for its span by trace id; when the span has not come
// yet the record waits (parked) until it comes or the wait runs out, and
// only then is computed, aggregated and written: its JSONL line then
// carries the span's parts. The parked records are bounded per shard;
// past the bound a record goes on without its span.

// ServerSpans is where the shards find the timings a server sent apart
// from its responses, by trace id (telemetry/otlp's Receiver).
type ServerSpans interface {
	// Take returns and forgets the timing of the request with trace id.
	Take(trace [16]byte) (ServerTiming, bool)
	// Received counts the timings received so far: a parked record looks
	// again when it grew.
	Received() uint64
}

// maxParked bounds the records one shard keeps waiting for their spans.
const maxParked = 1 << 14

// spanLook is how often the shards look for the spans of parked records.
const spanLook = 50 * time.Millisecond

// SpanJoins counts how the records fared with the server's spans.
type SpanJoins struct {
	// Joined records found their span; Missed ones did not within the
	// wait (or the run ended first); Unwaited ones went on without
	// waiting, the shard's parked records at their bound.
	Joined, Missed, Unwaited int64
}

// WithServerSpans has the shards join each successful record whose
// response carried no timing to its server span from spans, waiting up to
// wait for it to come. Every successful record then has a breakdown (its
// server's parts unknown when no span came).
func WithServerSpans(spans ServerSpans, wait time.Duration) Option {
	return func(c *Collector) {
		c.spans, c.spanWait, c.breakdownAll = spans, wait, true
	}
}

// parked is a record waiting for its span until the run clock reads
// until.
type parked struct {
	r     *Record
	until int64
}

// joinSpan gives r its span's timing, or parks it: false when parked (the
// shard processes it later).
func (s *shard) joinSpan(r *Record) bool {
	if s.c.spans == nil || r.Err != nil || r.Server.Known() {
		return true
	}
	id, ok := TraceID(r.RequestID)
	if !ok {
		return true
	}
	if t, ok := s.c.spans.Take(id); ok {
		r.Server = t
		s.c.joins.Joined.Add(1)
		return true
	}
	if len(s.parked) >= maxParked {
		s.c.joins.Unwaited.Add(1)
		return true
	}
	s.parked = append(s.parked, parked{r: r, until: s.c.now() + int64(s.c.spanWait)})
	s.c.parkedNow.Add(1)
	return false
}

// lookParked processes the parked records whose span came, and those
// whose wait ran out (all of them when final).
func (s *shard) lookParked(final bool) {
	if len(s.parked) == 0 {
		return
	}
	now := s.c.now()
	got := s.c.spans.Received()
	if got == s.spansSeen && !final && s.parked[0].until > now {
		return // nothing new, and the oldest still waits
	}
	s.spansSeen = got
	keep := s.parked[:0]
	for _, p := range s.parked {
		id, _ := TraceID(p.r.RequestID)
		t, ok := s.c.spans.Take(id)
		switch {
		case ok:
			p.r.Server = t
			s.c.joins.Joined.Add(1)
		case final || p.until <= now:
			s.c.joins.Missed.Add(1)
		default:
			keep = append(keep, p)
			continue
		}
		s.c.parkedNow.Add(-1)
		s.process(p.r)
	}
	clear(s.parked[len(keep):])
	s.parked = keep
}

// lookSpans wakes the shards with parked records every spanLook until
// stop is closed.
func (c *Collector) lookSpans(stop <-chan struct{}) {
	t := time.NewTicker(spanLook)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if c.parkedNow.Load() == 0 {
				continue
			}
			for _, s := range c.shards {
				select {
				case s.in <- msg{kind: msgLook}:
				default: // a busy shard looks with its next message
				}
			}
		}
	}
}

// AwaitSpans waits until every record waiting for its server span has
// it, or the wait (WithServerSpans) has run out for all of them, or ctx
// ends: call it after the run's last request, before Close, so the
// records' spans have their time to come. It returns at once without
// spans.
func (c *Collector) AwaitSpans(ctx context.Context) {
	if c.spans == nil {
		return
	}
	deadline := time.NewTimer(c.spanWait + spanLook)
	defer deadline.Stop()
	t := time.NewTicker(spanLook)
	defer t.Stop()
	for c.parkedNow.Load() > 0 {
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			return
		case <-t.C:
		}
	}
}

// Waiting counts the records waiting for their server spans.
func (c *Collector) Waiting() int64 { return c.parkedNow.Load() }
