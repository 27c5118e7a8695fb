package stages

import (
	"strings"
	"testing"

	"github.com/surgebench/surge/metrics"
)

func TestUpdateView(t *testing.T) {
	var m Model
	m, _ = m.Update(PlanMsg{Mode: "concurrency", Values: []float64{1, 2, 4, 8}})
	if m.Len() != 4 || m.Knee() != -1 {
		t.Fatalf("Len %d Knee %d", m.Len(), m.Knee())
	}
	m, _ = m.Update(Msg{Current: 2, Stages: []metrics.StageSummary{
		{Index: 0, Value: 1, RequestCount: 10}, {Index: 1, Value: 2, RequestCount: 20, Knee: true},
	}})
	lines := strings.Split(m.View(100, 10), "\n")
	tests := []struct {
		line int
		want string
	}{
		{0, "target"}, {1, "10"}, {2, "◀ knee"}, {3, "running…"}, {4, "pending"},
	}
	if len(lines) != 5 {
		t.Fatalf("%d lines: %q", len(lines), lines)
	}
	for _, tt := range tests {
		if !strings.Contains(lines[tt.line], tt.want) {
			t.Errorf("line %d = %q, want %q", tt.line, lines[tt.line], tt.want)
		}
	}
	if m.Knee() != 1 {
		t.Errorf("Knee = %d, want 1", m.Knee())
	}
	// Two rows of room: the knee stays pinned above the running stage.
	small := strings.Split(m.View(100, 3), "\n")
	if len(small) != 3 || !strings.Contains(small[1], "knee") && !strings.Contains(small[2], "knee") {
		t.Errorf("small view lost the knee: %q", small)
	}
}

// TestPlanLabels: a sweep over several parameters names its stages by
// their labels, cut to the column.
func TestPlanLabels(t *testing.T) {
	var m Model
	m, _ = m.Update(PlanMsg{Mode: "variation", Values: []float64{0, 1}, Labels: []string{"128×4", "512×16384"}})
	v := m.View(80, 10)
	if !strings.Contains(v, "128×4") || !strings.Contains(v, "512×16…") {
		t.Errorf("view does not show the labels:\n%s", v)
	}
}
