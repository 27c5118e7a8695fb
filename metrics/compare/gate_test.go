package compare

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/surgebench/surge/metrics/artifact"
)

// TestGate: the slow run (TTFT 20 ms) against the fast baseline (16 ms)
// fails the default rules and a TTFT rule, with a REGRESSION paragraph
// that names the change and its interval; the fast run against the slow
// baseline passes; runs of different workloads are refused unless forced.
func TestGate(t *testing.T) {
	t.Parallel()
	rules, err := ParseRules("time_to_first_token.p50>+5%, inter_token_latency.p50>+50%")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		runs   []string
		rules  []Rule
		failed bool
		want   []string
	}{
		{"slower, named rules", []string{"fast", "slow"}, rules, true,
			[]string{"REGRESSION: slow against the baseline fast: slow time_to_first_token.p50 +2", "% CI", "above +5.0%", "1 of 2 rule judgements held"}},
		{"slower, default rules", []string{"fast", "slow"}, nil, true,
			[]string{"REGRESSION: ", "time_to_first_token.p99", "request_latency.p50"}},
		{"faster", []string{"slow", "fast"}, nil, false,
			[]string{"PASS: fast against the baseline slow: no rule failed.", "5 of 5 rule judgements held"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g, err := RunGate(load(t, tc.runs...), GateOptions{Options: opts, Rules: tc.rules})
			if err != nil {
				t.Fatal(err)
			}
			if g.Failed != tc.failed {
				t.Errorf("failed %v, want %v: %s", g.Failed, tc.failed, g.Verdict)
			}
			for _, w := range tc.want {
				if !strings.Contains(g.Verdict, w) {
					t.Errorf("verdict lacks %q:\n%s", w, g.Verdict)
				}
			}
			if strings.Count(g.Verdict, "\n") > 0 {
				t.Errorf("verdict is not one paragraph:\n%s", g.Verdict)
			}
		})
	}

	_, err = RunGate(load(t, "slow", "other-isl"), GateOptions{Options: opts})
	var inc *IncomparableError
	if !errors.As(err, &inc) || !strings.Contains(err.Error(), "isl") {
		t.Errorf("different workloads: %v, want an IncomparableError naming isl", err)
	}
	if _, err := RunGate(load(t, "slow", "other-isl"), GateOptions{Options: opts, Force: true}); err != nil {
		t.Errorf("forced: %v", err)
	}
	bad, _ := ParseRules("no_such_metric.p99>+5%")
	if _, err := RunGate(load(t, "fast", "slow"), GateOptions{Options: opts, Rules: bad}); err == nil || !strings.Contains(err.Error(), "no_such_metric") {
		t.Errorf("a rule on a metric the runs lack: %v, want an error naming it", err)
	}
}

// TestParagraphNoisyAndNotes: a change past its limit that is not
// significant is named as noise, not as a failure, and the fingerprint
// check's notes end the paragraph.
func TestParagraphNoisyAndNotes(t *testing.T) {
	t.Parallel()
	res := &Result{Baseline: "a", Level: 0.95, Runs: []Run{{Name: "a"}, {Name: "b"}},
		Check: Check{Notes: []string{"a and b measured different servers"}}}
	got := Paragraph(res, []Outcome{{Detail: "b x.p99 +7%: above +5%, but not significantly"}}, false)
	want := "PASS: b against the baseline a: no rule failed. Past a limit but within the noise (not significant at 95%): b x.p99 +7%: above +5%, but not significantly. Note: a and b measured different servers."
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := Paragraph(res, nil, false); !strings.Contains(got, "no rule to judge") {
		t.Errorf("no outcomes: %s", got)
	}
}

// few is run's first n records, the slowest of them k times slower in
// tag (a tail that moved, the middle as it was).
func few(t *testing.T, run *artifact.Run, name string, n int, tag string, k float64) *artifact.Run {
	t.Helper()
	out := *run
	out.Name = name
	out.Records = slices.Clone(run.Profile()[:n])
	slowest := 0
	for i := range out.Records {
		rec := out.Records[i]
		rec.Metrics = maps(rec.Metrics)
		out.Records[i] = rec
		if rec.Metrics[tag] > out.Records[slowest].Metrics[tag] {
			slowest = i
		}
	}
	out.Records[slowest].Metrics[tag] *= k
	return &out
}

func maps(m map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestGateUnjudged: a rule too few requests leave unjudged (p99 of 20
// requests: it needs 100) is never worded as noise, however far the
// value moved (several fold here): it says "not judged: needs ≥ 100", and the
// gate fails on it unless unjudged rules are allowed, when the verdict
// still names it. A rule with enough requests is judged as before.
func TestGateUnjudged(t *testing.T) {
	t.Parallel()
	base := load(t, "fast")[0]
	small := few(t, base, "small", 20, "time_to_first_token", 1)
	grown := few(t, base, "grown", 20, "time_to_first_token", 9.07)
	p99, _ := ParseRules("time_to_first_token.p99>+10%")
	p50, _ := ParseRules("time_to_first_token.p50>+10%")
	for _, tc := range []struct {
		name     string
		runs     []*artifact.Run
		rules    []Rule
		allow    bool
		failed   bool
		unjudged int
		want     []string
		not      []string
	}{
		{"p99 of 20 requests, several fold", []*artifact.Run{small, grown}, p99, false, true, 1,
			[]string{"NOT JUDGED: grown against the baseline small", "not judged: needs ≥ 100 requests in each run (small has 20, grown 20)"},
			[]string{"noise", "PASS"}},
		{"the same, allowed", []*artifact.Run{small, grown}, p99, true, false, 1,
			[]string{"PASS: ", "Not judged, allowed: grown time_to_first_token.p99 +", "%: not judged: needs ≥ 100"},
			[]string{"noise"}},
		{"default rules on 20 requests", []*artifact.Run{small, grown}, nil, false, true, 2,
			[]string{"NOT JUDGED: ", "time_to_first_token.p99", "request_latency.p99"}, nil},
		{"p50 of 20 requests is judged", []*artifact.Run{small, grown}, p50, false, false, 0,
			[]string{"PASS: ", "1 of 1 rule judgement held"}, []string{"not judged"}},
		{"p99 of 120 requests is judged", load(t, "fast", "slow"), p99, false, true, 0,
			[]string{"REGRESSION: "}, []string{"not judged"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g, err := RunGate(tc.runs, GateOptions{Options: opts, Rules: tc.rules, AllowUnjudged: tc.allow})
			if err != nil {
				t.Fatal(err)
			}
			if g.Failed != tc.failed || g.Unjudged != tc.unjudged {
				t.Errorf("failed %v with %d unjudged, want %v with %d: %s", g.Failed, g.Unjudged, tc.failed, tc.unjudged, g.Verdict)
			}
			for _, w := range tc.want {
				if !strings.Contains(g.Verdict, w) {
					t.Errorf("verdict lacks %q:\n%s", w, g.Verdict)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(g.Verdict, n) {
					t.Errorf("verdict says %q:\n%s", n, g.Verdict)
				}
			}
		})
	}
}
