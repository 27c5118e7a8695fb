package export

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/surgebench/surge/metrics"
)

// statKeys are the columns of a distribution row, AIPerf's STAT_KEYS.
var statKeys = []string{"avg", "min", "max", "sum", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std"}

// stats returns d's values in statKeys order.
func stats(d metrics.Distribution) []float64 {
	return []float64{d.Avg, d.Min, d.Max, d.Sum, d.P1, d.P5, d.P10, d.P25, d.P50, d.P75, d.P90, d.P95, d.P99, d.Std}
}

// CSV writes profile_export_aiperf.csv as AIPerf's exporter does: the
// distributions (Metric,avg,min,max,sum,p1,…,p99,std), a blank line, then
// the run-level metrics (Metric,Value), each section sorted by tag, every
// number with two decimals, a metric's unit after its name except for
// counts of requests, CRLF line ends (Python's csv module); then surge's
// section of confidence intervals (writePrecisionCSV) and, with
// WithTelemetry, AIPerf's GPU telemetry section.
func CSV(w io.Writer, s *metrics.Summary, opts ...CSVOption) error {
	var cfg csvConfig
	for _, o := range opts {
		o(&cfg)
	}
	cw := newCSV(w)
	writeMetricsCSV(cw, s.Metrics, s.Run, true)
	writeCountsCSV(cw, s)
	writeSessionsCSV(cw, s.Sessions)
	writeModelsCSV(cw, s.Models)
	writePrecisionCSV(cw, s)
	writeTelemetryCSV(cw, cfg.telemetry)
	cw.Flush()
	return cw.Error()
}

// writeMetricsCSV writes AIPerf's two tables: the distributions' stats,
// then the run's single values; apart, a blank row between them.
func writeMetricsCSV(cw *csv.Writer, dm map[metrics.Tag]metrics.Distribution, rm map[metrics.Tag]float64, apart bool) {
	dists, runs := csvMetrics(dm, rm)
	if len(dists) > 0 {
		_ = cw.Write(append([]string{"Metric"}, statKeys...))
		for _, d := range dists {
			row := []string{d.def.Label()}
			for _, v := range stats(d.dist) {
				row = append(row, csvNum(v))
			}
			_ = cw.Write(row)
		}
		if apart && len(runs) > 0 {
			_ = cw.Write(nil)
		}
	}
	if len(runs) > 0 {
		_ = cw.Write([]string{"Metric", "Value"})
		for _, r := range runs {
			_ = cw.Write([]string{r.def.Label(), csvNum(r.value)})
		}
	}
}

// csvDist and csvRun are the rows of the two sections.
type (
	csvDist struct {
		def  metrics.Def
		dist metrics.Distribution
	}
	csvRun struct {
		def   metrics.Def
		value float64
	}
)

// csvMetrics lists s's distributions and run-level metrics, each sorted by
// tag as AIPerf's exporter sorts them.
func csvMetrics(m map[metrics.Tag]metrics.Distribution, run map[metrics.Tag]float64) ([]csvDist, []csvRun) {
	var dists []csvDist
	for _, d := range distDefs() {
		if x, ok := m[d.Tag]; ok {
			dists = append(dists, csvDist{d, x})
		}
	}
	var runs []csvRun
	for _, d := range slices.Concat(metrics.RunDefs, []metrics.Def{metrics.NetworkRTTDef}) {
		if v, ok := run[d.Tag]; ok {
			runs = append(runs, csvRun{d, v})
		}
	}
	slices.SortFunc(dists, func(a, b csvDist) int { return cmp.Compare(a.def.Tag, b.def.Tag) })
	slices.SortFunc(runs, func(a, b csvRun) int { return cmp.Compare(a.def.Tag, b.def.Tag) })
	return dists, runs
}

// newCSV writes rows as Python's csv module does: CRLF line ends.
func newCSV(w io.Writer) *csv.Writer {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	return cw
}

// csvNum formats a number as AIPerf's CSV does: two decimals, Python's
// "inf" for an unbounded value (an error-adjusted percentile) and an empty
// cell for an undefined one (its std).
func csvNum(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case math.IsNaN(v):
		return ""
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// writeCountsCSV writes where the token counts came from, when the server's
// usage was not believed or its tokens came in batches: the CSV's reader
// then needs to know which counts and which ITL it is looking at.
func writeCountsCSV(cw *csv.Writer, s *metrics.Summary) {
	d, t := s.UsageDistrust, s.TokensPerEvent
	if d == nil && t == nil {
		return
	}
	_ = cw.Write(nil)
	_ = cw.Write([]string{"Counts", "Source"})
	_ = cw.Write([]string{"Output Token Counts", s.TokenSource})
	if s.InputTokenSource != "" {
		_ = cw.Write([]string{"Input Token Counts", s.InputTokenSource})
	}
	if d != nil {
		_ = cw.Write([]string{"Server Usage", fmt.Sprintf("not believable (%s): %d requests counted without it", d.Sign, s.UsageIgnored)})
	}
	if t != nil {
		_ = cw.Write([]string{"Inter Token Latency", fmt.Sprintf("the server's delivery cadence: tokens came in batches (%.2f tokens an event, the first event %.0f%% of an answer)",
			t.Mean, 100*t.FirstShare)})
	}
}
