package tui

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/tui/internal/eta"
)

// ProgressEvery is how often Progress prints its line: often enough that a
// CI log shows the run is alive, rarely enough that a long run's log stays
// short.
const ProgressEvery = 10 * time.Second

// Progress prints a short line every interval to w until snaps closes,
// for output that is no terminal (a pipe, CI): the requests done of those
// planned (or the time of the duration), the errors, the completion rate
// since the last line and the time left, e.g.
//
//	[   20s] 240/1000 requests (24%), 0 errors, 11.9 req/s, ETA 1m04s
//
// It keeps draining snaps between lines, so the producer never waits, and
// prints nothing at the end (the summary follows). When ctx ends first it
// returns ctx's error.
func Progress(ctx context.Context, w io.Writer, info Info, snaps <-chan Frame, every time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	return progress(ctx, w, info, snaps, t.C)
}

// progress is Progress with the ticker injected, for tests.
func progress(ctx context.Context, w io.Writer, info Info, snaps <-chan Frame, tick <-chan time.Time) error {
	p := progressState{info: info, eta: eta.New(info.Mode, plan(info))}
	var last Frame
	have := false
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("tui: %w", ctx.Err())
		case s, ok := <-snaps:
			if !ok {
				return nil
			}
			last, have = s, true
			p.eta = p.eta.Observe(eta.Progress{Elapsed: s.Elapsed, Finished: s.Finished, Stage: s.Stage, Profile: s.Phase == metrics.Profile})
		case <-tick:
			if !have {
				continue
			}
			if _, err := io.WriteString(w, p.line(last)); err != nil {
				return fmt.Errorf("tui: progress line: %w", err)
			}
		}
	}
}

// progressState is what the lines need from the lines before them: the
// ETA's tracker and the count and time of the previous line, for the rate.
type progressState struct {
	info     Info
	eta      eta.Tracker
	lastDone int64
	lastAt   time.Duration
	rate     string
}

// line formats one line of Progress's output, newline included, and
// remembers what the next line's rate starts from.
func (p *progressState) line(s Frame) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%6s] ", s.Elapsed.Round(time.Second))
	if p.info.Shard != "" {
		b.WriteString("shard " + p.info.Shard + ", ")
	}
	if len(p.info.Stages) > 0 {
		fmt.Fprintf(&b, "stage %d/%d, ", min(s.Stage+1, len(p.info.Stages)), len(p.info.Stages))
	}
	if s.Phase == metrics.Warmup {
		fmt.Fprintf(&b, "warmup, %d in flight\n", s.InFlight)
		return b.String()
	}
	fmt.Fprintf(&b, "%d", s.Finished)
	switch {
	case p.info.TotalRequests > 0:
		fmt.Fprintf(&b, "/%d requests (%.0f%%)", p.info.TotalRequests, 100*float64(s.Finished)/float64(p.info.TotalRequests))
	case p.info.Duration > 0:
		fmt.Fprintf(&b, " requests (%s of %s)", s.Elapsed.Round(time.Second), p.info.Duration*time.Duration(max(len(p.info.Stages), 1)))
	default:
		b.WriteString(" requests")
	}
	errs := "errors"
	if s.Failed == 1 {
		errs = "error"
	}
	fmt.Fprintf(&b, ", %d %s", s.Failed, errs)
	if span := s.Elapsed - p.lastAt; span > 0 && s.Finished >= p.lastDone {
		p.rate = fmt.Sprintf(", %.1f req/s", float64(s.Finished-p.lastDone)/span.Seconds())
		p.lastDone, p.lastAt = s.Finished, s.Elapsed
	}
	b.WriteString(p.rate) // no newer frame: the rate the line before gave
	done := make([]eta.Done, 0, len(s.Stages))
	for _, st := range s.Stages {
		done = append(done, eta.Done{Requests: st.RequestCount, Seconds: st.DurationSec})
	}
	if left, ok := p.eta.Left(eta.Progress{Elapsed: s.Elapsed, Finished: s.Finished, Stage: s.Stage, Profile: s.Phase == metrics.Profile}, done); ok {
		fmt.Fprintf(&b, ", ETA %s", left.Round(time.Second))
	}
	if l := liveLine(s.Live); l != "" {
		b.WriteString(", " + strings.TrimSpace(l))
	}
	b.WriteByte('\n')
	return b.String()
}
