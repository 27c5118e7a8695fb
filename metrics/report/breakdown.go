package report

import (
	"math"
	"strconv"

	"github.com/surgebench/surge/metrics/artifact"
)

// breakdownNames are the parts as the charts name them.
var breakdownNames = map[string]string{"client": "client", "network": "network", "server_queue": "server queue",
	"prefill": "prefill", "decode": "decode", "delivery": "delivery"}

// breakdownCharts are "where the time went" per run that has a breakdown:
// a stacked bar per stage (one for a run of one stage) of the parts' mean
// times, client at the bottom to delivery at the top; a part its server
// did not give adds nothing. Each series is a part's running total, the
// tallest first, its colour the part's.
func breakdownCharts(runs []*artifact.Run) []Chart {
	var out []Chart
	for i, r := range runs {
		s := r.Summary
		if s == nil {
			continue
		}
		var bds []artifact.Breakdown
		var labels []string
		if isSweep(r) {
			for _, st := range s.Stages {
				if st.TimeBreakdown != nil {
					bds, labels = append(bds, st.TimeBreakdown), append(labels, stageLabel(st))
				}
			}
		} else if s.Breakdown != nil {
			bds, labels = []artifact.Breakdown{s.Breakdown}, []string{r.Name}
		}
		if len(bds) == 0 {
			continue
		}
		c := Chart{ID: "breakdown-" + strconv.Itoa(i), Group: "where the time went", Title: "where the time went: " + r.Name,
			XLabel: "stage", YLabel: "mean time, stacked (ms)", XStages: labels}
		if !isSweep(r) {
			c.XLabel = "run"
		}
		parts := artifact.BreakdownParts
		for p := len(parts) - 1; p >= 0; p-- {
			se := Series{Label: breakdownNames[parts[p]], Run: p, Style: Bars}
			for j, bd := range bds {
				total := 0.0
				for _, q := range parts[:p+1] {
					if m := bd[q].Mean; bd[q].Count > 0 && !math.IsNaN(m) {
						total += max(m, 0)
					}
				}
				se.X = append(se.X, Num(float64(j)+0.5))
				se.Y = append(se.Y, Num(total))
			}
			if src := sources(bds, parts[p]); src != "" {
				se.Label += " (" + src + ")"
			}
			c.Series = append(c.Series, se)
		}
		out = append(out, c)
	}
	return out
}

// stageLabel names a stage on the axis: its label, else its value.
func stageLabel(st artifact.Stage) string {
	if st.Label != "" {
		return st.Label
	}
	return strconv.FormatFloat(st.Value, 'g', 6, 64)
}

// sources is a part's source over the stages: one name, "mixed", or ""
// when no stage had the part.
func sources(bds []artifact.Breakdown, part string) string {
	src := ""
	for _, bd := range bds {
		p, ok := bd[part]
		if !ok || p.Count == 0 {
			continue
		}
		switch {
		case src == "":
			src = p.Source
		case src != p.Source:
			return "mixed"
		}
	}
	return src
}
