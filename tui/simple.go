package tui

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/surgebench/surge/metrics"
)

// Simple prints one progress line per second to w until snaps closes (for
// pipes and CI), then a last line with the final state, e.g.
//
//	[  12s] 340/1000 req  in-flight 8  ok 338 err 2  2150 tok/s  TTFT p50 21.3 ms p99 24.0  ITL p50 5.1 ms
//
// It keeps draining snaps between lines, so the producer never waits. When
// ctx ends first it returns ctx's error.
func Simple(ctx context.Context, w io.Writer, info Info, snaps <-chan Frame) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	return simple(ctx, w, info, snaps, t.C)
}

// simple is Simple with the ticker injected, for tests.
func simple(ctx context.Context, w io.Writer, info Info, snaps <-chan Frame, tick <-chan time.Time) error {
	var last Frame
	have, printed := false, false
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("tui: %w", ctx.Err())
		case s, ok := <-snaps:
			if !ok {
				if have && !printed {
					if _, err := io.WriteString(w, progressLine(info, last)); err != nil {
						return fmt.Errorf("tui: progress line: %w", err)
					}
				}
				return nil
			}
			last, have, printed = s, true, false
		case <-tick:
			if !have {
				continue
			}
			if _, err := io.WriteString(w, progressLine(info, last)); err != nil {
				return fmt.Errorf("tui: progress line: %w", err)
			}
			printed = true
		}
	}
}

// progressLine formats one line of Simple's output, newline included.
func progressLine(info Info, s Frame) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%5.0fs] ", s.Elapsed.Seconds())
	if info.Shard != "" {
		b.WriteString("shard " + info.Shard + "  ")
	}
	fmt.Fprintf(&b, "%d", s.Finished)
	if info.TotalRequests > 0 {
		b.WriteString("/" + strconv.Itoa(info.TotalRequests))
	}
	b.WriteString(" req")
	if len(info.Stages) > 0 {
		fmt.Fprintf(&b, "  stage %d/%d", min(s.Stage+1, len(info.Stages)), len(info.Stages))
	}
	if s.Phase == metrics.Warmup {
		b.WriteString("  warmup")
	}
	var tok float64
	if n := len(s.Timeline); n > 0 {
		tok = s.Timeline[n-1].OutputTokens
	}
	ttft, itl := s.Run[string(metrics.TTFT)], s.Run[string(metrics.ITL)]
	fmt.Fprintf(&b, "  in-flight %d  ok %d err %d  %.0f tok/s  TTFT p50 %.1f ms p99 %.1f  ITL p50 %.1f ms%s\n",
		s.InFlight, s.Finished-s.Failed, s.Failed, tok, ttft.P50, ttft.P99, itl.P50, liveLine(s.Live))
	return b.String()
}
