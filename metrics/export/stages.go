package export

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/surgebench/surge/metrics"
)

// ConsoleStages prints a sweep's stage table: one row per value with its
// requests, errors, throughputs and latencies, the recommended operating
// point and the knee marked, and (JudgedKnee) a line saying what the
// knee judgement found: a knee, none, or that the intervals could not
// tell. It prints nothing for a run of one stage.
func ConsoleStages(w io.Writer, s *metrics.Summary, opts ...ConsoleOption) {
	var o consoleOptions
	for _, opt := range opts {
		opt(&o)
	}
	if len(s.Stages) < 2 {
		return
	}
	mode := s.Stages[0].Mode
	if mode == "" {
		mode = "stage"
	}
	// Short headings and three significant digits: the table fits 80
	// columns (96 with the intervals).
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
			sig3(st.TTFT.P50), sig3(st.TTFT.P95), sig3(st.ITL.P50), sig3(st.Latency.P95), mark}
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
	widths := make([]int, len(header))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	fmt.Fprintln(w, "\nStages (latencies in ms)")
	for n, r := range rows {
		var b strings.Builder
		for i, c := range r {
			switch {
			case i == 0:
				fmt.Fprintf(&b, "%-*s", widths[0], c)
			case i == len(r)-1:
				if c != "" {
					b.WriteString("  " + c)
				}
			default:
				fmt.Fprintf(&b, "  %*s", widths[i], c)
			}
		}
		fmt.Fprintln(w, b.String())
		if n == 0 {
			total := widths[0]
			for _, wd := range widths[1 : len(widths)-1] {
				total += wd + 2
			}
			fmt.Fprintln(w, strings.Repeat("─", total))
		}
	}
	if o.knee {
		fmt.Fprintln(w, kneeLine(s, mode))
	}
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
