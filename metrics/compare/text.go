package compare

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// WriteText writes res for people: the runs, then per comparison a table
// (each statistic's values, change and interval; the rank test; the
// run-level values), the verdicts, the rules' outcomes and any warnings.
func WriteText(w io.Writer, res *Result, outcomes []Outcome) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "surge compare: baseline %s\n", res.Baseline)
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	for _, r := range res.Runs {
		wl := r.Workload
		if wl == "" {
			wl = "no fingerprint"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d requests, %d failed\tworkload %s\n", r.Name, r.Dir, r.Requests, r.Failed, wl)
	}
	tw.Flush()
	fmt.Fprintf(ew, "%g%% intervals from %d bootstrap resamples (seed %d); distributions by the Mann–Whitney U test (two-sided)\n",
		100*res.Level, res.Iterations, res.Seed)
	fmt.Fprint(ew, "* significant; n<N too few requests to judge. A percentile (a tail) can move significantly while the\n"+
		"distribution as a whole does not: the rank test weighs every request\n")
	for _, c := range res.Comparisons {
		title := fmt.Sprintf("%s vs %s", c.B, c.A)
		if c.Stage != "" {
			title += " at " + c.Stage
		}
		fmt.Fprintf(ew, "\n%s\n", title)
		var t table
		t.row("metric", "stat", c.A, c.B, "change", fmt.Sprintf("%g%% CI", 100*res.Level), "")
		for _, m := range c.Metrics {
			name := m.Tag
			if m.Unit != "" {
				name += " (" + m.Unit + ")"
			}
			for _, s := range m.Stats {
				ci := ""
				if finite(float64(s.RelLo)) {
					ci = fmt.Sprintf("%s … %s", pct(s.RelLo), pct(s.RelHi))
				} else if finite(float64(s.AbsLo)) {
					ci = fmt.Sprintf("%s … %s", signedNum(s.AbsLo), signedNum(s.AbsHi))
				}
				change := pct(s.Rel)
				if !finite(float64(s.Rel)) {
					change = signedNum(s.Abs)
				}
				mark := star(s.Significant)
				if s.TooFew {
					mark = fmt.Sprintf("n<%d", s.MinN)
				}
				t.row(name, s.Stat, num(s.A), num(s.B), change, ci, mark)
				name = ""
			}
			mw := m.MannWhitney
			t.row("", "distribution", fmt.Sprintf("n=%d", m.NA), fmt.Sprintf("n=%d", m.NB), fmt.Sprintf("P(B>A) %.2f", float64(mw.BGreater)), "p = "+pValue(float64(mw.P)), star(mw.Significant))
		}
		for _, r := range c.RunLevel {
			name := r.Tag
			if r.Unit != "" {
				name += " (" + r.Unit + ")"
			}
			change := pct(r.Rel)
			if !finite(float64(r.Rel)) {
				change = signedNum(r.Abs)
			}
			a, b := num(r.A), num(r.B)
			if r.Unit == "requests" { // a count: whole
				a, b = count(r.A), count(r.B)
				if !finite(float64(r.Rel)) {
					change = signed(count(r.Abs))
				}
			}
			t.row(name, "run", a, b, change, "one value per run", "")
		}
		t.write(ew)
		for _, m := range c.Metrics {
			fmt.Fprintf(ew, "  %s\n", m.Verdict)
		}
	}
	if len(outcomes) > 0 {
		fmt.Fprintf(ew, "\n--fail-on\n")
		for _, o := range outcomes {
			mark := "ok  "
			switch {
			case o.Failed:
				mark = "FAIL"
			case o.Unjudged:
				mark = "open"
			}
			fmt.Fprintf(ew, "  %s %s: %s\n", mark, o.Rule, o.Detail)
		}
	}
	notes := append(append([]string{}, res.Check.Reasons...), res.Check.Notes...)
	notes = append(notes, res.Warnings...)
	if len(notes) > 0 {
		fmt.Fprintf(ew, "\nnotes\n")
		for _, n := range notes {
			fmt.Fprintf(ew, "  %s\n", n)
		}
	}
	return ew.err
}

func star(b bool) string {
	if b {
		return "*"
	}
	return ""
}

// num shows a value in the table's one format: two decimals (three
// significant digits for a value too small for them).
func num(n Num) string {
	f := float64(n)
	switch {
	case !finite(f):
		return "–"
	case f != 0 && math.Abs(f) < 0.005:
		return fmt.Sprintf("%.2e", f)
	}
	return fmt.Sprintf("%.2f", f)
}

// count shows a count, whole.
func count(n Num) string {
	if !finite(float64(n)) {
		return "–"
	}
	return fmt.Sprintf("%.0f", float64(n))
}

// signedNum is num with its sign: a change.
func signedNum(n Num) string {
	if !finite(float64(n)) {
		return "–"
	}
	return signed(num(n))
}

// pct shows a relative change in the table's one format: one decimal.
func pct(n Num) string {
	f := 100 * float64(n)
	if !finite(f) {
		return "–"
	}
	return signed(fmt.Sprintf("%.1f%%", f))
}

// errWriter keeps the first write error so the writer can be used freely.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return len(p), nil
	}
	_, e.err = e.w.Write(p)
	return len(p), nil
}

// table prints rows in columns: the first left-aligned, the rest right.
type table struct{ rows [][]string }

func (t *table) row(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer) {
	var width []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range t.rows {
		var b strings.Builder
		b.WriteString("  ")
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i == 0 {
				b.WriteString(c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
