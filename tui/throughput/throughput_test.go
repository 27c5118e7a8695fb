package throughput

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/surgebench/surge/metrics"
)

func TestNiceCeil(t *testing.T) {
	for _, tt := range []struct{ in, want float64 }{{0, 0}, {1, 1}, {7, 8}, {2437, 2500}, {4600, 5000}, {0.45, 0.5}, {101, 120}} {
		if got := niceCeil(tt.in); got != tt.want {
			t.Errorf("niceCeil(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestScale: the axis starts at zero; zoomed, it spans a narrow band's
// range (a ramp from zero stays from zero).
func TestScale(t *testing.T) {
	for _, tt := range []struct {
		name   string
		tok    []float64
		zoom   bool
		lo, hi float64
	}{
		{"empty", nil, false, 0, 0},
		{"a ramp from zero", []float64{0, 100, 200, 300, 400}, false, 0, 400},
		{"a ramp from zero, zoomed", []float64{0, 100, 200, 300, 400}, true, 0, 400},
		{"a steady run", []float64{193, 195, 197, 194, 196, 195, 194, 197, 193, 195}, false, 0, 200},
		{"a steady run zoomed: its jitter drawn flat", []float64{193, 195, 197, 194, 196, 195, 194, 197, 193, 195}, true, 160, 200},
		{"a real swing in a narrow band", []float64{600, 700, 800, 900, 1000, 950, 650, 700, 800, 900}, false, 0, 1000},
		{"a real swing in a narrow band, zoomed", []float64{600, 700, 800, 900, 1000, 950, 650, 700, 800, 900}, true, 480, 1080},
	} {
		cols := make([]column, len(tt.tok))
		for i, v := range tt.tok {
			cols[i].tok = v
		}
		if lo, hi := scale(cols, tt.zoom); lo != tt.lo || hi != tt.hi {
			t.Errorf("%s: axis %v–%v, want %v–%v", tt.name, lo, hi, tt.lo, tt.hi)
		}
	}
}

func TestView(t *testing.T) {
	var m Model
	pts := make([]metrics.Point, 300)
	for i := range pts {
		pts[i] = metrics.Point{Second: i, OutputTokens: float64(i), Requests: 1}
	}
	m, _ = m.Update(Msg{Timeline: pts})
	for _, sz := range [][2]int{{40, 8}, {80, 3}, {10, 1}, {120, 20}} {
		v := m.View(sz[0], sz[1])
		lines := strings.Split(v, "\n")
		if want := sz[1]; len(lines) != want {
			t.Errorf("%v: %d lines, want %d", sz, len(lines), want)
		}
		for _, l := range lines {
			if ansi.StringWidth(l) > sz[0] {
				t.Errorf("%v: line %q too wide", sz, l)
			}
		}
	}
	if v := m.View(40, 8); !strings.Contains(v, "out 299 tok/s") {
		t.Errorf("summary line missing the latest point:\n%s", v)
	}
}
