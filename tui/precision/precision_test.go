package precision

import (
	"math"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/surgebench/surge/metrics"
)

func TestUpdateView(t *testing.T) {
	var m Model
	if m.Len() != 0 || m.View(80, 3) != "" || m.Title() != "precision" {
		t.Errorf("no status: len %d, title %q", m.Len(), m.Title())
	}
	st := &metrics.PrecisionStatus{Requests: 1204, Targets: []metrics.TargetStatus{
		{Target: metrics.Target{Metric: metrics.TTFT, P: 99, Bound: 0.05}, HalfWidth: 0.072},
		{Target: metrics.Target{Metric: metrics.OutputTokenThroughput, Bound: 0.02}, HalfWidth: 0.015, Met: true},
		{Target: metrics.Target{Metric: metrics.ITL, P: 50, Bound: 0.05}, HalfWidth: math.Inf(1)},
	}}
	m, _ = m.Update(Msg{Status: st})
	m, _ = m.Update(Msg{}) // a frame without a judgement keeps the last
	if m.Len() != 3 || m.Title() != "precision · 1204 req" {
		t.Fatalf("len %d, title %q", m.Len(), m.Title())
	}
	lines := strings.Split(ansi.Strip(m.View(60, 5)), "\n")
	for i, want := range [][]string{
		{"TTFT p99", "±7.2%", "→  ±5.0%", "█"},
		{"out tok/s avg", "±1.5%", "±2.0%", "✓"},
		{"ITL p50", "±∞", "→  ±5.0%"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d = %q, want %q", i, lines[i], w)
			}
		}
	}
	if strings.Contains(lines[2], "█") {
		t.Errorf("an unbounded interval shows progress: %q", lines[2])
	}
	for _, l := range strings.Split(m.View(30, 5), "\n") {
		if w := ansi.StringWidth(l); w != 30 {
			t.Errorf("at width 30 a line is %d wide: %q", w, l)
		}
	}
	if v := m.View(60, 1); strings.Contains(v, "\n") {
		t.Errorf("height 1 gave several lines")
	}
}
