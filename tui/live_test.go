package tui

import (
	"errors"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/surgebench/surge/metrics"
)

// fakeControl applies actions to a concurrency the way loadgen's
// Controller does, and counts the calls.
type fakeControl struct {
	st    LiveState
	calls []Action
}

func (f *fakeControl) apply(a Action) (LiveState, error) {
	f.calls = append(f.calls, a)
	switch a {
	case StepUp:
		f.st.Value++
	case StepDown:
		f.st.Value--
	case Double:
		f.st.Value *= 2
	case Halve:
		f.st.Value /= 2
	case Pause:
		f.st.Paused = true
	case Resume:
		f.st.Paused = false
	}
	if f.st.Value < 1 {
		f.st.Value = 1
		return f.st, errors.New("at the minimum")
	}
	return f.st, nil
}

func press(t *testing.T, m model, key string) model {
	t.Helper()
	k := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(key)}
	next, cmd := m.Update(k)
	m = next.(model)
	if cmd == nil {
		t.Fatalf("key %q started no command", key)
	}
	next, _ = m.Update(cmd()) // the command's result, as the program delivers it
	return next.(model)
}

func TestLiveKeysShowAtOnce(t *testing.T) {
	t.Parallel()
	f := &fakeControl{st: LiveState{Mode: "concurrency", Value: 8}}
	m := newModel(Info{Model: "m", Mode: "concurrency", Target: "8", Control: f.apply}, func() {})
	m = m.apply(Frame{Snapshot: metrics.Snapshot{Concurrency: 8, Run: map[string]metrics.Quantiles{}}, Live: &f.st})
	for _, step := range []struct {
		key, want string
	}{
		{"+", "live concurrency 9"},
		{"]", "live concurrency 18"},
		{"[", "live concurrency 9"},
		{"-", "live concurrency 8"},
		{"p", "live concurrency 8 paused"},
		{"r", "live concurrency 8  in-flight"},
	} {
		m = press(t, m, step.key)
		if got := ansi.Strip(m.load.View(100)); !strings.Contains(got, step.want) {
			t.Errorf("after %q the load panel shows %q, want %q", step.key, got, step.want)
		}
		// The header names the setting now in force, not the first one.
		if head, want := ansi.Strip(m.header.View(100)), "concurrency "+strings.Fields(strings.TrimPrefix(step.want, "live concurrency "))[0]; !strings.Contains(strings.Split(head, "\n")[0], want+" ") && !strings.HasSuffix(strings.Split(head, "\n")[0], want) {
			t.Errorf("after %q the header says %q, want %q", step.key, strings.Split(head, "\n")[0], want)
		}
	}
	if len(f.calls) != 6 {
		t.Errorf("calls %v", f.calls)
	}
	f.st.Value = 1
	m = press(t, m, "-")
	if got := ansi.Strip(m.load.View(100)); !strings.Contains(got, "at the minimum") {
		t.Errorf("a refused change is not shown: %q", got)
	}
}

// TestLiveKeysSayWhyNot: a run the keys cannot steer answers each live
// key in the status line with the reason for its mode, and the next key
// clears the answer.
func TestLiveKeysSayWhyNot(t *testing.T) {
	t.Parallel()
	tests := []struct {
		info Info
		key  string
		want string
	}{
		{Info{Mode: "concurrency", Stages: []float64{1, 2, 4}}, "+", "+: a sweep fixes each stage's concurrency (keys steer one-value runs)"},
		{Info{Mode: "request_rate", Stages: []float64{1, 2}}, "p", "p: a sweep fixes each stage's request rate"},
		{Info{Mode: "fixed_schedule", Target: "120"}, "]", "]: a fixed schedule replays the trace's timing; nothing to steer"},
		{Info{Mode: "user_centric"}, "r", "r: user-centric mode paces each user; nothing to steer"},
		{Info{Mode: "request_rate", Shard: "2/3"}, "-", "-: shard 2/3 only watches"},
		{Info{Mode: "concurrency"}, "[", "[: this run cannot be steered"},
	}
	for _, tt := range tests {
		m := newModel(tt.info, func() {})
		m.width, m.height = 200, 30
		cmd, ok := m.liveKey(key(tt.key))
		if !ok || cmd == nil {
			t.Errorf("%+v: key %s not answered", tt.info, tt.key)
			continue
		}
		next, _ := m.Update(cmd())
		v := ansi.Strip(next.(model).View())
		if footer := v[strings.LastIndex(v, "\n")+1:]; !strings.Contains(footer, tt.want) {
			t.Errorf("%+v: key %s: status line %q, want %q", tt.info, tt.key, footer, tt.want)
		}
		next, _ = next.Update(key("tab"))
		if v := ansi.Strip(next.(model).View()); strings.Contains(v, tt.want) {
			t.Errorf("%+v: the answer outlives the next key", tt.info)
		}
	}
}

func TestSimpleLineShowsLive(t *testing.T) {
	t.Parallel()
	line := progressLine(Info{}, Frame{Snapshot: metrics.Snapshot{Run: map[string]metrics.Quantiles{}},
		Live: &LiveState{Mode: "request_rate", Value: 12.5, Search: "bisecting [10, 20) probe 15: running"}})
	if !strings.Contains(line, "live request_rate 12.5  search bisecting [10, 20) probe 15: running") {
		t.Errorf("line %q", line)
	}
}

func TestSimpleLineNamesTheShard(t *testing.T) {
	t.Parallel()
	f := Frame{Snapshot: metrics.Snapshot{Run: map[string]metrics.Quantiles{}, Finished: 7}}
	if line := progressLine(Info{Shard: "2/4", TotalRequests: 25}, f); !strings.Contains(line, "] shard 2/4  7/25 req") {
		t.Errorf("shard line %q", line)
	}
	if line := progressLine(Info{}, f); strings.Contains(line, "shard") {
		t.Errorf("whole run's line %q names a shard", line)
	}
}
