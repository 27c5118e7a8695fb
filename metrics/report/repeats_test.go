package report

import (
	"math"
	"testing"

	"github.com/surgebench/surge/metrics/artifact"
)

// TestRepeatCharts: each run's value is a point at its run number, the
// mean and the interval's bounds are flat lines across them.
func TestRepeatCharts(t *testing.T) {
	var runs []*artifact.Run
	for _, p99 := range []float64{150, 152, 148, 155, 151} {
		runs = append(runs, &artifact.Run{Summary: &artifact.Summary{Metrics: map[string]artifact.Stat{tagTTFT: {Unit: "ms", P99: p99}}}})
	}
	charts := RepeatCharts(runs, 0.95)
	if len(charts) != 1 || charts[0].ID != "runs-"+tagTTFT {
		t.Fatalf("charts %+v, want the TTFT one", charts)
	}
	s := charts[0].Series
	if len(s) != 4 || s[3].Style != Points || len(s[3].Y) != 5 || s[3].X[4] != 5 || s[3].Y[1] != 152 {
		t.Fatalf("series %+v", s)
	}
	// AIPerf's worked example: mean 151.2, 95% CI [147.99, 154.41].
	for i, want := range []float64{151.2, 147.986, 154.414} {
		if y := s[i].Y; math.Abs(float64(y[0])-want) > 1e-3 || y[0] != y[1] {
			t.Errorf("%s at %v, want flat at %g", s[i].Label, y, want)
		}
	}
	if RepeatCharts(runs[:1], 0.95) != nil {
		t.Error("one run drew a spread")
	}
}
