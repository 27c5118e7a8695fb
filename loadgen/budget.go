package loadgen

import (
	"context"
	"sync"
)

// requestBudget is a stage's request count, spent on whole sessions: a
// session reserves every turn it will send when it starts, so a session
// started later never takes a turn from one already running, and sessions
// are sent whole, in order (only the last one started may be cut, when the
// count ends inside it). A session that ends early (a failed turn) gives
// back what it did not send.
type requestBudget struct {
	mu sync.Mutex
	// left is not reserved by any session; held is reserved by running
	// sessions and not yet sent (a session may still give it back).
	left, held int64
	// freed is closed (and replaced) when turns come back or the last held
	// turn is sent, waking every start that waits in more.
	freed chan struct{}
}

// unlimited stands for no count (a stage bound by time).
const unlimited = 1 << 62

func newRequestBudget(count int) *requestBudget {
	b := &requestBudget{left: unlimited, freed: make(chan struct{})}
	if count > 0 {
		b.left = int64(count)
	}
	return b
}

// reserve takes up to turns requests for a session about to start and
// returns how many it got (0: the count is spent, or held by sessions
// still running).
func (b *requestBudget) reserve(turns int) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := min(int64(turns), b.left)
	b.left -= n
	b.held += n
	return int(n)
}

// use spends one reserved turn: the session is sending it.
func (b *requestBudget) use() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held--; b.held == 0 {
		b.wake()
	}
}

// done ends a session that reserved turns and was left unused of them
// (it ended early): they go back to the budget.
func (b *requestBudget) done(unused int) {
	if unused == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held -= int64(unused)
	b.left += int64(unused)
	b.wake()
}

// wake wakes every start waiting in more; b.mu is held.
func (b *requestBudget) wake() {
	close(b.freed)
	b.freed = make(chan struct{})
}

// more reports whether another session could still start: it waits while
// the count is spent but running sessions hold unsent turns they may give
// back.
// It returns false once nothing is left, or when ctx ends.
func (b *requestBudget) more(ctx context.Context) bool {
	for {
		b.mu.Lock()
		left, held, freed := b.left, b.held, b.freed
		b.mu.Unlock()
		switch {
		case left > 0:
			return true
		case held == 0:
			return false
		}
		select {
		case <-freed:
		case <-ctx.Done():
			return false
		}
	}
}
