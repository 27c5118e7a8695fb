package export

import (
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/surgebench/surge/metrics"
)

// surgeSection is the summary's "surge" object: surge's own analyses of
// the run, beside AIPerf's keys (nil when it has none).
func surgeSection(s *metrics.Summary) *object {
	tb, ll := s.TimeBreakdown, s.Little
	if tb == nil && !ll.Disagrees() {
		// Little's law on its own says something only when it fails.
		return nil
	}
	o := newObject()
	if tb != nil {
		o.set("time_breakdown", tb)
		o.set("time_breakdown_requests", tb.Requests)
		o.set("time_breakdown_unattributed", map[string]*float64{
			"before_first_token": share(tb.Unattributed[0]), "after_first_token": share(tb.Unattributed[1]),
		})
		if j := s.SpanJoins; j != nil {
			o.set("otlp_spans", map[string]int64{"joined": j.Joined, "missed": j.Missed, "unwaited": j.Unwaited})
		}
	}
	if ll != nil {
		o.set("littles_law", littleValue(ll))
	}
	return o
}

// littleValue is Little's law as the JSON has it: the rate, the requests
// in flight by the law, the concurrency it is checked against (null: an
// open loop) and, per part of the breakdown, the requests in it.
func littleValue(l *metrics.LittleLaw) any {
	o := newObject()
	o.set("rate", finite(l.Rate))
	o.set("in_flight", finite(l.InFlight))
	if l.Concurrency > 0 {
		o.set("concurrency", l.Concurrency)
		o.set("tolerance", finite(l.Tolerance))
		o.set("disagrees", l.Disagrees())
	} else {
		o.set("concurrency", nil)
	}
	parts := newObject()
	for p := range metrics.NumParts {
		parts.set(metrics.Part(p).String(), finite(l.Parts[p]))
	}
	o.set("in_flight_by_part", parts)
	return o
}

// share is a share as the JSON has it, rounded (nil: unknown).
func share(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	r := math.Round(x*1e4) / 1e4
	return &r
}

// breakdownLabels are the parts' names on the console.
var breakdownLabels = [metrics.NumParts]string{"client", "network", "server queue", "prefill", "decode", "delivery"}

// consoleBreakdown prints "where the time went": each part's p50 (with
// the half-width of its 95% interval), p90 and p99 in ms, its share of
// the time to the first token (the parts before it) or of the rest (the
// parts after it), and its source; then what no part covers. It fits 80
// columns: its widest cells are a source's name and a share.
func consoleBreakdown(w io.Writer, s *metrics.Summary, width int) {
	tb := s.TimeBreakdown
	if tb == nil {
		return
	}
	type row struct{ cells [6]string }
	rows := []row{{[6]string{"Where the time went (ms)", "p50", "p90", "p99", "share", "source"}}}
	for p := range metrics.NumParts {
		ps := &tb.Parts[p]
		r := row{[6]string{breakdownLabels[p], "—", "—", "—", "—", ps.Source}}
		if ps.Count > 0 {
			r.cells[1] = sig3(ps.P50)
			if !math.IsNaN(ps.P50Lo) && ps.P50 > 0 {
				r.cells[1] += " " + metrics.FormatHalfWidth((ps.P50Hi-ps.P50Lo)/2/ps.P50)
			}
			r.cells[2], r.cells[3] = sig3(ps.P90), sig3(ps.P99)
			if !math.IsNaN(ps.Share) {
				r.cells[4] = pct(ps.Share)
			}
		}
		rows = append(rows, r)
	}
	if u := tb.Unattributed; !math.IsNaN(u[0]) || !math.IsNaN(u[1]) {
		var cells []string
		for _, x := range u {
			if math.IsNaN(x) {
				cells = append(cells, "—")
			} else {
				cells = append(cells, pct(x))
			}
		}
		cell := strings.Join(cells, " / ")
		rows = append(rows, row{[6]string{"not attributed", "", "", "", cell, ""}})
	}
	var wd [6]int
	for _, r := range rows {
		for i, c := range r.cells {
			if i == 4 && r.cells[0] == "not attributed" {
				continue // its cell spans the share and source columns
			}
			wd[i] = max(wd[i], utf8.RuneCountInString(c))
		}
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		var b strings.Builder
		fmt.Fprintf(&b, "%-*s", wd[0], r.cells[0])
		for i := 1; i < 5; i++ {
			fmt.Fprintf(&b, "  %*s", wd[i], r.cells[i]) // fmt's width counts runes
		}
		fmt.Fprintf(&b, "  %s", r.cells[5])
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	if l := s.Little; l != nil {
		var in []string
		for p := range metrics.NumParts {
			if x := l.Parts[p]; !math.IsNaN(x) {
				in = append(in, breakdownLabels[p]+" "+sig3(x))
			}
		}
		if len(in) > 0 {
			line := "in flight (Little's law: rate × time): " + strings.Join(in, " · ")
			if l.Concurrency > 0 {
				line += fmt.Sprintf("; all %s of a concurrency of %g", sig3(l.InFlight), l.Concurrency)
			}
			io.WriteString(w, Wrap(line, width, 2))
		}
	}
	note := fmt.Sprintf("share: of the time to the first token (client to prefill), of the rest after it (decode, delivery); %s of %s requests", short(float64(tb.Requests)), short(s.Run[metrics.RequestCount]))
	if u := tb.Unattributed; !math.IsNaN(u[0]) && u[0] > 0.05 {
		note += "; what no part covers is a part the server did not give"
	}
	io.WriteString(w, Wrap(note, width, 2))
}

// pct formats a share (0–1) in percent.
func pct(x float64) string {
	switch v := 100 * x; {
	case v >= 9.95:
		return fmt.Sprintf("%.0f%%", v)
	default:
		return fmt.Sprintf("%.1f%%", v)
	}
}
