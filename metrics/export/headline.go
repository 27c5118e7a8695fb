package export

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/surgebench/surge/metrics"
)

// headlineRow is one row of the headline: a latency's p50, p90 and p99
// (each a value and its interval's half-width), or one line of text
// across the columns.
type headlineRow struct {
	label string
	cells [][2]string // value, "±x% †"
	text  string
}

// consoleHeadline prints the numbers to read first, to fit DefaultWidth:
// TTFT, ITL and request latency at p50, p90 and p99, each with its
// interval's half-width († where too few requests lie beyond the
// percentile to bound it); TTFT's other views (from the send, to the first
// output token) only where they differ from it; then the throughputs,
// goodput, requests and errors, and the cost.
func consoleHeadline(w io.Writer, s *metrics.Summary, width int) {
	p := s.Precision
	ss := s.SteadyState
	trimmed := ss != nil && ss.Applied
	thin := map[float64]bool{}
	var rows []headlineRow
	latency := func(t metrics.Tag, label string) {
		d, ok := s.Metrics[t]
		if !ok || d.Count == 0 {
			return
		}
		r := headlineRow{label: label}
		for i, v := range []float64{d.P50, d.P90, d.P99} {
			pm := ""
			if p != nil {
				if c := p.Percentile(t, consolePercentiles[i]); c != nil {
					pm = metrics.FormatHalfWidth(c.HalfWidth())
					if c.Thin() {
						pm += " †"
						thin[c.P] = true
					}
				}
			}
			r.cells = append(r.cells, [2]string{sig3(v), pm})
		}
		rows = append(rows, r)
	}
	latency(metrics.TTFT, "TTFT (ms)")
	if !trimmed {
		// The other views of the first token, where they tell something
		// TTFT does not (a slow connect or upload; reasoning first).
		if differs(s, metrics.TTFTFromSend, metrics.TTFT) {
			latency(metrics.TTFTFromSend, "TTFT from send (ms)")
		}
		if differs(s, metrics.TTFO, metrics.TTFT) {
			latency(metrics.TTFO, "First output token (ms)")
		}
	}
	latency(metrics.ITL, "ITL (ms)")
	latency(metrics.RequestLatency, "Request latency (ms)")

	rate := func(t metrics.Tag, unit string) string {
		v, ok := s.Run[t]
		if !ok {
			return ""
		}
		out := sig3(v) + " " + unit
		if p != nil {
			switch r := p.Throughput(t); {
			case r != nil && r.Identical:
				// Batches all alike (completions in step) estimate nothing:
				// never an interval of zero width.
				out += " (interval not estimable)"
			case r != nil:
				out += " " + metrics.FormatHalfWidth(r.HalfWidth())
			}
		}
		return out
	}
	var tput []string
	for _, x := range []struct {
		t    metrics.Tag
		unit string
	}{{metrics.OutputTokenThroughput, "tokens/s"}, {metrics.RequestThroughput, "requests/s"}, {metrics.InputThroughput, "inputs/s"},
		{metrics.InputTokenThroughput, "input tokens/s"}} {
		if r := rate(x.t, x.unit); r != "" {
			tput = append(tput, r)
		}
	}
	if len(tput) > 0 {
		rows = append(rows, headlineRow{label: "Throughput", text: strings.Join(tput, ", ")})
	}
	if g, ok := s.Run[metrics.Goodput]; ok {
		text := sig3(g) + " requests/s met the SLOs"
		if n, ok := s.Run[metrics.GoodRequestCount]; ok {
			text += fmt.Sprintf(" (%s of %s requests)", short(n), short(s.Run[metrics.RequestCount]+s.Run[metrics.ErrorRequestCount]))
		}
		rows = append(rows, headlineRow{label: "Goodput", text: text})
	}
	if n, ok := s.Run[metrics.RequestCount]; ok {
		errs := s.Run[metrics.ErrorRequestCount]
		text := short(n) + " ok"
		if d, ok := s.Run[metrics.BenchmarkDuration]; ok {
			text += " in " + sig3(d) + " s"
		}
		text += ", " + plural(errs, "error")
		if errs > 0 {
			text += fmt.Sprintf(" (%s%%)", sig3(s.Run[metrics.RequestErrorRate]))
		}
		if c := s.Run[metrics.CancelledRequestCount]; c > 0 {
			text += ", " + short(c) + " of them cancelled"
		}
		if trimmed {
			text += " (the whole run)"
		}
		rows = append(rows, headlineRow{label: "Requests", text: text})
	}
	var lengths []string
	for _, x := range []struct {
		t    metrics.Tag
		name string
	}{{metrics.ISL, "ISL"}, {metrics.OSL, "OSL"}} {
		if d, ok := s.Metrics[x.t]; ok && d.Count > 0 {
			lengths = append(lengths, x.name+" "+sig3(d.Avg))
		}
	}
	if len(lengths) > 0 {
		rows = append(rows, headlineRow{label: "Tokens per request", text: strings.Join(lengths, ", ") + " (avg)"})
	}
	if c, ok := s.Run[metrics.CostPerMOutputTokens]; ok {
		rows = append(rows, headlineRow{label: "Cost", text: sig3(c) + " USD per 1M output tokens"})
	}
	if len(rows) == 0 {
		return
	}

	corner := ""
	if n, ok := s.Run[metrics.RequestCount]; ok && n > 0 {
		corner = plural(n, "request")
	}
	if trimmed {
		corner = "steady state, " + plural(float64(ss.Requests), "request")
	}
	lw := utf8.RuneCountInString(corner)
	var vw, hw [3]int
	for _, r := range rows {
		lw = max(lw, utf8.RuneCountInString(r.label))
		for i, c := range r.cells {
			vw[i] = max(vw[i], utf8.RuneCountInString(c[0]), 3)
			hw[i] = max(hw[i], utf8.RuneCountInString(c[1]))
		}
	}
	fmt.Fprintln(w)
	if vw[0] > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "%-*s", lw, corner)
		for i, name := range []string{"p50", "p90", "p99"} {
			fmt.Fprintf(&b, "  %*s %*s", vw[i], name, hw[i], "")
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	for _, r := range rows {
		var b strings.Builder
		fmt.Fprintf(&b, "%-*s", lw, r.label)
		if r.text != "" {
			b.WriteString("  " + r.text)
		}
		for i, c := range r.cells {
			fmt.Fprintf(&b, "  %*s %s%s", vw[i], c[0], c[1], strings.Repeat(" ", hw[i]-utf8.RuneCountInString(c[1])))
		}
		if r.text != "" {
			// A row of prose wraps under its own text, never past the width.
			fmt.Fprint(w, Wrap(b.String(), width, lw+2))
			continue
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	if legend := headlineLegend(p, thin); legend != "" {
		fmt.Fprint(w, Wrap(legend, width, 2))
	}
}

// differs reports whether metric a's p50, p90 or p99 is more than 5% (and
// 0.5 ms) away from b's: a view worth its own row.
func differs(s *metrics.Summary, a, b metrics.Tag) bool {
	x, ok1 := s.Metrics[a]
	y, ok2 := s.Metrics[b]
	if !ok1 || !ok2 || x.Count == 0 {
		return false
	}
	for _, v := range [][2]float64{{x.P50, y.P50}, {x.P90, y.P90}, {x.P99, y.P99}} {
		if d := math.Abs(v[0] - v[1]); d > 0.5 && d > 0.05*math.Max(math.Abs(v[0]), math.Abs(v[1])) {
			return true
		}
	}
	return false
}

// headlineLegend says what ± and † mean, and how many requests each
// thin percentile needs to be bounded (ThinTail beyond it).
func headlineLegend(p *metrics.Precision, thin map[float64]bool) string {
	if p == nil {
		return ""
	}
	legend := fmt.Sprintf("± half the %.0f%% interval.", 100*p.Level)
	if len(thin) == 0 {
		return legend
	}
	var pcts []float64
	for pct := range thin {
		pcts = append(pcts, pct)
	}
	slices.Sort(pcts)
	slices.Reverse(pcts)
	var needs []string
	for _, pct := range pcts {
		needs = append(needs, fmt.Sprintf("a p%s takes %s", strconv.FormatFloat(pct, 'f', -1, 64), thousands(RequestsFor(pct))))
	}
	return legend + fmt.Sprintf(" † fewer than %d requests beyond the percentile, so its interval is wide or open (±∞): %s requests", metrics.ThinTail, strings.Join(needs, ", "))
}

// RequestsFor is how many successful requests a percentile needs before
// metrics.ThinTail of them lie beyond it (a p99: 1,000), so that its
// interval is bounded and it prints without †.
func RequestsFor(pct float64) int {
	tail := math.Min(pct, 100-pct) / 100
	if tail <= 0 {
		return 0
	}
	return int(math.Ceil(float64(metrics.ThinTail)/tail - 1e-9))
}

// thousands writes n with commas between thousands (1,000).
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// plural is "1 request", "200 requests".
func plural(n float64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return short(n) + " " + noun + "s"
}

// consoleSteady says, under the headline, where the steady state was and
// where its numbers are: under --trim auto they are the headline's.
func consoleSteady(w io.Writer, s *metrics.Summary) {
	ss := s.SteadyState
	switch {
	case ss == nil || !ss.Found:
	case ss.Applied:
		fmt.Fprintln(w, steadyLine(ss))
	default:
		fmt.Fprintf(w, "Steady state: %s–%s s of %s s, %s (--wide: its intervals; --trim auto reports it)\n",
			short(float64(ss.StartNs-ss.RunStartNs)/1e9), short(float64(ss.EndNs-ss.RunStartNs)/1e9),
			short(float64(ss.RunEndNs-ss.RunStartNs)/1e9), plural(float64(ss.Requests), "request"))
	}
}
