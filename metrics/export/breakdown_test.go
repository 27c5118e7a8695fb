package export

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/metrics"
)

// breakdownSummary is a run whose server gave its queue, prefill and
// decode over OTLP for most requests, with the network unknown for the
// rest, and Little's law over it.
func breakdownSummary() *metrics.Summary {
	part := func(src string, n int64, p50, lo, hi, p90, p99, mean, share float64) metrics.PartSummary {
		return metrics.PartSummary{Count: n, Source: src, P50: p50, P50Lo: lo, P50Hi: hi, P90: p90, P99: p99, Mean: mean, Share: share}
	}
	tb := &metrics.TimeBreakdown{Requests: 400, Parts: [metrics.NumParts]metrics.PartSummary{
		part("client", 400, 0.052, 0.048, 0.057, 0.31, 2.2, 0.11, 0.002),
		part("mixed", 380, 0.41, 0.38, 0.45, 1.2, 6.1, 0.6, 0.011),
		part("otlp", 380, 31.2, 30.4, 32.0, 44.0, 58.3, 32.5, 0.58),
		part("otlp", 380, 22.9, 22.7, 23.1, 26.0, 31.9, 23.4, 0.41),
		part("otlp", 380, 612, 608, 617, 655, 702, 620, 0.998),
		part("otlp", 380, 0.21, 0.19, 0.24, 0.52, 1.9, 0.3, 0.0005),
	}, Unattributed: [2]float64{0.013, 0.0015}}
	tb.Parts[metrics.PartNetwork].Sources = map[string]int64{"otlp": 380, "unknown": 20}
	return &metrics.Summary{Metrics: map[metrics.Tag]metrics.Distribution{}, Run: map[metrics.Tag]float64{metrics.RequestCount: 400},
		TimeBreakdown: tb, SpanJoins: &metrics.SpanJoins{Joined: 380, Missed: 20},
		Little: &metrics.LittleLaw{Rate: 12.1, InFlight: 7.98, Concurrency: 8, Tolerance: 0.07,
			Parts: [metrics.NumParts]float64{0.0013, 0.0073, 0.39, 0.28, 7.5, 0.0036}}}
}

// TestConsoleBreakdown: the block fits 80 columns, each part with its
// p50 (and its interval), p90, p99, share and source, what no part
// covers, and where the requests were in flight.
func TestConsoleBreakdown(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	consoleBreakdown(&b, breakdownSummary(), 80)
	golden(t, "console_breakdown.txt", b.Bytes())
	for i, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		if n := len([]rune(l)); n > 80 {
			t.Errorf("line %d is %d columns: %q", i+1, n, l)
		}
	}
}

// TestJSONBreakdown: the summary's surge object keys the breakdown by
// part, each with its p50, p90, p99 in ms and its source, nulls where
// unknown, and Little's law beside it.
func TestJSONBreakdown(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := JSON(&b, breakdownSummary(), Run{Start: time.Unix(0, 0), End: time.Unix(1, 0)}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Surge struct {
			TimeBreakdown map[string]struct {
				P50, P90, P99 *float64
				Source        string
				Sources       map[string]int64
			} `json:"time_breakdown"`
			Little struct {
				Concurrency *float64           `json:"concurrency"`
				ByPart      map[string]float64 `json:"in_flight_by_part"`
			} `json:"littles_law"`
			Spans map[string]int64 `json:"otlp_spans"`
		} `json:"surge"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	tb := got.Surge.TimeBreakdown
	if len(tb) != 6 || *tb["server_queue"].P50 != 31.2 || tb["server_queue"].Source != "otlp" || *tb["decode"].P99 != 702 {
		t.Errorf("time_breakdown %+v", tb)
	}
	if n := tb["network"]; n.Source != "mixed" || n.Sources["unknown"] != 20 {
		t.Errorf("network %+v", n)
	}
	if l := got.Surge.Little; l.Concurrency == nil || *l.Concurrency != 8 || l.ByPart["decode"] != 7.5 {
		t.Errorf("littles_law %+v", l)
	}
	if got.Surge.Spans["joined"] != 380 {
		t.Errorf("otlp_spans %v", got.Surge.Spans)
	}
}
