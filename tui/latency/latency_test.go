package latency

import (
	"strings"
	"testing"

	"github.com/surgebench/surge/metrics"
)

func TestUpdateView(t *testing.T) {
	run := map[string]metrics.Quantiles{string(metrics.TTFT): {P50: 21.3, P99: 24, Count: 5}}
	tests := []struct {
		name      string
		msg       Msg
		width     int
		wantLines int
		want      []string
		notWant   []string
	}{
		{"no reasoning", Msg{Run: run}, 80, 4, []string{"TTFT", "21.3", "10s p50"}, []string{"TTFO"}},
		{"reasoning", Msg{Run: run, ReasoningSeen: true}, 80, 5, []string{"TTFO"}, nil},
		{"narrow drops window", Msg{Run: run}, 40, 4, []string{"p99"}, []string{"10s"}},
	}
	for _, tt := range tests {
		var m Model
		m, _ = m.Update(tt.msg)
		v := m.View(tt.width)
		if n := strings.Count(v, "\n") + 1; n != tt.wantLines || n != m.Height() {
			t.Errorf("%s: %d lines, Height %d, want %d", tt.name, n, m.Height(), tt.wantLines)
		}
		for _, w := range tt.want {
			if !strings.Contains(v, w) {
				t.Errorf("%s: missing %q in\n%s", tt.name, w, v)
			}
		}
		for _, w := range tt.notWant {
			if strings.Contains(v, w) {
				t.Errorf("%s: unexpected %q in\n%s", tt.name, w, v)
			}
		}
	}
}
