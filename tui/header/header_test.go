package header

import (
	"strings"
	"testing"
	"time"
)

func TestProgress(t *testing.T) {
	tests := []struct {
		name     string
		info     InfoMsg
		prog     ProgressMsg
		wantFrac float64
		wantOK   bool
		wantETA  time.Duration
	}{
		{"by count", InfoMsg{TotalRequests: 1000}, ProgressMsg{Elapsed: 10 * time.Second, Finished: 250, ETA: 30 * time.Second, HasETA: true}, 0.25, true, 30 * time.Second},
		{"by duration", InfoMsg{Duration: time.Minute}, ProgressMsg{Elapsed: 15 * time.Second}, 0.25, true, 0},
		{"by duration, 4 stages", InfoMsg{Duration: time.Minute, Stages: 4}, ProgressMsg{Elapsed: 60 * time.Second}, 0.25, true, 0},
		{"count wins", InfoMsg{TotalRequests: 100, Duration: time.Minute}, ProgressMsg{Elapsed: 30 * time.Second, Finished: 100}, 1, true, 0},
		{"unbounded", InfoMsg{}, ProgressMsg{Elapsed: time.Second}, 0, false, 0},
	}
	for _, tt := range tests {
		var m Model
		m, _ = m.Update(tt.info)
		m, _ = m.Update(tt.prog)
		frac, ok := m.Fraction()
		eta, _ := m.ETA()
		if frac != tt.wantFrac || ok != tt.wantOK || eta != tt.wantETA {
			t.Errorf("%s: Fraction %v %v ETA %v, want %v %v %v", tt.name, frac, ok, eta, tt.wantFrac, tt.wantOK, tt.wantETA)
		}
	}
}

func TestStates(t *testing.T) {
	var m Model
	m, _ = m.Update(InfoMsg{Model: "m", TotalRequests: 10})
	m, _ = m.Update(ProgressMsg{InFlight: 3})
	if v := m.View(80); strings.Contains(v, "stopping") || strings.Contains(v, "finished") {
		t.Errorf("fresh header shows a state:\n%s", v)
	}
	m, _ = m.Update(StoppingMsg{})
	if v := m.View(80); !strings.Contains(v, "draining 3 in flight") {
		t.Errorf("stopping header:\n%s", v)
	}
	m, _ = m.Update(AbortingMsg{})
	if v := m.View(80); !strings.Contains(v, "aborting: cancelling 3 in flight") {
		t.Errorf("aborting header:\n%s", v)
	}
	m, _ = m.Update(DoneMsg{})
	if v := m.View(80); !strings.Contains(v, "finished") {
		t.Errorf("done header:\n%s", v)
	}
	if n := strings.Count(m.View(80), "\n") + 1; n != Height {
		t.Errorf("%d lines, want %d", n, Height)
	}
}

func TestShardSaysWhichOfN(t *testing.T) {
	var m Model
	m, _ = m.Update(InfoMsg{Model: "m", URL: "http://h:8000", Mode: "request_rate", Target: "300", TotalRequests: 334, Shard: "2/3"})
	if line := strings.SplitN(m.View(100), "\n", 2)[0]; !strings.Contains(line, "surge  shard 2 of 3  m") {
		t.Errorf("first line %q does not say shard 2 of 3", line)
	}
	m, _ = m.Update(InfoMsg{Model: "m"})
	if v := m.View(100); strings.Contains(v, "shard") {
		t.Errorf("a whole run's header mentions a shard:\n%s", v)
	}
}

func TestWarningTakesTheBarsLine(t *testing.T) {
	var m Model
	m, _ = m.Update(InfoMsg{Model: "m", TotalRequests: 10})
	m, _ = m.Update(ProgressMsg{Finished: 4, Warning: "responses run past the requested output length"})
	v := m.View(120)
	lines := strings.Split(v, "\n")
	if len(lines) != Height || !strings.Contains(lines[2], "warning: responses run past") || !strings.Contains(lines[1], "40%") {
		t.Errorf("header with a warning:\n%s", v)
	}
}
