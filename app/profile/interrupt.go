package profile

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// interrupt is how a run is stopped by hand: the first ask (Ctrl-C, q on
// the dashboard, SIGTERM) stops issuing and lets in-flight requests drain
// within the grace period; the second cancels them at once. Either way
// every record is kept and every export written.
type interrupt struct {
	mu       sync.Mutex
	asked    int
	stop     func() // stops issuing
	abort    func() // cancels the in-flight requests
	inFlight func() int64
	log      io.Writer
	sigs     chan os.Signal // nil: the run does not take signals itself
	done     chan struct{}
	released bool // the run is over: a late ask does nothing
}

// interrupts wires the run's stops. With Config.Signals the run takes
// SIGINT and SIGTERM itself, so a second one is not lost (the command's
// own signal context ends the run's context at the first as well).
func (p *prepared) interrupts(stop, abort func(), inFlight func() int64, log io.Writer) *interrupt {
	in := &interrupt{stop: stop, abort: abort, inFlight: inFlight, log: log, done: make(chan struct{})}
	if !p.s.Signals {
		return in
	}
	in.sigs = make(chan os.Signal, 2)
	signal.Notify(in.sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		for {
			select {
			case <-in.sigs:
				in.ask()
			case <-in.done:
				return
			}
		}
	}()
	return in
}

// ask stops issuing the first time and aborts the drain the second.
func (in *interrupt) ask() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.released {
		return
	}
	in.asked++
	switch in.asked {
	case 1:
		n := in.inFlight()
		in.stop()
		fmt.Fprintf(in.log, "stopping: draining %d requests (Ctrl-C again to abort)\n", n)
	case 2:
		n := in.inFlight()
		in.abort()
		fmt.Fprintf(in.log, "aborting: cancelling %d requests; the exports are still written\n", n)
	}
}

// release stops taking signals; an ask after it (or under way) is done
// before the run's collector closes. A second release does nothing.
func (in *interrupt) release() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.released {
		return
	}
	in.released = true
	if in.sigs != nil {
		signal.Stop(in.sigs)
	}
	close(in.done)
}
