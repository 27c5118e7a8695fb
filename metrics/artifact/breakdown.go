package artifact

import (
	"encoding/json"
	"math"
)

// BreakdownParts are the parts of surge's time breakdown, in the order
// they happen (docs/time-breakdown.md).
var BreakdownParts = []string{"client", "network", "server_queue", "prefill", "decode", "delivery"}

// BreakdownTag is the metric tag a part's values go by in the records and
// the summary's metrics as read back ("time_breakdown_server_queue"),
// so compare and the history take them as any metric.
func BreakdownTag(part string) string { return "time_breakdown_" + part }

// Part is one part of a time breakdown as the summary writes it (a run's
// surge.time_breakdown, a stage's time_breakdown): its percentiles and
// mean in ms (NaN: unknown), share and source.
type Part struct {
	Count  float64
	Source string
	P50    float64
	P90    float64
	P99    float64
	Mean   float64
	Share  float64
}

// UnmarshalJSON reads a part, its nulls as NaN.
func (p *Part) UnmarshalJSON(b []byte) error {
	var j struct {
		Count  float64  `json:"count"`
		Source string   `json:"source"`
		P50    *float64 `json:"p50"`
		P90    *float64 `json:"p90"`
		P99    *float64 `json:"p99"`
		Mean   *float64 `json:"mean"`
		Share  *float64 `json:"share"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	val := func(f *float64) float64 {
		if f == nil {
			return math.NaN()
		}
		return *f
	}
	*p = Part{Count: j.Count, Source: j.Source, P50: val(j.P50), P90: val(j.P90), P99: val(j.P99), Mean: val(j.Mean), Share: val(j.Share)}
	return nil
}

// Breakdown is a time breakdown keyed by part (nil: the run had none).
type Breakdown map[string]Part

// stat is a part as a metric's statistics (its known ones).
func (p Part) stat() Stat {
	z := func(x float64) float64 {
		if math.IsNaN(x) {
			return 0
		}
		return x
	}
	return Stat{Unit: "ms", Avg: z(p.Mean), P50: z(p.P50), P90: z(p.P90), P99: z(p.P99), Count: p.Count}
}

// parseBreakdown reads the summary's surge.time_breakdown into s: its
// parts, and each known part as a metric (BreakdownTag) with its p50,
// p90, p99 and mean.
func parseBreakdown(s *Summary, raw map[string]json.RawMessage) {
	v, ok := raw["surge"]
	if !ok {
		return
	}
	var sg struct {
		Breakdown Breakdown `json:"time_breakdown"`
	}
	if json.Unmarshal(v, &sg) != nil || len(sg.Breakdown) == 0 {
		return
	}
	s.Breakdown = sg.Breakdown
	for name, p := range sg.Breakdown {
		if p.Count > 0 {
			s.Metrics[BreakdownTag(name)] = p.stat()
		}
	}
}

// recordBreakdown adds a record's parts (its surge.time_breakdown) to its
// metrics, the unknown ones left out.
func recordBreakdown(rec *Record, v json.RawMessage) {
	var parts map[string]struct {
		Value *float64 `json:"value"`
		Unit  string   `json:"unit"`
	}
	if json.Unmarshal(v, &parts) != nil {
		return
	}
	for name, p := range parts {
		if p.Value == nil || math.IsNaN(*p.Value) || math.IsInf(*p.Value, 0) {
			continue
		}
		tag := BreakdownTag(name)
		rec.Metrics[tag], rec.Units[tag] = toDisplay(*p.Value, p.Unit)
	}
}
