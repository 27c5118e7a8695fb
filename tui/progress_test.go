package tui

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/metrics"
)

// TestProgress: a line per tick once a frame came, with the requests done
// of those planned, the errors, the rate since the line before and the
// time left; warmup says so; a duration-bound run counts its time; nothing
// at the end.
func TestProgress(t *testing.T) {
	frame := func(elapsed time.Duration, done, failed int64, phase metrics.Phase) Frame {
		return Frame{Snapshot: metrics.Snapshot{Elapsed: elapsed, Finished: done, Failed: failed, Phase: phase, InFlight: 8}}
	}
	for _, tc := range []struct {
		name   string
		info   Info
		frames []Frame
		want   []string
	}{
		{"by count", runInfo, []Frame{frame(10*time.Second, 100, 0, metrics.Profile), frame(20*time.Second, 250, 1, metrics.Profile)}, []string{
			"[   10s] 100/1000 requests (10%), 0 errors, 10.0 req/s, ETA ",
			"[   20s] 250/1000 requests (25%), 1 error, 15.0 req/s, ETA ",
		}},
		{"warmup first", runInfo, []Frame{frame(5*time.Second, 0, 0, metrics.Warmup), frame(15*time.Second, 40, 0, metrics.Profile)}, []string{
			"[    5s] warmup, 8 in flight",
			"[   15s] 40/1000 requests (4%), 0 errors, 2.7 req/s",
		}},
		{"by duration", Info{Mode: "request_rate", Target: "5", Duration: time.Minute}, []Frame{frame(30*time.Second, 150, 3, metrics.Profile)}, []string{
			"[   30s] 150 requests (30s of 1m0s), 3 errors, 5.0 req/s",
		}},
		{"a sweep", rampInfo, []Frame{{Snapshot: metrics.Snapshot{Elapsed: 70 * time.Second, Finished: 90, Stage: 1, Phase: metrics.Profile}}}, []string{
			"[ 1m10s] stage 2/8, 90 requests (1m10s of 40m0s), 0 errors",
		}},
	} {
		snaps := make(chan Frame)
		tick := make(chan time.Time)
		var out bytes.Buffer
		errc := make(chan error, 1)
		go func() { errc <- progress(t.Context(), &out, tc.info, snaps, tick) }()
		tick <- time.Time{} // nothing yet: no line
		for _, f := range tc.frames {
			snaps <- f
			tick <- time.Time{}
		}
		close(snaps)
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != len(tc.want) {
			t.Fatalf("%s: %d lines, want %d:\n%s", tc.name, len(lines), len(tc.want), out.String())
		}
		for i, w := range tc.want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("%s: line %d\n got %q\nwant %q…", tc.name, i, lines[i], w)
			}
		}
	}
}

func TestProgressContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := progress(ctx, io.Discard, runInfo, make(chan Frame), nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("progress = %v, want context.Canceled", err)
	}
}
