package export

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/surgebench/surge/metrics"
)

// ConsoleOption changes what Console prints.
type ConsoleOption func(*consoleOptions)

type consoleOptions struct {
	verbose bool     // each warning's full text under its line
	knee    bool     // the sweep's knee was judged: say what was found
	notes   []string // one-line hints after the run's lines
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

// Console prints a run's summary: a sweep's stage table first, then the
// summary table (metric rows × avg/min/max/p99/p90/p50/std; a sweep's
// pooled over its stages, and labelled so), the run-level metrics, errors
// and warnings, each warning once on one line. A run whose every request
// failed prints no empty table.
func Console(w io.Writer, title string, s *metrics.Summary, opts ...ConsoleOption) {
	var o consoleOptions
	for _, opt := range opts {
		opt(&o)
	}
	fmt.Fprintf(w, "\n%s\n", title)
	sweep := len(s.Stages) >= 2
	if sweep {
		ConsoleStages(w, s, opts...)
	}
	cols := []string{"avg", "min", "max", "p99", "p90", "p50", "std"}
	rows := [][]string{}
	for _, d := range consoleDefs() {
		x, ok := s.Metrics[d.Tag]
		if !ok || d.NoConsole {
			continue
		}
		row := []string{d.Label()}
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
	for _, d := range metrics.RunDefs {
		if _, ok := s.Run[d.Tag]; ok && !d.NoConsole {
			widths[0] = max(widths[0], len(d.Label()))
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
	if sweep {
		fmt.Fprintf(w, "\nAll %d stages pooled\n", len(s.Stages))
	}
	if len(rows) > 0 {
		line(append([]string{"Metric"}, cols...))
		total := widths[0]
		for _, wd := range widths[1:] {
			total += wd + 2
		}
		fmt.Fprintln(w, strings.Repeat("─", total))
		for _, r := range rows {
			line(r)
		}
		fmt.Fprintln(w)
	}
	for _, d := range metrics.RunDefs {
		if v, ok := s.Run[d.Tag]; ok && !d.NoConsole {
			fmt.Fprintf(w, "%-*s  %s\n", widths[0], d.Label(), short(v))
		}
	}
	if s.SchedulerLag.Count > 0 {
		fmt.Fprintf(w, "%-*s  p50 %s  p99 %s\n", widths[0], "Scheduler Lag (ms)", short(s.SchedulerLag.P50), short(s.SchedulerLag.P99))
	}
	consoleHTTP(w, widths[0], s)
	if s.ConnectionRetries > 0 {
		sent := s.Run[metrics.RequestCount] + s.Run[metrics.ErrorRequestCount]
		if float64(s.ConnectionRetries) > 0.01*sent {
			// Past 1% the double sends can matter: say what they were.
			fmt.Fprintf(w, "Re-sent requests: %d of %.0f (%.1f%%) were re-sent on a fresh connection after the server closed a reused one; a server that had read them saw them twice (connection retries 0 makes them errors)\n",
				s.ConnectionRetries, sent, 100*float64(s.ConnectionRetries)/sent)
		} else {
			fmt.Fprintf(w, "Connection retries: %d (keep-alive connections the server had closed; each request resent once on a fresh connection)\n", s.ConnectionRetries)
		}
	}
	if s.TokenSource != "" {
		fmt.Fprintf(w, "Token counts from: %s", s.TokenSource)
		if s.InputTokenSource != "" {
			fmt.Fprintf(w, " (output), %s (input); the token throughputs use these", s.InputTokenSource)
		}
		fmt.Fprintln(w)
	}
	consoleInputCounts(w, s)
	if s.TimestampSource != "" {
		fmt.Fprintf(w, "Token times from: %s", s.TimestampSource)
		if d, ok := s.Metrics[metrics.ClientReadDelay]; ok {
			fmt.Fprintf(w, " (client read delay p50 %s  p99 %s  max %s ms)", short(d.P50), short(d.P99), short(d.Max))
		}
		if s.FirstTokenShared > 0 {
			fmt.Fprintf(w, "; %d of %d first tokens read with the next", s.FirstTokenShared, s.Streamed)
		}
		fmt.Fprintln(w)
	}
	for _, n := range o.notes {
		fmt.Fprintln(w, n)
	}
	if len(s.Errors) > 0 {
		fmt.Fprintln(w, "\nErrors:")
		for _, e := range s.Errors {
			fmt.Fprintf(w, "  %6d × %s\n", e.Count, describe(e.Details))
		}
		if n := s.ClientSideErrors(); n > 0 {
			fmt.Fprintf(w, "  %d of these failed on the client's side (out of file descriptors), not the server's\n", n)
		}
	}
	for _, warn := range Warnings(s.Warnings) {
		if warn.InTable && sweep && o.knee {
			continue
		}
		fmt.Fprint(w, formatWarning(warn, o.verbose))
	}
}

// consoleInputCounts says, where the server's prompt counts (usage) differ
// from surge's, which the metrics use and why: one line, none when they
// agree (the embedded mock counts with surge's tokenizer).
func consoleInputCounts(w io.Writer, s *metrics.Summary) {
	isl, ok1 := s.Metrics[metrics.ISL]
	up, ok2 := s.Metrics[metrics.UsagePrompt]
	if !ok1 || !ok2 || s.InputTokenSource == metrics.InputFromUsage || short(isl.Avg) == short(up.Avg) {
		return
	}
	why := "its chat template adds tokens"
	if up.Avg < isl.Avg {
		why = "another tokenizer, or prompts it cut"
	}
	fmt.Fprintf(w, "Input sequence length: the metrics use surge's count, avg %s (the prompts as sent); the server's usage says %s (%s)\n",
		short(isl.Avg), short(up.Avg), why)
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
	case math.IsNaN(v):
		return "-"

	case v == float64(int64(v)) && v < 1e15 && v > -1e15:
		return strconv.FormatInt(int64(v), 10)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}
