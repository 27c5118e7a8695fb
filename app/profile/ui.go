package profile

import (
	"bytes"
	"context"
	"io"
	"sync"
	"time"

	"github.com/surgebench/surge/tui"
)

// snapshotEvery is how often the collector is sampled for the UI (the
// dashboard redraws at most 10 Hz).
const snapshotEvery = 250 * time.Millisecond

// present shows the run while run executes and returns once run returned
// and the UI closed. stop asks the engine to stop issuing (the dashboard's
// q / Ctrl-C); frame takes a snapshot for the UI, so the collector must stay
// open until present returns. The UI keeps only the newest frame and never
// makes the pump wait (tui.Run and tui.Simple drain their channel at once),
// so the pump simply sends.
func present(ctx context.Context, mode tui.Mode, progressEvery time.Duration, info tui.Info, frame func() tui.Frame, w io.Writer, stop func(), run func()) error {
	if mode == tui.ModeNone {
		run() // nobody looks: take no snapshots
		return nil
	}
	if progressEvery <= 0 {
		progressEvery = tui.ProgressEvery
	}
	frames := make(chan tui.Frame)
	uiDone := make(chan error, 1)
	go func() {
		var err error
		switch mode {
		case tui.ModeDashboard:
			err = tui.Run(context.WithoutCancel(ctx), info, frames, stop)
		case tui.ModeSimple:
			err = tui.Simple(context.WithoutCancel(ctx), w, info, frames)
		case tui.ModeProgress:
			err = tui.Progress(context.WithoutCancel(ctx), w, info, frames, progressEvery)
		}
		for range frames { // a UI that returned early: keep the pump free
		}
		uiDone <- err
	}()
	runDone := make(chan struct{})
	pumpDone := make(chan struct{})
	go func() {
		defer close(pumpDone)
		every := snapshotEvery
		if mode == tui.ModeProgress {
			// A line every 10 s needs no frame every 250 ms: one a
			// second keeps its rate and ETA, at a quarter of the cost.
			every = min(time.Second, progressEvery)
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-runDone:
				frames <- frame() // the final state, after the drain
				close(frames)
				return
			case <-t.C:
				frames <- frame()
			}
		}
	}()
	run()
	close(runDone)
	<-pumpDone
	return <-uiDone
}

// heldLog keeps log lines back while the dashboard owns the terminal and
// prints them once it has left the alt screen.
type heldLog struct {
	mu   sync.Mutex
	w    io.Writer
	held *bytes.Buffer
}

func (h *heldLog) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held != nil {
		return h.held.Write(p)
	}
	return h.w.Write(p)
}

// hold starts keeping lines back; release prints them and stops.
func (h *heldLog) hold() {
	h.mu.Lock()
	h.held = &bytes.Buffer{}
	h.mu.Unlock()
}

func (h *heldLog) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held != nil {
		_, _ = h.w.Write(h.held.Bytes())
		h.held = nil
	}
}
