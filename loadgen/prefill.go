package loadgen

import (
	"context"
	"time"

	"github.com/surgebench/surge/metrics"
)

// WithPrefillConcurrency caps the requests sent but not yet past their
// first token at n (0: no cap), as a server's prefill queue sees them: a
// request waits for a slot before it is sent, and gives the slot back at
// its first text event, or at its end when it has none (a failure, a
// cancellation, a response that does not stream). The wait is the
// record's PrefillWaitNs; it runs before the request timeout starts, and
// holds the request's concurrency slot. The warmup is capped too, unless
// WithWarmupPrefillConcurrency gives it a cap of its own.
func WithPrefillConcurrency(n int) Option {
	return func(g *Generator) {
		if n > 0 {
			g.prefill = make(chan struct{}, n)
		}
	}
}

// WithWarmupPrefillConcurrency caps the warmup's requests in prefill at n
// apart from the profile's (0: the profile's cap, if any). A warmup
// request still in prefill when the profile starts keeps its warmup slot.
func WithWarmupPrefillConcurrency(n int) Option {
	return func(g *Generator) {
		if n > 0 {
			g.warmPrefill = make(chan struct{}, n)
		}
	}
}

// WithPrefillConcurrencyRamp raises the profile's prefill cap (of
// WithPrefillConcurrency, given before it) from 1 to its value over d,
// from the profile's start, in the steps of schedule.ConcurrencyRamp. The
// warmup, unless capped apart, keeps the whole cap: it gets a cap of its
// own of the same size.
func WithPrefillConcurrencyRamp(d time.Duration) Option {
	return func(g *Generator) {
		n := cap(g.prefill)
		if d <= 0 || n <= 1 {
			return
		}
		if g.warmPrefill == nil {
			g.warmPrefill = make(chan struct{}, n)
		}
		g.prefillRamp = rampCap(g.prefill, d)
	}
}

// startPrefillRamp starts the prefill ramp, once, as the profile starts;
// it ends with ctx, the run's.
func (g *Generator) startPrefillRamp(ctx context.Context) {
	if g.prefillRamp != nil {
		g.rampOnce.Do(func() { go g.prefillRamp(ctx) })
	}
}

// InPrefill is the number of requests sent whose first token has not
// arrived (those waiting for a prefill slot not counted): the dashboard's
// "in prefill".
func (g *Generator) InPrefill() int64 { return g.inPrefill.Load() }

// prefillSlot is one request's hold on the prefill count (and on a slot
// of cap, when set), given back once.
type prefillSlot struct {
	held bool
	cap  chan struct{}
}

// prefillCap is the cap a request of phase p waits on (nil: none).
func (g *Generator) prefillCap(p metrics.Phase) chan struct{} {
	if p == metrics.Warmup && g.warmPrefill != nil {
		return g.warmPrefill
	}
	return g.prefill
}

// enterPrefill takes a prefill slot for a request of phase about to be
// sent, waiting while its cap is reached; false when ctx ended first.
func (g *Generator) enterPrefill(ctx context.Context, phase metrics.Phase, p *prefillSlot) bool {
	p.cap = g.prefillCap(phase)
	if p.cap != nil {
		select {
		case p.cap <- struct{}{}:
		case <-ctx.Done():
			return false
		}
	}
	g.inPrefill.Add(1)
	p.held = true
	return true
}

// leavePrefill gives the request's slot back (at its first token, or at
// its end); later calls do nothing. It allocates nothing: it runs on the
// first token's path.
func (g *Generator) leavePrefill(p *prefillSlot) {
	if !p.held {
		return
	}
	p.held = false
	g.inPrefill.Add(-1)
	if p.cap != nil {
		<-p.cap
	}
}
