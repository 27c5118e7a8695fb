// Package report turns artifact folders into what people look at: one
// self-contained HTML page (the uPlot chart library embedded, no network
// needed) or a folder of PNG charts. Build computes every chart's data from
// the runs; the writers only draw it, so the data is what the golden tests
// pin.
package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/surgebench/surge/metrics/artifact"
)

// Num is a number in the embedded data: six significant digits (smaller
// pages, stable goldens) and null for NaN (a gap).
type Num float64

// MarshalJSON writes n with six significant digits, NaN and ±Inf as null.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', 6, 64), nil
}

// Style is how a series is drawn.
type Style string

// Series styles.
const (
	Line   Style = "line"
	Points Style = "points"
	Step   Style = "step" // a histogram: each x is a bin's left edge
	// Bars draws a bar at each x, filled; a stacked chart's series carry
	// their running totals, the tallest first.
	Bars Style = "bars"
)

// Series is one line or point set of a chart, with its own x values.
type Series struct {
	Label string `json:"label"`
	// Run is the index of the run the series belongs to (its colour).
	Run   int   `json:"run"`
	Style Style `json:"style"`
	// Marker names a marked point ("knee", "operating point"), drawn large.
	Marker string `json:"marker,omitempty"`
	X      []Num  `json:"x"`
	Y      []Num  `json:"y"`
	// Labels name each point (a sweep's swept value), drawn beside it.
	Labels []string `json:"labels,omitempty"`
	// XLo/XHi and YLo/YHi are each point's interval (null: none), drawn
	// as error bars.
	XLo []Num `json:"x_lo,omitempty"`
	XHi []Num `json:"x_hi,omitempty"`
	YLo []Num `json:"y_lo,omitempty"`
	YHi []Num `json:"y_hi,omitempty"`
}

// Chart is one chart of the report.
type Chart struct {
	ID     string `json:"id"`
	Group  string `json:"group"`
	Title  string `json:"title"`
	XLabel string `json:"x_label"`
	YLabel string `json:"y_label"`
	LogX   bool   `json:"log_x,omitempty"`
	// XWhole marks an axis of whole numbers (a trend's runs): its ticks
	// fall on integers.
	XWhole bool `json:"x_whole,omitempty"`
	// XStages names the unit intervals of a stage-normalized time axis
	// (stage i spans [i, i+1)); empty for a plain axis.
	XStages []string `json:"x_stages,omitempty"`
	Series  []Series `json:"series"`
	// Shades are spans of the x axis drawn shaded: a run's warm-up and
	// drain, outside its steady state.
	Shades []Shade `json:"shades,omitempty"`
}

// Shade is a shaded span of a time chart.
type Shade struct {
	// Run is the index of the run it belongs to (its colour).
	Run      int    `json:"run"`
	From, To Num    `json:"-"`
	Label    string `json:"label"`
}

// MarshalJSON writes the span's bounds by the names the page reads.
func (s Shade) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Run   int    `json:"run"`
		From  Num    `json:"from"`
		To    Num    `json:"to"`
		Label string `json:"label"`
	}{s.Run, s.From, s.To, s.Label})
}

// KV is one row of a key/value table.
type KV struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// RunInfo is what the report shows about one run besides its charts.
type RunInfo struct {
	Name        string   `json:"name"`
	Dir         string   `json:"dir"`
	Source      string   `json:"source"`
	Records     int      `json:"records"`
	Errors      int      `json:"errors"`
	Config      []KV     `json:"config"`
	RunInfo     []KV     `json:"run_info"`
	Fingerprint []KV     `json:"fingerprint"`
	Warnings    []string `json:"warnings"`
	ErrorKinds  []KV     `json:"error_kinds"`
	Stages      []Stage  `json:"stages,omitempty"`
	// Steady says where the run's steady state was and what it measured,
	// or why none was found ("": the summary does not say).
	Steady string `json:"steady,omitempty"`
	// Sessions are what the run's sessions did (nil: the summary says
	// nothing of them).
	Sessions []KV `json:"sessions,omitempty"`
}

// Stage is one row of a sweep's stage table.
type Stage struct {
	Mode         string `json:"mode"`
	Value        Num    `json:"value"`
	Requests     Num    `json:"requests"`
	Errors       Num    `json:"errors"`
	OutputTokSec Num    `json:"output_tokens_per_sec"`
	TTFTp95      Num    `json:"ttft_p95_ms"`
	ITLp50       Num    `json:"itl_p50_ms"`
	LatencyP99   Num    `json:"latency_p99_ms"`
	Mark         string `json:"mark,omitempty"`
}

// Row is one line of the summary table: a metric's value per run.
type Row struct {
	Metric string `json:"metric"`
	Unit   string `json:"unit"`
	Values []Num  `json:"values"`
	// CI is each value's confidence interval as the table shows it
	// ("21.3–27.7 ±13%", † when the percentile rests on fewer than 10
	// values beyond it; "": none), one per value; nil when no run has one.
	CI []string `json:"ci,omitempty"`
}

// Data is everything the report shows.
type Data struct {
	Title string    `json:"title"`
	Runs  []RunInfo `json:"runs"`
	// Sweep is set when a run is a sweep: the page then leads with the
	// stage tables and curves, and labels the summary as pooled.
	Sweep   bool    `json:"sweep,omitempty"`
	Summary []Row   `json:"summary"`
	Charts  []Chart `json:"charts"`
}

// HasIntervals reports whether a row of the summary has an interval: the
// note that explains them is left out of a table without any.
func (d Data) HasIntervals() bool {
	for _, r := range d.Summary {
		for _, c := range r.CI {
			if c != "" {
				return true
			}
		}
	}
	return false
}

// Tags of the per-request metrics the report charts.
const (
	tagTTFT    = "time_to_first_token"
	tagITL     = "inter_token_latency"
	tagLatency = "request_latency"
	tagOSL     = "output_sequence_length"
)

// Limits that keep a page of a long run small and quick to draw.
const (
	cdfPoints     = 400
	histBins      = 50
	scatterPoints = 20000
)

// Build computes the report's data from runs (at least one). Run names are
// made unique ("run", "run#2") so legends stay readable.
func Build(runs []*artifact.Run) Data {
	uniqueNames(runs)
	d := Data{Title: "surge report: " + strings.Join(names(runs), " vs ")}
	for _, r := range runs {
		d.Runs = append(d.Runs, runInfo(r))
	}
	d.Summary = summaryRows(runs)
	// A sweep leads with its curves; the distributions follow per stage.
	sweep := sweepCharts(runs)
	d.Sweep = len(sweep) > 0
	d.Charts = append(d.Charts, sweep...)
	gs := groups(runs)
	for _, m := range []struct{ tag, name string }{{tagTTFT, "TTFT"}, {tagITL, "ITL"}, {tagLatency, "request latency"}} {
		if c, ok := cdfChart(gs, m.tag, m.name); ok {
			d.Charts = append(d.Charts, c)
		}
	}
	for _, m := range []struct{ tag, name string }{{tagTTFT, "TTFT"}, {tagITL, "ITL"}, {tagLatency, "request latency"}} {
		if c, ok := histChart(gs, m.tag, m.name); ok {
			d.Charts = append(d.Charts, c)
		}
	}
	d.Charts = append(d.Charts, breakdownCharts(runs)...)
	d.Charts = append(d.Charts, timelineCharts(runs)...)
	if c, ok := scatterChart(runs); ok {
		d.Charts = append(d.Charts, c)
	}
	if c, ok := contextChart(runs); ok {
		d.Charts = append(d.Charts, c)
	}
	d.Charts = append(d.Charts, telemetryCharts(runs, "gpu", "GPU", func(r *artifact.Run) []artifact.Sample { return r.GPU })...)
	d.Charts = append(d.Charts, telemetryCharts(runs, "server", "server", func(r *artifact.Run) []artifact.Sample { return r.Server })...)
	return d
}

func uniqueNames(runs []*artifact.Run) {
	seen := map[string]int{}
	for _, r := range runs {
		if r.Name == "" {
			r.Name = "run"
		}
		seen[r.Name]++
		if n := seen[r.Name]; n > 1 {
			r.Name = fmt.Sprintf("%s#%d", r.Name, n)
		}
	}
}

func names(runs []*artifact.Run) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.Name
	}
	return out
}

func runInfo(r *artifact.Run) RunInfo {
	ri := RunInfo{Name: r.Name, Dir: r.Dir, Source: "surge", Records: len(r.Records)}
	for _, rec := range r.Records {
		if rec.Failed() {
			ri.Errors++
		}
	}
	kinds := map[string]int{}
	for _, rec := range r.Records {
		if rec.Failed() {
			kinds[rec.Err]++
		}
	}
	s := r.Summary
	if s == nil {
		ri.Source = "records only"
	} else {
		if _, ok := s.Raw["surge_version"]; !ok {
			ri.Source = "AIPerf " + s.Version
		} else {
			ri.Source = "surge " + s.Version
		}
		ri.Config = kvs(s.InputConfig)
		ri.RunInfo = kvs(s.RunInfo)
		ri.Fingerprint = kvs(s.Fingerprint)
		ri.Warnings = s.Warnings
		if len(s.Errors) > 0 {
			kinds = map[string]int{}
			for _, e := range s.Errors {
				k := e.Details.Type
				if e.Details.Message != "" {
					k += ": " + e.Details.Message
				}
				kinds[k] += int(e.Count)
			}
		}
		ri.Stages = stageRows(s)
		ri.Steady = steadyText(s)
		if ss := sessionsOf(r); ss != nil {
			ri.Sessions = sessionRows(ss)
		}
	}
	for _, k := range sortedKeys(kinds) {
		ri.ErrorKinds = append(ri.ErrorKinds, KV{k, strconv.Itoa(kinds[k])})
	}
	return ri
}

func stageRows(s *artifact.Summary) []Stage {
	var out []Stage
	for i, st := range s.Stages {
		row := Stage{Mode: st.Mode, Value: Num(st.Value), Requests: Num(st.RequestCount), Errors: Num(st.ErrorRequestCount),
			OutputTokSec: Num(st.OutputTokenThroughput), TTFTp95: Num(st.TTFT.P95), ITLp50: Num(st.ITL.P50), LatencyP99: Num(st.Latency.P99)}
		if s.Knee != nil && s.Knee.KneeStage == i || s.Knee == nil && st.Knee {
			row.Mark = "knee"
		}
		if s.Knee != nil && s.Knee.RecommendedStage == i {
			row.Mark = "operating point"
		}
		out = append(out, row)
	}
	return out
}

// kvs flattens a JSON object into sorted key/value rows (nested objects as
// dotted keys), for the configuration tables.
func kvs(m map[string]any) []KV {
	var out []KV
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch t := v.(type) {
		case map[string]any:
			if len(t) == 0 {
				out = append(out, KV{prefix, "{}"})
			}
			for _, k := range sortedKeys(t) {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, t[k])
			}
		default:
			b, _ := json.Marshal(t)
			s := string(b)
			if str, ok := t.(string); ok {
				s = str
			}
			out = append(out, KV{prefix, s})
		}
	}
	if m != nil {
		walk("", m)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// summaryRows are the headline numbers per run: from the summary export
// where there is one, else computed from the records.
func summaryRows(runs []*artifact.Run) []Row {
	var rows []Row
	for _, tag := range []string{tagTTFT, tagITL, tagLatency} {
		for _, stat := range []string{"p50", "p90", "p99"} {
			row := Row{Metric: tag + "." + stat}
			for _, r := range runs {
				v := math.NaN()
				if s, ok := stat4(r, tag); ok {
					v, _ = s.Get(stat)
				}
				row.Values = append(row.Values, Num(v))
				ci := ""
				if r.Summary != nil && r.Summary.Precision != nil {
					if iv, ok := r.Summary.Precision.Percentiles[tag][stat]; ok {
						ci = ciText(iv)
					}
				}
				row.CI = append(row.CI, ci)
				if row.Unit == "" {
					row.Unit = r.Unit(tag)
				}
			}
			rows = append(rows, row)
		}
	}
	for _, tag := range []string{"output_token_throughput", "request_throughput", "request_count", "error_request_count", "benchmark_duration"} {
		row := Row{Metric: tag}
		any := false
		for _, r := range runs {
			v := math.NaN()
			if r.Summary != nil {
				if s, ok := r.Summary.Metrics[tag]; ok {
					v, any = s.Avg, true
					row.Unit = s.Unit
				}
			}
			if math.IsNaN(v) {
				if f, unit, ok := r.RunLevel(tag); ok {
					v, any, row.Unit = f, true, unit
				}
			}
			row.Values = append(row.Values, Num(v))
			ci := ""
			if r.Summary != nil && r.Summary.Precision != nil {
				if iv, ok := r.Summary.Precision.Throughputs[tag]; ok {
					ci = ciText(iv)
				}
			}
			row.CI = append(row.CI, ci)
		}
		if any {
			rows = append(rows, row)
		}
	}
	for i := range rows {
		if !slices.ContainsFunc(rows[i].CI, func(s string) bool { return s != "" }) {
			rows[i].CI = nil
		}
	}
	return rows
}

// ciText is an interval as the summary table shows it.
func ciText(iv artifact.Interval) string {
	var t string
	switch lo, hi := math.IsInf(iv.Lo, -1), math.IsInf(iv.Hi, 1); {
	case lo && hi:
		t = "±∞"
	case hi:
		t = "≥ " + display(Num(iv.Lo)) + " ±∞"
	case lo:
		t = "≤ " + display(Num(iv.Hi)) + " ±∞"
	default:
		t = display(Num(iv.Lo)) + "–" + display(Num(iv.Hi)) + " " + halfText(iv.HalfWidthPct)
	}
	if iv.Thin {
		t += " †"
	}
	return t
}

// halfText is a half-width in percent as "±4.2%", "±12%" or "±∞".
func halfText(pct float64) string {
	switch {
	case math.IsInf(pct, 0) || math.IsNaN(pct):
		return "±∞"
	case pct < 10:
		return "±" + strconv.FormatFloat(pct, 'f', 1, 64) + "%"
	}
	return "±" + strconv.FormatFloat(pct, 'f', 0, 64) + "%"
}

// steadyText says where a run's steady state was and what it measured.
func steadyText(s *artifact.Summary) string {
	ss := s.Steady
	if ss == nil {
		return ""
	}
	if !ss.Found {
		return "no steady state found: " + ss.Reason
	}
	t := fmt.Sprintf("steady state %s–%s s of %s s (%s s of warm-up and %s s of drain cut, %s)",
		display(Num(ss.StartSec)), display(Num(ss.EndSec)), display(Num(ss.RunSec)), display(Num(ss.WarmupSec)),
		display(Num(ss.DrainSec)), ss.Method)
	var parts []string
	for _, m := range []struct{ tag, name string }{{tagTTFT, "TTFT"}, {tagITL, "ITL"}, {tagLatency, "latency"}} {
		if st, ok := ss.Metrics[m.tag]; ok {
			parts = append(parts, fmt.Sprintf("%s p50 %s p99 %s %s", m.name, display(Num(st.P50)), display(Num(st.P99)), st.Unit))
		}
	}
	if st, ok := ss.Metrics["output_token_throughput"]; ok {
		p := fmt.Sprintf("%s %s", display(Num(st.Avg)), st.Unit)
		if ss.Precision != nil {
			if iv, ok := ss.Precision.Throughputs["output_token_throughput"]; ok {
				p += " " + halfText(iv.HalfWidthPct)
			}
		}
		parts = append(parts, p)
	}
	if len(parts) > 0 {
		t += ": " + strings.Join(parts, ", ")
	}
	if ss.Applied {
		t += "; the summary's headline numbers are its own (trim auto)"
	}
	return t
}

// steadyShades are the spans of a run's timeline outside its steady state
// (x in seconds from the timeline's origin, origin in wall-clock ns).
func steadyShades(r *artifact.Run, run int, origin int64) []Shade {
	s := r.Summary
	if s == nil || s.Steady == nil || !s.Steady.Found {
		return nil
	}
	ss := s.Steady
	// The steady state's times run from the first request
	// (min_request_timestamp); the timeline's from its first record.
	off := 0.0
	if m, ok := s.Metrics["min_request_timestamp"]; ok && m.Avg > 0 {
		off = (m.Avg - float64(origin)) / 1e9
	}
	var out []Shade
	if ss.StartSec > 0 {
		out = append(out, Shade{Run: run, From: Num(off), To: Num(off + ss.StartSec), Label: "warm-up"})
	}
	if ss.RunSec > ss.EndSec {
		out = append(out, Shade{Run: run, From: Num(off + ss.EndSec), To: Num(off + ss.RunSec), Label: "drain"})
	}
	return out
}

// stat4 returns tag's statistics from the summary, or computed from the
// records when the summary lacks them.
func stat4(r *artifact.Run, tag string) (artifact.Stat, bool) {
	if r.Summary != nil {
		if s, ok := r.Summary.Metrics[tag]; ok {
			return s, true
		}
	}
	vals := r.Values(tag)
	if len(vals) == 0 {
		return artifact.Stat{}, false
	}
	return artifact.StatOf(vals), true
}

// group is one distribution drawn on the distribution charts: a run, or
// one stage of a sweep when the report shows that sweep alone.
type group struct {
	label  string
	colour int
	run    *artifact.Run
	recs   []artifact.Record
}

// groups are the distributions to draw: one per run, or, for a single
// sweep, one per stage (a sweep's pooled distribution mixes loads).
func groups(runs []*artifact.Run) []group {
	if len(runs) == 1 && isSweep(runs[0]) {
		r := runs[0]
		byStage := map[int][]artifact.Record{}
		for _, rec := range r.Profile() {
			byStage[rec.Stage] = append(byStage[rec.Stage], rec)
		}
		var out []group
		for i, st := range r.Summary.Stages {
			if recs := byStage[i]; len(recs) > 0 {
				out = append(out, group{label: stageName(st), colour: i, run: r, recs: recs})
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	out := make([]group, len(runs))
	for i, r := range runs {
		out[i] = group{label: r.Name, colour: i, run: r, recs: r.Profile()}
	}
	return out
}

// isSweep says whether r's summary lists several stages.
func isSweep(r *artifact.Run) bool { return r.Summary != nil && len(r.Summary.Stages) > 1 }

// stageName is a stage as its swept value: "concurrency 4".
func stageName(st artifact.Stage) string {
	return strings.ReplaceAll(st.Mode, "_", " ") + " " + strconv.FormatFloat(st.Value, 'g', 6, 64)
}

// values returns tag's values over g's successful records.
func (g group) values(tag string) []float64 {
	var out []float64
	for _, rec := range g.recs {
		if v, ok := rec.Metrics[tag]; ok && !rec.Failed() {
			out = append(out, v)
		}
	}
	return out
}

func cdfChart(gs []group, tag, name string) (Chart, bool) {
	c := Chart{ID: "cdf-" + tag, Group: "distributions", Title: name + " CDF", YLabel: "fraction of requests"}
	for _, g := range gs {
		vals := g.values(tag)
		if len(vals) == 0 {
			continue
		}
		c.XLabel = axis(name, g.run.Unit(tag))
		slices.Sort(vals)
		n := min(len(vals), cdfPoints)
		s := Series{Label: g.label, Run: g.colour, Style: Line}
		for k := range n {
			// Evenly spaced ranks, first and last included.
			j := 0
			if n > 1 {
				j = k * (len(vals) - 1) / (n - 1)
			}
			s.X = append(s.X, Num(vals[j]))
			s.Y = append(s.Y, Num(float64(j+1)/float64(len(vals))))
		}
		c.Series = append(c.Series, s)
	}
	return c, len(c.Series) > 0
}

func axis(name, unit string) string {
	if unit == "" {
		return name
	}
	return name + " (" + unit + ")"
}

// histChart bins every group's values over common edges (so their shapes
// compare), as a share of each group's requests.
func histChart(gs []group, tag, name string) (Chart, bool) {
	c := Chart{ID: "hist-" + tag, Group: "distributions", Title: name + " histogram", YLabel: "% of requests"}
	lo, hi := math.Inf(1), math.Inf(-1)
	all := make([][]float64, len(gs))
	for i, g := range gs {
		all[i] = g.values(tag)
		for _, v := range all[i] {
			lo, hi = min(lo, v), max(hi, v)
		}
		if len(all[i]) > 0 {
			c.XLabel = axis(name, g.run.Unit(tag))
		}
	}
	if math.IsInf(lo, 0) {
		return c, false
	}
	if hi == lo {
		hi = lo + 1
	}
	width := (hi - lo) / histBins
	for i, vals := range all {
		if len(vals) == 0 {
			continue
		}
		counts := make([]int, histBins)
		for _, v := range vals {
			counts[min(int((v-lo)/width), histBins-1)]++
		}
		s := Series{Label: gs[i].label, Run: gs[i].colour, Style: Step}
		for b, n := range counts {
			s.X = append(s.X, Num(lo+float64(b)*width))
			s.Y = append(s.Y, Num(100*float64(n)/float64(len(vals))))
		}
		// A closing edge so the last bin has a width.
		s.X = append(s.X, Num(hi))
		s.Y = append(s.Y, s.Y[len(s.Y)-1])
		c.Series = append(c.Series, s)
	}
	return c, true
}

// origin is a run's time zero: its first request's send.
func origin(recs []artifact.Record) int64 {
	var o int64
	for _, r := range recs {
		if r.StartNs != 0 && (o == 0 || r.StartNs < o) {
			o = r.StartNs
		}
	}
	return o
}

// span is a stretch of a run drawn on a time axis: the whole run, or one
// stage of a sweep, which then gets one unit of a stage-normalized axis
// (so the slowest stage does not take most of the width).
type span struct {
	recs     []artifact.Record
	origin   int64
	dur      float64 // seconds
	x0, xPer float64 // axis x = x0 + seconds·xPer
}

// spans splits r for the time axis: a sweep alone in the report by
// stage, anything else whole. stages names the axis units (nil: seconds).
func spans(runs []*artifact.Run, r *artifact.Run) (out []span, stages []string) {
	recs := r.Profile()
	whole := func(recs []artifact.Record) (span, bool) {
		o := origin(recs)
		if o == 0 {
			return span{}, false
		}
		var end int64
		for _, rec := range recs {
			end = max(end, rec.EndNs)
		}
		return span{recs: recs, origin: o, dur: float64(end-o) / 1e9, xPer: 1}, true
	}
	if len(runs) == 1 && isSweep(r) {
		byStage := map[int][]artifact.Record{}
		for _, rec := range recs {
			byStage[rec.Stage] = append(byStage[rec.Stage], rec)
		}
		for i, st := range r.Summary.Stages {
			sp, ok := whole(byStage[i])
			if !ok || sp.dur <= 0 {
				continue
			}
			sp.x0, sp.xPer = float64(len(out)), 1/sp.dur
			out = append(out, sp)
			stages = append(stages, stageName(st)+" ("+strconv.FormatFloat(sp.dur, 'f', 0, 64)+" s)")
		}
		if len(out) > 1 {
			return out, stages
		}
		out, stages = nil, nil
	}
	if sp, ok := whole(recs); ok {
		out = append(out, sp)
	}
	return out, nil
}

// timelineCharts are the per-second charts: output tokens/s (each request's
// tokens spread evenly from its first token to its end), completed
// requests/s, the average number in flight, and errors/s. A short run gets
// bins under a second (rates stay per second). A sweep shown alone has
// each stage on one unit of the axis. A run with a steady state has its
// warm-up and drain shaded.
func timelineCharts(runs []*artifact.Run) []Chart {
	tput := Chart{ID: "throughput", Group: "timelines", Title: "output token throughput per second", XLabel: "time (s)", YLabel: "tokens/s"}
	reqs := Chart{ID: "requests", Group: "timelines", Title: "completed requests per second", XLabel: "time (s)", YLabel: "requests/s"}
	infl := Chart{ID: "inflight", Group: "timelines", Title: "requests in flight (average per second)", XLabel: "time (s)", YLabel: "requests"}
	errc := Chart{ID: "errors", Group: "timelines", Title: "errors per second", XLabel: "time (s)", YLabel: "errors/s"}
	for i, r := range runs {
		sps, stages := spans(runs, r)
		if len(sps) == 0 {
			continue
		}
		if stages != nil {
			for _, c := range []*Chart{&tput, &reqs, &infl, &errc} {
				c.XLabel, c.XStages = stageAxis, stages
			}
		}
		series := make([]Series, 4)
		for k := range series {
			series[k] = Series{Label: r.Name, Run: i, Style: Line}
		}
		for _, sp := range sps {
			o, dur := sp.origin, sp.dur
			w := binWidth(dur)
			nb := int(dur/w) + 1
			if nb <= 0 || dur > 7*24*3600 {
				continue
			}
			tok, done, inflight, errs := make([]float64, nb), make([]float64, nb), make([]float64, nb), make([]float64, nb)
			for _, rec := range sp.recs {
				if rec.StartNs == 0 || rec.EndNs < rec.StartNs {
					continue
				}
				// Times in bins from the origin.
				s, e := float64(rec.StartNs-o)/1e9/w, float64(rec.EndNs-o)/1e9/w
				spread(inflight, s, e, e-s)
				bin := min(int(e), nb-1)
				if rec.Failed() {
					errs[bin] += 1 / w
					continue
				}
				done[bin] += 1 / w
				if osl := rec.Metrics[tagOSL]; osl > 0 {
					first := s + rec.Metrics[tagTTFT]/1e3/w
					if first > e {
						first = s
					}
					spread(tok, first, e, osl/w)
				}
			}
			for k, ys := range [][]float64{tok, done, inflight, errs} {
				for b, y := range ys {
					series[k].X = append(series[k].X, Num(sp.x0+float64(b)*w*sp.xPer))
					series[k].Y = append(series[k].Y, Num(y))
				}
			}
		}
		if len(series[0].X) == 0 {
			continue
		}
		if stages == nil && len(sps) == 1 {
			for _, c := range []*Chart{&tput, &reqs, &infl, &errc} {
				c.Shades = append(c.Shades, steadyShades(r, i, sps[0].origin)...)
			}
		}
		tput.Series = append(tput.Series, series[0])
		reqs.Series = append(reqs.Series, series[1])
		infl.Series = append(infl.Series, series[2])
		errc.Series = append(errc.Series, series[3])
	}
	if len(tput.Series) == 0 {
		return nil
	}
	return []Chart{tput, reqs, infl, errc}
}

// stageAxis labels a stage-normalized time axis.
const stageAxis = "stage (each stage's time scaled to the same width)"

// binWidth is the timeline's bin in seconds: one second, or less for a run
// too short to show a shape at one second (at least 20 bins).
func binWidth(dur float64) float64 {
	for _, w := range []float64{1, 0.5, 0.2, 0.1, 0.05, 0.02} {
		if dur/w >= 20 {
			return w
		}
	}
	return 0.01
}

// spread adds total over [s, e) to per-second bins in proportion to the
// overlap (an instant event goes to its second).
func spread(bins []float64, s, e, total float64) {
	if e <= s {
		bins[min(max(int(s), 0), len(bins)-1)] += total
		return
	}
	rate := total / (e - s)
	for b := max(int(s), 0); b < len(bins) && float64(b) < e; b++ {
		lo, hi := max(s, float64(b)), min(e, float64(b+1))
		if hi > lo {
			bins[b] += rate * (hi - lo)
		}
	}
}

func scatterChart(runs []*artifact.Run) (Chart, bool) {
	c := Chart{ID: "ttft-scatter", Group: "timelines", Title: "TTFT of every request over time", XLabel: "request sent at (s)"}
	for i, r := range runs {
		sps, stages := spans(runs, r)
		if stages != nil {
			c.XLabel, c.XStages = stageAxis, stages
		}
		s := Series{Label: r.Name, Run: i, Style: Points}
		var n int
		for _, sp := range sps {
			for _, rec := range sp.recs {
				if _, ok := rec.Metrics[tagTTFT]; ok && !rec.Failed() && rec.StartNs != 0 {
					n++
				}
			}
		}
		stride := max(1, (n+scatterPoints-1)/scatterPoints)
		k := 0
		for _, sp := range sps {
			for _, rec := range sp.recs {
				v, ok := rec.Metrics[tagTTFT]
				if !ok || rec.Failed() || rec.StartNs == 0 {
					continue
				}
				if k++; (k-1)%stride != 0 {
					continue
				}
				s.X = append(s.X, Num(sp.x0+float64(rec.StartNs-sp.origin)/1e9*sp.xPer))
				s.Y = append(s.Y, Num(v))
			}
		}
		if len(s.X) > 0 {
			c.YLabel = axis("TTFT", r.Unit(tagTTFT))
			c.Series = append(c.Series, s)
			if stages == nil && len(sps) == 1 {
				c.Shades = append(c.Shades, steadyShades(r, i, sps[0].origin)...)
			}
		}
	}
	return c, len(c.Series) > 0
}

// sweepCharts draw each sweep's stages as throughput against latency, in
// stage order, each point labelled with its swept value, with the 95%
// intervals the summary gives and the knee and the recommended operating
// point marked.
// curveOrder is the order a sweep's curve joins its stages: by value for
// one swept parameter (a search probes values out of order), else as run.
func curveOrder(st []artifact.Stage) []int {
	order := make([]int, len(st))
	for j := range order {
		order[j] = j
	}
	if slices.ContainsFunc(st, func(s artifact.Stage) bool { return s.Label != "" }) {
		return order
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(st[a].Value, st[b].Value) })
	return order
}

func sweepCharts(runs []*artifact.Run) []Chart {
	ttft := Chart{ID: "sweep-ttft", Group: "sweep", Title: "sweep: output throughput vs TTFT p95", XLabel: "output throughput (tokens/s)", YLabel: "TTFT p95 (ms)"}
	lat := Chart{ID: "sweep-latency", Group: "sweep", Title: "sweep: output throughput vs request latency p95", XLabel: "output throughput (tokens/s)", YLabel: "request latency p95 (ms)"}
	for i, r := range runs {
		if !isSweep(r) {
			continue
		}
		st := r.Summary.Stages
		knee, op := -1, -1
		if k := r.Summary.Knee; k != nil {
			knee, op = k.KneeStage, k.RecommendedStage
		} else {
			for j, s := range st {
				if s.Knee {
					knee = j
				}
			}
		}
		for _, c := range []struct {
			chart *Chart
			y     func(artifact.Stage) float64
			ci    func(artifact.Stage) *artifact.Range
		}{
			{&ttft, func(s artifact.Stage) float64 { return s.TTFT.P95 }, func(s artifact.Stage) *artifact.Range { return s.TTFTP95CI }},
			{&lat, func(s artifact.Stage) float64 { return s.Latency.P95 }, func(s artifact.Stage) *artifact.Range { return s.LatencyP95CI }},
		} {
			line := Series{Label: r.Name, Run: i, Style: Line}
			intervals := false
			for _, j := range curveOrder(st) {
				s := st[j]
				line.X = append(line.X, Num(s.OutputTokenThroughput))
				line.Y = append(line.Y, Num(c.y(s)))
				label := s.Label
				if label == "" {
					label = strconv.FormatFloat(s.Value, 'g', 6, 64)
				}
				line.Labels = append(line.Labels, label)
				xlo, xhi, ylo, yhi := math.NaN(), math.NaN(), math.NaN(), math.NaN()
				if ci := s.OutputTokenThroughputCI; ci != nil {
					xlo, xhi, intervals = ci.Lo, ci.Hi, true
				}
				if ci := c.ci(s); ci != nil {
					ylo, yhi, intervals = ci.Lo, ci.Hi, true
				}
				line.XLo, line.XHi = append(line.XLo, Num(xlo)), append(line.XHi, Num(xhi))
				line.YLo, line.YHi = append(line.YLo, Num(ylo)), append(line.YHi, Num(yhi))
			}
			if !intervals {
				line.XLo, line.XHi, line.YLo, line.YHi = nil, nil, nil, nil
			}
			c.chart.Series = append(c.chart.Series, line)
			for _, m := range []struct {
				idx  int
				name string
			}{{knee, "knee"}, {op, "operating point"}} {
				if m.idx >= 0 && m.idx < len(st) {
					s := st[m.idx]
					c.chart.Series = append(c.chart.Series, Series{Label: fmt.Sprintf("%s %s (%s)", r.Name, m.name, stageName(s)),
						Run: i, Style: Points, Marker: m.name, X: []Num{Num(s.OutputTokenThroughput)}, Y: []Num{Num(c.y(s))}})
				}
			}
		}
	}
	if len(ttft.Series) == 0 {
		return nil
	}
	if n := len(runs); n == 1 {
		mode := strings.ReplaceAll(runs[0].Summary.Stages[0].Mode, "_", " ")
		ttft.Title += " (points: " + mode + ")"
		lat.Title += " (points: " + mode + ")"
	}
	return []Chart{ttft, lat}
}

// telemetryCharts draw one chart per telemetry field, a series per run and
// source (GPU or metrics URL). Counters (…_total, energy) are drawn as
// rates per second, byte sizes in GiB.
func telemetryCharts(runs []*artifact.Run, prefix, group string, samples func(*artifact.Run) []artifact.Sample) []Chart {
	fields := map[string]bool{}
	for _, r := range runs {
		for _, s := range samples(r) {
			for k := range s.Values {
				fields[k] = true
			}
		}
	}
	var out []Chart
	for _, f := range sortedKeys(fields) {
		if strings.HasSuffix(f, "_total_bytes") || f == "scrape_ns" {
			continue // a capacity, not a timeline; surge's own scrape time, not the server's
		}
		counter := strings.HasSuffix(f, "_total") || f == "energy_consumption_j"
		title, ylabel := strings.ReplaceAll(f, "_", " "), ""
		scale := 1.0
		switch {
		case counter:
			title, ylabel = strings.ReplaceAll(strings.TrimSuffix(f, "_total"), "_", " ")+" per second", "per second"
			if strings.Contains(f, "tokens") {
				ylabel = "tokens/s"
			}
			if f == "energy_consumption_j" {
				title, ylabel = "power from energy counter", "W"
			}
		case strings.HasSuffix(f, "_bytes"):
			scale, ylabel = 1.0/(1<<30), "GiB"
		case strings.HasSuffix(f, "_ns"):
			title = strings.ReplaceAll(strings.TrimSuffix(f, "_ns"), "_", " ") + " (ms)"
			scale, ylabel = 1e-6, "ms"
		default:
			ylabel = gaugeUnit(f)
		}
		c := Chart{ID: prefix + "-" + f, Group: group, Title: group + " " + title, XLabel: "time (s)", YLabel: ylabel}
		for i, r := range runs {
			bySource := map[string][]artifact.Sample{}
			for _, s := range samples(r) {
				if _, ok := s.Values[f]; ok {
					bySource[s.Source] = append(bySource[s.Source], s)
				}
			}
			at := func(smp artifact.Sample) (float64, bool) { return smp.AtSec, true }
			if sps, stages := spans(runs, r); len(sps) > 0 && len(bySource) > 0 && wallClocked(samples(r)) {
				if stages != nil {
					c.XLabel, c.XStages = stageAxis, stages
					at = func(smp artifact.Sample) (float64, bool) { return onStages(sps, smp.WallNs) }
				} else if sp := sps[0]; overlaps(samples(r), sp) {
					// On the client charts' clock: from the first
					// profile request, the warmup's samples left out.
					at = func(smp artifact.Sample) (float64, bool) {
						sec := float64(smp.WallNs-sp.origin) / 1e9
						return sec, sec >= 0
					}
				}
			}
			for _, src := range sortedKeys(bySource) {
				ss := bySource[src]
				label := r.Name
				if len(bySource) > 1 || prefix == "gpu" {
					label += " " + src
				}
				s := Series{Label: label, Run: i, Style: Line}
				for k, smp := range ss {
					v := smp.Values[f] * scale
					if counter {
						if k == 0 {
							continue
						}
						dt := smp.AtSec - ss[k-1].AtSec
						if dt <= 0 {
							continue
						}
						v = (smp.Values[f] - ss[k-1].Values[f]) / dt
					}
					x, ok := at(smp)
					if !ok {
						continue
					}
					s.X = append(s.X, Num(x))
					s.Y = append(s.Y, Num(v))
				}
				if len(s.X) > 0 {
					c.Series = append(c.Series, s)
				}
			}
		}
		if len(c.Series) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// wallClocked says whether every sample has a wall-clock time, which
// places it in a sweep's stages.
func wallClocked(ss []artifact.Sample) bool {
	for _, s := range ss {
		if s.WallNs == 0 {
			return false
		}
	}
	return len(ss) > 0
}

// overlaps says whether some sample's wall-clock time falls in sp: the
// samples and the records then share a clock (not so for samples from
// another host's clock).
func overlaps(ss []artifact.Sample, sp span) bool {
	return slices.ContainsFunc(ss, func(s artifact.Sample) bool {
		sec := float64(s.WallNs-sp.origin) / 1e9
		return sec >= 0 && sec <= sp.dur
	})
}

// onStages places a wall-clock time on a stage-normalized axis; ok is
// false outside every stage (warm-up, the pause between stages).
func onStages(sps []span, wallNs int64) (float64, bool) {
	for _, sp := range sps {
		sec := float64(wallNs-sp.origin) / 1e9
		if sec >= 0 && sec <= sp.dur {
			return sp.x0 + sec*sp.xPer, true
		}
	}
	return 0, false
}

// gaugeUnit labels a gauge's axis from its name: the unit its suffix
// says, else the quantity itself.
func gaugeUnit(f string) string {
	switch {
	case strings.HasSuffix(f, "_w"):
		return "W"
	case strings.HasSuffix(f, "_c"):
		return "°C"
	case strings.HasSuffix(f, "_mhz"):
		return "MHz"
	case strings.HasSuffix(f, "utilization"):
		return "%"
	case strings.HasSuffix(f, "_usage"), strings.HasSuffix(f, "_rate"), strings.HasSuffix(f, "_perc"):
		return "fraction (0–1)"
	case strings.HasPrefix(f, "num_requests"):
		return "requests"
	}
	return strings.ReplaceAll(f, "_", " ")
}
