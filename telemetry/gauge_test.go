package telemetry

import (
	"encoding/json"
	"testing"

	"github.com/surgebench/surge/loadgen/stop"
)

// TestGaugeNamesAreTheExportsKeys: every gauge --stop-on may watch reads
// the field the server-metrics export writes under that name.
func TestGaugeNamesAreTheExportsKeys(t *testing.T) {
	s := ServerSample{Running: 3, Waiting: 5, KVCacheUsage: 0.75, PrefixCacheHitRate: 0.25}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var exported map[string]any
	if err := json.Unmarshal(b, &exported); err != nil {
		t.Fatal(err)
	}
	for _, name := range stop.ServerMetrics {
		want, ok := exported[name].(float64)
		if !ok {
			t.Errorf("%s: not a number in the export (%v)", name, exported[name])
			continue
		}
		if got := s.Gauge(name); got != want {
			t.Errorf("Gauge(%q) = %g, the export says %g", name, got, want)
		}
	}
	if got := s.Gauge("no_such_gauge"); got != 0 {
		t.Errorf("an unknown gauge reads %g, want 0", got)
	}
}
