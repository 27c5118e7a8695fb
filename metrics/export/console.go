package export

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/surgebench/surge/metrics"
)

// Console prints the summary table (metric rows × avg/min/max/p99/p90/p50/
// std), the run-level metrics, errors and warnings.
func Console(w io.Writer, title string, s *metrics.Summary) {
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
	fmt.Fprintf(w, "\n%s\n", title)
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
	// The server's prompt count beside surge's: a template adds a few
	// tokens, a prompt cut to the server's context loses many.
	isl, ok1 := s.Metrics[metrics.ISL]
	up, ok2 := s.Metrics[metrics.UsagePrompt]
	if ok1 && ok2 && s.InputTokenSource != metrics.InputFromUsage {
		fmt.Fprintf(w, "Input sequence length: avg %s by surge's count, %s by the server's (usage_prompt_tokens)\n", short(isl.Avg), short(up.Avg))
	}
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
	consoleSessions(w, s.Sessions)
	consolePrecision(w, widths[0], s)
	if len(s.Errors) > 0 {
		fmt.Fprintln(w, "\nErrors:")
		for _, e := range s.Errors {
			fmt.Fprintf(w, "  %6d × %s\n", e.Count, describe(e.Details))
		}
		if n := s.ClientSideErrors(); n > 0 {
			fmt.Fprintf(w, "  %d of these failed on the client's side (out of file descriptors), not the server's\n", n)
		}
	}
	for _, warn := range s.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
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
