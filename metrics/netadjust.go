package metrics

import "math"

// NetworkRTT is the mean network round trip subtracted from the
// network-adjusted metrics (AIPerf's network_rtt, in ms).
const NetworkRTT Tag = "network_rtt"

// NetworkAdjustedOf is the tag of t's network-adjusted view (AIPerf's
// network_adjusted_<tag>).
func NetworkAdjustedOf(t Tag) Tag { return "network_adjusted_" + t }

// NetworkAdjustedDefs are AIPerf's network-adjusted latencies: the metrics
// that start at the request's send, less the mean network round trip.
// Intra-stream gaps (ITL, TTST, ICL) hold no round trip and have none.
var NetworkAdjustedDefs = []Def{
	hidden(NetworkAdjustedOf(RequestLatency), "Network-Adjusted Request Latency", "ms", false),
	hidden(NetworkAdjustedOf(TTFT), "Network-Adjusted Time to First Token", "ms", false),
	hidden(NetworkAdjustedOf(TTFO), "Network-Adjusted Time to First Output Token", "ms", false),
}

// NetworkRTTDef describes network_rtt.
var NetworkRTTDef = hidden(NetworkRTT, "Network RTT", "ms", false)

// AdjustForNetwork adds the network-adjusted views of s's latencies, as
// AIPerf's transform does: each statistic less rttMs, clamped at 0 (the
// standard deviation is unchanged: a constant shifts every value alike),
// and network_rtt itself. It reports whether rttMs exceeded some
// measured latency (then clamped).
func (s *Summary) AdjustForNetwork(rttMs float64) (clamped bool) {
	if s == nil || math.IsNaN(rttMs) || rttMs < 0 {
		return false
	}
	s.Run[NetworkRTT] = rttMs
	for _, d := range NetworkAdjustedDefs {
		src := Tag(d.Tag[len("network_adjusted_"):])
		dist, ok := s.Metrics[src]
		if !ok || dist.Count == 0 {
			continue
		}
		if dist.Min < rttMs {
			clamped = true
		}
		adj := dist
		for _, p := range []*float64{&adj.Avg, &adj.Min, &adj.Max, &adj.P1, &adj.P5, &adj.P10, &adj.P25, &adj.P50, &adj.P75, &adj.P90, &adj.P95, &adj.P99} {
			*p = math.Max(*p-rttMs, 0)
		}
		adj.Sum = math.Max(dist.Sum-rttMs*float64(dist.Count), 0)
		s.Metrics[d.Tag] = adj
	}
	return clamped
}
