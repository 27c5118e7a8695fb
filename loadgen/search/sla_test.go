package search

import (
	"math"
	"strings"
	"testing"
)

func TestParseSLA(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want Objective
	}{
		{"time_to_first_token:p95:le:200", Objective{Tag: "time_to_first_token", Percentile: 95, Limit: 200}},
		{"ttft:P99:lt:50", Objective{Tag: "time_to_first_token", Percentile: 99, Limit: 50, Strict: true}},
		{"request_latency:avg:le:30000", Objective{Tag: "request_latency", Stat: StatAvg, Limit: 30000}},
		{"tpot:max:le:20", Objective{Tag: "inter_token_latency", Stat: StatMax, Limit: 20}},
		// Adaptive scale's window rates are fractions, as AIPerf's.
		{"error_rate:avg:le:0.01", Objective{Tag: RequestErrorRate, Limit: 0.01}},
		{"success_rate:avg:ge:0.95", Objective{Tag: SuccessRate, Limit: 0.95, HigherIsBetter: true}},
		{"request_throughput:avg:ge:5", Objective{Tag: Throughput, Limit: 5, HigherIsBetter: true}},
		{"goodput:avg:gt:20", Objective{Tag: Goodput, Limit: 20, HigherIsBetter: true, Strict: true}},
		{"success_rate:min:ge:0.99", Objective{Tag: SuccessRate, Limit: 0.99, HigherIsBetter: true}},
		{"output_token_throughput_per_user:p50:ge:30", Objective{Tag: "output_token_throughput_per_user", Percentile: 50, Limit: 30, HigherIsBetter: true}},
	} {
		sla, got, err := ParseSLA("--adaptive-scale-sla", tc.in)
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v %v, want %+v", tc.in, got, err, tc.want)
		}
		if back := sla.Key(); !strings.EqualFold(back, tc.in) && !strings.HasPrefix(tc.in, "ttft:P") {
			t.Errorf("%s: key %s", tc.in, back)
		}
	}
	for _, bad := range []struct{ in, says string }{
		{"ttft:p95:200", "METRIC:STAT:OP:VALUE"},
		{"ttft:p95:eq:200", "operator"},
		{"ttft:p0:le:200", "stat"},
		{"ttft:q5:le:200", "stat"},
		{"ttft:p95:le:x", "not a number"},
		{"nothing:p95:le:1", "unknown metric"},
		{"goodput:p95:ge:1", "one value per window"},
		{"error_rate:avg:le:2", "a fraction of the window's requests"},
	} {
		if _, _, err := ParseSLA("--adaptive-scale-sla", bad.in); err == nil || !strings.Contains(err.Error(), bad.says) || !strings.HasPrefix(err.Error(), "--adaptive-scale-sla") {
			t.Errorf("%s: %v, want an error naming the flag saying %q", bad.in, err, bad.says)
		}
	}
	_, good, _ := ParseSLA("f", "goodput:avg:ge:1")
	if err := CheckSLAs("f", []Objective{good}); err == nil || !strings.Contains(err.Error(), "per-request") {
		t.Errorf("goodput alone: %v", err)
	}
	_, ttft, _ := ParseSLA("f", "ttft:p95:le:1")
	if err := CheckSLAs("f", []Objective{ttft, ttft}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("twice: %v", err)
	}
	if err := CheckSLAs("f", nil); err == nil {
		t.Error("no SLA accepted")
	}
}

func FuzzParseSLA(f *testing.F) {
	for _, s := range []string{"time_to_first_token:p95:le:200", "error_rate:avg:le:1", "a:b:c:d", ":::", "goodput:max:gt:1e308"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sla, o, err := ParseSLA("f", s)
		if err != nil {
			return
		}
		if math.IsNaN(o.Limit) || math.IsInf(o.Limit, 0) || (!o.Window() && o.Stat == "" && !(o.Percentile > 0 && o.Percentile <= 100)) {
			t.Fatalf("%q gave %+v", s, o)
		}
		if _, back, err := ParseSLA("f", sla.Key()); err != nil || back != o {
			t.Fatalf("%+v does not round-trip through %q: %+v %v", o, sla.Key(), back, err)
		}
	})
}

// TestSearchErrorRateInPercent: a search's run-level request_error_rate
// is AIPerf's metric, in percent.
func TestSearchErrorRateInPercent(t *testing.T) {
	_, o, err := ParseSLA("--search-sla", "request_error_rate:avg:lt:1")
	if err != nil || o.Limit != 0.01 || !o.Strict {
		t.Errorf("%+v, %v", o, err)
	}
}
