package loadgen

import (
	"context"
	"time"
)

// WithWarmupPrefillRamp raises the warmup's prefill cap from 1 to its
// value over d from the warmup's start, as WithPrefillConcurrencyRamp
// raises the profile's (give it after the caps: the warmup's own, else
// the profile's, which the warmup then gets a copy of).
func WithWarmupPrefillRamp(d time.Duration) Option {
	return func(g *Generator) {
		if g.warmPrefill == nil && g.prefill != nil {
			g.warmPrefill = make(chan struct{}, cap(g.prefill))
		}
		g.warmRamp = rampCap(g.warmPrefill, d)
	}
}

// rampCap holds all but one of ch's slots and returns the function that
// gives them back over d, in the steps of schedule.ConcurrencyRamp
// (increment k at k/(n−1) of d); nil when there is nothing to ramp.
func rampCap(ch chan struct{}, d time.Duration) func(ctx context.Context) {
	n := cap(ch)
	if d <= 0 || n <= 1 {
		return nil
	}
	for range n - 1 {
		ch <- struct{}{}
	}
	return func(ctx context.Context) {
		start := time.Now()
		for open := 1; open < n; open++ {
			if !Sleep(ctx, time.Until(start.Add(time.Duration(float64(d)*float64(open)/float64(n-1))))) {
				return
			}
			<-ch
		}
	}
}

// startWarmupRamp starts the warmup's prefill ramp as the warmup starts.
func (g *Generator) startWarmupRamp(ctx context.Context) {
	if g.warmRamp != nil {
		g.warmOnce.Do(func() { go g.warmRamp(ctx) })
	}
}

// drainWithin waits for the requests of a stage that drains on its own
// (Stage.Drain) for up to grace once its issuing ended, then cancels
// those left; an interrupt meanwhile drains them as any stage's.
func (g *Generator) drainWithin(ctx context.Context, grp *drainGroup, grace time.Duration) {
	done := make(chan struct{})
	go func() { grp.wg.Wait(); close(done) }()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		grp.cancel()
		<-done
	case <-ctx.Done():
		g.drain(ctx, &grp.wg, grp.cancel, true)
	}
}
