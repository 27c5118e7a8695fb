package export

import (
	"strings"
	"testing"

	"github.com/surgebench/surge/metrics"
)

// TestConsoleSaysWhoFailedAndWhatWasResent: past 1% of requests the
// re-sends get their sentence (below, the short count); errors that were
// the client's own are said to be.
func TestConsoleSaysWhoFailedAndWhatWasResent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		s       metrics.Summary
		want    []string
		notWant []string
	}{
		{"few re-sends", metrics.Summary{Run: map[metrics.Tag]float64{metrics.RequestCount: 1000}, ConnectionRetries: 5},
			[]string{"Connection retries: 5"}, []string{"Re-sent requests"}},
		{"many re-sends, none read", metrics.Summary{Run: map[metrics.Tag]float64{metrics.RequestCount: 900, metrics.ErrorRequestCount: 100}, ConnectionRetries: 260},
			[]string{"Re-sent requests: 260 of 1000 (26.0%)", "it never read them", "none was sent twice", "--connection-reuse-strategy never"},
			[]string{"Connection retries:", "saw them twice"}},
		{"many re-sends, all possibly read", metrics.Summary{Run: map[metrics.Tag]float64{metrics.RequestCount: 1000}, ConnectionRetries: 40, RetryDuplicates: 40},
			[]string{"Re-sent requests: 40 of 1000", "may have read them", "saw them twice", "--connection-retries 0"}, []string{"never read"}},
		{"many re-sends, some possibly read", metrics.Summary{Run: map[metrics.Tag]float64{metrics.RequestCount: 1000}, ConnectionRetries: 40, RetryDuplicates: 15},
			[]string{"25 it never read; 15 it closed on after they were written"}, nil},
		{"client out of descriptors", metrics.Summary{Run: map[metrics.Tag]float64{metrics.RequestCount: 10, metrics.ErrorRequestCount: 7},
			Errors: []metrics.ErrorCount{
				{Details: metrics.Error{Type: metrics.ErrClientResources, Message: "out of file descriptors"}, Count: 5},
				{Details: metrics.Error{Code: 500, Type: "server_error"}, Count: 2},
			}},
			[]string{"5 of these failed on the client's side"}, nil},
		{"server errors only", metrics.Summary{Run: map[metrics.Tag]float64{metrics.ErrorRequestCount: 2},
			Errors: []metrics.ErrorCount{{Details: metrics.Error{Code: 500, Type: "server_error"}, Count: 2}}},
			nil, []string{"client's side"}},
	} {
		var b strings.Builder
		Console(&b, "t", &tc.s)
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: console lacks %q:\n%s", tc.name, w, b.String())
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(b.String(), w) {
				t.Errorf("%s: console has %q:\n%s", tc.name, w, b.String())
			}
		}
	}
}

// TestConsoleAllFailed: a run whose every request failed prints its counts
// and errors, and no empty table.
func TestConsoleAllFailed(t *testing.T) {
	t.Parallel()
	s := metrics.Summary{Run: map[metrics.Tag]float64{metrics.RequestCount: 0, metrics.ErrorRequestCount: 8},
		Errors: []metrics.ErrorCount{{Details: metrics.Error{Type: "connection_error", Message: "connection refused: localhost:9"}, Count: 8}}}
	var b strings.Builder
	Console(&b, "surge profile: x @ localhost:9", &s)
	out := b.String()
	for _, no := range []string{"Metric", "───", "avg"} {
		if strings.Contains(out, no) {
			t.Errorf("an all-failed run prints %q:\n%s", no, out)
		}
	}
	for _, want := range []string{"Error Request Count  8\n", "8 × connection_error: connection refused"} {
		if !strings.Contains(out, want) {
			t.Errorf("an all-failed run lacks %q:\n%s", want, out)
		}
	}
}

// TestConsoleSweep: a sweep's console opens with its stage table (the
// knee named under it), then the table pooled over its stages, labelled;
// the knee's warning is not repeated, the others are printed once.
func TestConsoleSweep(t *testing.T) {
	t.Parallel()
	st := func(v, tput, p95 float64) metrics.StageSummary {
		return metrics.StageSummary{Mode: "concurrency", Value: v, RequestCount: 16, RequestThroughput: tput / 100,
			OutputTokenThroughput: tput, TTFT: metrics.Distribution{P50: p95 * 0.9, P95: p95}, ITL: metrics.Distribution{P50: 5}}
	}
	s := metrics.Summary{
		Metrics: map[metrics.Tag]metrics.Distribution{metrics.TTFT: {Unit: "ms", Avg: 30, Min: 20, Max: 95, P99: 94, P90: 90, P50: 22, Std: 20}},
		Run:     map[metrics.Tag]float64{metrics.RequestCount: 48, metrics.RequestThroughput: 12.5},
		Stages:  []metrics.StageSummary{st(1, 100, 20), st(2, 200, 22), st(4, 205, 90)},
		Knee:    2, Operating: 1,
		Warnings: []string{
			"knee at concurrency 4: p95 TTFT rose more than 2× over the first stage while throughput gained < 10%; recommended operating point: concurrency 2",
			"scheduler lag p99 12.0 ms exceeds 10 ms: the client fell behind its schedule",
			"scheduler lag p99 12.0 ms exceeds 10 ms: the client fell behind its schedule",
		},
	}
	s.Stages[2].Knee = true
	var b strings.Builder
	Console(&b, "surge profile: mock @ http://127.0.0.1:1 (chat, concurrency 1,2,4)", &s, JudgedKnee(true))
	out := b.String()
	golden(t, "console_sweep.txt", []byte(out))
	stages, pooled := strings.Index(out, "Stages (latencies in ms)"), strings.Index(out, "All 3 stages pooled")
	if stages < 0 || pooled < stages || strings.Index(out, "Metric") < pooled {
		t.Errorf("want the stage table, then the pooled one labelled:\n%s", out)
	}
	if strings.Count(out, "nee at") != 1 || strings.Count(out, "[sched-lag]") != 1 {
		t.Errorf("want the knee named once (under the stages) and the lag warning once:\n%s", out)
	}
}

// TestConsoleInputCounts: where the server's prompt counts differ from
// surge's, one line says the metrics use surge's and why they may differ;
// where they agree, or the metrics use the server's, nothing.
func TestConsoleInputCounts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		isl, usage float64
		source     string
		want       string
	}{
		{550, 562, metrics.InputFromDataset, "the metrics use surge's count, avg 550 (the prompts as sent); the server's usage says 562 (its chat template adds tokens)\n"},
		{550, 300, metrics.InputFromDataset, "the server's usage says 300 (another tokenizer, or prompts it cut)\n"},
		{550, 550, metrics.InputFromDataset, ""},
		{550, 562, metrics.InputFromUsage, ""},
	} {
		s := metrics.Summary{InputTokenSource: tc.source, Metrics: map[metrics.Tag]metrics.Distribution{
			metrics.ISL: {Avg: tc.isl}, metrics.UsagePrompt: {Avg: tc.usage}}}
		var b strings.Builder
		Console(&b, "t", &s)
		got := strings.Count(b.String(), "Input sequence length:")
		if tc.want == "" && got != 0 || tc.want != "" && (got != 1 || !strings.Contains(b.String(), tc.want)) {
			t.Errorf("ISL %v, usage %v (%s): want %q:\n%s", tc.isl, tc.usage, tc.source, tc.want, b.String())
		}
	}
}

// TestConsoleErrorsShownEscaped: a server's error message with terminal
// escapes (a window title, a screen clear) is printed escaped.
func TestConsoleErrorsShownEscaped(t *testing.T) {
	t.Parallel()
	s := metrics.Summary{Run: map[metrics.Tag]float64{metrics.RequestCount: 0, metrics.ErrorRequestCount: 2},
		Errors: []metrics.ErrorCount{{Details: metrics.Error{Code: 500, Type: "x\x1b[31m", Message: "\x1b]0;pwned\x07\x1b[2J\u202e"}, Count: 2}}}
	var b strings.Builder
	Console(&b, "surge profile", &s)
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07\u202e") || !strings.Contains(out, `2 × HTTP 500 x\x1b[31m: \x1b]0;pwned\x07\x1b[2J\u202e`) {
		t.Errorf("%q", out)
	}
	if w := FormatWarning("server says \x1b[2J", true); strings.Contains(w, "\x1b") {
		t.Errorf("warning %q", w)
	}
}
