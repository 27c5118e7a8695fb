package loadgen

import "context"

// WithPrefillConcurrency caps the requests sent but not yet past their
// first token at n (0: no cap), as a server's prefill queue sees them: a
// request waits for a slot before it is sent, and gives the slot back at
// its first text event, or at its end when it has none (a failure, a
// cancellation, a response that does not stream). The wait is the
// record's PrefillWaitNs; it runs before the request timeout starts, and
// holds the request's concurrency slot. All phases are capped, warmup
// included.
func WithPrefillConcurrency(n int) Option {
	return func(g *Generator) {
		if n > 0 {
			g.prefill = make(chan struct{}, n)
		}
	}
}

// InPrefill is the number of requests sent whose first token has not
// arrived (those waiting for a prefill slot not counted): the dashboard's
// "in prefill".
func (g *Generator) InPrefill() int64 { return g.inPrefill.Load() }

// prefillSlot is one request's hold on the prefill count (and on a slot
// of the cap, when set), given back once.
type prefillSlot struct{ held bool }

// enterPrefill takes a prefill slot for a request about to be sent,
// waiting while the cap is reached; false when ctx ended first.
func (g *Generator) enterPrefill(ctx context.Context, p *prefillSlot) bool {
	if g.prefill != nil {
		select {
		case g.prefill <- struct{}{}:
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
	if g.prefill != nil {
		<-g.prefill
	}
}
