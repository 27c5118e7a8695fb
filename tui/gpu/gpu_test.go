package gpu

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/surgebench/surge/telemetry"
)

func TestUpdateView(t *testing.T) {
	var m Model
	if m.Len() != 0 || m.View(80, 4) != "" {
		t.Fatal("empty model renders something")
	}
	var gpus []telemetry.GPUSample
	for i := range 8 {
		gpus = append(gpus, telemetry.GPUSample{Index: i, Name: "H100", SMUtil: 87, MemUsed: 61 << 30, MemTotal: 80 << 30, PowerW: 612})
	}
	m, _ = m.Update(Msg{GPUs: gpus})
	for _, w := range []int{30, 50, 120} {
		lines := strings.Split(m.View(w, 4), "\n")
		if len(lines) != 4 {
			t.Errorf("width %d: %d lines, want 4 (cut to height)", w, len(lines))
		}
		for _, l := range lines {
			if ansi.StringWidth(l) != w {
				t.Errorf("width %d: line %q is %d wide", w, l, ansi.StringWidth(l))
			}
		}
	}
	if v := m.View(80, 1); !strings.Contains(v, "87%") || !strings.Contains(v, "mem  61/80G") || !strings.Contains(v, "612W") {
		t.Errorf("view %q", v)
	}
}
