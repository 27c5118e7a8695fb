package compare

import (
	"fmt"
	"math"
	"strings"
)

// shortNames are the names verdicts use for the common metrics.
var shortNames = map[string]string{
	"time_to_first_token":              "TTFT",
	"time_to_second_token":             "TTST",
	"time_to_first_output_token":       "TTFO",
	"inter_token_latency":              "ITL",
	"inter_chunk_latency":              "ICL",
	"request_latency":                  "request latency",
	"output_token_throughput_per_user": "output tokens/s per user",
	"output_sequence_length":           "OSL",
	"input_sequence_length":            "ISL",
	// The time breakdown's parts.
	"time_breakdown_client":       "client time",
	"time_breakdown_network":      "network time",
	"time_breakdown_server_queue": "server queue",
	"time_breakdown_prefill":      "prefill",
	"time_breakdown_decode":       "decode",
	"time_breakdown_delivery":     "delivery",
}

func shortName(tag string) string {
	if s, ok := shortNames[tag]; ok {
		return s
	}
	return tag
}

// statVerdict is one statistic's sentence: "B's TTFT p99 is 18% lower,
// 95% CI 12–24% (better)", or that the difference is not significant.
func statVerdict(b, tag, unit, better string, d StatDiff, level float64) string {
	subject := fmt.Sprintf("%s's %s %s", b, shortName(tag), d.Stat)
	if d.TooFew {
		return fmt.Sprintf("%s: too few requests to judge (want %d or more in each run)", subject, d.MinN)
	}
	lvl := fmt.Sprintf("%g%% CI", 100*level)
	rel := finite(float64(d.Rel)) && finite(float64(d.RelLo)) && finite(float64(d.RelHi))
	est, lo, hi := float64(d.Abs), float64(d.AbsLo), float64(d.AbsHi)
	format := func(v float64, prec int) string { return fmt.Sprintf("%.*f %s", prec, v, unit) }
	if rel {
		est, lo, hi = 100*float64(d.Rel), 100*float64(d.RelLo), 100*float64(d.RelHi)
		format = func(v float64, prec int) string { return fmt.Sprintf("%.*f%%", prec, v) }
	}
	if !finite(est) || !finite(lo) || !finite(hi) {
		return subject + ": no interval (too few values)"
	}
	prec := precision(est)
	// More decimals where the interval would print as one number ("19–19%")
	// or a bound as 0.
	round := func(v float64) string { return fmt.Sprintf("%.*f", prec, v) }
	for prec < 2 && (lo != hi && round(lo) == round(hi) ||
		lo != 0 && math.Abs(lo) < 0.5*math.Pow(10, -float64(prec)) ||
		hi != 0 && math.Abs(hi) < 0.5*math.Pow(10, -float64(prec))) {
		prec++
	}
	if !d.Significant {
		return fmt.Sprintf("%s is not significantly different: %s, %s %s to %s", subject,
			signed(format(est, prec)), lvl, signed(format(lo, prec)), signed(format(hi, prec)))
	}
	dir, sign := "higher", 1.0
	if est < 0 {
		dir, sign = "lower", -1
	}
	a, z := sign*lo, sign*hi
	if a > z {
		a, z = z, a
	}
	s := fmt.Sprintf("%s is %s %s, %s %s–%s", subject, format(sign*est, prec), dir, lvl, trimUnit(format(a, prec), rel), format(z, prec))
	return s + judgement(dir, better)
}

// metricVerdict sums a metric up in one line: what the rank test says of
// the whole distribution, then each statistic that moved significantly.
func metricVerdict(b, tag, unit string, m Metric, level float64) string {
	mw := m.MannWhitney
	var head string
	switch {
	case !finite(float64(mw.P)):
		head = fmt.Sprintf("%s's %s: too few values to test", b, shortName(tag))
	case mw.Significant:
		dir := "higher"
		if mw.BGreater < 0.5 {
			dir = "lower"
		}
		j := strings.TrimSuffix(strings.TrimPrefix(judgement(dir, m.Better), " ("), ")")
		if j != "" {
			j += "; "
		}
		head = fmt.Sprintf("%s's %s is %s (%sMann–Whitney p = %s, P(%s > baseline) = %.2f)",
			b, shortName(tag), dir, j, pValue(float64(mw.P)), b, float64(mw.BGreater))
	default:
		head = fmt.Sprintf("%s's %s distribution is not significantly different (Mann–Whitney p = %s)", b, shortName(tag), pValue(float64(mw.P)))
	}
	var moved, movedIs, still []string
	for _, s := range m.Stats {
		if s.TooFew {
			continue
		}
		if s.Significant {
			// The stat's own sentence without its subject.
			rest := strings.TrimPrefix(s.Verdict, fmt.Sprintf("%s's %s %s is ", b, shortName(tag), s.Stat))
			moved = append(moved, s.Stat+" "+rest)
			movedIs = append(movedIs, "its "+s.Stat+" is "+rest)
		} else {
			still = append(still, s.Stat)
		}
	}
	switch {
	case len(moved) > 0 && !mw.Significant && finite(float64(mw.P)):
		// Said, not left to look like a contradiction.
		head += ", but " + strings.Join(movedIs, "; ") + ": a percentile moved, not the distribution as a whole"
	case len(moved) > 0:
		head += "; " + strings.Join(moved, "; ")
	}
	if len(still) > 0 && len(moved) > 0 {
		head += "; " + strings.Join(still, ", ") + " not significantly different"
	}
	return head
}

func judgement(dir, better string) string {
	switch {
	case better == "":
		return ""
	case dir == better:
		return " (better)"
	}
	return " (worse)"
}

// precision picks decimals from the estimate's size: 18%, 7.3%, 0.42%.
func precision(vs ...float64) int {
	m := 0.0
	for _, v := range vs {
		m = math.Max(m, math.Abs(v))
	}
	switch {
	case m >= 10:
		return 0
	case m >= 1:
		return 1
	}
	return 2
}

func signed(s string) string {
	if strings.HasPrefix(s, "-") {
		return "−" + s[1:]
	}
	return "+" + s
}

// trimUnit drops the unit of an interval's lower end ("12–24%", "3.1–5.0 ms").
func trimUnit(s string, rel bool) string {
	if rel {
		return strings.TrimSuffix(s, "%")
	}
	if i := strings.IndexByte(s, ' '); i > 0 {
		return s[:i]
	}
	return s
}

func pValue(p float64) string {
	if p < 0.001 {
		return fmt.Sprintf("%.1e", p)
	}
	return fmt.Sprintf("%.3g", p)
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
