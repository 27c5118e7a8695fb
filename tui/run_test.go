package tui

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/surgebench/surge/metrics"
)

func TestParseMode(t *testing.T) {
	tests := []struct {
		flag    string
		tty     bool
		want    Mode
		wantErr bool
	}{
		{"", true, ModeDashboard, false},
		{"", false, ModeProgress, false},
		{"progress", true, ModeProgress, false},
		{"dashboard", false, ModeDashboard, false},
		{"Simple", true, ModeSimple, false},
		{"none", true, ModeNone, false},
		{"fancy", true, ModeNone, true},
	}
	for _, tt := range tests {
		got, err := ParseMode(tt.flag, tt.tty)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseMode(%q, %v) = %v, %v; want %v, err %v", tt.flag, tt.tty, got, err, tt.want, tt.wantErr)
		}
		if err != nil && (!strings.Contains(err.Error(), tt.flag) || !strings.Contains(err.Error(), "dashboard, simple, progress or none")) {
			t.Errorf("error %q should name the value and the allowed values", err)
		}
	}
}

// TestRunReturnsWhenSnapsClose feeds Run far faster than it draws and checks
// that the producer never waits and Run returns once the channel closes.
func TestRunReturnsWhenSnapsClose(t *testing.T) {
	snaps := make(chan Frame) // unbuffered: every send needs the drainer
	errc := make(chan error, 1)
	var out bytes.Buffer
	go func() {
		errc <- Run(t.Context(), runInfo, snaps, func() { t.Error("stop called without a key") },
			tea.WithInput(nil), tea.WithOutput(&out), tea.WithoutSignals())
	}()
	start := time.Now()
	for i := range 20000 {
		s := midRun()
		s.Finished = int64(i)
		snaps <- s
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("20000 snapshots took %v to hand over: the producer waited on rendering", d)
	}
	close(snaps)
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after snaps closed")
	}
	if !strings.Contains(out.String(), "finished") {
		t.Errorf("last frame does not show the run finished")
	}
}

// TestRunQuitKey presses q three times: stop is called twice (stop, then
// abort the drain; the third press does nothing), and Run keeps going
// until the drain ends and snaps closes.
func TestRunQuitKey(t *testing.T) {
	snaps := make(chan Frame)
	var stops atomic.Int32
	stopped := make(chan struct{})
	pr, pw := io.Pipe()
	defer pw.Close()
	errc := make(chan error, 1)
	go func() {
		errc <- Run(t.Context(), runInfo, snaps, func() {
			if stops.Add(1) == 1 {
				close(stopped)
			}
		}, tea.WithInput(pr), tea.WithOutput(io.Discard), tea.WithoutSignals())
	}()
	snaps <- midRun()
	for range 3 {
		if _, err := pw.Write([]byte("q")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("q did not call stop")
	}
	select {
	case err := <-errc:
		t.Fatalf("Run returned (%v) before snaps closed", err)
	case snaps <- midRun(): // the drain still renders
	}
	close(snaps)
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after snaps closed")
	}
	if n := stops.Load(); n != 2 {
		t.Errorf("stop called %d times, want 2", n)
	}
}

func TestRunContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	snaps := make(chan Frame)
	errc := make(chan error, 1)
	go func() {
		errc <- Run(ctx, runInfo, snaps, nil, tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithoutSignals())
	}()
	snaps <- midRun()
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after ctx was cancelled")
	}
	// The producer must still be able to send after Run has gone.
	select {
	case snaps <- midRun():
	case <-time.After(time.Second):
		t.Error("snapshot send blocked after Run returned")
	}
	close(snaps)
}

// TestCoalescer checks that forward sends the newest snapshot, at most one
// per interval, and doneMsg last.
func TestCoalescer(t *testing.T) {
	c := newCoalescer()
	snaps := make(chan Frame)
	var got []tea.Msg
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.forward(quit, func(m tea.Msg) { got = append(got, m) }, 50*time.Millisecond)
	}()
	go c.drain(snaps)
	for i := range 1000 {
		snaps <- Frame{Snapshot: metrics.Snapshot{Finished: int64(i)}}
	}
	close(snaps)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("forward did not end after snaps closed")
	}
	if len(got) < 2 || len(got) > 10 {
		t.Fatalf("forwarded %d messages for 1000 snapshots sent in a burst", len(got))
	}
	if _, ok := got[len(got)-1].(doneMsg); !ok {
		t.Errorf("last message %T, want doneMsg", got[len(got)-1])
	}
	last, ok := got[len(got)-2].(snapshotMsg)
	if !ok || last.snap.Finished != 999 {
		t.Errorf("last snapshot %+v, want Finished 999", got[len(got)-2])
	}
}

func TestSimple(t *testing.T) {
	snaps := make(chan Frame)
	tick := make(chan time.Time)
	var out bytes.Buffer
	errc := make(chan error, 1)
	go func() { errc <- simple(t.Context(), &out, runInfo, snaps, tick) }()
	tick <- time.Time{} // nothing yet: no line
	s := midRun()
	s.Elapsed = 12 * time.Second
	snaps <- s
	tick <- time.Time{}
	s.Elapsed, s.Finished = 13*time.Second, 400
	snaps <- s
	snaps <- s
	close(snaps)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	want := "[   12s] 340/1000 req  in-flight 8  ok 338 err 2  2437 tok/s  TTFT p50 21.3 ms p99 24.0  ITL p50 5.1 ms\n" +
		"[   13s] 400/1000 req  in-flight 8  ok 398 err 2  2437 tok/s  TTFT p50 21.3 ms p99 24.0  ITL p50 5.1 ms\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

func TestSimpleContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := simple(ctx, io.Discard, runInfo, make(chan Frame), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("simple = %v, want context.Canceled", err)
	}
}

func BenchmarkView(b *testing.B) {
	m := newModel(rampInfo, nil).apply(fullSnapshot())
	for _, sz := range []struct {
		name string
		w, h int
	}{{"80x24", 80, 24}, {"160x50", 160, 50}} {
		next, _ := m.Update(tea.WindowSizeMsg{Width: sz.w, Height: sz.h})
		mm := next.(model)
		b.Run(sz.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = mm.View()
			}
		})
	}
}

func BenchmarkApply(b *testing.B) {
	m := newModel(rampInfo, nil)
	s := fullSnapshot()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = m.Update(snapshotMsg{s})
	}
}
