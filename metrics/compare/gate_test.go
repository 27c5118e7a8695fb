package compare

import (
	"errors"
	"strings"
	"testing"
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
	got := Paragraph(res, []Outcome{{Detail: "b x.p99 +7%: above +5%, but not significantly"}})
	want := "PASS: b against the baseline a: no rule failed. Past a limit but within the noise (not significant at 95%): b x.p99 +7%: above +5%, but not significantly. Note: a and b measured different servers."
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := Paragraph(res, nil); !strings.Contains(got, "no rule to judge") {
		t.Errorf("no outcomes: %s", got)
	}
}
