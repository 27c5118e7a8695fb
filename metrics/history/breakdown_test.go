package history

import (
	"testing"

	"github.com/surgebench/surge/metrics/artifact"
)

// A run's time breakdown goes into its statistics: each known part's
// p50, p90, p99 and mean, as time_breakdown_<part>, which trend reads as
// any metric; the statistics a part's summary has not are not made up.
func TestRowKeepsTheBreakdown(t *testing.T) {
	t.Parallel()
	s, err := artifact.ParseSummary([]byte(`{"request_count":{"unit":"requests","avg":10},
		"surge":{"time_breakdown":{"server_queue":{"count":10,"source":"otlp","p50":12.5,"p90":20,"p99":31,"mean":14,"unit":"ms"},
		"network":{"count":0,"source":"unknown","p50":null,"p90":null,"p99":null,"mean":null,"unit":"ms"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	rows := rowsOf(&artifact.Run{Dir: "r", Summary: s}, "uid", 0, importConfig{})
	r := rows[0]
	for stat, want := range map[string]float64{"p50": 12.5, "p90": 20, "p99": 31, "avg": 14} {
		if v, ok := r.Value("time_breakdown_server_queue", stat); !ok || v != want {
			t.Errorf("server queue %s: %v (%v), want %v", stat, v, ok, want)
		}
	}
	for _, stat := range []string{"min", "max", "p95", "std"} {
		if _, ok := r.Value("time_breakdown_server_queue", stat); ok {
			t.Errorf("server queue %s kept: the summary has none", stat)
		}
	}
	if _, ok := r.Value("time_breakdown_network", "p50"); ok {
		t.Error("an unknown part was kept")
	}
}
