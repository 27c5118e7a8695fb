package history

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/surgebench/surge/internal/sanitize"
	"github.com/surgebench/surge/metrics/report"
)

// WriteList writes rows as a table, one line each. Wide, every column:
// id, start, what ran where at which load, its headline numbers, its
// label and folder. Otherwise the table fits width columns (≤ 0: 80): the
// server and folder are left to --wide and --json, a column every row
// agrees on (one model, no labels, every row a whole run) is said once
// under the table instead, and the model and label are cut with … where
// they would not fit.
func WriteList(w io.Writer, rows []Row, width int, wide bool) error {
	if wide {
		return writeWideList(w, rows)
	}
	if width <= 0 {
		width = 80
	}
	kinds, models, labels, costs := map[string]bool{}, map[string]bool{}, map[string]bool{}, false
	for _, r := range rows {
		kinds[kindOf(r)] = true
		models[r.Model] = true
		labels[r.Label] = true
		costs = costs || !math.IsNaN(r.CostPerMOutputTokens) && r.CostPerMOutputTokens != 0
	}
	type column struct {
		head  string
		right bool
		cell  func(Row) string
		// shrink: the column gives up width, cut with …, when the table is
		// too wide.
		shrink bool
	}
	cols := []column{
		{head: "ID", right: true, cell: func(r Row) string { return strconv.FormatInt(r.ID, 10) }},
		{head: "STARTED UTC", cell: func(r Row) string { return startedAt(r).Format("01-02 15:04") }},
	}
	if len(kinds) > 1 || !kinds[KindRun] {
		cols = append(cols, column{head: "KIND", cell: kindOf})
	}
	if len(models) > 1 {
		cols = append(cols, column{head: "MODEL", cell: func(r Row) string { return dash(r.Model) }, shrink: true})
	}
	cols = append(cols,
		column{head: "LOAD", cell: func(r Row) string { return dash(shortLoad(r)) }},
		column{head: "REQS", right: true, cell: func(r Row) string { return strconv.FormatInt(r.Requests, 10) }},
		column{head: "ERR", right: true, cell: func(r Row) string { return strconv.FormatInt(r.Errors, 10) }},
		column{head: "TTFT p50", right: true, cell: func(r Row) string { return short(r.TTFTP50) }},
		column{head: "p99", right: true, cell: func(r Row) string { return short(r.TTFTP99) }},
		column{head: "ITL p50", right: true, cell: func(r Row) string { return short(r.ITLP50) }},
		column{head: "tok/s", right: true, cell: func(r Row) string { return short(r.OutputTokenThroughput) }})
	if costs {
		cols = append(cols, column{head: "USD/1M", right: true, cell: func(r Row) string { return short(r.CostPerMOutputTokens) }})
	}
	if len(labels) > 1 || !labels[""] {
		cols = append(cols, column{head: "LABEL", cell: func(r Row) string { return dash(r.Label) }, shrink: true})
	}
	t := table{}
	for _, c := range cols {
		t.heads, t.right, t.shrink = append(t.heads, c.head), append(t.right, c.right), append(t.shrink, c.shrink)
	}
	for _, r := range rows {
		var row []string
		for _, c := range cols {
			row = append(row, c.cell(r))
		}
		t.rows = append(t.rows, row)
	}
	if err := t.write(w, width); err != nil {
		return err
	}
	var same []string
	if len(models) == 1 && len(rows) > 0 {
		same = append(same, "model "+dash(rows[0].Model))
	}
	if len(rows) > 0 {
		same = append(same, "TTFT and ITL in ms, tok/s the output token throughput")
	}
	if len(same) > 0 {
		_, err := fmt.Fprint(w, wrap(strings.Join(same, "; ")+" (--wide: every column, the server and folder)", width))
		return err
	}
	return nil
}

// table is a fitted table: its headings, which columns are right-aligned
// (numbers) and which give up width when the whole is too wide, and its
// rows.
type table struct {
	heads         []string
	right, shrink []bool
	rows          [][]string
}

// write prints t in columns two spaces apart, fitted to width: the
// shrinkable columns, the widest first, are cut with … down to 8 columns
// each (the others are never cut).
func (t table) write(w io.Writer, width int) error {
	widths := make([]int, len(t.heads))
	for i, h := range t.heads {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, row := range t.rows {
		for i, v := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(v))
		}
	}
	for total := sum(widths) + 2*(len(widths)-1); total > width; total-- {
		widest := -1
		for i := range widths {
			if t.shrink[i] && widths[i] > 8 && (widest < 0 || widths[i] > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		widths[widest]--
	}
	for _, row := range append([][]string{t.heads}, t.rows...) {
		var b strings.Builder
		for i, v := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			v = cut(v, widths[i])
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(v))
			if t.right[i] {
				b.WriteString(pad + v)
			} else {
				b.WriteString(v + pad)
			}
		}
		if _, err := fmt.Fprintln(w, strings.TrimRight(b.String(), " ")); err != nil {
			return err
		}
	}
	return nil
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// cut shortens s to n columns, its last one "…".
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n || n < 1 {
		return s
	}
	return string(r[:n-1]) + "…"
}

// writeWideList is the whole table (--wide).
func writeWideList(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED (UTC)\tKIND\tMODEL\tSERVER\tLOAD\tREQUESTS\tERRORS\tTTFT p50/p99 ms\tITL p50 ms\tOUTPUT tok/s\tUSD/1M out\tLABEL\tFOLDER")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s / %s\t%s\t%s\t%s\t%s\t%s\n", r.ID, when(r), kindOf(r), dash(r.Model), dash(server(r)),
			dash(load(r)), r.Requests, r.Errors, short(r.TTFTP50), short(r.TTFTP99), short(r.ITLP50), short(r.OutputTokenThroughput),
			short(r.CostPerMOutputTokens), dash(r.Label), sanitize.Line(r.Dir))
	}
	return tw.Flush()
}

// kindOf is a row's kind as the list shows it: run, "stage 2", "repeat 1".
func kindOf(r Row) string {
	kind := r.Kind
	if r.Repeat > 0 {
		kind += " " + strconv.Itoa(r.Repeat)
	}
	if r.Kind == KindStage {
		kind += " " + strconv.Itoa(r.Stage)
	}
	return kind
}

// shortLoad is load's short form for the fitted list: "conc 8", "rate
// 20", "conc sweep".
func shortLoad(r Row) string {
	l := load(r)
	for long, short := range map[string]string{"concurrency": "conc", "request_rate": "rate"} {
		if rest, ok := strings.CutPrefix(l, long); ok {
			return short + rest
		}
	}
	return l
}

func startedAt(r Row) time.Time {
	t := r.StartedAt
	if t.IsZero() {
		t = r.RecordedAt
	}
	return t.UTC()
}

func when(r Row) string { return startedAt(r).Format("2006-01-02 15:04:05") }

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

// barOf draws v as a bar scaled so that top is cells long, with eighths.
func barOf(v, top float64, cells int) string {
	if !(v > 0) || !(top > 0) {
		return ""
	}
	eighths := int(math.Round(v / top * float64(cells) * 8))
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
// It fits width columns (≤ 0: 80), the bars as long as room allows and
// the server left to wide, which prints every column.
func (t *Trend) WriteText(w io.Writer, width int, wide bool) error {
	switch {
	case wide:
		width = math.MaxInt32
	case width <= 0:
		width = 80
	}
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
	labels := false
	for i, p := range t.Points {
		vals[i], top = p.Value, math.Max(top, p.Value)
		labels = labels || p.Row.Label != ""
	}
	fmt.Fprintf(w, "%s%s\n\n", wrap(head, width), sparkline(vals))
	tb := table{heads: []string{"ID", "STARTED UTC"}, right: []bool{true, false}, shrink: []bool{false, false}}
	add := func(head string, right, shrink bool) {
		tb.heads, tb.right, tb.shrink = append(tb.heads, head), append(tb.right, right), append(tb.shrink, shrink)
	}
	if wide || labels {
		add("LABEL", false, true)
	}
	if wide {
		add("SERVER", false, true)
	}
	add("VALUE", true, false)
	add("CHANGE", true, false)
	add(fmt.Sprintf("%g%% CI", 100*t.Level), false, false)
	add("", false, false) // the mark
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
		started := startedAt(p.Row).Format("01-02 15:04")
		if wide {
			started = when(p.Row)
		}
		row := []string{strconv.FormatInt(p.Row.ID, 10), started}
		if wide || labels {
			row = append(row, dash(p.Row.Label))
		}
		if wide {
			row = append(row, dash(server(p.Row)))
		}
		tb.rows = append(tb.rows, append(row, short(p.Value), change, ci, mark(p.Change)))
	}
	// The bars take the room the columns leave, up to barWidth.
	var probe strings.Builder
	if err := tb.write(&probe, width); err != nil {
		return err
	}
	used := 0
	for _, l := range strings.Split(probe.String(), "\n") {
		used = max(used, utf8.RuneCountInString(l))
	}
	bars := barWidth
	if !wide {
		bars = min(barWidth, max(8, width-used-2))
	}
	add("", false, false)
	for i, p := range t.Points {
		tb.rows[i] = append(tb.rows[i], barOf(p.Value, top, bars))
	}
	if err := tb.write(w, width); err != nil {
		return err
	}
	how := "per-request statistics by a bootstrap interval of each difference, from both runs' records (as surge compare)"
	if len(t.Points) > 0 && !hasDistribution(t.Points[0].Row, t.Metric) {
		how = "run-level values by whether the runs' intervals are disjoint"
	}
	fmt.Fprint(w, "\n"+wrap(fmt.Sprintf("Each change is from the run above, tested at %g%%: %s.", 100*t.Level, how), width))
	fmt.Fprint(w, wrap(fmt.Sprintf("▲ worse, ▼ better, * significant; · significant but under %s%%; unmarked: within the noise.", strconv.FormatFloat(100*t.MinChange, 'g', 3, 64)), width))
	for _, r := range reasons {
		fmt.Fprint(w, wrap("? "+r, width))
	}
	for _, n := range t.Notes {
		fmt.Fprint(w, wrap("Note: "+sanitize.Line(n), width))
	}
	return nil
}

// wrap breaks s at spaces into lines of at most width columns, the later
// ones indented by two; each ends with a newline.
func wrap(s string, width int) string {
	var b strings.Builder
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > width:
			b.WriteString(line + "\n")
			line = "  " + word
		default:
			line += " " + word
		}
	}
	b.WriteString(line + "\n")
	return b.String()
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
		XLabel: "run", XWhole: true, YLabel: strings.TrimSpace(name + " " + unitLabel(t.Unit)), Series: []report.Series{line}}
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
