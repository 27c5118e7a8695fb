package export

import (
	"cmp"
	"encoding/json"
	"io"
	"slices"
	"strconv"

	"github.com/surgebench/surge/metrics"
)

// TimeslicesJSON writes profile_export_aiperf_timeslices.json as AIPerf
// does: {"timeslices": [{"timeslice_index": i, tag: {unit, avg, …}, …}],
// "input_config": {…}}, each window's metrics in the summary's shape.
func TimeslicesJSON(w io.Writer, s *metrics.Summary, inputConfig any) error {
	list := make([]*object, 0, len(s.Timeslices))
	for _, ts := range s.Timeslices {
		o := newObject()
		o.set("timeslice_index", ts.Index)
		addMetricsOf(o, ts.Metrics, ts.Run)
		list = append(list, o)
	}
	doc := newObject()
	doc.set("timeslices", list)
	doc.set("input_config", inputConfig)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// TimeslicesCSV writes profile_export_aiperf_timeslices.csv in AIPerf's
// tidy form: Timeslice,Metric,Unit,Stat,Value, one row per statistic of
// each metric of each window (run-level metrics have avg only), metrics
// sorted by tag, numbers with two decimals.
func TimeslicesCSV(w io.Writer, s *metrics.Summary) error {
	cw := newCSV(w)
	_ = cw.Write([]string{"Timeslice", "Metric", "Unit", "Stat", "Value"})
	for _, ts := range s.Timeslices {
		type row struct {
			def   metrics.Def
			stats []float64
		}
		dists, runs := csvMetrics(ts.Metrics, ts.Run)
		rows := make([]row, 0, len(dists)+len(runs))
		for _, d := range dists {
			rows = append(rows, row{d.def, stats(d.dist)})
		}
		for _, r := range runs {
			rows = append(rows, row{r.def, []float64{r.value}})
		}
		slices.SortFunc(rows, func(a, b row) int { return cmp.Compare(a.def.Tag, b.def.Tag) })
		index := strconv.Itoa(ts.Index)
		for _, r := range rows {
			for i, v := range r.stats {
				_ = cw.Write([]string{index, r.def.Name, r.def.Unit, statKeys[i], csvNum(v)})
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
