package metrics

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// SLO is one service-level objective of --goodput.
type SLO struct {
	Tag   Tag
	Value float64 // in the metric's display unit
}

// ParseGoodput reads SLOs such as "time_to_first_token:200 inter_token_latency:20".
// Errors describe the bad objective; the caller says where it came from
// (the app names its flag).
// Thresholds are in the metric's display unit (ms for latencies). A request
// is good when it meets every objective: at most the value for latencies,
// at least the value for throughput-like metrics.
func ParseGoodput(s string) ([]SLO, error) {
	var slos []SLO
	seen := map[Tag]bool{}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' }) {
		name, val, ok := strings.Cut(f, ":")
		if !ok {
			name, val, ok = strings.Cut(f, "=")
		}
		if !ok || name == "" || val == "" {
			return nil, fmt.Errorf("%q is not tag:value (e.g. time_to_first_token:200)", f)
		}
		def, known := defOf(Tag(name))
		if !known || def.Tag == ICL || def.Tag == ErrorISL {
			return nil, fmt.Errorf("unknown metric %q (use a per-request metric such as time_to_first_token, inter_token_latency, request_latency)", name)
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, fmt.Errorf("%s: %q is not a non-negative number", name, val)
		}
		if seen[def.Tag] {
			return nil, fmt.Errorf("%s given twice", name)
		}
		seen[def.Tag] = true
		slos = append(slos, SLO{Tag: def.Tag, Value: v})
	}
	if len(slos) == 0 && strings.TrimSpace(s) != "" {
		return nil, fmt.Errorf("no objectives in %q", s)
	}
	return slos, nil
}

// Good reports whether v meets every objective. A request lacking a metric
// an objective needs (no ITL for a one-token answer) does not meet it.
func Good(v *Values, slos []SLO) bool {
	for _, o := range slos {
		x := v.Get(o.Tag)
		if math.IsNaN(x) {
			return false
		}
		def, _ := defOf(o.Tag)
		if def.HigherIsBetter {
			if x < o.Value {
				return false
			}
		} else if x > o.Value {
			return false
		}
	}
	return true
}
