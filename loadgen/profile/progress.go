package profile

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/surgebench/surge/metrics"
)

// progress shows the run while it goes.
type progress struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (p *progress) stop() {
	p.cancel()
	<-p.done
}

// startProgress prints one line a second in "simple" mode and nothing in
// "none".
func startProgress(ctx context.Context, ui string, w io.Writer, col *metrics.Collector, total int) *progress {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p := &progress{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		if ui != "simple" {
			<-ctx.Done()
			return
		}
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s := col.Snapshot()
				fmt.Fprintf(w, "[%5.0fs] %d/%d req  in-flight %d  err %d  TTFT p50 %.1f ms  ITL p50 %.2f ms\n",
					s.Elapsed.Seconds(), s.Finished, total, s.InFlight, s.Failed,
					s.Run[string(metrics.TTFT)].P50, s.Run[string(metrics.ITL)].P50)
			}
		}
	}()
	return p
}
