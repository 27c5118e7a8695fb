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

// TestRepeatChartsSweep: runs of a sweep are drawn per value, against the
// swept value: the mean and interval bounds as lines through the values,
// each run's value a point; a run failed at a value is left out there, a
// metric no run recorded is not drawn, and runs of different values fall
// back to the pooled charts.
func TestRepeatChartsSweep(t *testing.T) {
	sweep := func(tput ...float64) *artifact.Run {
		s := &artifact.Summary{Metrics: map[string]artifact.Stat{"output_token_throughput": {Unit: "tokens/sec", Avg: 1}}}
		for i, v := range tput {
			st := artifact.Stage{Mode: "concurrency", Value: float64(int(1) << i), OutputTokenThroughput: v}
			if v > 0 {
				st.RequestCount = 8
			}
			s.Stages = append(s.Stages, st)
		}
		return &artifact.Run{Summary: s}
	}
	runs := []*artifact.Run{sweep(100, 190, 300), sweep(110, 210, 0), sweep(90, 200, 280)}
	charts := RepeatCharts(runs, 0.95)
	if len(charts) != 1 || charts[0].Title != "runs: output token throughput per concurrency (mean and 95% CI)" || charts[0].XLabel != "concurrency" {
		t.Fatalf("charts %+v, want the throughput one per concurrency", charts)
	}
	s := charts[0].Series
	if len(s) != 4 || s[3].Style != Points || len(s[3].Y) != 8 {
		t.Fatalf("series %+v, want mean, bounds and 8 points (one run failed at 4)", s)
	}
	mean, lo, hi := s[0], s[1], s[2]
	for i, want := range []struct{ x, mean float64 }{{1, 100}, {2, 200}, {4, 290}} {
		if float64(mean.X[i]) != want.x || math.Abs(float64(mean.Y[i])-want.mean) > 1e-9 || lo.Y[i] >= mean.Y[i] || hi.Y[i] <= mean.Y[i] {
			t.Errorf("at %g: mean %v in [%v, %v], want %g inside its interval", want.x, mean.Y[i], lo.Y[i], hi.Y[i], want.mean)
		}
	}
	runs[2].Summary.Stages = runs[2].Summary.Stages[:2]
	if charts := RepeatCharts(runs, 0.95); len(charts) != 1 || charts[0].XLabel != "run" {
		t.Errorf("sweeps of different values: charts %+v, want the pooled one", charts)
	}
}
