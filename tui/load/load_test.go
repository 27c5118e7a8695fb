package load

import (
	"cmp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/surgebench/surge/metrics"
)

func TestUpdateView(t *testing.T) {
	tests := []struct {
		name    string
		msg     Msg
		want    []string
		notWant string
		width   int // 100 when 0
	}{
		{"capped", Msg{Started: 10, Finished: 8, Failed: 1, InFlight: 2, Concurrency: 4, Lag: metrics.Quantiles{P50: 0.1, P99: 0.5}},
			[]string{"in-flight 2 / 4", "ok 7", "err 1", "p99 0.50 ms"}, "behind", 0},
		{"uncapped", Msg{InFlight: 3}, []string{"no concurrency cap"}, "behind", 0},
		{"prefill capped", Msg{InFlight: 6, Concurrency: 8, InPrefill: 2, PrefillCap: 2}, []string{"in-flight 6 / 8", "prefill 2 / 2"}, "behind", 0},
		{"in prefill", Msg{InFlight: 3, InPrefill: 1}, []string{"in-flight 3", "prefill 1"}, "/ 0", 0},
		{"lagging", Msg{Lag: metrics.Quantiles{P50: 4, P99: 25}}, []string{"p99 25.0 ms", "behind"}, "read delay", 0},
		{"read delay", Msg{ReadDelay: metrics.Quantiles{Count: 9, P50: 0.05, P99: 0.4}}, []string{"read delay p50 0.05  p99 0.40 ms"}, "saturated", 0},
		{"saturated client", Msg{ReadDelay: metrics.Quantiles{Count: 9, P50: 0.5, P99: 3}}, []string{"read delay", "saturated"}, "", 0},
		{"narrow: the p99s alone, uncut", Msg{Lag: metrics.Quantiles{P50: 0.12, P99: 1.53}, ReadDelay: metrics.Quantiles{Count: 9, P50: 0.05, P99: 0.4}},
			[]string{"sched lag p99 1.53 ms  read delay p99 0.40 ms"}, "…", 48},
	}
	for _, tt := range tests {
		var m Model
		m, _ = m.Update(tt.msg)
		v := m.View(cmp.Or(tt.width, 100))
		for _, w := range tt.want {
			if !strings.Contains(v, w) {
				t.Errorf("%s: missing %q in\n%s", tt.name, w, v)
			}
		}
		if tt.notWant != "" && strings.Contains(v, tt.notWant) {
			t.Errorf("%s: unexpected %q in\n%s", tt.name, tt.notWant, v)
		}
	}
}

// TestViewFitsUncut: from the 43 columns the panel has on a 100-column
// dashboard up, a live run's lines take their shorter forms rather than
// be cut (no "…"), and never pass the width.
func TestViewFitsUncut(t *testing.T) {
	msg := Msg{Started: 1234, Finished: 1200, Failed: 3, InFlight: 16, Concurrency: 16,
		Lag: metrics.Quantiles{P50: 0.12, P99: 12.53}, ReadDelay: metrics.Quantiles{Count: 9, P50: 0.05, P99: 3.4}}
	for _, live := range []bool{false, true} {
		var m Model
		m, _ = m.Update(msg)
		if live {
			m, _ = m.Update(LiveMsg{Live: Live{Mode: "concurrency", Value: 16}})
		}
		for width := 43; width <= 160; width++ {
			v := m.View(width)
			for _, l := range strings.Split(v, "\n") {
				if strings.Contains(l, "…") || ansi.StringWidth(l) > width {
					t.Errorf("live %v, %d columns: line %q cut or too wide", live, width, l)
				}
			}
			if !strings.Contains(v, "p99 12.5") || !strings.Contains(v, "p99 3.40 ms") || !strings.Contains(v, "16 / 16") {
				t.Errorf("live %v, %d columns: a gauge or the in-flight count lost:\n%s", live, width, v)
			}
		}
	}
}
