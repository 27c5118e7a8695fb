package export

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/surgebench/surge/metrics"
)

// finite is v, or null (nil) where JSON cannot hold it.
func finite(v float64) any {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return roundTo(v)
}

// halfPct is a relative half-width in percent (null when unbounded).
func halfPct(h float64) any { return finite(100 * h) }

// precisionValue is the summary's precision as the JSON writes it: per
// metric, each percentile's interval and what it rests on, then the
// throughputs' (batch means), and the footnotes of thin percentiles.
func precisionValue(p *metrics.Precision) any {
	o := newObject()
	o.set("level", p.Level)
	o.set("method", map[string]string{
		"percentiles": "distribution-free order-statistic interval (binomial ranks, interpolated)",
		"throughputs": "nonoverlapping batch means over the 100 ms rate series",
	})
	o.set("requests", p.Requests)
	o.set("kept", p.Kept)
	for _, t := range metrics.HeadlineTags {
		m := newObject()
		for _, c := range p.Percentiles {
			if c.Metric != t {
				continue
			}
			e := newObject()
			e.set("value", finite(c.Value))
			e.set("lo", finite(c.Lo))
			e.set("hi", finite(c.Hi))
			e.set("half_width_pct", halfPct(c.HalfWidth()))
			e.set("n", c.N)
			e.set("tail", c.Tail)
			e.set("thin", c.Thin())
			m.set(c.Stat(), e)
		}
		if len(m.keys) > 0 {
			o.set(string(t), m)
		}
	}
	for _, r := range p.Throughputs {
		e := newObject()
		e.set("value", finite(r.Value))
		e.set("lo", finite(r.Lo))
		e.set("hi", finite(r.Hi))
		e.set("half_width_pct", halfPct(r.HalfWidth()))
		e.set("batches", r.Batches)
		e.set("batch_sec", roundTo(r.BatchSec))
		o.set(string(r.Metric), e)
	}
	o.set("footnotes", nonNil(p.Footnotes()))
	return o
}

// steadyValue is the steady state as the JSON writes it: the window in
// seconds from the run's first request, what was cut at each end, and the
// window's numbers in the summary's shapes.
func steadyValue(ss *metrics.SteadyState) any {
	o := newObject()
	o.set("found", ss.Found)
	if ss.Reason != "" {
		o.set("reason", ss.Reason)
	}
	o.set("method", ss.Method)
	o.set("bin_sec", roundTo(ss.BinSec))
	o.set("applied", ss.Applied)
	o.set("run_sec", roundTo(float64(ss.RunEndNs-ss.RunStartNs)/1e9))
	if !ss.Found {
		return o
	}
	o.set("start_sec", roundTo(float64(ss.StartNs-ss.RunStartNs)/1e9))
	o.set("end_sec", roundTo(float64(ss.EndNs-ss.RunStartNs)/1e9))
	o.set("warmup_sec", roundTo(ss.WarmupSec()))
	o.set("drain_sec", roundTo(ss.DrainSec()))
	addMetricsOf(o, ss.Metrics, ss.Run)
	if ss.Precision != nil {
		o.set("precision", precisionValue(ss.Precision))
	}
	return o
}

// precisionHeader is the header of the CSV's intervals section.
var precisionHeader = []string{"Metric", "Window", "Statistic", "Value", "CI Low", "CI High", "Half Width (%)", "Requests", "Tail", "Batches"}

// writePrecisionCSV writes surge's section of the CSV after AIPerf's two:
// a blank line, then one row per interval of the whole run ("run") and of
// the steady state ("steady"), and the steady state's bounds.
func writePrecisionCSV(cw *csv.Writer, s *metrics.Summary) {
	if s.Precision == nil {
		return
	}
	_ = cw.Write(nil)
	_ = cw.Write(precisionHeader)
	rows := func(window string, p *metrics.Precision) {
		if p == nil {
			return
		}
		for _, c := range p.Percentiles {
			d, _ := defOf(c.Metric)
			_ = cw.Write([]string{d.Label(), window, c.Stat(), csvNum(c.Value), csvNum(c.Lo), csvNum(c.Hi),
				csvNum(100 * c.HalfWidth()), strconv.Itoa(c.N), strconv.Itoa(c.Tail), ""})
		}
		for _, r := range p.Throughputs {
			d, _ := defOf(r.Metric)
			_ = cw.Write([]string{d.Label(), window, "value", csvNum(r.Value), csvNum(r.Lo), csvNum(r.Hi),
				csvNum(100 * r.HalfWidth()), strconv.FormatInt(p.Requests, 10), "", strconv.Itoa(r.Batches)})
		}
	}
	rows("run", s.Precision)
	if ss := s.SteadyState; ss != nil && ss.Found {
		for _, b := range []struct {
			name string
			v    float64
		}{{"Steady State Start (sec)", float64(ss.StartNs-ss.RunStartNs) / 1e9}, {"Steady State End (sec)", float64(ss.EndNs-ss.RunStartNs) / 1e9}} {
			_ = cw.Write([]string{b.name, "steady", "value", csvNum(b.v), "", "", "", strconv.FormatInt(ss.Requests, 10), "", ""})
		}
		if !ss.Applied {
			rows("steady", ss.Precision)
		}
	}
}

// defOf finds a metric's definition among the per-request and run-level
// ones.
func defOf(t metrics.Tag) (metrics.Def, bool) {
	for _, defs := range [][]metrics.Def{metrics.RequestDefs, metrics.RunDefs} {
		for _, d := range defs {
			if d.Tag == t {
				return d, true
			}
		}
	}
	return metrics.Def{Tag: t, Name: string(t)}, false
}

// consolePercentiles are the percentiles the console's intervals show.
var consolePercentiles = []float64{50, 90, 99}

// consolePrecision prints the intervals under the run-level metrics: per
// headline latency, its p50, p90 and p99 intervals (the steady state's on
// the line under it), each throughput's, the steady-state window, and a
// footnote per thin percentile, marked †.
func consolePrecision(w io.Writer, width int, s *metrics.Summary) {
	p := s.Precision
	if p == nil {
		return
	}
	ss := s.SteadyState
	steady := ss != nil && ss.Found && !ss.Applied && ss.Precision != nil
	title := fmt.Sprintf("%.0f%% intervals (%s requests)", 100*p.Level, countOf(p))
	if ss != nil && ss.Applied {
		title = fmt.Sprintf("%.0f%% intervals (steady state, %s requests)", 100*p.Level, countOf(p))
	}
	rows := [][]string{{title, "p50", "p90", "p99"}}
	var notes []string
	for _, t := range metrics.HeadlineTags {
		row, n := percentileRow(p, t)
		if row == nil {
			continue
		}
		d, _ := defOf(t)
		rows = append(rows, append([]string{d.Label()}, row...))
		notes = append(notes, n...)
		if steady {
			// Where the run's row has a footnote the steady state's would
			// repeat it with a few requests fewer.
			if srow, sn := percentileRow(ss.Precision, t); srow != nil {
				rows = append(rows, append([]string{"  steady state"}, srow...))
				if len(n) == 0 {
					for _, x := range sn {
						notes = append(notes, "steady state: "+x)
					}
				}
			}
		}
	}
	widths := []int{width, 0, 0, 0}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		var b strings.Builder
		fmt.Fprintf(&b, "%-*s", widths[0], r[0])
		for i, c := range r[1:] {
			fmt.Fprintf(&b, "  %-*s", widths[i+1], c)
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	for _, r := range p.Throughputs {
		d, _ := defOf(r.Metric)
		line := fmt.Sprintf("%s %s", short(r.Value), metrics.FormatHalfWidth(r.HalfWidth()))
		switch {
		case r.Identical:
			line = fmt.Sprintf("%s, interval not estimable (its %d batches of %s s are identical: completions in step)", short(r.Value), r.Batches, short(r.BatchSec))
		case r.Batches >= 2:
			line += fmt.Sprintf(" (batch means: %d batches of %s s)", r.Batches, short(r.BatchSec))
		default:
			line += " (too short for two batches of a request's length)"
		}
		if steady {
			if sr := ss.Precision.Throughput(r.Metric); sr != nil && sr.Identical {
				line += fmt.Sprintf("; steady state %s, not estimable", short(sr.Value))
			} else if sr != nil {
				line += fmt.Sprintf("; steady state %s %s", short(sr.Value), metrics.FormatHalfWidth(sr.HalfWidth()))
			}
		}
		fmt.Fprintf(w, "%-*s  %s\n", widths[0], d.Label(), line)
	}
	if ss != nil {
		fmt.Fprintln(w, steadyLine(ss))
	}
	for _, n := range notes {
		fmt.Fprintf(w, "† %s\n", n)
	}
}

// intervalCell is an interval as the console shows it: "21.0–27.0 ±12%",
// or, with an end the data cannot bound, "≥ 21.0 ±∞", "≤ 27.0 ±∞" or "±∞"
// (as the HTML report writes them).
func intervalCell(lo, hi, half float64) string {
	switch l, h := math.IsInf(lo, -1), math.IsInf(hi, 1); {
	case l && h:
		return "±∞"
	case h:
		return "≥ " + sig3(lo) + " ±∞"
	case l:
		return "≤ " + sig3(hi) + " ±∞"
	}
	return sig3(lo) + "–" + sig3(hi) + " " + metrics.FormatHalfWidth(half)
}

// percentileRow is one metric's p50, p90, p99 cells ("21.0–27.0 ±12%",
// a thin one marked †) and the footnote of its thin ones ("Time to First
// Token from 180 requests: p99 rests on 1 value above it (±40%)"); nil
// when the metric has no intervals.
func percentileRow(p *metrics.Precision, t metrics.Tag) ([]string, []string) {
	var cells, thin []string
	n, found := 0, false
	for _, pct := range consolePercentiles {
		c := p.Percentile(t, pct)
		if c == nil {
			cells = append(cells, "-")
			continue
		}
		found, n = true, c.N
		cell := intervalCell(c.Lo, c.Hi, c.HalfWidth())
		if c.Thin() {
			cell += " †"
			values := "values"
			if c.Tail == 1 {
				values = "value"
			}
			side := "above"
			if c.P < 50 {
				side = "below"
			}
			thin = append(thin, fmt.Sprintf("%s rests on %d %s %s it (%s)", c.Stat(), c.Tail, values, side,
				metrics.FormatHalfWidth(c.HalfWidth())))
		}
		cells = append(cells, cell)
	}
	if !found {
		return nil, nil
	}
	if len(thin) == 0 {
		return cells, nil
	}
	d, _ := defOf(t)
	return cells, []string{fmt.Sprintf("%s from %d requests: %s", d.Name, n, strings.Join(thin, ", "))}
}

// steadyLine says where the steady state was, or why none was found.
func steadyLine(ss *metrics.SteadyState) string {
	run := float64(ss.RunEndNs-ss.RunStartNs) / 1e9
	if !ss.Found {
		return "Steady state: not found: " + ss.Reason
	}
	line := fmt.Sprintf("Steady state: %s–%s s of %s s (cut %s s of warm-up, %s s of drain; %s on the rate per %s s), %d requests",
		short(float64(ss.StartNs-ss.RunStartNs)/1e9), short(float64(ss.EndNs-ss.RunStartNs)/1e9), short(run),
		short(ss.WarmupSec()), short(ss.DrainSec()), ss.Method, short(ss.BinSec), ss.Requests)
	if ss.Applied {
		line += "; the headline numbers are its own (trim auto)"
	}
	return line
}

// countOf says how many requests the intervals rest on ("1,204", or
// "a sample of 2,097,152 of 3,000,000").
func countOf(p *metrics.Precision) string {
	if p.Kept < p.Requests {
		return fmt.Sprintf("a uniform sample of %d of %d", p.Kept, p.Requests)
	}
	return strconv.FormatInt(p.Requests, 10)
}
