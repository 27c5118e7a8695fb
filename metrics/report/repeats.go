package report

import (
	"fmt"
	"strconv"

	"github.com/surgebench/surge/metrics/artifact"
	"github.com/surgebench/surge/metrics/stats"
)

// BuildRepeats is the report of repeated runs of one plan
// (--num-profile-runs, as `surge profile --report` and `surge report`
// on its folder draw it): the runs side by side, as Build draws them, then
// their spread (RepeatCharts) at the aggregate's confidence level.
func BuildRepeats(runs []*artifact.Run, level float64) Data {
	d := Build(runs)
	d.Charts = append(d.Charts, RepeatCharts(runs, level)...)
	return d
}

// RepeatCharts draw the spread of repeated runs of one plan
// (--num-profile-runs): per headline metric, each run's value as a point
// against its run number, with the runs' mean and the bounds of its
// Student-t interval at level as lines across them. Nil for fewer than
// two runs.
func RepeatCharts(runs []*artifact.Run, level float64) []Chart {
	if len(runs) < 2 {
		return nil
	}
	ci := strconv.FormatFloat(100*level, 'f', -1, 64) + "% CI"
	var out []Chart
	for _, m := range []struct {
		tag, name string
		value     func(artifact.Stat) float64
	}{
		{tagTTFT, "TTFT p99", func(s artifact.Stat) float64 { return s.P99 }},
		{tagITL, "ITL avg", func(s artifact.Stat) float64 { return s.Avg }},
		{tagLatency, "request latency p99", func(s artifact.Stat) float64 { return s.P99 }},
		{"output_token_throughput", "output token throughput", func(s artifact.Stat) float64 { return s.Avg }},
	} {
		var xs []Num
		var ys []float64
		unit := ""
		for i, r := range runs {
			if r.Summary == nil {
				continue
			}
			st, ok := r.Summary.Metrics[m.tag]
			if !ok {
				continue
			}
			xs, ys, unit = append(xs, Num(i+1)), append(ys, m.value(st)), st.Unit
		}
		if len(ys) < 2 {
			continue
		}
		sp := stats.Describe(ys, level)
		c := Chart{ID: "runs-" + m.tag, Group: "runs", Title: fmt.Sprintf("runs: %s (mean and %s)", m.name, ci),
			XLabel: "run", YLabel: axis(m.name, unit)}
		pts := Series{Label: "each run", Style: Points, X: xs}
		for _, y := range ys {
			pts.Y = append(pts.Y, Num(y))
		}
		ends := []Num{xs[0], xs[len(xs)-1]}
		for _, l := range []struct {
			label string
			y     float64
		}{{"mean", sp.Mean}, {ci + " low", sp.Lo}, {ci + " high", sp.Hi}} {
			c.Series = append(c.Series, Series{Label: l.label, Run: 0, Style: Line, X: ends, Y: []Num{Num(l.y), Num(l.y)}})
		}
		c.Series = append(c.Series, pts)
		out = append(out, c)
	}
	return out
}
