package search

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// SLA is one of AIPerf's SLA filters, METRIC:STAT:OP:THRESHOLD
// (request_latency:p95:le:30000), as adaptive scale and the search
// recipes take them. Thresholds are in the metric's display unit (ms for
// latencies); an adaptive window's error, success and cancellation rates
// are fractions (0–1), a search's run-level error rate in percent, each
// as AIPerf has it.
type SLA struct {
	Metric    string  `json:"metric_tag"`
	Stat      string  `json:"stat"`
	Op        string  `json:"op"`
	Threshold float64 `json:"threshold"`
}

// Key is the filter as AIPerf keys its values: metric:stat:op:threshold.
func (s SLA) Key() string {
	return s.Metric + ":" + s.Stat + ":" + s.Op + ":" + strconv.FormatFloat(s.Threshold, 'g', -1, 64)
}

// slaMetrics maps AIPerf's SLA metric names onto the tags surge judges.
var slaMetrics = map[string]string{
	"request_latency":              "request_latency",
	"time_to_first_token":          "time_to_first_token",
	"ttft":                         "time_to_first_token",
	"inter_token_latency":          "inter_token_latency",
	"itl":                          "inter_token_latency",
	"tpot":                         "inter_token_latency",
	"throughput":                   Throughput,
	"request_throughput":           Throughput,
	"completed_request_throughput": Throughput,
	"output_token_throughput":      OutputThroughput,
	"goodput":                      Goodput,
	"goodput_ratio":                GoodputRatio,
	"success_rate":                 SuccessRate,
	"request_success_rate":         SuccessRate,
	"error_rate":                   RequestErrorRate,
	"request_error_rate":           RequestErrorRate,
	"cancellation_rate":            CancellationRate,
	"request_cancellation_rate":    CancellationRate,
}

// AdaptiveFlag is adaptive scale's SLA flag: given to ParseSLA, its rates
// are read as the window's fractions.
const AdaptiveFlag = "--adaptive-scale-sla"

// ParseSLA reads one SLA filter and the objective that judges it. flag
// names the flag in errors, and says whose filter it is (AdaptiveFlag:
// adaptive scale's).
func ParseSLA(flag, s string) (SLA, Objective, error) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	if len(parts) != 4 {
		return SLA{}, Objective{}, fmt.Errorf("%s %q: want METRIC:STAT:OP:VALUE, e.g. time_to_first_token:p95:le:200", flag, s)
	}
	sla := SLA{Metric: strings.ToLower(parts[0]), Stat: strings.ToLower(parts[1]), Op: strings.ToLower(parts[2])}
	v, err := strconv.ParseFloat(parts[3], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return SLA{}, Objective{}, fmt.Errorf("%s %q: %q is not a number", flag, s, parts[3])
	}
	sla.Threshold = v
	o := Objective{Limit: v}
	switch sla.Op {
	case "lt", "le":
		o.Strict = sla.Op == "lt"
	case "gt", "ge":
		o.Strict, o.HigherIsBetter = sla.Op == "gt", true
	default:
		return SLA{}, Objective{}, fmt.Errorf("%s %q: operator %q: want lt, le, gt or ge", flag, s, parts[2])
	}
	tag, ok := slaMetrics[sla.Metric]
	if !ok {
		if _, perRequest := requestDef(sla.Metric); !perRequest {
			return SLA{}, Objective{}, fmt.Errorf("%s %q: unknown metric %q (request_latency, time_to_first_token, inter_token_latency, request_throughput, output_token_throughput, goodput, goodput_ratio, success_rate, error_rate, cancellation_rate or a per-request metric)", flag, s, parts[0])
		}
		tag = sla.Metric
	}
	o.Tag = tag
	if o.Window() {
		if sla.Stat != StatAvg && sla.Stat != StatMin && sla.Stat != StatMax {
			return SLA{}, Objective{}, fmt.Errorf("%s %q: %s is one value per window: its stat is avg, min or max, not %q", flag, s, sla.Metric, parts[1])
		}
		switch {
		case tag == RequestErrorRate && flag != AdaptiveFlag:
			// A search judges AIPerf's run-level request_error_rate, in
			// percent; surge judges the fraction.
			if v < 0 || v > 100 {
				return SLA{}, Objective{}, fmt.Errorf("%s %q: an error rate is in percent, 0 to 100", flag, s)
			}
			o.Limit = v / 100
		case tag == RequestErrorRate || tag == SuccessRate || tag == CancellationRate:
			// Adaptive scale's window rates are fractions of the
			// window's attempts (AIPerf's adaptive SLA table).
			if v < 0 || v > 1 {
				return SLA{}, Objective{}, fmt.Errorf("%s %q: %s is a fraction of the window's requests, 0 to 1", flag, s, sla.Metric)
			}
		}
		return sla, o, nil
	}
	switch sla.Stat {
	case StatAvg, StatMin, StatMax:
		o.Stat = sla.Stat
	default:
		p, err := strconv.ParseFloat(strings.TrimPrefix(sla.Stat, "p"), 64)
		if !strings.HasPrefix(sla.Stat, "p") || err != nil || !(p > 0 && p <= 100) {
			return SLA{}, Objective{}, fmt.Errorf("%s %q: stat %q: want avg, min, max or p1 … p99", flag, s, parts[1])
		}
		o.Percentile = p
	}
	return sla, o, nil
}

// CheckSLAs refuses what AIPerf refuses of a set of filters: none, the
// same filter twice, and goodput with no per-request filter to say which
// requests are good.
func CheckSLAs(flag string, objs []Objective) error {
	if len(objs) == 0 {
		return fmt.Errorf("%s: at least one SLA is required (e.g. time_to_first_token:p95:le:200)", flag)
	}
	seen := map[string]bool{}
	quality, goodput := false, false
	for _, o := range objs {
		key := o.Name() + o.String()
		if seen[key] {
			return fmt.Errorf("%s: %s given twice", flag, o.String())
		}
		seen[key] = true
		quality = quality || !o.Window()
		goodput = goodput || o.Tag == Goodput || o.Tag == GoodputRatio
	}
	if goodput && !quality {
		return fmt.Errorf("%s: goodput needs a per-request SLA (request_latency, time_to_first_token or inter_token_latency) to say which requests are good", flag)
	}
	return nil
}
