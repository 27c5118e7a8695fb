package export

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/surgebench/surge/metrics"
)

// Sweep aggregate file names (AIPerf's).
const (
	SweepJSONFile = "profile_export_aiperf_sweep.json"
	SweepCSVFile  = "profile_export_aiperf_sweep.csv"
)

// SweepValue is one value of a parameter sweep: its run folder's label
// ("concurrency_10"), the value and that run's summary.
type SweepValue struct {
	Label string
	// Value is the parameter's value; Integer says it is written as an
	// integer (a concurrency) rather than a float (a rate).
	Value   float64
	Integer bool
	Summary *metrics.Summary
	// Point, when set, is the value of each parameter of a sweep over
	// several (Parameter then names them all, Value is the point's index).
	Point []Param
}

// Param is one parameter's value at a point of a sweep over several.
type Param struct {
	Name    string
	Value   float64
	Integer bool
}

// params is the point's parameters as the files key them.
func (v SweepValue) params(parameter string) map[string]any {
	if len(v.Point) == 0 {
		return map[string]any{parameter: v.param()}
	}
	out := map[string]any{}
	for _, p := range v.Point {
		out[p.Name] = SweepValue{Value: p.Value, Integer: p.Integer}.param()
	}
	return out
}

// names are the sweep's parameter names, in order.
func (sw Sweep) names() []string {
	if len(sw.Values) > 0 && len(sw.Values[0].Point) > 0 {
		out := make([]string, len(sw.Values[0].Point))
		for i, p := range sw.Values[0].Point {
			out[i] = p.Name
		}
		return out
	}
	return []string{sw.Parameter}
}

// Sweep is a parameter sweep as its aggregate files describe it.
type Sweep struct {
	// Parameter is the swept parameter's name ("concurrency",
	// "request_rate").
	Parameter string
	Values    []SweepValue
	// Knee and Operating index Values: surge's knee and recommended
	// operating point (-1: none).
	Knee, Operating int
}

// sweepStatKeys are the statistics a value's metrics are flattened by, as
// AIPerf's aggregation keys them ("time_to_first_token_p99").
var sweepStatKeys = []string{"avg", "min", "max", "sum", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std"}

// cellStats is one flattened metric of one value. A single run per value
// has no spread: std and cv are 0 and the interval is the value itself,
// as AIPerf writes its single-trial sweeps.
type cellStats struct {
	Mean   float64 `json:"mean"`
	Std    float64 `json:"std"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	CV     float64 `json:"cv"`
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
	Unit   string  `json:"unit"`
}

func cell(v float64, unit string) cellStats {
	v = roundTo(v)
	return cellStats{Mean: v, Min: v, Max: v, CILow: v, CIHigh: v, Unit: unit}
}

// flatten is a value's metrics keyed <tag>_<stat>.
func flatten(s *metrics.Summary) map[string]cellStats {
	out := map[string]cellStats{}
	for _, d := range distDefs() {
		x, ok := s.Metrics[d.Tag]
		if !ok {
			continue
		}
		for i, v := range []float64{x.Avg, x.Min, x.Max, x.Sum, x.P1, x.P5, x.P10, x.P25, x.P50, x.P75, x.P90, x.P95, x.P99, x.Std} {
			out[string(d.Tag)+"_"+sweepStatKeys[i]] = cell(v, x.Unit)
		}
	}
	for _, d := range metrics.RunDefs {
		if v, ok := s.Run[d.Tag]; ok {
			out[string(d.Tag)+"_avg"] = cell(v, d.Unit)
		}
	}
	return out
}

// param is the parameter value as the files write it.
func (v SweepValue) param() any {
	if v.Integer {
		return int64(v.Value)
	}
	return v.Value
}

// paramText is the value as AIPerf's CSV writes it (Python's str).
func (v SweepValue) paramText() string {
	if v.Integer {
		return strconv.FormatInt(int64(v.Value), 10)
	}
	s := strconv.FormatFloat(v.Value, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eEnN") {
		s += ".0"
	}
	return s
}

// sweepDoc is profile_export_aiperf_sweep.json, AIPerf's sweep aggregate
// (its AggregateSweepJsonExporter), with surge's knee after it.
type sweepDoc struct {
	AggregationType   string           `json:"aggregation_type"`
	NumProfileRuns    int              `json:"num_profile_runs"`
	NumSuccessfulRuns int              `json:"num_successful_runs"`
	FailedRuns        []failedRun      `json:"failed_runs"`
	Metadata          sweepMetadata    `json:"metadata"`
	PerCombination    []combination    `json:"per_combination_metrics"`
	Best              *object          `json:"best_configurations"`
	Pareto            []map[string]any `json:"pareto_optimal"`
	Knee              *sweepKnee       `json:"knee"`
}

type failedRun struct {
	Label string `json:"label"`
	Error string `json:"error"`
}

type sweepMetadata struct {
	Parameters      []sweepParameter `json:"sweep_parameters"`
	NumCombinations int              `json:"num_combinations"`
}

type sweepParameter struct {
	Name   string `json:"name"`
	Values []any  `json:"values"`
}

type combination struct {
	Parameters map[string]any       `json:"parameters"`
	Metrics    map[string]cellStats `json:"metrics"`
}

type bestConfig struct {
	Parameters map[string]any `json:"parameters"`
	Metric     float64        `json:"metric"`
	Unit       string         `json:"unit"`
}

// sweepKnee is surge's addition: the knee and the recommended operating
// point (see metrics.Knee).
type sweepKnee struct {
	Parameter        string  `json:"parameter"`
	KneeValue        float64 `json:"knee_value"`
	KneeLabel        string  `json:"knee_label"`
	RecommendedValue float64 `json:"recommended_value"`
	RecommendedLabel string  `json:"recommended_label"`
}

// aggregate computes the document: failed values (no successful request)
// are listed apart and left out of the analysis, as AIPerf drops them.
func (sw Sweep) aggregate() (sweepDoc, []SweepValue, []map[string]cellStats) {
	doc := sweepDoc{AggregationType: "sweep", NumProfileRuns: len(sw.Values), FailedRuns: []failedRun{},
		Best: newObject(), Pareto: []map[string]any{}}
	names := sw.names()
	ps := make([]sweepParameter, len(names))
	for i, n := range names {
		ps[i] = sweepParameter{Name: n, Values: []any{}}
	}
	var ok []SweepValue
	var stats []map[string]cellStats
	for _, v := range sw.Values {
		for i, n := range names {
			x := v.params(sw.Parameter)[n]
			if !slices.Contains(ps[i].Values, x) {
				ps[i].Values = append(ps[i].Values, x)
			}
		}
		s := v.Summary
		if s == nil || s.Run[metrics.RequestCount] == 0 {
			msg := "No requests completed"
			if s != nil && s.Run[metrics.ErrorRequestCount] > 0 {
				msg = fmt.Sprintf("All %d requests failed", int64(s.Run[metrics.ErrorRequestCount]))
			}
			doc.FailedRuns = append(doc.FailedRuns, failedRun{Label: v.Label, Error: msg})
			continue
		}
		ok = append(ok, v)
		st := flatten(s)
		stats = append(stats, st)
		doc.PerCombination = append(doc.PerCombination, combination{Parameters: v.params(sw.Parameter), Metrics: st})
	}
	if doc.PerCombination == nil {
		doc.PerCombination = []combination{}
	}
	doc.NumSuccessfulRuns = len(ok)
	doc.Metadata = sweepMetadata{Parameters: ps, NumCombinations: len(sw.Values)}
	params := func(i int) map[string]any { return ok[i].params(sw.Parameter) }
	has := func(key string) bool {
		for _, st := range stats {
			if _, ok := st[key]; !ok {
				return false
			}
		}
		return len(stats) > 0
	}
	const tput = "request_throughput_avg"
	latency := ""
	for _, k := range []string{"time_to_first_token_p99", "request_latency_p99"} {
		if has(k) {
			latency = k
			break
		}
	}
	if has(tput) {
		best := 0
		for i := range stats {
			if stats[i][tput].Mean > stats[best][tput].Mean {
				best = i
			}
		}
		doc.Best.set("best_throughput", bestConfig{params(best), stats[best][tput].Mean, stats[best][tput].Unit})
	}
	if latency != "" {
		best := 0
		for i := range stats {
			if stats[i][latency].Mean < stats[best][latency].Mean {
				best = i
			}
		}
		doc.Best.set("best_latency_p99", bestConfig{params(best), stats[best][latency].Mean, stats[best][latency].Unit})
	}
	if has(tput) && latency != "" {
		// Pareto: no other value has higher-or-equal throughput and lower-or-
		// equal latency with one of them strictly better.
		for i := range stats {
			dominated := false
			for j := range stats {
				ti, tj := stats[i][tput].Mean, stats[j][tput].Mean
				li, lj := stats[i][latency].Mean, stats[j][latency].Mean
				if i != j && tj >= ti && lj <= li && (tj > ti || lj < li) {
					dominated = true
					break
				}
			}
			if !dominated {
				doc.Pareto = append(doc.Pareto, params(i))
			}
		}
		slices.SortStableFunc(doc.Pareto, func(a, b map[string]any) int {
			for _, n := range names {
				if c := cmpAny(a[n], b[n]); c != 0 {
					return c
				}
			}
			return 0
		})
	}
	if sw.Knee >= 0 && sw.Knee < len(sw.Values) && sw.Operating >= 0 && sw.Operating < len(sw.Values) {
		k, op := sw.Values[sw.Knee], sw.Values[sw.Operating]
		doc.Knee = &sweepKnee{Parameter: sw.Parameter, KneeValue: k.Value, KneeLabel: k.Label,
			RecommendedValue: op.Value, RecommendedLabel: op.Label}
	}
	return doc, ok, stats
}

func cmpAny(a, b any) int {
	f := func(x any) float64 {
		switch v := x.(type) {
		case int64:
			return float64(v)
		case float64:
			return v
		}
		return 0
	}
	switch x, y := f(a), f(b); {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// MarshalJSON writes the document's keys in AIPerf's order.
func (d sweepDoc) MarshalJSON() ([]byte, error) {
	o := newObject()
	o.set("aggregation_type", d.AggregationType)
	o.set("num_profile_runs", d.NumProfileRuns)
	o.set("num_successful_runs", d.NumSuccessfulRuns)
	o.set("failed_runs", d.FailedRuns)
	o.set("metadata", d.Metadata)
	o.set("per_combination_metrics", d.PerCombination)
	o.set("best_configurations", d.Best)
	o.set("pareto_optimal", d.Pareto)
	o.set("knee", d.Knee)
	return json.Marshal(o)
}

// SweepJSON writes profile_export_aiperf_sweep.json: AIPerf's sweep
// aggregate (aggregation_type, run counts, failed_runs, metadata with the
// sweep parameter, per_combination_metrics keyed <tag>_<stat>,
// best_configurations, pareto_optimal), then surge's knee.
func SweepJSON(w io.Writer, sw Sweep) error {
	doc, _, _ := sw.aggregate()
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// SweepCSV writes profile_export_aiperf_sweep.csv as AIPerf's exporter
// does: the per-value table (the parameter, then each metric's
// mean/std/min/max/cv), "Best Configurations", "Pareto Optimal Points" and
// "Metadata", blank lines between, numbers "%.2f" (cv "%.4f"), CRLF line
// ends.
func SweepCSV(w io.Writer, sw Sweep) error {
	doc, ok, stats := sw.aggregate()
	cw := newCSV(w)
	var rows [][]string
	if len(stats) > 0 {
		names := make([]string, 0, len(stats[0]))
		for k := range stats[0] {
			names = append(names, k)
		}
		slices.Sort(names)
		header := sw.names()
		for _, n := range names {
			header = append(header, n+"_mean", n+"_std", n+"_min", n+"_max", n+"_cv")
		}
		rows = append(rows, header)
		for i, st := range stats {
			var row []string
			for _, n := range sw.names() {
				row = append(row, paramText(ok[i].params(sw.Parameter)[n]))
			}
			for _, n := range names {
				c, has := st[n]
				if !has {
					row = append(row, "", "", "", "", "")
					continue
				}
				row = append(row, sweepNum(c.Mean, 2), sweepNum(c.Std, 2), sweepNum(c.Min, 2), sweepNum(c.Max, 2), sweepNum(c.CV, 4))
			}
			rows = append(rows, row)
		}
	}
	rows = append(rows, nil, []string{"Best Configurations"})
	if len(doc.Best.keys) > 0 {
		rows = append(rows, slices.Concat([]string{"Configuration"}, sw.names(), []string{"Metric", "Unit"}))
		for _, name := range doc.Best.keys {
			b := doc.Best.vals[name].(bestConfig)
			row := []string{titleCase(name)}
			for _, n := range sw.names() {
				row = append(row, paramText(b.Parameters[n]))
			}
			rows = append(rows, append(row, sweepNum(b.Metric, 2), b.Unit))
		}
	}
	rows = append(rows, nil, []string{"Pareto Optimal Points"})
	if len(doc.Pareto) == 0 {
		rows = append(rows, []string{"None"})
	} else {
		rows = append(rows, sw.names())
		for _, p := range doc.Pareto {
			var row []string
			for _, n := range sw.names() {
				row = append(row, paramText(p[n]))
			}
			rows = append(rows, row)
		}
	}
	rows = append(rows, nil,
		[]string{"Metadata"},
		[]string{"Field", "Value"},
		[]string{"Aggregation Type", doc.AggregationType},
		[]string{"Sweep Parameters", strings.Join(sw.names(), ", ")},
		[]string{"Number of Combinations", strconv.Itoa(doc.Metadata.NumCombinations)},
		[]string{"Number of Profile Runs", strconv.Itoa(doc.NumProfileRuns)},
		[]string{"Number of Successful Runs", strconv.Itoa(doc.NumSuccessfulRuns)},
	)
	for _, r := range rows {
		// A nil row is a blank line, as Python's writerow([]) writes it.
		if err := cw.Write(r); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// sweepNum formats a number as AIPerf's sweep CSV does.
func sweepNum(v float64, decimals int) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// paramText is a parameter value as Python's str writes it.
func paramText(v any) string {
	switch x := v.(type) {
	case int64:
		return SweepValue{Value: float64(x), Integer: true}.paramText()
	case float64:
		return SweepValue{Value: x}.paramText()
	}
	return fmt.Sprint(v)
}

// titleCase is Python's name.replace("_", " ").title() for the names used.
func titleCase(name string) string {
	words := strings.Fields(strings.ReplaceAll(name, "_", " "))
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, " ")
}
