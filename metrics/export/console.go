package export

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/surgebench/surge/internal/sanitize"
	"github.com/surgebench/surge/metrics"
)

// ConsoleOption changes what Console prints.
type ConsoleOption func(*consoleOptions)

type consoleOptions struct {
	verbose bool     // each warning's full text under its line
	knee    bool     // the sweep's knee was judged: say what was found
	notes   []string // one-line hints after the run's lines
	width   int      // the terminal's columns (0: DefaultWidth)
	wide    bool     // every metric's row, AIPerf's table
	beside  []string // what surge sent beside each turn's prompt
}

func consoleOpts(opts []ConsoleOption) consoleOptions {
	var o consoleOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Note adds a one-line hint under the run's lines (before the errors and
// warnings): what the run could have measured, and the flag that does.
func Note(line string) ConsoleOption {
	return func(o *consoleOptions) { o.notes = append(o.notes, line) }
}

// Verbose adds each warning's full text under its one line (-v).
func Verbose(on bool) ConsoleOption { return func(o *consoleOptions) { o.verbose = on } }

// JudgedKnee says the stages' knee was judged (a concurrency or rate
// sweep): the stage table ends with what was found, a knee or none, and
// the knee's warnings are not repeated below it.
func JudgedKnee(on bool) ConsoleOption { return func(o *consoleOptions) { o.knee = on } }

// Width is the terminal's width in columns: the summary and the stage
// table fit it, and every line of prose under them wraps at it (≤ 0:
// DefaultWidth).
func Width(columns int) ConsoleOption { return func(o *consoleOptions) { o.width = columns } }

// BesidePrompt names what surge itself sent beside each turn's prompt,
// which its ISL leaves out and the server's usage counts ("the system
// prompt", "the conversation's history"): the note on the two counts
// names them, not the chat template alone.
func BesidePrompt(parts ...string) ConsoleOption {
	return func(o *consoleOptions) { o.beside = append(o.beside, parts...) }
}

// Wide prints AIPerf's whole table (every metric × avg/min/max/p99/p90/
// p50/std), the run-level metrics and every interval, however wide they
// are (--wide); the default is the headline numbers, to fit Width.
func Wide(on bool) ConsoleOption { return func(o *consoleOptions) { o.wide = on } }

// Console prints a run's summary: a sweep's stage table first, then the
// headline numbers (TTFT, ITL, request latency: p50, p90 and p99 with
// their intervals; the throughputs, requests and errors; a sweep's pooled
// over its stages, and labelled so), then what the counts and times came
// from, the errors and the warnings, each warning once, wrapped to the
// width rather than cut. Wide prints AIPerf's table of every metric
// instead of the headline. A run whose every request failed prints no
// empty table.
func Console(w io.Writer, title string, s *metrics.Summary, opts ...ConsoleOption) {
	o := consoleOpts(opts)
	width := widthOr(o.width)
	lines := &wrapWriter{w: w, width: width}
	fmt.Fprintf(lines, "\n%s\n", title)
	sweep := len(s.Stages) >= 2
	if sweep {
		ConsoleStages(w, s, opts...)
		fmt.Fprintf(w, "\nAll %d stages pooled\n", len(s.Stages))
	}
	labels := 0
	if o.wide {
		// The prose under AIPerf's table wraps at its width, not inside it.
		var total int
		labels, total = consoleTable(w, s)
		lines.width = max(width, total)
		width = lines.width
	} else {
		consoleHeadline(w, s, width)
	}
	consoleBreakdown(w, s, width)
	consoleResent(lines, s)
	consoleServerTokens(lines, s.ServerTokens)
	if s.TokenSource != "" {
		fmt.Fprintf(lines, "Token counts from: %s", s.TokenSource)
		if s.InputTokenSource != "" {
			fmt.Fprintf(lines, " (output), %s (input); the token throughputs use these", s.InputTokenSource)
		}
		if d := s.UsageDistrust; d != nil {
			fmt.Fprintf(lines, "; the server's usage not believed (%s)", d.Sign)
		}
		fmt.Fprintln(lines)
	}
	if t := s.TokensPerEvent; t != nil {
		fmt.Fprintf(lines, "Inter token latency: the server's delivery cadence (tokens came in batches: %.2f an event, the first event %.0f%% of an answer)\n",
			t.Mean, 100*t.FirstShare)
	}
	consoleInputCounts(lines, s, o.beside)
	if s.TimestampSource != "" {
		fmt.Fprintf(lines, "Token times from: %s", s.TimestampSource)
		if d, ok := s.Metrics[metrics.ClientReadDelay]; ok {
			fmt.Fprintf(lines, " (client read delay p50 %s  p99 %s  max %s ms)", short(d.P50), short(d.P99), short(d.Max))
		}
		if s.FirstTokenShared > 0 {
			fmt.Fprintf(lines, "; %d of %d first tokens read with the next", s.FirstTokenShared, s.Streamed)
		}
		fmt.Fprintln(lines)
	}
	consoleSessions(lines, s.Sessions)
	if o.wide {
		consolePrecision(w, labels, s)
	} else {
		consoleSteady(lines, s)
	}
	for _, n := range o.notes {
		fmt.Fprintln(lines, n)
	}
	if len(s.Errors) > 0 {
		fmt.Fprintln(lines, "\nErrors:")
		for _, e := range s.Errors {
			io.WriteString(w, Wrap(fmt.Sprintf("  %6d × %s", e.Count, sanitize.Line(describe(e.Details))), width, 11))
		}
		if n := s.ClientSideErrors(); n > 0 {
			fmt.Fprintf(lines, "  %d of these failed on the client's side (out of file descriptors), not the server's\n", n)
		}
	}
	for _, warn := range Warnings(s.Warnings) {
		if warn.InTable && sweep && o.knee {
			continue
		}
		io.WriteString(w, wrapWarning(warn, o.verbose, width))
	}
	if !o.wide && len(s.Metrics) > 0 {
		fmt.Fprintln(lines, "--wide prints every metric and interval; the exports hold them all")
	}
}

// consoleTable prints AIPerf's table (every metric's avg, min, max, p99,
// p90, p50 and std), the run-level metrics, the scheduler lag and the
// transport's averages (--wide), and returns the widths of its label
// column and of the whole table. Under --trim auto the rows that are the
// steady state's say so.
func consoleTable(w io.Writer, s *metrics.Summary) (labels, total int) {
	cols := []string{"avg", "min", "max", "p99", "p90", "p50", "std"}
	rows := [][]string{}
	for _, d := range consoleDefs() {
		x, ok := s.Metrics[d.Tag]
		if !ok || d.NoConsole {
			continue
		}
		row := []string{steadyLabel(s, d, false)}
		for _, v := range []float64{x.Avg, x.Min, x.Max, x.P99, x.P90, x.P50, x.Std} {
			row = append(row, short(v))
		}
		rows = append(rows, row)
	}
	widths := make([]int, len(cols)+1)
	widths[0] = len("Metric")
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	for i, c := range cols {
		widths[i+1] = max(widths[i+1], len(c))
	}
	runLabels := map[metrics.Tag]string{}
	for _, d := range metrics.RunDefs {
		if _, ok := s.Run[d.Tag]; ok && !d.NoConsole {
			runLabels[d.Tag] = steadyLabel(s, d, true)
			widths[0] = max(widths[0], len(runLabels[d.Tag]))
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		for i, c := range cells {
			if i == 0 {
				fmt.Fprintf(&b, "%-*s", widths[0], c)
				continue
			}
			fmt.Fprintf(&b, "  %*s", widths[i], c)
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	total = widths[0]
	for _, wd := range widths[1:] {
		total += wd + 2
	}
	if len(rows) > 0 {
		line(append([]string{"Metric"}, cols...))
		fmt.Fprintln(w, strings.Repeat("─", total))
		for _, r := range rows {
			line(r)
		}
		fmt.Fprintln(w)
	}
	for _, d := range metrics.RunDefs {
		if v, ok := s.Run[d.Tag]; ok && !d.NoConsole {
			fmt.Fprintf(w, "%-*s  %s\n", widths[0], runLabels[d.Tag], short(v))
		}
	}
	if s.SchedulerLag.Count > 0 {
		fmt.Fprintf(w, "%-*s  p50 %s  p99 %s\n", widths[0], "Scheduler Lag (ms)", short(s.SchedulerLag.P50), short(s.SchedulerLag.P99))
	}
	consoleHTTP(w, widths[0], s)
	if ss := s.SteadyState; ss != nil && ss.Applied {
		fmt.Fprintf(w, "(steady state): the rows so marked are the steady state's %d requests (--trim auto); every other row covers the whole run\n", ss.Requests)
	}
	return widths[0], total
}

// trimmedRun are the run-level metrics --trim auto takes from the steady
// state (metrics.Summary.applyTrim takes the per-request ones it has).
var trimmedRun = []metrics.Tag{metrics.OutputTokenThroughput, metrics.RequestThroughput}

// steadyLabel is d's label in the wide table: marked "(steady state)"
// when --trim auto put the steady state's value in its row, else AIPerf's.
func steadyLabel(s *metrics.Summary, d metrics.Def, runLevel bool) string {
	ss := s.SteadyState
	if ss == nil || !ss.Applied {
		return d.Label()
	}
	if _, ok := ss.Metrics[d.Tag]; (runLevel && !slices.Contains(trimmedRun, d.Tag)) || (!runLevel && !ok) {
		return d.Label()
	}
	if d.Unit == "" {
		return d.Name + " (steady state)"
	}
	return d.Name + " (steady state) (" + d.Unit + ")"
}

// consoleResent says what the requests re-sent on a fresh connection
// were: ones the server never read (the connection was closed before the
// request was written, or the server reset it on the request's bytes) are
// no duplicates; ones it closed on after they were written it may have
// read, and then saw twice. Past 1% of the requests they get a sentence
// naming the flags that avoid them, below it a count.
func consoleResent(w io.Writer, s *metrics.Summary) {
	if s.ConnectionRetries <= 0 {
		return
	}
	dups := min(s.RetryDuplicates, s.ConnectionRetries)
	unread := s.ConnectionRetries - dups
	sent := s.Run[metrics.RequestCount] + s.Run[metrics.ErrorRequestCount]
	if float64(s.ConnectionRetries) <= 0.01*sent {
		fmt.Fprintf(w, "Connection retries: %d (keep-alive connections the server had closed, each request re-sent once on a fresh connection; %d the server may have read first)\n",
			s.ConnectionRetries, dups)
		return
	}
	fmt.Fprintf(w, "Re-sent requests: %d of %.0f (%.1f%%) were re-sent on a fresh connection: the server had closed the reused one before answering; ",
		s.ConnectionRetries, sent, 100*float64(s.ConnectionRetries)/sent)
	switch {
	case dups == 0:
		fmt.Fprintf(w, "it never read them (the connection was closed before they were written, or reset on them), so none was sent twice (--connection-reuse-strategy never opens a connection per request)\n")
	case unread == 0:
		fmt.Fprintf(w, "it closed after they were written and may have read them, so a server that did saw them twice (--connection-retries 0 makes them errors; --connection-reuse-strategy never avoids reuse)\n")
	default:
		fmt.Fprintf(w, "%d it never read; %d it closed on after they were written and may have read, so saw them twice (--connection-retries 0 makes those errors; --connection-reuse-strategy never avoids reuse)\n",
			unread, dups)
	}
}

// consoleServerTokens prints the server's token counts beside surge's:
// "Server counted X prompt / Y output tokens (its /metrics), surge Z / W
// (±% / ±%)", then the prompt tokens its prefix cache served.
func consoleServerTokens(w io.Writer, c *metrics.TokenComparison) {
	if c == nil {
		return
	}
	count := func(v *float64) string {
		if v == nil {
			return "?"
		}
		return strconv.FormatFloat(*v, 'f', 0, 64)
	}
	pct := func(client float64, server *float64) string {
		d := metrics.DiffPct(client, server)
		if math.IsNaN(d) {
			return "-"
		}
		return fmt.Sprintf("%+.1f%%", d)
	}
	who := "its /metrics"
	if len(c.Server.Families) > 0 {
		who = strings.Join(c.Server.Families, ", ") + " /metrics"
	}
	fmt.Fprintf(w, "Server counted %s prompt / %s output tokens (%s), surge %s / %s (%s / %s)",
		count(c.Server.Prompt), count(c.Server.Output), who, short(math.Round(c.ClientPrompt)), short(math.Round(c.ClientOutput)),
		pct(c.ClientPrompt, c.Server.Prompt), pct(c.ClientOutput, c.Server.Output))
	if c.Server.CachedPrompt != nil {
		fmt.Fprintf(w, "; %s prompt tokens came from its prefix cache", count(c.Server.CachedPrompt))
		if !math.IsNaN(c.ClientCachedPrompt) {
			fmt.Fprintf(w, " (usage's cached_tokens: %s)", short(math.Round(c.ClientCachedPrompt)))
		}
	} else if !math.IsNaN(c.ClientCachedPrompt) && c.ClientCachedPrompt > 0 {
		fmt.Fprintf(w, "; %s prompt tokens came from its cache by usage's cached_tokens", short(math.Round(c.ClientCachedPrompt)))
	}
	if c.Failed > 0 {
		fmt.Fprintf(w, "; surge's output count leaves out the %d failed requests'", c.Failed)
	}
	if c.Server.WithWarmup {
		fmt.Fprint(w, "; both count the warmup's requests too")
	}
	fmt.Fprintln(w)
}

// consoleInputCounts says, where the server's prompt counts (usage) differ
// from surge's, which the metrics use and why: one line, none when they
// agree (the embedded mock counts with surge's tokenizer). What surge sent
// beside the prompts (beside) is named as the first reason for more.
func consoleInputCounts(w io.Writer, s *metrics.Summary, beside []string) {
	isl, ok1 := s.Metrics[metrics.ISL]
	up, ok2 := s.Metrics[metrics.UsagePrompt]
	if !ok1 || !ok2 || s.InputTokenSource == metrics.InputFromUsage || short(isl.Avg) == short(up.Avg) {
		return
	}
	what := "the prompts as sent"
	why := "its chat template adds tokens"
	if len(beside) > 0 {
		what = "each turn's prompt"
		why = "it also counts " + joinAnd(beside) + " surge sent, and any chat template's tokens"
	}
	if up.Avg < isl.Avg {
		why = "another tokenizer, or prompts it cut"
	}
	fmt.Fprintf(w, "Input sequence length: the metrics use surge's count, avg %s (%s); the server's usage says %s (%s)\n",
		short(isl.Avg), what, short(up.Avg), why)
}

// joinAnd is "a", "a and b", "a, b and c".
func joinAnd(parts []string) string {
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

func describe(e metrics.Error) string {
	var b strings.Builder
	if e.Code != 0 {
		fmt.Fprintf(&b, "HTTP %d ", e.Code)
	}
	b.WriteString(e.Type)
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// consoleDefs lists the console's rows: the request metrics, each
// error-adjusted view (adj_*) under its metric's row, as AIPerf orders them.
// consoleHTTP prints AIPerf's transport totals the table leaves out, one
// line of per-request averages: http_req_total, the body bytes and chunks
// each way, and the share of requests sent on a reused connection.
func consoleHTTP(w io.Writer, width int, s *metrics.Summary) {
	total, ok := s.Metrics[metrics.HTTPTotal]
	if !ok {
		return
	}
	avg := func(t metrics.Tag) string {
		if d, ok := s.Metrics[t]; ok {
			return short(d.Avg)
		}
		return "-"
	}
	fmt.Fprintf(w, "%-*s  total %s ms, sent %s KB in %s chunks, received %s KB in %s chunks", width, "HTTP per request (avg)",
		short(total.Avg), avg(metrics.HTTPDataSent), avg(metrics.HTTPChunksSent), avg(metrics.HTTPDataReceived), avg(metrics.HTTPChunksReceived))
	if d, ok := s.Metrics[metrics.HTTPConnectionReused]; ok {
		fmt.Fprintf(w, ", connection reused %s%%", short(100*d.Avg))
	}
	fmt.Fprintln(w)
}

func consoleDefs() []metrics.Def {
	var defs []metrics.Def
	for _, d := range metrics.RequestDefs {
		defs = append(defs, d)
		for _, a := range metrics.AdjustedDefs {
			if a.Tag == metrics.AdjustedOf(d.Tag) {
				defs = append(defs, a)
			}
		}
	}
	return defs
}

// short formats a value for the console with at most two decimals.
func short(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case math.IsNaN(v):
		return "-"

	case v == float64(int64(v)) && v < 1e15 && v > -1e15:
		return strconv.FormatInt(int64(v), 10)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}
