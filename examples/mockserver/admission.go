package mockserver

import (
	"context"
	"sync"
	"sync/atomic"
)

// admission caps the requests generating at once and queues the rest in
// arrival order. With max <= 0 it only counts.
type admission struct {
	max     int
	running atomic.Int64
	waiting atomic.Int64

	mu      sync.Mutex
	active  int
	waiters []chan struct{}
}

// acquire blocks until the request may start generating or ctx ends.
func (a *admission) acquire(ctx context.Context) error {
	if a.max <= 0 {
		a.running.Add(1)
		return nil
	}
	a.mu.Lock()
	if a.active < a.max && len(a.waiters) == 0 {
		a.active++
		a.mu.Unlock()
		a.running.Add(1)
		return nil
	}
	ch := make(chan struct{})
	a.waiters = append(a.waiters, ch)
	a.waiting.Add(1)
	a.mu.Unlock()
	select {
	case <-ch:
		// release handed its slot over and already counted us running.
		return nil
	case <-ctx.Done():
		a.mu.Lock()
		for i, w := range a.waiters {
			if w == ch {
				a.waiters = append(a.waiters[:i], a.waiters[i+1:]...)
				a.waiting.Add(-1)
				a.mu.Unlock()
				return ctx.Err()
			}
		}
		a.mu.Unlock()
		// Granted while we were giving up: give the slot back.
		a.release()
		return ctx.Err()
	}
}

// release ends a request's generation, handing its slot to the oldest
// waiter if there is one.
func (a *admission) release() {
	if a.max <= 0 {
		a.running.Add(-1)
		return
	}
	a.mu.Lock()
	if len(a.waiters) > 0 {
		ch := a.waiters[0]
		a.waiters[0] = nil
		a.waiters = a.waiters[1:]
		a.waiting.Add(-1)
		a.mu.Unlock()
		close(ch) // the slot passes over; running stays the same
		return
	}
	a.active--
	a.mu.Unlock()
	a.running.Add(-1)
}
