package export

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/surgebench/surge/metrics"
)

// CSV writes profile_export_aiperf.csv: one row per distribution
// (Metric,avg,min,max,p1,…,p99,std), a blank line, then Metric,Value rows
// for the run-level metrics.
func CSV(w io.Writer, s *metrics.Summary) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"Metric", "avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std"})
	for _, d := range distDefs() {
		x, ok := s.Metrics[d.Tag]
		if !ok {
			continue
		}
		x = round(x)
		row := []string{d.Label()}
		for _, v := range []float64{x.Avg, x.Min, x.Max, x.P1, x.P5, x.P10, x.P25, x.P50, x.P75, x.P90, x.P95, x.P99, x.Std} {
			row = append(row, num(v))
		}
		_ = cw.Write(row)
	}
	cw.Flush()
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	_ = cw.Write([]string{"Metric", "Value"})
	for _, d := range metrics.RunDefs {
		if v, ok := s.Run[d.Tag]; ok {
			_ = cw.Write([]string{d.Label(), num(roundTo(v))})
		}
	}
	cw.Flush()
	return cw.Error()
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
