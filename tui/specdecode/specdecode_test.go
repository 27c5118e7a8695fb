package specdecode

import (
	"math"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/telemetry"
)

func TestUpdateView(t *testing.T) {
	var m Model
	nan := math.NaN()
	m, _ = m.Update(Msg{Server: []telemetry.ServerSample{{URL: "u", SpecAcceptRate: nan, SpecAcceptLength: nan}}})
	if m.Len() != 0 || m.View(80, 4) != "" {
		t.Fatal("a run without speculative decoding shows the panel")
	}
	m, _ = m.Update(Msg{
		Run: map[string]metrics.Quantiles{
			string(metrics.SpecAcceptanceLength):    {Count: 120, Avg: 2.81},
			string(metrics.SpecDraftAcceptanceRate): {Count: 120, Avg: 45.2},
		},
		Window: map[string]metrics.Quantiles{string(metrics.SpecAcceptanceLength): {Count: 30, Avg: 2.7}},
		Server: []telemetry.ServerSample{
			{URL: "http://127.0.0.1:8000/metrics", SpecAcceptRate: 0.443, SpecAcceptLength: 2.77},
			{URL: "http://other/metrics", SpecAcceptRate: nan, SpecAcceptLength: nan},
		},
	})
	if m.Len() != 2 || m.Title() != "spec decode" {
		t.Fatalf("len %d title %q", m.Len(), m.Title())
	}
	for _, w := range []int{30, 60, 120} {
		for _, l := range strings.Split(m.View(w, 2), "\n") {
			if ansi.StringWidth(l) != w {
				t.Errorf("width %d: line %q is %d wide", w, l, ansi.StringWidth(l))
			}
		}
	}
	v := ansi.Strip(m.View(120, 2))
	for _, want := range []string{"accept len  2.81  drafts  45%  10s 2.70 n/a  120 answers", "accept len  2.77  drafts  44%  /metrics http://127.0.0.1:8000/metrics"} {
		if !strings.Contains(v, want) {
			t.Errorf("view %q lacks %q", v, want)
		}
	}
}
