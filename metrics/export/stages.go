package export

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/surgebench/surge/metrics"
)

// ConsoleStages prints a sweep's stage table: one row per value with its
// requests, errors, throughputs and latencies, the recommended operating
// point and the knee marked. It prints nothing for a run of one stage.
func ConsoleStages(w io.Writer, s *metrics.Summary) {
	if len(s.Stages) < 2 {
		return
	}
	mode := s.Stages[0].Mode
	if mode == "" {
		mode = "stage"
	}
	header := []string{mode, "requests", "errors", "req/s", "out tok/s", "TTFT p50", "TTFT p95", "ITL p50", "latency p95", ""}
	rows := [][]string{header}
	for i, st := range s.Stages {
		mark := ""
		switch {
		case i == s.Operating:
			mark = "← operating point"
		case i == s.Knee || st.Knee:
			mark = "← knee"
		}
		rows = append(rows, []string{strconv.FormatFloat(st.Value, 'f', -1, 64),
			strconv.FormatInt(st.RequestCount, 10), strconv.FormatInt(st.ErrorRequestCount, 10),
			short(st.RequestThroughput), short(st.OutputTokenThroughput),
			short(st.TTFT.P50), short(st.TTFT.P95), short(st.ITL.P50), short(st.Latency.P95), mark})
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
}
