package export

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/surgebench/surge/metrics"
	mstats "github.com/surgebench/surge/metrics/stats"
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
			if !hasProse(b.String(), w) {
				t.Errorf("%s: console lacks %q:\n%s", tc.name, w, b.String())
			}
		}
		for _, w := range tc.notWant {
			if hasProse(b.String(), w) {
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
	for _, wide := range []bool{false, true} {
		var b strings.Builder
		Console(&b, "surge profile: x @ localhost:9", &s, Wide(wide))
		out := b.String()
		for _, no := range []string{"Metric", "───", "avg", "p50"} {
			if strings.Contains(out, no) {
				t.Errorf("wide %v: an all-failed run prints %q:\n%s", wide, no, out)
			}
		}
		want := []string{"0 ok, 8 errors", "8 × connection_error: connection refused"}
		if wide {
			want[0] = "Error Request Count  8\n"
		}
		for _, want := range want {
			if !strings.Contains(out, want) {
				t.Errorf("wide %v: an all-failed run lacks %q:\n%s", wide, want, out)
			}
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
			OutputTokenThroughput: tput, TTFT: metrics.Distribution{P50: p95 * 0.9, P95: p95, Count: 16}, ITL: metrics.Distribution{P50: 5, Count: 16},
			Latency: metrics.Distribution{P95: 700, Count: 16}}
	}
	s := metrics.Summary{
		Metrics: map[metrics.Tag]metrics.Distribution{metrics.TTFT: {Unit: "ms", Avg: 30, Min: 20, Max: 95, P99: 94, P90: 90, P50: 22, Std: 20, Count: 48}},
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
	if stages < 0 || pooled < stages || strings.Index(out, "TTFT (ms)") < pooled {
		t.Errorf("want the stage table, then the pooled one labelled:\n%s", out)
	}
	if strings.Count(out, "recommended operating point") != 1 || strings.Count(out, "[sched-lag]") != 1 {
		t.Errorf("want the knee named once (under the stages) and the lag warning once:\n%s", out)
	}
	fitsWidth(t, out, DefaultWidth)
	b.Reset()
	Console(&b, "surge profile: mock @ http://127.0.0.1:1 (chat, concurrency 1,2,4)", &s, JudgedKnee(true), Wide(true))
	golden(t, "console_sweep_wide.txt", []byte(b.String()))
	if strings.Index(b.String(), "Metric") < strings.Index(b.String(), "All 3 stages pooled") || strings.Count(b.String(), "← knee") != 1 {
		t.Errorf("--wide: want AIPerf's table under the pooled label, the knee marked in words:\n%s", b.String())
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
		beside     []string
	}{
		// surge's own additions are named, not the template alone.
		{550, 21562, metrics.InputFromDataset, "avg 550 (each turn's prompt); the server's usage says 21562 (it also counts the system prompt, the user context and the conversation's history surge sent, and any chat template's tokens)",
			[]string{"the system prompt", "the user context", "the conversation's history"}},
		{550, 562, metrics.InputFromDataset, "the metrics use surge's count, avg 550 (the prompts as sent); the server's usage says 562 (its chat template adds tokens)\n", nil},
		{550, 300, metrics.InputFromDataset, "the server's usage says 300 (another tokenizer, or prompts it cut)\n", nil},
		{550, 550, metrics.InputFromDataset, "", nil},
		{550, 562, metrics.InputFromUsage, "", nil},
	} {
		s := metrics.Summary{InputTokenSource: tc.source, Metrics: map[metrics.Tag]metrics.Distribution{
			metrics.ISL: {Avg: tc.isl}, metrics.UsagePrompt: {Avg: tc.usage}}}
		var b strings.Builder
		Console(&b, "t", &s, BesidePrompt(tc.beside...))
		got := strings.Count(b.String(), "Input sequence length:")
		if tc.want == "" && got != 0 || tc.want != "" && (got != 1 || !hasProse(b.String(), tc.want)) {
			t.Errorf("ISL %v, usage %v (%s): want %q:\n%s", tc.isl, tc.usage, tc.source, tc.want, b.String())
		}
	}
}

// hasProse reports whether out says want, however its lines were wrapped:
// both compared with their runs of spaces and newlines made one space.
func hasProse(out, want string) bool {
	return strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " "))
}

// fitsWidth checks that no line of out is wider than width, but for a
// single word that is longer (a path, a URL).
func fitsWidth(t *testing.T, out string, width int) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > width && strings.Contains(strings.TrimSpace(l), " ") {
			t.Errorf("a line of %d columns, over %d: %q", n, width, l)
		}
	}
}

// TestConsoleTrimMarked: under --trim auto the rows that are the steady
// state's say so in the wide table (TTFT's, not TTFT From Send's, which
// covers the whole run); the headline says whose numbers it shows.
func TestConsoleTrimMarked(t *testing.T) {
	t.Parallel()
	d := func(p50 float64) metrics.Distribution {
		return metrics.Distribution{Unit: "ms", Avg: p50, P50: p50, P90: p50, P99: p50, Count: 100}
	}
	s := metrics.Summary{
		Metrics: map[metrics.Tag]metrics.Distribution{metrics.TTFT: d(20), metrics.TTFTFromSend: d(25), metrics.ITL: d(5)},
		Run:     map[metrics.Tag]float64{metrics.RequestCount: 120, metrics.OutputTokenThroughput: 900, metrics.TotalTokenThroughput: 5000},
		SteadyState: &metrics.SteadyState{Found: true, Applied: true, Requests: 100, Method: "MSER-5", BinSec: 0.1,
			RunEndNs: 20e9, StartNs: 2e9, EndNs: 18e9, Metrics: map[metrics.Tag]metrics.Distribution{metrics.TTFT: d(20), metrics.ITL: d(5)}},
	}
	var wide strings.Builder
	Console(&wide, "t", &s, Wide(true))
	for _, want := range []string{"Time to First Token (steady state) (ms)", "Inter Token Latency (steady state) (ms)",
		"Output Token Throughput (steady state) (tokens/sec)", "\nTime to First Token From Send (ms) ", "\nTotal Token Throughput (tokens/sec) ",
		"the rows so marked are the steady state's 100 requests"} {
		if !strings.Contains(wide.String(), want) {
			t.Errorf("--wide lacks %q:\n%s", want, wide.String())
		}
	}
	var fit strings.Builder
	Console(&fit, "t", &s)
	if !strings.Contains(fit.String(), "steady state, 100 requests") || strings.Contains(fit.String(), "TTFT from send") ||
		!strings.Contains(fit.String(), "120 ok, 0 errors (the whole run)") {
		t.Errorf("the headline does not say it is the steady state's, or mixes in a whole-run view:\n%s", fit.String())
	}
}

// TestStagesDashWithoutStreaming: a stage that measured no TTFT or ITL (a
// run that read each answer whole) shows "–" for them, never 0, in both
// tables; its latency is measured and shown.
func TestStagesDashWithoutStreaming(t *testing.T) {
	t.Parallel()
	st := func(v float64) metrics.StageSummary {
		return metrics.StageSummary{Mode: "concurrency", Value: v, RequestCount: 8, OutputTokenThroughput: 100 * v, RequestThroughput: v,
			Latency: metrics.Distribution{P95: 640, Count: 8}}
	}
	s := &metrics.Summary{Stages: []metrics.StageSummary{st(1), st(2)}, Knee: -1, Operating: -1}
	for _, wide := range []bool{false, true} {
		var b strings.Builder
		ConsoleStages(&b, s, Wide(wide))
		for _, row := range strings.Split(strings.TrimSpace(b.String()), "\n")[3:] {
			f := strings.Fields(row)
			if strings.Count(row, "–") != 3 || f[len(f)-1] == "0" || !strings.Contains(row, "640") {
				t.Errorf("wide %v: row %q, want – for TTFT p50, p95 and ITL and the latency", wide, row)
			}
		}
	}
}

// TestRequestsForAndTheDocs: how many requests a percentile takes to lose
// its † (10 beyond it), and docs/precision.md's table says the same, with
// the fewest that bound both its ends.
func TestRequestsForAndTheDocs(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/precision.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p    float64
		want int
	}{{50, 20}, {90, 100}, {95, 200}, {99, 1000}, {99.9, 10000}} {
		if got := RequestsFor(tc.p); got != tc.want {
			t.Errorf("RequestsFor(%v) = %d, want %d", tc.p, got, tc.want)
		}
		if tc.p == 99.9 {
			continue
		}
		row := fmt.Sprintf("| p%v | %s | %d |", tc.p, thousands(tc.want), mstats.MinBounded(tc.p/100, metrics.PrecisionLevel))
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/precision.md lacks the row %q", row)
		}
	}
}

// TestHeadlineProseWraps: a headline row of prose (the throughputs, an
// interval that could not be estimated) wraps under its own text at the
// width, never past it.
func TestHeadlineProseWraps(t *testing.T) {
	t.Parallel()
	s := metrics.Summary{
		Run: map[metrics.Tag]float64{metrics.RequestCount: 120, metrics.OutputTokenThroughput: 465, metrics.RequestThroughput: 58.1,
			metrics.InputTokenThroughput: 123456},
		Precision: &metrics.Precision{Throughputs: []metrics.RateCI{
			{Metric: metrics.OutputTokenThroughput, Value: 465, Lo: 20, Hi: 910, Batches: 7},
			{Metric: metrics.RequestThroughput, Value: 58.1, Lo: math.Inf(-1), Hi: math.Inf(1), Batches: 7, Identical: true},
		}},
	}
	var out strings.Builder
	Console(&out, "t", &s, Width(80))
	text := out.String()
	for _, line := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(line); n > 80 {
			t.Errorf("a line of %d columns: %q", n, line)
		}
	}
	if !strings.Contains(strings.Join(strings.Fields(text), " "), "58.1 requests/s (interval not estimable)") {
		t.Errorf("the throughput row lost its words:\n%s", text)
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
	if strings.ContainsAny(out, "\x1b\x07\u202e") || !hasProse(out, `2 × HTTP 500 x\x1b[31m: \x1b]0;pwned\x07\x1b[2J\u202e`) {
		t.Errorf("%q", out)
	}
	if w := FormatWarning("server says \x1b[2J", true, 0); strings.Contains(w, "\x1b") {
		t.Errorf("warning %q", w)
	}
}
