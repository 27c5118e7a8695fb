package artifact

import (
	"encoding/json"
	"math"
)

// Precision is the summary's confidence intervals (surge's "precision"
// key): per latency metric and percentile, and per throughput.
type Precision struct {
	Level float64
	// Percentiles maps a metric's tag and a percentile ("p99") to its
	// interval; Throughputs a throughput's tag to its.
	Percentiles map[string]map[string]Interval
	Throughputs map[string]Interval
}

// Interval is one interval as the summary writes it: an unbounded side
// (null) reads as ±Inf, an unknown half-width as +Inf.
type Interval struct {
	Value, Lo, Hi float64
	// HalfWidthPct is the half-width relative to the value, in percent.
	HalfWidthPct float64
	// N and Tail are the values it rests on and those beyond the
	// percentile; Thin is set under 10 of those; Batches counts a
	// throughput's batch means.
	N, Tail, Batches int
	Thin             bool
}

// UnmarshalJSON reads an interval, nulls as unbounded.
func (iv *Interval) UnmarshalJSON(b []byte) error {
	var j struct {
		Value, Lo, Hi, HalfWidthPct *float64
		N, Tail, Batches            int
		Thin                        bool
	}
	if err := json.Unmarshal(b, &struct {
		Value        **float64 `json:"value"`
		Lo           **float64 `json:"lo"`
		Hi           **float64 `json:"hi"`
		HalfWidthPct **float64 `json:"half_width_pct"`
		N            *int      `json:"n"`
		Tail         *int      `json:"tail"`
		Batches      *int      `json:"batches"`
		Thin         *bool     `json:"thin"`
	}{&j.Value, &j.Lo, &j.Hi, &j.HalfWidthPct, &j.N, &j.Tail, &j.Batches, &j.Thin}); err != nil {
		return err
	}
	or := func(p *float64, d float64) float64 {
		if p == nil {
			return d
		}
		return *p
	}
	*iv = Interval{Value: or(j.Value, math.NaN()), Lo: or(j.Lo, math.Inf(-1)), Hi: or(j.Hi, math.Inf(1)),
		HalfWidthPct: or(j.HalfWidthPct, math.Inf(1)), N: j.N, Tail: j.Tail, Batches: j.Batches, Thin: j.Thin}
	return nil
}

// UnmarshalJSON reads the precision object: its level, and every key whose
// value is an interval (a throughput) or an object of them (a latency).
func (p *Precision) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*p = Precision{Percentiles: map[string]map[string]Interval{}, Throughputs: map[string]Interval{}}
	_ = json.Unmarshal(raw["level"], &p.Level)
	for k, v := range raw {
		var probe map[string]json.RawMessage
		if json.Unmarshal(v, &probe) != nil {
			continue
		}
		if _, ok := probe["lo"]; ok {
			var iv Interval
			if json.Unmarshal(v, &iv) == nil {
				p.Throughputs[k] = iv
			}
			continue
		}
		ps := map[string]Interval{}
		for stat, pv := range probe {
			var iv Interval
			if json.Unmarshal(pv, &iv) == nil && len(stat) > 1 && stat[0] == 'p' {
				ps[stat] = iv
			}
		}
		if len(ps) > 0 {
			p.Percentiles[k] = ps
		}
	}
	return nil
}

// Steady is the summary's steady state (surge's "steady_state" key).
type Steady struct {
	Found   bool   `json:"found"`
	Reason  string `json:"reason"`
	Method  string `json:"method"`
	Applied bool   `json:"applied"`
	// RunSec is the run's length; StartSec and EndSec bound the steady
	// state from the run's first request; WarmupSec and DrainSec are the
	// spans cut.
	RunSec    float64 `json:"run_sec"`
	StartSec  float64 `json:"start_sec"`
	EndSec    float64 `json:"end_sec"`
	WarmupSec float64 `json:"warmup_sec"`
	DrainSec  float64 `json:"drain_sec"`
	// Metrics are the window's distributions and run-level numbers.
	Metrics   map[string]Stat
	Precision *Precision `json:"precision"`
}

// parseSteady reads the steady state, its metrics by their "unit" as the
// summary's.
func parseSteady(b []byte) *Steady {
	var s Steady
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(b, &raw)
	s.Metrics = map[string]Stat{}
	for k, v := range raw {
		var probe struct {
			Unit *string `json:"unit"`
		}
		var st Stat
		if json.Unmarshal(v, &probe) == nil && probe.Unit != nil && json.Unmarshal(v, &st) == nil {
			s.Metrics[k] = st
		}
	}
	return &s
}
