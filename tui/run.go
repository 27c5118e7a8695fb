package tui

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// frameInterval caps snapshot delivery (and so redraws) at 10 Hz.
const frameInterval = 100 * time.Millisecond

// Run shows the dashboard until snaps is closed (the run finished) or the
// user quits. On q/Ctrl-C it calls stop() (the engine then stops issuing
// and drains), on a second press stop() again (the drain is cut short),
// and keeps rendering the drain until snaps closes. It
// returns after leaving the alt screen, so the caller prints the final
// summary to a clean terminal. When ctx ends first, Run returns its error.
//
// Snapshots are drained at once whatever the dashboard is doing: only the
// newest is kept, so a slow terminal drops frames, never blocks the
// producer. opts are applied after the defaults (alt screen, 10 FPS, ctx).
func Run(ctx context.Context, info Info, snaps <-chan Frame, stop func(), opts ...tea.ProgramOption) error {
	all := append([]tea.ProgramOption{tea.WithAltScreen(), tea.WithFPS(10), tea.WithContext(ctx)}, opts...)
	p := tea.NewProgram(newModel(info, stop), all...)

	c := newCoalescer()
	go c.drain(snaps)
	quit := make(chan struct{})
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		c.forward(quit, p.Send, frameInterval)
	}()

	_, err := p.Run()
	close(quit)
	<-sent
	if ctx.Err() != nil {
		return fmt.Errorf("tui: %w", ctx.Err())
	}
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		return fmt.Errorf("tui: %w", err)
	}
	return nil
}

// coalescer sits between the producer and the program: drain takes every
// snapshot off the channel at once and keeps the newest; forward hands the
// newest to the program at most once per interval.
type coalescer struct {
	mu     sync.Mutex
	latest Frame
	fresh  bool
	closed bool
	// wake has room for one signal: a put never waits for the reader.
	wake chan struct{}
}

func newCoalescer() *coalescer { return &coalescer{wake: make(chan struct{}, 1)} }

func (c *coalescer) put(s Frame) {
	c.mu.Lock()
	c.latest, c.fresh = s, true
	c.mu.Unlock()
	c.signal()
}

func (c *coalescer) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// drain reads snaps until it closes; it never blocks on the dashboard.
func (c *coalescer) drain(snaps <-chan Frame) {
	for s := range snaps {
		c.put(s)
	}
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.signal()
}

// take returns the newest snapshot not yet taken (ok false when none) and
// whether the producer has closed its channel.
func (c *coalescer) take() (s Frame, ok, closed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok, closed = c.latest, c.fresh, c.closed
	c.fresh = false
	c.latest = Frame{}
	return s, ok, closed
}

// forward sends the newest snapshot through send at most once per
// interval, and doneMsg after the last one, until quit closes.
func (c *coalescer) forward(quit <-chan struct{}, send func(tea.Msg), interval time.Duration) {
	for {
		select {
		case <-quit:
			return
		case <-c.wake:
		}
		s, ok, closed := c.take()
		if ok {
			send(snapshotMsg{s})
		}
		if closed {
			send(doneMsg{})
			return
		}
		t := time.NewTimer(interval)
		select {
		case <-quit:
			t.Stop()
			return
		case <-t.C:
		}
	}
}
