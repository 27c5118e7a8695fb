package compare

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Rule is one --fail-on condition: a run fails it when its Stat of Metric
// moved past Limit against the baseline, and (for per-request metrics) the
// move is significant.
type Rule struct {
	// Text is the rule as written.
	Text   string `json:"rule"`
	Metric string `json:"metric"`
	// Stat is "p99", "avg", …; empty for a run-level metric.
	Stat string `json:"stat,omitempty"`
	// Op is ">" (fail when the change is above Limit) or "<" (below).
	Op string `json:"op"`
	// Limit is the change allowed: a fraction when Relative (+5% is
	// 0.05), else in the metric's unit.
	Limit    float64 `json:"limit"`
	Relative bool    `json:"relative"`
}

const ruleSyntax = `want METRIC[.STAT]>CHANGE or METRIC[.STAT]<CHANGE, CHANGE a signed number, % for relative (time_to_first_token.p99>+5%, output_token_throughput<-3%, request_latency.avg>+20)`

// ParseRules parses --fail-on conditions, separated by commas or spaces:
// "time_to_first_token.p99>+5%" fails when the p99 TTFT rose more than 5%;
// "output_token_throughput<-3%" when throughput fell more than 3%;
// "request_latency.avg>+20" when the mean latency rose more than 20 (its
// unit, ms). Metric names are checked against the runs later, by Evaluate.
func ParseRules(s string) ([]Rule, error) {
	var out []Rule
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		r, err := parseRule(f)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func parseRule(text string) (Rule, error) {
	r := Rule{Text: text}
	i := strings.IndexAny(text, "<>")
	if i < 0 {
		return r, fmt.Errorf("%q: no > or <: %s", text, ruleSyntax)
	}
	lhs, rhs := text[:i], text[i+1:]
	r.Op = text[i : i+1]
	if strings.HasPrefix(rhs, "=") {
		return r, fmt.Errorf("%q: %s= is not supported (a change equal to the limit passes): %s", text, r.Op, ruleSyntax)
	}
	r.Metric, r.Stat, _ = strings.Cut(lhs, ".")
	if r.Metric == "" {
		return r, fmt.Errorf("%q: no metric before %s: %s", text, r.Op, ruleSyntax)
	}
	for _, c := range r.Metric {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == ':' || c == '-') {
			return r, fmt.Errorf("%q: metric %q: want a metric tag such as time_to_first_token", text, r.Metric)
		}
	}
	if _, ok := statLevel(r.Stat); r.Stat != "" && !ok {
		return r, fmt.Errorf("%q: unknown statistic %q (want avg or pN, 0 < N < 100: p50, p90, p99, p99.9)", text, r.Stat)
	}
	num, pct := strings.CutSuffix(rhs, "%")
	r.Relative = pct
	if num == "" {
		return r, fmt.Errorf("%q: no change after %s: %s", text, r.Op, ruleSyntax)
	}
	if strings.ContainsAny(num, "eE_xXpPiInN") || strings.HasSuffix(num, "%") {
		return r, fmt.Errorf("%q: change %q: want a plain signed number such as +5%% or -3", text, rhs)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return r, fmt.Errorf("%q: change %q: want a plain signed number such as +5%% or -3", text, rhs)
	}
	if pct {
		v /= 100
	}
	r.Limit = v
	return r, nil
}

// Outcome is one rule judged on one comparison.
type Outcome struct {
	Rule  string `json:"rule"`
	Run   string `json:"run"`
	Stage string `json:"stage,omitempty"`
	// Change is the run's change (a fraction when the rule is relative).
	Change Num `json:"change"`
	// Significant is whether the change is significant (always true for
	// run-level metrics, which have one value per run).
	Significant bool `json:"significant"`
	// Failed is whether the rule failed: past the limit, significantly.
	Failed bool `json:"failed"`
	// Unjudged is set when either run has too few requests for the
	// rule's statistic (NeedN of them: p99 needs 100): the rule says
	// nothing either way, and a gate fails on it unless allowed
	// (GateOptions.AllowUnjudged).
	Unjudged bool   `json:"unjudged,omitempty"`
	NeedN    int    `json:"need_n,omitempty"`
	Detail   string `json:"detail"`
}

// Evaluate judges every rule on every comparison of res. A rule naming a
// metric or statistic the comparison lacks is an error (bad usage), which
// lists what there is.
func (res *Result) Evaluate(rules []Rule) ([]Outcome, error) {
	var out []Outcome
	for _, c := range res.Comparisons {
		for _, r := range rules {
			o, err := evaluate(c, r, res.Level)
			if err != nil {
				return nil, err
			}
			out = append(out, o)
		}
	}
	return out, nil
}

func evaluate(c Comparison, r Rule, level float64) (Outcome, error) {
	o := Outcome{Rule: r.Text, Run: c.B, Stage: c.Stage}
	var change, lo, hi float64
	unit, few := "", ""
	switch m, rl := findMetric(c, r.Metric), findRunLevel(c, r.Metric); {
	case m != nil:
		if r.Stat == "" {
			return o, fmt.Errorf("--fail-on %q: %s is per request: name a statistic (%s.p99, %s.avg)", r.Text, r.Metric, r.Metric, r.Metric)
		}
		var sd *StatDiff
		for i := range m.Stats {
			if m.Stats[i].Stat == r.Stat {
				sd = &m.Stats[i]
			}
		}
		if sd == nil {
			return o, fmt.Errorf("--fail-on %q: %s was not computed", r.Text, r.Stat)
		}
		unit = m.Unit
		change, lo, hi = float64(sd.Abs), float64(sd.AbsLo), float64(sd.AbsHi)
		if r.Relative {
			change, lo, hi = float64(sd.Rel), float64(sd.RelLo), float64(sd.RelHi)
		}
		o.Significant = sd.Significant
		if sd.TooFew {
			o.Unjudged, o.NeedN = true, sd.MinN
			few = fmt.Sprintf(": not judged: needs ≥ %d requests in each run (%s has %d, %s %d)", sd.MinN, c.A, m.NA, c.B, m.NB)
		}
	case rl != nil:
		if r.Stat != "" && r.Stat != "avg" {
			return o, fmt.Errorf("--fail-on %q: %s is run-level (one value per run): leave the statistic out", r.Text, r.Metric)
		}
		unit = rl.Unit
		change = float64(rl.Abs)
		if r.Relative {
			change = float64(rl.Rel)
		}
		lo, hi = math.NaN(), math.NaN()
		o.Significant = true
	default:
		return o, fmt.Errorf("--fail-on %q: no metric %s in the comparison of %s with %s (%s)", r.Text, r.Metric, c.B, c.A, metricNames(c))
	}
	o.Change = Num(change)
	past := r.Op == ">" && change > r.Limit || r.Op == "<" && change < r.Limit
	o.Failed = past && o.Significant
	show := func(v float64) string {
		if r.Relative {
			return signed(fmt.Sprintf("%.*f%%", precision(100*v), 100*v))
		}
		return signed(fmt.Sprintf("%.4g %s", v, unit))
	}
	name := r.Metric
	if r.Stat != "" {
		name += "." + r.Stat
	}
	o.Detail = fmt.Sprintf("%s %s %s", c.B, name, show(change))
	if c.Stage != "" {
		o.Detail = fmt.Sprintf("%s (%s) %s %s", c.B, c.Stage, name, show(change))
	}
	if o.Unjudged {
		// A change of too few requests is never worded as noise: it was
		// not judged at all.
		o.Detail += few
		return o, nil
	}
	if finite(lo) && finite(hi) {
		o.Detail += fmt.Sprintf(" (%g%% CI %s to %s)", 100*level, show(lo), show(hi))
	}
	side := "above"
	if r.Op == "<" {
		side = "below"
	}
	switch {
	case !finite(change):
		o.Detail += ": no value to judge"
	case past && !o.Significant:
		o.Detail += fmt.Sprintf(": %s %s, but not significantly", side, show(r.Limit))
	case past:
		o.Detail += fmt.Sprintf(": %s %s", side, show(r.Limit))
	default:
		o.Detail += fmt.Sprintf(": not %s %s", side, show(r.Limit))
	}
	return o, nil
}

func findMetric(c Comparison, tag string) *Metric {
	for i := range c.Metrics {
		if c.Metrics[i].Tag == tag {
			return &c.Metrics[i]
		}
	}
	return nil
}

func findRunLevel(c Comparison, tag string) *RunLevel {
	for i := range c.RunLevel {
		if c.RunLevel[i].Tag == tag {
			return &c.RunLevel[i]
		}
	}
	return nil
}

func metricNames(c Comparison) string {
	var names []string
	for _, m := range c.Metrics {
		names = append(names, m.Tag)
	}
	for _, r := range c.RunLevel {
		names = append(names, r.Tag)
	}
	if len(names) == 0 {
		return "it has none"
	}
	return "it has " + strings.Join(names, ", ")
}

// RuleMetrics are the per-request metrics the rules name, to compare
// besides the defaults, and the statistics they need.
func RuleMetrics(rules []Rule) (metrics, statNames []string) {
	for _, r := range rules {
		if r.Stat == "" {
			continue
		}
		if !slices.Contains(metrics, r.Metric) {
			metrics = append(metrics, r.Metric)
		}
		if !slices.Contains(statNames, r.Stat) {
			statNames = append(statNames, r.Stat)
		}
	}
	return metrics, statNames
}
