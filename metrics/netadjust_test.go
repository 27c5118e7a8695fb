package metrics

import (
	"math"
	"testing"
)

// TestAdjustForNetwork: every statistic of the send-anchored latencies
// moves down by the round trip (clamped at 0), the spread is kept, ITL
// gets no view, and network_rtt is the round trip.
func TestAdjustForNetwork(t *testing.T) {
	t.Parallel()
	d := Distribution{Unit: "ms", Avg: 20, Min: 4, Max: 40, P50: 18, P99: 39, Std: 6, Count: 10, Sum: 200}
	s := &Summary{Metrics: map[Tag]Distribution{RequestLatency: d, TTFT: d, ITL: d}, Run: map[Tag]float64{}}
	if clamped := s.AdjustForNetwork(5); !clamped {
		t.Errorf("a 5 ms round trip over a 4 ms minimum: not reported as clamped")
	}
	a := s.Metrics[NetworkAdjustedOf(RequestLatency)]
	if a.Avg != 15 || a.Min != 0 || a.Max != 35 || a.P50 != 13 || a.P99 != 34 || a.Std != 6 || a.Sum != 150 || a.Count != 10 {
		t.Errorf("adjusted request latency %+v", a)
	}
	if _, ok := s.Metrics[NetworkAdjustedOf(TTFT)]; !ok {
		t.Errorf("no adjusted TTFT")
	}
	if _, ok := s.Metrics[NetworkAdjustedOf(ITL)]; ok {
		t.Errorf("ITL holds no round trip, yet has an adjusted view")
	}
	if _, ok := s.Metrics[NetworkAdjustedOf(TTFO)]; ok {
		t.Errorf("an adjusted view of a metric the run did not have")
	}
	if s.Run[NetworkRTT] != 5 {
		t.Errorf("network_rtt %v", s.Run[NetworkRTT])
	}
	if (&Summary{Metrics: map[Tag]Distribution{}, Run: map[Tag]float64{}}).AdjustForNetwork(math.NaN()) {
		t.Errorf("NaN round trip adjusted something")
	}
}
