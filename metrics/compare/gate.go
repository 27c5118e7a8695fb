package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/surgebench/surge/metrics/artifact"
)

// A regression gate for CI: a run against a baseline (a folder, or the
// run the history resolves), judged by --fail-on rules: it fails when a
// named metric moved past its tolerance and the move is significant, and
// says why in one paragraph.

// DefaultGateRules are the rules a gate judges when it is given none: the
// median and tail of TTFT, ITL and request latency may not rise more than
// 10%, significantly. A rule whose metric neither run has (TTFT of a
// non-streaming run) is left out rather than refused.
const DefaultGateRules = "time_to_first_token.p50>+10% time_to_first_token.p99>+10% inter_token_latency.p50>+10% request_latency.p50>+10% request_latency.p99>+10%"

// Gate is a regression gate's judgement of runs against their baseline.
type Gate struct {
	// Result is the whole comparison.
	Result *Result `json:"comparison"`
	// Outcomes are the rules' outcomes, failed or not.
	Outcomes []Outcome `json:"fail_on"`
	// Failed is set when a rule failed, or could not be judged (too few
	// requests for its statistic) and GateOptions.AllowUnjudged was not
	// given: a gate that cannot judge does not pass.
	Failed bool `json:"failed"`
	// Unjudged counts the rule judgements too few requests left open.
	Unjudged int `json:"unjudged"`
	// Verdict says in one paragraph what failed (or that nothing did),
	// the changes that are not significant, and what the fingerprint
	// check noted.
	Verdict string `json:"verdict"`
}

// IncomparableError is RunGate's refusal of runs whose workload
// fingerprints differ: a gate that compared them would judge the change
// of workload, not of the server.
type IncomparableError struct {
	Check Check
}

func (e *IncomparableError) Error() string {
	return "the runs are not comparable: " + strings.Join(e.Check.Reasons, "; ")
}

// GateOptions configure RunGate.
type GateOptions struct {
	// Options are the comparison's (the rules' metrics and statistics are
	// added to them).
	Options
	// Rules are the --fail-on rules; none: DefaultGateRules.
	Rules []Rule
	// Force judges runs whose workload fingerprints differ.
	Force bool
	// AllowUnjudged passes the rules that could not be judged (too few
	// requests for their statistic) instead of failing the gate.
	AllowUnjudged bool
}

// RunGate compares runs[1:] with runs[0], the baseline, and judges the
// rules on every comparison. Runs whose workloads differ are an
// *IncomparableError unless o.Force; a rule naming a metric the runs lack
// is an error (bad usage), except among the default rules.
func RunGate(runs []*artifact.Run, o GateOptions) (*Gate, error) {
	rules, defaults := o.Rules, len(o.Rules) == 0
	if defaults {
		var err error
		if rules, err = ParseRules(DefaultGateRules); err != nil {
			return nil, err
		}
	}
	opts := o.Options
	metrics, statNames := RuleMetrics(rules)
	if opts.Metrics == nil {
		opts.Metrics = slices.Clone(DefaultMetrics)
	}
	for _, m := range metrics {
		if !slices.Contains(opts.Metrics, m) {
			opts.Metrics = append(opts.Metrics, m)
		}
	}
	opts.Stats = append(slices.Clone(opts.Stats), statNames...)
	res, err := Compare(runs, opts)
	if err != nil {
		return nil, err
	}
	if !res.Check.Comparable && !o.Force {
		return &Gate{Result: res}, &IncomparableError{Check: res.Check}
	}
	if defaults {
		rules = slices.DeleteFunc(rules, func(r Rule) bool { return !inEvery(res, r.Metric) })
	}
	outcomes, err := res.Evaluate(rules)
	if err != nil {
		return nil, err
	}
	g := &Gate{Result: res, Outcomes: outcomes}
	if g.Outcomes == nil {
		g.Outcomes = []Outcome{}
	}
	for _, oc := range outcomes {
		g.Failed = g.Failed || oc.Failed || oc.Unjudged && !o.AllowUnjudged
		if oc.Unjudged {
			g.Unjudged++
		}
	}
	g.Verdict = Paragraph(res, outcomes, o.AllowUnjudged)
	return g, nil
}

// inEvery reports whether every comparison of res has metric tag.
func inEvery(res *Result, tag string) bool {
	for _, c := range res.Comparisons {
		if findMetric(c, tag) == nil && findRunLevel(c, tag) == nil {
			return false
		}
	}
	return len(res.Comparisons) > 0
}

// Paragraph is a gate's verdict in one paragraph: REGRESSION, NOT
// JUDGED or PASS, the runs, each failed rule with its change and
// interval, the rules too few requests left unjudged (a failure unless
// allowUnjudged), the rules that moved past their limit without
// significance, how many held, and the fingerprint check's notes
// (another server, another surge).
func Paragraph(res *Result, outcomes []Outcome, allowUnjudged bool) string {
	var failed, unjudged, noisy []string
	held := 0
	for _, o := range outcomes {
		switch {
		case o.Failed:
			failed = append(failed, o.Detail)
		case o.Unjudged:
			unjudged = append(unjudged, o.Detail)
		case strings.Contains(o.Detail, "but not significantly"):
			noisy = append(noisy, o.Detail)
		default:
			held++
		}
	}
	var names []string
	for _, r := range res.Runs[1:] {
		names = append(names, r.Name)
	}
	var b strings.Builder
	against := fmt.Sprintf("%s against the baseline %s", strings.Join(names, ", "), res.Baseline)
	switch {
	case len(failed) > 0:
		fmt.Fprintf(&b, "REGRESSION: %s: %s.", against, strings.Join(failed, "; "))
	case len(unjudged) > 0 && !allowUnjudged:
		fmt.Fprintf(&b, "NOT JUDGED: %s: %d of %d rule %s could not be judged, and a gate that cannot judge does not pass.",
			against, len(unjudged), len(outcomes), plural(len(outcomes), "judgement", "judgements"))
	case len(outcomes) == 0:
		fmt.Fprintf(&b, "PASS: %s: no rule to judge (the runs share none of the rules' metrics).", against)
	default:
		fmt.Fprintf(&b, "PASS: %s: no rule failed.", against)
	}
	if len(unjudged) > 0 {
		how := "Not judged"
		if allowUnjudged {
			how = "Not judged, allowed"
		}
		fmt.Fprintf(&b, " %s: %s.", how, strings.Join(unjudged, "; "))
	}
	if len(noisy) > 0 {
		fmt.Fprintf(&b, " Past a limit but within the noise (not significant at %g%%): %s.", 100*res.Level, strings.Join(noisy, "; "))
	}
	if held > 0 {
		fmt.Fprintf(&b, " %d of %d rule %s held.", held, len(outcomes), plural(len(outcomes), "judgement", "judgements"))
	}
	for _, n := range res.Check.Notes {
		b.WriteString(" Note: " + n + ".")
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
