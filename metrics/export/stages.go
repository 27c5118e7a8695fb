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

// ConsoleStages prints a sweep's stage table: one row per value with its
// requests, errors, throughput and latencies, the recommended operating
// point and the knee marked, and (JudgedKnee) a line saying what the
// knee judgement found: a knee, none, or that the intervals could not
// tell. It fits Width (DefaultWidth: 80 columns): the intervals the knee
// is judged on as half-widths beside their values, the marks in a column
// of their own; Wide prints every column, the intervals' bounds and the
// marks in words. What a stage could not measure (TTFT and ITL without
// streaming) is "–". It prints nothing for a run of one stage.
func ConsoleStages(w io.Writer, s *metrics.Summary, opts ...ConsoleOption) {
	o := consoleOpts(opts)
	if len(s.Stages) < 2 {
		return
	}
	mode := s.Stages[0].Mode
	if mode == "" {
		mode = "stage"
	}
	var rows [][]string
	if o.wide {
		rows = wideStages(s, mode)
	} else {
		rows = compactStages(s, mode)
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	// A row: compact, the mark (when any stage has one) and a space,
	// then the value left-aligned and the numbers right-aligned; wide,
	// the value, the numbers and the mark in words.
	render := func(r []string, withMark bool) string {
		var b strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			switch {
			case !o.wide && i == 0:
				if widths[0] > 0 {
					b.WriteString(c + pad + " ")
				}
			case o.wide && i == 0, !o.wide && i == 1:
				b.WriteString(c + pad)
			case o.wide && i == len(r)-1:
				if withMark && c != "" {
					b.WriteString("  " + c)
				}
			default:
				b.WriteString("  " + pad + c)
			}
		}
		return b.String()
	}
	fmt.Fprintln(w, "\nStages (latencies in ms)")
	for n, r := range rows {
		fmt.Fprintln(w, strings.TrimRight(render(r, true), " "))
		if n == 0 {
			fmt.Fprintln(w, strings.Repeat("─", utf8.RuneCountInString(render(r, false))))
		}
	}
	if o.knee {
		line := kneeLine(s, mode)
		if !o.wide && s.Knee >= 0 && s.Knee < len(s.Stages) && s.Operating >= 0 && s.Operating < len(s.Stages) {
			line = fmt.Sprintf("Knee (%s) at %s %s: recommended operating point (%s) %s %s", markKnee, mode, stageName(s.Stages[s.Knee].Value, s.Stages[s.Knee].Label),
				markOperating, mode, stageName(s.Stages[s.Operating].Value, s.Stages[s.Operating].Label))
		}
		fmt.Fprint(w, Wrap(line, o.width, 2))
	}
}

// The compact stage table's marks.
const (
	markOperating = "●"
	markKnee      = "▲"
)

// cellOr is the stage's value, or "–" where the stage measured none.
func cellOr(d metrics.Distribution, v float64) string {
	if d.Count == 0 {
		return "–"
	}
	return sig3(v)
}

// compactStages are the stage table's rows to fit 80 columns: a mark, the
// value, requests, errors, the output token throughput (request
// throughput where no tokens are made) and its interval, TTFT p50, p95
// TTFT and its interval (p95 latency's, without streaming), ITL p50 and
// p95 latency.
func compactStages(s *metrics.Summary, mode string) [][]string {
	tokens := false
	for _, st := range s.Stages {
		tokens = tokens || st.OutputTokenThroughput > 0
	}
	tputName := "out tok/s"
	if !tokens {
		tputName = "req/s"
	}
	rows := [][]string{{"", mode, "reqs", "err", tputName, "TTFT p50", "TTFT p95", "ITL p50", "lat p95"}}
	for i, st := range s.Stages {
		mark := ""
		switch {
		case i == s.Operating:
			mark = markOperating
		case i == s.Knee || st.Knee:
			mark = markKnee
		}
		tput := sig3(st.OutputTokenThroughput)
		if !tokens {
			tput = sig3(st.RequestThroughput)
		}
		if ci := st.OutputTokenThroughputCI; ci != nil && tokens && st.OutputTokenThroughput > 0 {
			tput += " " + metrics.FormatHalfWidth((ci.Hi-ci.Lo)/2/st.OutputTokenThroughput)
		}
		ttft95, lat95 := cellOr(st.TTFT, st.TTFT.P95), cellOr(st.Latency, st.Latency.P95)
		if ci := st.TTFTP95CI; ci != nil && st.TTFT.Count > 0 {
			ttft95 += " " + metrics.FormatHalfWidth(relHalfWidth(st.TTFT.P95, ci.Lo, ci.Hi))
		} else if ci := st.LatencyP95CI; ci != nil && st.TTFT.Count == 0 && st.Latency.Count > 0 {
			lat95 += " " + metrics.FormatHalfWidth(relHalfWidth(st.Latency.P95, ci.Lo, ci.Hi))
		}
		rows = append(rows, []string{mark, stageName(st.Value, st.Label),
			strconv.FormatInt(st.RequestCount, 10), strconv.FormatInt(st.ErrorRequestCount, 10), tput,
			cellOr(st.TTFT, st.TTFT.P50), ttft95, cellOr(st.ITL, st.ITL.P50), lat95})
	}
	return rows
}

// relHalfWidth is an interval's half-width relative to v (+Inf where a
// side is open).
func relHalfWidth(v, lo, hi float64) float64 {
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) || v == 0 {
		return math.Inf(1)
	}
	return (hi - lo) / 2 / math.Abs(v)
}

// wideStages are the stage table's rows as --wide prints them: every
// throughput, the intervals' bounds, the marks in words.
func wideStages(s *metrics.Summary, mode string) [][]string {
	header := []string{mode, "reqs", "err", "req/s", "out tok/s", "TTFT p50", "TTFT p95", "ITL p50", "lat p95", ""}
	// The intervals the knee is judged on, where the stages have them.
	withCI := false
	for _, st := range s.Stages {
		withCI = withCI || st.OutputTokenThroughputCI != nil
	}
	if withCI {
		header = slices.Insert(header, 5, "±95%")
		header = slices.Insert(header, 8, "p95 CI")
	}
	rows := [][]string{header}
	for i, st := range s.Stages {
		mark := ""
		switch {
		case i == s.Operating:
			mark = "← operating point"
		case i == s.Knee || st.Knee:
			mark = "← knee"
		}
		row := []string{stageName(st.Value, st.Label),
			strconv.FormatInt(st.RequestCount, 10), strconv.FormatInt(st.ErrorRequestCount, 10),
			sig3(st.RequestThroughput), sig3(st.OutputTokenThroughput),
			cellOr(st.TTFT, st.TTFT.P50), cellOr(st.TTFT, st.TTFT.P95), cellOr(st.ITL, st.ITL.P50), cellOr(st.Latency, st.Latency.P95), mark}
		if withCI {
			tput, p95 := "", ""
			if ci := st.OutputTokenThroughputCI; ci != nil && st.OutputTokenThroughput > 0 {
				tput = metrics.FormatHalfWidth((ci.Hi - ci.Lo) / 2 / st.OutputTokenThroughput)
			}
			ci := st.TTFTP95CI
			if st.TTFT.Count == 0 {
				ci = st.LatencyP95CI
			}
			if ci != nil {
				p95 = sig3(ci.Lo) + "–" + sig3(ci.Hi)
			}
			row = slices.Insert(row, 5, tput)
			row = slices.Insert(row, 8, p95)
		}
		rows = append(rows, row)
	}
	return rows
}

// kneeGain is the throughput gain over the previous stage under which a
// stage stops paying off (metrics.Knee's rule).
const kneeGain = 1.10

// kneeLine says what the knee judgement of s's stages found.
func kneeLine(s *metrics.Summary, mode string) string {
	value := func(i int) string { return mode + " " + stageName(s.Stages[i].Value, s.Stages[i].Label) }
	n := len(s.Stages)
	switch v := s.KneeVerdict; {
	case s.Knee >= 0 && s.Knee < n && s.Operating >= 0 && s.Operating < n:
		return fmt.Sprintf("Knee at %s: recommended operating point %s", value(s.Knee), value(s.Operating))
	case v.Inconclusive && v.At >= 0 && v.At < n:
		return fmt.Sprintf("Knee inconclusive at %s: run more requests per stage (%d suggested)", value(v.At), v.Suggested)
	case s.Stages[n-1].OutputTokenThroughput >= kneeGain*s.Stages[n-2].OutputTokenThroughput:
		return fmt.Sprintf("No knee: throughput still rising at the last stage (%s)", stageName(s.Stages[n-1].Value, s.Stages[n-1].Label))
	}
	return fmt.Sprintf("No knee: p95 TTFT had not risen past --knee-factor × the first stage's by the last stage (%s)",
		stageName(s.Stages[n-1].Value, s.Stages[n-1].Label))
}

// stageName names a stage's row: its value, or the label of a point of
// several parameters ("concurrency=1, isl=128").
func stageName(value float64, label string) string {
	if label != "" {
		return label
	}
	return strconv.FormatFloat(value, 'f', -1, 64)
}

// sig3 writes v with three significant digits, whole numbers from 100 up
// (1234.5 → 1235, 21.24 → 21.2, 5.004 → 5.00).
func sig3(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return short(v)
	case a >= 99.95 || v == 0:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 9.995:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 0.9995:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
