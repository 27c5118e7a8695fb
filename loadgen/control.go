package loadgen

import (
	"errors"
	"fmt"
	"math"
	"sync"
)

// Live load modes: what a Controller adjusts.
const (
	ControlConcurrency = "concurrency"
	ControlRequestRate = "request_rate"
)

// ErrControlClosed is returned by a change made after the live session
// ended.
var ErrControlClosed = errors.New("the live session has ended")

// ControlState is what a live session applies now.
type ControlState struct {
	// Mode is ControlConcurrency or ControlRequestRate.
	Mode string `json:"mode"`
	// Value is the concurrency cap (a whole number) or the request rate in
	// requests/s.
	Value float64 `json:"value"`
	// Step is what Step(±1) adds or takes away.
	Step float64 `json:"step"`
	// Paused is set while issuing is paused (in-flight requests go on).
	Paused bool `json:"paused"`
	// Changes counts the changes so far; every change ends the stage in
	// progress and the next stage starts at the new setting.
	Changes int `json:"changes"`
	// Done is set once the session has ended; no change is accepted then.
	Done bool `json:"done"`
}

// Controller holds the adjustable load of a live session: a concurrency
// cap or a request rate, and whether issuing is paused. Keys in the
// dashboard, the HTTP control port and `surge search` change it; the
// generator's live runner (RunLive) watches it and starts a new stage at
// every change, without waiting for or cancelling the requests in flight.
// It is safe for concurrent use.
type Controller struct {
	mu      sync.Mutex
	st      ControlState
	min     float64
	max     float64
	changed chan struct{} // closed at the next change, then replaced
}

// ControlOption configures a Controller.
type ControlOption func(*Controller)

// WithControlStep sets what one Step adds or takes away (default 1: one
// slot, or one request/s).
func WithControlStep(step float64) ControlOption {
	return func(c *Controller) { c.st.Step = step }
}

// WithControlBounds bounds the values a change may reach (defaults: 1 to
// 1,000,000 for a concurrency, 0.001 to 1,000,000 requests/s for a rate).
// A change past a bound is clamped to it.
func WithControlBounds(lo, hi float64) ControlOption {
	return func(c *Controller) { c.min, c.max = lo, hi }
}

// NewController starts a live session in mode at value. The value is
// checked as the matching flag would be.
func NewController(mode string, value float64, opts ...ControlOption) (*Controller, error) {
	c := &Controller{st: ControlState{Mode: mode, Value: value, Step: 1}, changed: make(chan struct{})}
	switch mode {
	case ControlConcurrency:
		c.min, c.max = 1, 1e6
	case ControlRequestRate:
		c.min, c.max = 0.001, 1e6
	default:
		return nil, fmt.Errorf("live control: mode must be %s or %s, got %q", ControlConcurrency, ControlRequestRate, mode)
	}
	for _, o := range opts {
		o(c)
	}
	if !(c.st.Step > 0) || math.IsInf(c.st.Step, 0) {
		return nil, fmt.Errorf("live control: step must be > 0, got %v", c.st.Step)
	}
	if !(c.min > 0) || !(c.max >= c.min) || math.IsInf(c.max, 0) {
		return nil, fmt.Errorf("live control: bounds [%v, %v] must satisfy 0 < low ≤ high", c.min, c.max)
	}
	if err := c.check(value); err != nil {
		return nil, err
	}
	return c, nil
}

// check validates a value asked for explicitly (Set): out-of-range values
// are errors here, while relative changes are clamped.
func (c *Controller) check(v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%s must be a finite number, got %v", c.st.Mode, v)
	}
	if c.st.Mode == ControlConcurrency && v != math.Trunc(v) {
		return fmt.Errorf("concurrency must be a whole number, got %v", v)
	}
	if v < c.min || v > c.max {
		return fmt.Errorf("%s must be between %v and %v, got %v", c.st.Mode, c.min, c.max, v)
	}
	return nil
}

// State returns the setting in force.
func (c *Controller) State() ControlState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st
}

// Changed returns a channel closed at the next change (or when the session
// ends). Take it before reading State so that no change slips between.
func (c *Controller) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// update applies f under the lock and, when it changed the setting,
// counts the change and wakes the watchers.
func (c *Controller) update(f func(st *ControlState) error) (ControlState, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.st.Done {
		return c.st, ErrControlClosed
	}
	next := c.st
	if err := f(&next); err != nil {
		return c.st, err
	}
	if next == c.st {
		return c.st, nil // nothing changed: no new stage
	}
	next.Changes++
	c.st = next
	close(c.changed)
	c.changed = make(chan struct{})
	return c.st, nil
}

// clamp brings a relative change into bounds; a concurrency rounds to the
// nearest whole number (halving 5 gives 3, never 2.5).
func (c *Controller) clamp(v float64) float64 {
	if c.st.Mode == ControlConcurrency {
		v = math.Round(v)
	}
	return min(max(v, c.min), c.max)
}

// Set applies an explicit value; one out of range is an error and changes
// nothing.
func (c *Controller) Set(v float64) (ControlState, error) {
	if err := c.check(v); err != nil {
		return c.State(), err
	}
	return c.update(func(st *ControlState) error { st.Value = v; return nil })
}

// Step adds n steps (negative n takes them away), clamped to the bounds.
func (c *Controller) Step(n int) (ControlState, error) {
	return c.update(func(st *ControlState) error { st.Value = c.clamp(st.Value + float64(n)*st.Step); return nil })
}

// Double doubles the value, clamped to the upper bound.
func (c *Controller) Double() (ControlState, error) {
	return c.update(func(st *ControlState) error { st.Value = c.clamp(2 * st.Value); return nil })
}

// Halve halves the value, clamped to the lower bound.
func (c *Controller) Halve() (ControlState, error) {
	return c.update(func(st *ControlState) error { st.Value = c.clamp(st.Value / 2); return nil })
}

// Pause stops issuing; requests in flight finish. Pausing a paused
// session changes nothing.
func (c *Controller) Pause() (ControlState, error) {
	return c.update(func(st *ControlState) error { st.Paused = true; return nil })
}

// Resume starts issuing again at the current value.
func (c *Controller) Resume() (ControlState, error) {
	return c.update(func(st *ControlState) error { st.Paused = false; return nil })
}

// Finish ends the session: the live runner stops issuing and drains the
// requests in flight (no grace cut-off, unlike an interrupt). Later
// changes return ErrControlClosed.
func (c *Controller) Finish() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.st.Done {
		return
	}
	c.st.Done = true
	close(c.changed)
}
