package export

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/surgebench/surge/metrics"
	mstats "github.com/surgebench/surge/metrics/stats"
)

// TestConsoleStages: one row per value, the operating point and the knee
// marked and named under the table; nothing for a run of one stage.
func TestConsoleStages(t *testing.T) {
	st := func(v float64, reqs int64, p95 float64) metrics.StageSummary {
		return metrics.StageSummary{Mode: "concurrency", Value: v, RequestCount: reqs, RequestThroughput: float64(reqs) / 2,
			OutputTokenThroughput: 100 * v, TTFT: metrics.Distribution{P50: p95 / 2, P95: p95, Count: reqs}}
	}
	s := &metrics.Summary{Stages: []metrics.StageSummary{st(1, 16, 20), st(2, 16, 22), st(4, 16, 90)}, Knee: 2, Operating: 1}
	s.Stages[2].Knee = true
	var b bytes.Buffer
	ConsoleStages(&b, s, JudgedKnee(true), Wide(true))
	golden(t, "console_stages.txt", b.Bytes())
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 7 || !strings.HasSuffix(lines[4], "← operating point") || !strings.HasSuffix(lines[5], "← knee") ||
		!strings.HasPrefix(lines[1], "concurrency") || lines[6] != "Knee at concurrency 4: recommended operating point concurrency 2" {
		t.Errorf("stage table:\n%s", b.String())
	}
	// Fitted to 80 columns, the marks in a column of their own.
	b.Reset()
	ConsoleStages(&b, s, JudgedKnee(true))
	golden(t, "console_stages_80.txt", b.Bytes())
	lines = strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 7 || !strings.HasPrefix(lines[4], "● 2 ") || !strings.HasPrefix(lines[5], "▲ 4 ") ||
		lines[6] != "Knee (▲) at concurrency 4: recommended operating point (●) concurrency 2" {
		t.Errorf("stage table:\n%s", b.String())
	}
	fitsWidth(t, b.String(), DefaultWidth)
	b.Reset()
	ConsoleStages(&b, &metrics.Summary{Stages: s.Stages[:1]})
	if b.Len() != 0 {
		t.Errorf("one stage printed a table: %q", b.String())
	}
}

// TestConsoleStagesInconclusive: stages with intervals show them, and a
// knee the intervals could not settle is named as inconclusive, with the
// requests per stage to run.
func TestConsoleStagesInconclusive(t *testing.T) {
	st := func(v, p95, tput, rel float64) metrics.StageSummary {
		return metrics.StageSummary{Mode: "concurrency", Value: v, RequestCount: 64, RequestThroughput: 4 * v,
			OutputTokenThroughput: tput, TTFT: metrics.Distribution{P50: p95 / 2, P95: p95, Count: 64},
			TTFTP95CI:               &mstats.Interval{Lo: 0.8 * p95, Hi: 1.3 * p95},
			OutputTokenThroughputCI: &mstats.Interval{Lo: tput * (1 - rel), Hi: tput * (1 + rel)}}
	}
	s := &metrics.Summary{Stages: []metrics.StageSummary{st(1, 20, 100, 0.2), st(2, 22, 190, 0.2), st(4, 90, 200, 0.25)},
		Knee: -1, Operating: -1}
	if s.MarkKnee(2) || !s.KneeVerdict.Inconclusive {
		t.Fatalf("verdict %+v, want inconclusive", s.KneeVerdict)
	}
	var b bytes.Buffer
	ConsoleStages(&b, s, JudgedKnee(true), Wide(true))
	golden(t, "console_stages_inconclusive.txt", b.Bytes())
	for _, want := range []string{"±20%", "16.0–26.0", "\nKnee inconclusive at concurrency 4: run more requests per stage ("} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table does not say %q:\n%s", want, b.String())
		}
	}
	// Fitted: the intervals as half-widths beside their values.
	b.Reset()
	ConsoleStages(&b, s, JudgedKnee(true))
	for _, want := range []string{"100 ±20%", "90.0 ±25%", "\nKnee inconclusive at concurrency 4: run more requests per stage ("} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("fitted table does not say %q:\n%s", want, b.String())
		}
	}
	fitsWidth(t, b.String(), DefaultWidth)
}

// TestConsoleStagesNoKnee: a judged sweep with no knee says why, once:
// throughput still rising at its last stage, or latency never blowing up;
// a sweep whose knee was not judged (prompt lengths) says nothing of it.
func TestConsoleStagesNoKnee(t *testing.T) {
	st := func(v, tput float64) metrics.StageSummary {
		return metrics.StageSummary{Mode: "concurrency", Value: v, RequestCount: 16, OutputTokenThroughput: tput,
			TTFT: metrics.Distribution{P95: 20}}
	}
	for _, tc := range []struct {
		tput  []float64
		judge bool
		want  string
	}{
		{[]float64{100, 200, 400}, true, "No knee: throughput still rising at the last stage (32)\n"},
		{[]float64{100, 200, 205}, true, "No knee: p95 TTFT had not risen past --knee-factor × the first stage's by the last stage (32)\n"},
		{[]float64{100, 200, 400}, false, ""},
	} {
		s := &metrics.Summary{Knee: -1, Operating: -1, KneeVerdict: metrics.KneeVerdict{Knee: -1, Operating: -1, At: -1}}
		for i, v := range []float64{8, 16, 32} {
			s.Stages = append(s.Stages, st(v, tc.tput[i]))
		}
		var b bytes.Buffer
		ConsoleStages(&b, s, JudgedKnee(tc.judge))
		out := b.String()
		if !strings.HasSuffix(strings.Join(strings.Fields(out), " ")+"\n", strings.Join(strings.Fields(tc.want), " ")+"\n") || strings.Count(out, "nee") > strings.Count(tc.want, "nee") {
			t.Errorf("throughputs %v, judged %v: want the table to end %q:\n%s", tc.tput, tc.judge, tc.want, out)
		}
	}
}

func TestSig3(t *testing.T) {
	for _, tt := range []struct {
		in   float64
		want string
	}{{0, "0"}, {9585.39, "9585"}, {194.94, "195"}, {99.96, "100"}, {21.24, "21.2"}, {9.996, "10.0"}, {5.004, "5.00"},
		{0.1234, "0.123"}, {-21.24, "-21.2"}, {math.NaN(), "-"}, {math.Inf(1), "inf"}} {
		if got := sig3(tt.in); got != tt.want {
			t.Errorf("sig3(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestConsoleRepeatStages: a repeated sweep's table has one row per value,
// each headline metric's mean over the runs ± half its interval (the mean
// alone from one run), TTFT p95 or, not streamed, latency p95; a run that
// failed at a value is left out and named.
func TestConsoleRepeatStages(t *testing.T) {
	sum := func(tput, rps, p95 float64, ttft bool) *metrics.Summary {
		s := &metrics.Summary{Metrics: map[metrics.Tag]metrics.Distribution{metrics.RequestLatency: {Unit: "ms", P95: 2 * p95}},
			Run: map[metrics.Tag]float64{metrics.RequestCount: 8, metrics.OutputTokenThroughput: tput, metrics.RequestThroughput: rps}}
		if ttft {
			s.Metrics[metrics.TTFT] = metrics.Distribution{Unit: "ms", P95: p95}
		}
		return s
	}
	failed := &metrics.Summary{Run: map[metrics.Tag]float64{metrics.ErrorRequestCount: 8}}
	labels := []string{"run_0001", "run_0002", "run_0003"}
	stages := func(ttft bool) []RepeatStage {
		return []RepeatStage{
			{Mode: "concurrency", Value: 1, Repeats: Repeats{Labels: labels, Level: 0.95,
				Summaries: []*metrics.Summary{sum(500, 60, 7, ttft), sum(520, 62, 7.4, ttft), sum(510, 61, 7.2, ttft)}}},
			{Mode: "concurrency", Value: 2, Repeats: Repeats{Labels: labels, Level: 0.95,
				Summaries: []*metrics.Summary{sum(1000, 120, 8, ttft), sum(1100, 130, 9, ttft), failed}}},
			{Mode: "concurrency", Value: 4, Repeats: Repeats{Labels: labels, Level: 0.95,
				Summaries: []*metrics.Summary{sum(1500, 180, 20, ttft), failed, failed}}},
		}
	}
	var b bytes.Buffer
	ConsoleRepeatStages(&b, "surge profile: 3 runs of one plan", stages(true))
	golden(t, "console_repeat_stages.txt", b.Bytes())
	// Means 510, 1050 and 1500 tokens/s; t(0.975, 2) = 4.303 × 10/√3 = 24.8.
	for _, want := range []string{"mean ± half the 95% CI", "TTFT p95", "\n1               3   510 ± 24.8",
		"\n2               2  1050 ± 635 ", "\n4               1  1500         20.0 ", "concurrency 2: run_0003 failed: All 8 requests failed (left out)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table does not say %q:\n%s", want, b.String())
		}
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if len([]rune(l)) > 100 {
			t.Errorf("line wider than 100 columns: %q", l)
		}
	}
	b.Reset()
	ConsoleRepeatStages(&b, "not streamed", stages(false))
	if s := b.String(); strings.Contains(s, "TTFT") || !strings.Contains(s, "lat p95") || !strings.Contains(s, "14.4 ± ") {
		t.Errorf("not streamed, want latency p95:\n%s", s)
	}
}

// TestConsoleRepeatsFitsEighty: the repeated runs' table gives each run's
// value while they fit 80 columns, and their range when they would not.
func TestConsoleRepeatsFitsEighty(t *testing.T) {
	sum := func(i int) *metrics.Summary {
		x := float64(i)
		return &metrics.Summary{
			Metrics: map[metrics.Tag]metrics.Distribution{
				metrics.TTFT:           {Unit: "ms", Avg: 20.5 + x, P50: 20 + x, P99: 31.25 + x},
				metrics.RequestLatency: {Unit: "ms", Avg: 667.5 + x, P99: 1671.1 + x},
			},
			Run: map[metrics.Tag]float64{metrics.RequestCount: 8, metrics.OutputTokenThroughput: 1766.66 + x, metrics.RequestThroughput: 5.99 + x}}
	}
	for _, tc := range []struct {
		runs int
		want string
	}{{2, "1767.66 1768.66"}, {8, "runs' range"}} {
		r := Repeats{Level: 0.95}
		for i := range tc.runs {
			r.Labels, r.Summaries = append(r.Labels, fmt.Sprintf("run_%04d", i+1)), append(r.Summaries, sum(i+1))
		}
		var b bytes.Buffer
		ConsoleRepeats(&b, "surge profile: runs", r)
		if !strings.Contains(b.String(), tc.want) || !strings.Contains(b.String(), "mean ± half the 95% CI") {
			t.Errorf("%d runs: want %q:\n%s", tc.runs, tc.want, b.String())
		}
		for _, l := range strings.Split(b.String(), "\n") {
			if n := len([]rune(l)); n > DefaultWidth {
				t.Errorf("%d runs: a line of %d columns: %q", tc.runs, n, l)
			}
		}
	}
}
