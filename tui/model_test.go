package tui

import (
	"bytes"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

// drive runs the model under teatest at w×h, sends msgs and returns the
// final model after the run's end (doneMsg).
func drive(t *testing.T, info Info, w, h int, msgs ...tea.Msg) model {
	t.Helper()
	tm := teatest.NewTestModel(t, newModel(info, func() {}), teatest.WithInitialTermSize(w, h))
	for _, m := range msgs {
		tm.Send(m)
	}
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	return tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(model)
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name string
		info Info
		w, h int
		msgs []tea.Msg
	}{
		{"empty_start", runInfo, 100, 30, nil},
		{"mid_run", runInfo, 100, 30, []tea.Msg{snapshotMsg{midRun()}}},
		{"mid_run_wide", runInfo, 140, 36, []tea.Msg{snapshotMsg{midRun()}}},
		{"mid_run_precision", runInfo, 100, 30, []tea.Msg{snapshotMsg{withPrecision(midRun())}}},
		// Where the time went, from the server's own account.
		{"mid_run_breakdown", runInfo, 100, 36, []tea.Msg{snapshotMsg{withBreakdown(midRun())}}},
		{"finished_ramp_knee", rampInfo, 100, 32, []tea.Msg{snapshotMsg{finishedRamp()}, doneMsg{}}},
		{"finished_ramp_detail", rampInfo, 100, 32, []tea.Msg{snapshotMsg{finishedRamp()}, key("tab"), doneMsg{}}},
		{"error_burst", runInfo, 100, 30, []tea.Msg{snapshotMsg{errorBurst()}}},
		{"error_burst_detail", runInfo, 100, 30, []tea.Msg{snapshotMsg{errorBurst()}, key("tab")}},
		{"narrow_80x24", rampInfo, 80, 24, []tea.Msg{snapshotMsg{fullSnapshot()}}},
		{"narrow_60x20", rampInfo, 60, 20, []tea.Msg{snapshotMsg{fullSnapshot()}}},
		{"tiny_30x8", runInfo, 30, 8, []tea.Msg{snapshotMsg{midRun()}}},
		{"help", runInfo, 80, 24, []tea.Msg{snapshotMsg{midRun()}, key("?")}},
		{"stopping", runInfo, 80, 24, []tea.Msg{snapshotMsg{midRun()}, key("q")}},
		{"shard_1_of_3", shardInfo, 100, 30, []tea.Msg{snapshotMsg{midRun()}}},
		{"sweep_200x60", sweepInfo, 200, 60, sweepFrames(33)},
		{"sweep_120x40", sweepInfo, 120, 40, sweepFrames(33)},
		{"sweep_80x24", sweepInfo, 80, 24, sweepFrames(25)},
		// A wide terminal: the chart takes the rows the stage table leaves.
		{"sweep_160x45", sweepInfo, 160, 45, sweepFrames(33)},
		// z zooms the throughput axis to the data's band.
		{"mid_run_zoomed", runInfo, 100, 30, []tea.Msg{snapshotMsg{midRun()}, key("z")}},
		// A live run at 100 columns: the load panel's lines whole.
		{"live_100x32", liveInfo, 100, 32, []tea.Msg{snapshotMsg{liveFrame()}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := drive(t, tt.info, tt.w, tt.h, tt.msgs...)
			v := m.View()
			checkFrame(t, v, tt.w, tt.h)
			golden.RequireEqual(t, []byte(v))
		})
	}
}

// checkFrame asserts a frame fills the terminal without wrapping.
func checkFrame(t *testing.T, v string, w, h int) {
	t.Helper()
	lines := strings.Split(v, "\n")
	if len(lines) > h {
		t.Errorf("%d lines, terminal has %d", len(lines), h)
	}
	for i, l := range lines {
		if lw := ansi.StringWidth(l); lw > w {
			t.Errorf("line %d is %d cells wide, terminal has %d: %q", i+1, lw, w, l)
		}
	}
}

// TestNoBlankRows: the overview and the stages page fill the terminal,
// from 80×24 to 200×60, with or without a stage table: no row between the
// header and the footer is blank.
func TestNoBlankRows(t *testing.T) {
	for _, f := range []struct {
		info Info
		snap Frame
		page page
	}{{runInfo, midRun(), overview}, {rampInfo, fullSnapshot(), overview}, {liveInfo, liveFrame(), overview},
		{runInfo, errorBurst(), detail}, {rampInfo, finishedRamp(), detail}} {
		m := newModel(f.info, nil).apply(f.snap)
		m.page = f.page
		for _, sz := range [][2]int{{80, 24}, {100, 30}, {100, 32}, {120, 40}, {140, 36}, {160, 45}, {200, 60}} {
			next, _ := m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
			lines := strings.Split(next.(model).View(), "\n")
			for i, l := range lines[:len(lines)-1] {
				if strings.TrimSpace(ansi.Strip(l)) == "" {
					t.Errorf("%s at %d×%d: row %d is blank:\n%s", f.info.Target, sz[0], sz[1], i+1, strings.Join(lines, "\n"))
					break
				}
			}
		}
	}
}

// TestThroughputAxisFromZero: the chart's axis starts at 0 (a steady
// run's bars stand on it); z zooms it to the data's band, z again goes
// back.
func TestThroughputAxisFromZero(t *testing.T) {
	m := newModel(runInfo, nil).apply(midRun())
	next, _ := m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m = next.(model)
	axisLow := func(m model) string {
		lines := strings.Split(ansi.Strip(m.View()), "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "req/s") {
				return strings.TrimSpace(strings.SplitN(lines[i-1], "┤", 2)[0])
			}
		}
		t.Fatalf("no chart:\n%s", m.View())
		return ""
	}
	if got := axisLow(m); got != "0" {
		t.Errorf("axis from %q, want 0", got)
	}
	next, _ = m.Update(key("z"))
	if got := axisLow(next.(model)); got == "0" || !strings.Contains(next.(model).View(), "zoomed (z)") {
		t.Errorf("z: axis from %q, want the band's floor and the chart saying it is zoomed", got)
	}
	next, _ = next.Update(key("z"))
	if got := axisLow(next.(model)); got != "0" {
		t.Errorf("z again: axis from %q, want 0", got)
	}
}

// TestResize re-lays out one snapshot at every size from 20×6 to 200×60:
// no panic, no line wider or taller than the terminal.
func TestResize(t *testing.T) {
	m := newModel(rampInfo, nil).apply(fullSnapshot())
	for w := 20; w <= 200; w += 7 {
		for h := 6; h <= 60; h += 5 {
			next, _ := m.Update(tea.WindowSizeMsg{Width: w, Height: h})
			for _, p := range []page{overview, detail} {
				mm := next.(model)
				mm.page = p
				checkFrame(t, mm.View(), w, h)
			}
		}
	}
}

func key(s string) tea.KeyMsg {
	switch s {
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

func TestKeys(t *testing.T) {
	var stops atomic.Int32
	tm := teatest.NewTestModel(t, newModel(runInfo, func() { stops.Add(1) }), teatest.WithInitialTermSize(100, 30))
	tm.Send(snapshotMsg{midRun()})
	tm.Type("?")
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("show or hide this help")) },
		teatest.WithDuration(3*time.Second))
	tm.Send(key("esc"))
	tm.Send(key("tab"))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("stages & errors (2/2)")) },
		teatest.WithDuration(3*time.Second))
	tm.Type("q")
	tm.Send(key("ctrl+c"))
	tm.Type("q")
	// q stops, ctrl+c again aborts the drain, a third press does nothing.
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("aborting: cancelling")) },
		teatest.WithDuration(3*time.Second))
	// Still rendering the drain: the run is not over until snaps closes.
	d := midRun()
	d.InFlight = 3
	tm.Send(snapshotMsg{d})
	tm.Send(doneMsg{})
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(model)
	if got := stops.Load(); got != 2 {
		t.Errorf("stop called %d times, want 2 (stop, then abort)", got)
	}
	if !fm.stopping || !fm.done || fm.page != detail || fm.help {
		t.Errorf("final state stopping=%v done=%v page=%v help=%v", fm.stopping, fm.done, fm.page, fm.help)
	}
}

func TestKeyUpdate(t *testing.T) {
	tests := []struct {
		keys     []string
		wantPage page
		wantHelp bool
	}{
		{nil, overview, false},
		{[]string{"tab"}, detail, false},
		{[]string{"tab", "tab"}, overview, false},
		{[]string{"?"}, overview, true},
		{[]string{"?", "?"}, overview, false},
		{[]string{"?", "esc"}, overview, false},
		{[]string{"?", "tab"}, detail, false},
	}
	for _, tt := range tests {
		var m tea.Model = newModel(runInfo, nil)
		for _, k := range tt.keys {
			m, _ = m.Update(key(k))
		}
		got := m.(model)
		if got.page != tt.wantPage || got.help != tt.wantHelp {
			t.Errorf("keys %v: page %v help %v, want %v %v", tt.keys, got.page, got.help, tt.wantPage, tt.wantHelp)
		}
	}
}
