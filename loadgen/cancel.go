package loadgen

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/surgebench/surge/metrics"
)

// ErrRequestCancelled is the error type of a request cancelled on purpose
// (WithCancellation), AIPerf's RequestCancellationError; its code is
// CancelledCode.
const ErrRequestCancelled = "RequestCancellationError"

// CancelledCode is the status a request cancelled on purpose is recorded
// with: 499, nginx's "client closed request", as AIPerf records it.
const CancelledCode = 499

// cancelPlan chooses the requests a run cancels on purpose.
type cancelPlan struct {
	// below: a request is chosen when its hash, as a fraction of 2^64, is
	// below frac (frac 1 chooses every one).
	frac  float64
	delay time.Duration
	seed  uint64
}

// WithCancellation cancels a share frac (0 to 1) of the profile phase's
// requests delay after each one's request was fully written (the server
// has the whole request; a delay of 0 disconnects at once), by cancelling
// its context: the connection is closed, mid-stream if the answer had
// begun. A request answered in full before its delay is not cancelled.
// Which requests are chosen depends on seed and on each request's place in
// the plan (stage, session start, turn), not on timing, so a run chooses
// the same ones again; warmup requests are never chosen (as AIPerf). A
// cancelled request becomes a failed record (ErrRequestCancelled, code
// CancelledCode) with Cancelled set, does not count towards
// WithFailureThreshold, and ends its session.
func WithCancellation(frac float64, delay time.Duration, seed uint64) Option {
	return func(g *Generator) {
		if frac > 0 {
			g.cancel = &cancelPlan{frac: min(frac, 1), delay: max(delay, 0), seed: seed}
		}
	}
}

// cancelAfter says whether turn turn of the session started key-th in
// profile stage stage is to be cancelled, and after how long (-1: not).
func (g *Generator) cancelAfter(phase metrics.Phase, stage, key, turn int) time.Duration {
	p := g.cancel
	if p == nil || phase != metrics.Profile {
		return -1
	}
	if p.frac >= 1 || p.chosen(stage, key, turn) {
		return p.delay
	}
	return -1
}

// chosen hashes the request's place in the plan with the seed into a
// uniform fraction and compares it with frac.
func (p *cancelPlan) chosen(stage, key, turn int) bool {
	h := mix64(p.seed ^ 0x63616e63656c) // "cancel"
	h = mix64(h ^ uint64(stage))
	h = mix64(h ^ uint64(key))
	h = mix64(h ^ uint64(turn))
	return float64(h>>11)/(1<<53) < p.frac
}

// mix64 is splitmix64's finaliser: a bijection that spreads every input
// bit over the output.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// cut is one chosen request's cancellation: a context its request runs
// under, cancelled delay after arm (the request fully written).
type cut struct {
	ctx    context.Context
	cancel context.CancelFunc
	delay  time.Duration
	now    func() int64
	armed  atomic.Bool
	timer  atomic.Pointer[time.Timer]
	// at is when the cancel fired (run clock; 0: not yet).
	at atomic.Int64
}

func newCut(parent context.Context, delay time.Duration, now func() int64) *cut {
	c := &cut{delay: delay, now: now}
	c.ctx, c.cancel = context.WithCancel(parent)
	return c
}

// arm starts the delay; only the first call counts (a retry on a fresh
// connection writes the request again).
func (c *cut) arm() {
	if c.armed.Swap(true) {
		return
	}
	c.timer.Store(time.AfterFunc(c.delay, func() {
		c.at.Store(c.now())
		c.cancel()
	}))
}

// stop ends the cut: the timer if it has not fired, and the context.
func (c *cut) stop() {
	if t := c.timer.Load(); t != nil {
		t.Stop()
	}
	c.cancel()
}

// settle turns the record's failure into the planned cancellation when the
// cut fired before the request ended (a failure that came first, or an
// answer read in full, stands).
func (c *cut) settle(rec *metrics.Record) {
	rec.CancelPlanned, rec.CancelAfterNs = true, int64(c.delay)
	at := c.at.Load()
	if at == 0 || rec.Err == nil || at > rec.EndNs {
		return
	}
	rec.Cancelled, rec.CancelledNs = true, at
	rec.Err = &metrics.Error{Code: CancelledCode, Type: ErrRequestCancelled,
		Message: fmt.Sprintf("cancelled on purpose %s after the request was sent", c.delay)}
}
