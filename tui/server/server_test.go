package server

import (
	"math"
	"strings"
	"testing"

	"github.com/surgebench/surge/telemetry"
)

func TestUpdateView(t *testing.T) {
	var m Model
	m, _ = m.Update(Msg{Server: []telemetry.ServerSample{
		{URL: "http://a/metrics", Running: 8, Waiting: 2, KVCacheUsage: 0.5},
		{URL: "http://b/metrics", Running: 1, Waiting: math.NaN(), KVCacheUsage: math.NaN()},
	}})
	if m.Len() != 2 {
		t.Fatalf("Len = %d", m.Len())
	}
	lines := strings.Split(m.View(80, 5), "\n")
	tests := []struct {
		line int
		want []string
	}{
		{0, []string{"run    8", "wait    2", "kv  50%", "http://a/metrics"}},
		{1, []string{"run    1", "wait  n/a", "kv  n/a", "http://b/metrics"}},
	}
	for _, tt := range tests {
		for _, w := range tt.want {
			if !strings.Contains(lines[tt.line], w) {
				t.Errorf("line %d = %q, want %q", tt.line, lines[tt.line], w)
			}
		}
	}
	if v := m.View(80, 1); strings.Contains(v, "\n") {
		t.Errorf("height 1 gave several lines: %q", v)
	}
}
