package breakdown

import (
	"math"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/surgebench/surge/metrics"
)

func TestUpdateView(t *testing.T) {
	var m Model
	if m.Len() != 0 || m.View(80, 6) != "" || m.Title() != "where the time went" {
		t.Errorf("no breakdown: len %d, title %q", m.Len(), m.Title())
	}
	tb := &metrics.TimeBreakdown{Requests: 120}
	for p := range tb.Parts {
		tb.Parts[p] = metrics.PartSummary{Count: 120, Source: "llamacpp-timings", P50: 10 * float64(p+1), Share: 0.1 * float64(p+1)}
	}
	tb.Parts[metrics.PartClient].Source = "client"
	tb.Parts[metrics.PartQueue] = metrics.PartSummary{Source: "unknown", P50: math.NaN(), Share: math.NaN()}
	m, _ = m.Update(Msg{Breakdown: tb})
	m, _ = m.Update(Msg{}) // a frame without one keeps the last
	if m.Len() != 6 || m.Title() != "where the time went · 120 req" {
		t.Fatalf("len %d, title %q", m.Len(), m.Title())
	}
	lines := strings.Split(ansi.Strip(m.View(60, 6)), "\n")
	for i, want := range [][]string{
		{"client", "10.0 ms", "10%", "client"},
		{"network", "20.0 ms", "20%", "█", "llamacpp-timings"},
		{"queue", "- ms", "unknown"},
		{"prefill", "40.0 ms", "40%"},
		{"decode", "50.0 ms"},
		{"delivery", "60.0 ms", "60%"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d = %q, want %q", i, lines[i], w)
			}
		}
	}
	for _, l := range strings.Split(m.View(30, 6), "\n") {
		if w := ansi.StringWidth(l); w != 30 {
			t.Errorf("at width 30 a line is %d wide: %q", w, l)
		}
	}
}
