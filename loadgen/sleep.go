package loadgen

import (
	"context"
	"time"
)

// A sleeper waits for the dispatcher's send times. Go's timers wake late
// when the process is idle (the netpoller waits in whole milliseconds), so
// the dispatcher used to wake 300 µs early and spin until the send time:
// ≈ 70 µs of CPU a request, 7% of a core at 1,000 req/s. On Linux a timerfd
// in the netpoller wakes it within tens of microseconds instead, at the
// cost of three (raw) system calls (sleep_linux.go); elsewhere the timer and the
// spin remain.
type sleeper interface {
	// sleep returns after d, or false once ctx (the sleeper's own) ends.
	sleep(d time.Duration) bool
	// early is how long before a send time sleep should end: the rest is
	// spent yielding until the exact time.
	early() time.Duration
	close()
}

// timerSleeper sleeps on a Go timer.
type timerSleeper struct {
	ctx   context.Context
	timer *time.Timer
}

func newTimerSleeper(ctx context.Context) *timerSleeper {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &timerSleeper{ctx: ctx, timer: t}
}

func (s *timerSleeper) sleep(d time.Duration) bool {
	s.timer.Reset(d)
	select {
	case <-s.timer.C:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// early: timers here overshoot by a few hundred microseconds.
func (s *timerSleeper) early() time.Duration { return 300 * time.Microsecond }

func (s *timerSleeper) close() { s.timer.Stop() }
