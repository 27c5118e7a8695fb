package history

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/surgebench/surge/internal/sanitize"
	"github.com/surgebench/surge/metrics/report"
)

// WriteList writes rows as a table, one line each: id, start, what ran
// where at which load, its headline numbers, its label and folder.
func WriteList(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED (UTC)\tKIND\tMODEL\tSERVER\tLOAD\tREQUESTS\tERRORS\tTTFT p50/p99 ms\tITL p50 ms\tOUTPUT tok/s\tUSD/1M out\tLABEL\tFOLDER")
	for _, r := range rows {
		kind := r.Kind
		if r.Repeat > 0 {
			kind += " " + strconv.Itoa(r.Repeat)
		}
		if r.Kind == KindStage {
			kind += " " + strconv.Itoa(r.Stage)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s / %s\t%s\t%s\t%s\t%s\t%s\n", r.ID, when(r), kind, dash(r.Model), dash(server(r)),
			dash(load(r)), r.Requests, r.Errors, short(r.TTFTP50), short(r.TTFTP99), short(r.ITLP50), short(r.OutputTokenThroughput),
			short(r.CostPerMOutputTokens), dash(r.Label), sanitize.Line(r.Dir))
	}
	return tw.Flush()
}

func when(r Row) string {
	t := r.StartedAt
	if t.IsZero() {
		t = r.RecordedAt
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

// server is what measured: the engine and version where the server said
// them, else its address.
func server(r Row) string {
	if s := strings.TrimSpace(r.Engine + " " + r.ServerVersion); s != "" {
		return s
	}
	return r.Target
}

func load(r Row) string {
	if r.LoadMode == "" {
		return ""
	}
	if math.IsNaN(r.LoadValue) {
		return r.LoadMode + " sweep"
	}
	return r.LoadMode + " " + strconv.FormatFloat(r.LoadValue, 'f', -1, 64)
}

// dash is a cell of outside text (a label, a model's or server's name):
// a dash when empty, its control characters escaped (a label set by hand
// or imported may carry terminal escapes; a tab would break the table).
func dash(s string) string {
	if s == "" {
		return "–"
	}
	return sanitize.Line(s)
}

// short writes a number to three significant digits (whole numbers past
// 100), a dash when unknown.
func short(f float64) string {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return "–"
	case math.Abs(f) >= 100:
		return strconv.FormatFloat(f, 'f', 0, 64)
	case f == 0:
		return "0"
	}
	decimals := max(0, 2-int(math.Floor(math.Log10(math.Abs(f)))))
	return strconv.FormatFloat(f, 'f', decimals, 64)
}

func pct(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	s := short(100*f) + "%"
	if f >= 0 {
		return "+" + s
	}
	return "−" + strings.TrimPrefix(s, "-")
}

// mark is a change's sign in the table: ▲ worse, ▼ better, * significant
// (a metric with no better way), · significant but small, ? not judged,
// nothing for noise.
func mark(c *Change) string {
	switch {
	case c == nil:
		return ""
	case !c.Judged:
		return "?"
	case !c.Significant:
		return ""
	case c.Small:
		return "·"
	case c.Better == "":
		return "*"
	case c.Worse:
		return "▲ worse"
	}
	return "▼ better"
}

// barWidth is the longest bar of the terminal chart.
const barWidth = 32

// bar draws v as a bar scaled so that top is barWidth cells, with eighths.
func bar(v, top float64) string {
	if !(v > 0) || !(top > 0) {
		return ""
	}
	eighths := int(math.Round(v / top * barWidth * 8))
	s := strings.Repeat("█", eighths/8)
	if r := eighths % 8; r > 0 {
		s += string([]rune("▏▎▍▌▋▊▉")[r-1])
	}
	return s
}

// sparkline draws the values in one line of block heights.
func sparkline(vals []float64) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	levels := []rune("▁▂▃▄▅▆▇█")
	var b strings.Builder
	for _, v := range vals {
		i := 0
		if hi > lo {
			i = int(math.Round((v - lo) / (hi - lo) * float64(len(levels)-1)))
		}
		b.WriteRune(levels[i])
	}
	return b.String()
}

// WriteText draws the trend in the terminal: a sparkline, then a line per
// run with its value as a bar, its change from the run before with the
// interval, and the test's mark; what could not be judged is said below.
func (t *Trend) WriteText(w io.Writer) error {
	name := t.Metric + " " + t.Stat
	if t.Unit != "" {
		name += " (" + t.Unit + ")"
	}
	head := fmt.Sprintf("surge trend: %s across %d runs", name, len(t.Points))
	if t.Workload != "" {
		head += ", workload " + t.Workload
	}
	vals := make([]float64, len(t.Points))
	top := 0.0
	for i, p := range t.Points {
		vals[i], top = p.Value, math.Max(top, p.Value)
	}
	fmt.Fprintf(w, "%s\n%s\n\n", head, sparkline(vals))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "ID\tSTARTED (UTC)\tLABEL\tSERVER\tVALUE\tCHANGE\t%g%% CI\t\t\n", 100*t.Level)
	why := map[string]bool{}
	var reasons []string
	for _, p := range t.Points {
		change, ci := "", ""
		if c := p.Change; c != nil {
			change = pct(c.Rel)
			if !math.IsNaN(c.RelLo) {
				ci = pct(c.RelLo) + " … " + pct(c.RelHi)
			}
			if !c.Judged && !why[c.How] {
				why[c.How] = true
				reasons = append(reasons, c.How)
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Row.ID, when(p.Row), dash(p.Row.Label), dash(server(p.Row)),
			short(p.Value), change, ci, mark(p.Change), bar(p.Value, top))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	how := "per-request statistics by a bootstrap interval of each difference, from both runs' records (as surge compare)"
	if len(t.Points) > 0 && !hasDistribution(t.Points[0].Row, t.Metric) {
		how = "run-level values by whether the runs' intervals are disjoint"
	}
	fmt.Fprintf(w, "\nEach change is from the run above, tested at %g%%: %s.\n", 100*t.Level, how)
	fmt.Fprintf(w, "▲ worse, ▼ better, * significant; · significant but under %s%%; unmarked: within the noise.\n", strconv.FormatFloat(100*t.MinChange, 'g', 3, 64))
	for _, r := range reasons {
		fmt.Fprintf(w, "? %s\n", r)
	}
	for _, n := range t.Notes {
		fmt.Fprintf(w, "Note: %s\n", sanitize.Line(n))
	}
	return nil
}

// Report is the trend as a report page (metrics/report's renderer): a
// chart of the values against the run, each run's interval as an error
// bar and the significant changes marked, and a table of the runs.
func (t *Trend) Report() report.Data {
	name := t.Metric + " " + t.Stat
	d := report.Data{Title: "surge trend: " + name}
	line := report.Series{Label: name, Style: report.Line}
	worse := report.Series{Label: "significantly worse", Style: report.Points, Marker: "significant", Run: 1}
	better := report.Series{Label: "significantly better", Style: report.Points, Marker: "knee", Run: 2}
	values := report.Row{Metric: name, Unit: t.Unit}
	changes := report.Row{Metric: "change from the run before", Unit: "%"}
	hasCI := false
	for i, p := range t.Points {
		x := report.Num(i + 1)
		id := "#" + strconv.FormatInt(p.Row.ID, 10)
		line.X, line.Y, line.Labels = append(line.X, x), append(line.Y, report.Num(p.Value)), append(line.Labels, id)
		lo, hi := report.Num(math.NaN()), report.Num(math.NaN())
		if p.CI != nil {
			lo, hi, hasCI = report.Num(p.CI.Lo), report.Num(p.CI.Hi), true
		}
		line.YLo, line.YHi = append(line.YLo, lo), append(line.YHi, hi)
		values.Values = append(values.Values, report.Num(p.Value))
		change := report.Num(math.NaN())
		if c := p.Change; c != nil {
			change = report.Num(100 * c.Rel)
			if c.Significant && !c.Small {
				s := &better
				if c.Worse || c.Better == "" {
					s = &worse
				}
				s.X, s.Y = append(s.X, x), append(s.Y, report.Num(p.Value))
			}
		}
		changes.Values = append(changes.Values, change)
		ri := report.RunInfo{Name: id, Dir: p.Row.Dir, Source: when(p.Row) + " UTC", Records: int(p.Row.Requests), Errors: int(p.Row.Errors)}
		for _, kv := range [][2]string{{"label", p.Row.Label}, {"model", p.Row.Model}, {"server", server(p.Row)}, {"gpu", p.Row.GPU},
			{"load", load(p.Row)}, {"workload", p.Row.Workload}, {"surge", p.Row.SurgeVersion}} {
			if kv[1] != "" {
				ri.Fingerprint = append(ri.Fingerprint, report.KV{Key: kv[0], Value: kv[1]})
			}
		}
		if c := p.Change; c != nil {
			ri.RunInfo = append(ri.RunInfo, report.KV{Key: "change", Value: pct(c.Rel) + " " + mark(c)}, report.KV{Key: "test", Value: c.How})
		}
		d.Runs = append(d.Runs, ri)
	}
	if !hasCI {
		line.YLo, line.YHi = nil, nil
	}
	c := report.Chart{ID: "trend", Group: "trend", Title: fmt.Sprintf("%s across runs (%g%% tests)", name, 100*t.Level),
		XLabel: "run", YLabel: strings.TrimSpace(name + " " + unitLabel(t.Unit)), Series: []report.Series{line}}
	for _, s := range []report.Series{worse, better} {
		if len(s.X) > 0 {
			c.Series = append(c.Series, s)
		}
	}
	d.Charts = []report.Chart{c}
	d.Summary = []report.Row{values, changes}
	return d
}

func unitLabel(u string) string {
	if u == "" {
		return ""
	}
	return "(" + u + ")"
}
