package search

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/metrics"
)

// failedSamples makes n failed samples 10 ms apart, errs[i%len(errs)]
// each.
func failedSamples(n int, errs ...metrics.Error) []Sample {
	s := samples(n, func(int) float64 { return 0 })
	for i := range s {
		s[i].Failed, s[i].Err = true, errs[i%len(errs)]
	}
	return s
}

// TestJudgeNamesTheCause: a probe whose every request failed is failed by
// its errors, the top one named (not by a latency it has none of); one
// with too few requests after its maximum is inconclusive and extended.
func TestJudgeNamesTheCause(t *testing.T) {
	t.Parallel()
	ttft := []Objective{{Tag: "time_to_first_token", Percentile: 95, Limit: 100}}
	j := Judging{Objectives: ttft, MinDuration: 2 * time.Second, MaxDuration: 8 * time.Second, MinRequests: 40}
	cut := metrics.Error{Code: 200, Type: "stream_error", Message: "stream cut in the middle of an event"}
	refused := metrics.Error{Type: "connection_error", Message: "connection refused: 127.0.0.1:8080"}
	for _, tc := range []struct {
		name     string
		samples  []Sample
		elapsed  time.Duration
		verdict  Verdict
		limiting string
		reason   string
	}{
		{"every request failed", failedSamples(12, cut), time.Second, Fail, "errors: stream_error",
			"every request failed (12 of 12), most with stream_error: stream cut in the middle of an event"},
		{"the top error of several", failedSamples(12, cut, refused, cut), time.Second, Fail, "errors: stream_error",
			"every request failed (12 of 12), most with stream_error: stream cut in the middle of an event (8×)"},
		{"a few, after the minimum", failedSamples(3, refused), 3 * time.Second, Fail, "errors: connection_error",
			"every request failed (3 of 3), most with connection_error: connection refused: 127.0.0.1:8080"},
		{"a few, early", failedSamples(3, refused), time.Second, Undecided, "", "collecting"},
		{"too few after the maximum", samples(20, func(int) float64 { return 50 }), 9 * time.Second, Undecided, "",
			"inconclusive (20 of 40 needed): extending"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := j.Judge(tc.samples, tc.elapsed)
			if got.Verdict != tc.verdict || got.Limiting != tc.limiting || !strings.Contains(got.Reason, tc.reason) {
				t.Errorf("%+v, want %v limited by %q, reason %q", got, tc.verdict, tc.limiting, tc.reason)
			}
			if strings.Contains(got.Reason, "n/a") || strings.Contains(got.Limiting, "request_count") {
				t.Errorf("reason %q, limiting %q name no real cause", got.Reason, got.Limiting)
			}
		})
	}
}

func TestTooSlow(t *testing.T) {
	t.Parallel()
	j := Judging{MinDuration: time.Second, MaxDuration: 4 * time.Second, MinRequests: 40} // patience 2 min
	for _, tc := range []struct {
		n       int
		elapsed time.Duration
		want    bool
	}{
		{0, 5 * time.Second, false},  // before 1.5 × the maximum
		{0, 6 * time.Second, true},   // nothing finished by then
		{10, 6 * time.Second, false}, // 40 by 24 s at this rate
		{2, 7 * time.Second, false},  // two: too few to project yet
		{2, 13 * time.Second, true},  // 40 by 260 s: past the patience
		{4, 13 * time.Second, true},  // 40 by 130 s: past it too
		{5, 13 * time.Second, false}, // 40 by 104 s
		{39, 2 * time.Minute, true},  // the patience spent
		{40, time.Hour, false},       // enough: the judge decides
	} {
		if got := j.TooSlow(tc.n, tc.elapsed); got != tc.want {
			t.Errorf("%d requests after %s: TooSlow %v, want %v", tc.n, tc.elapsed, got, tc.want)
		}
	}
}

// TestRunStopsAtAnInconclusiveProbe: the search ends at a probe it could
// not judge, and says what it knows, limited by nothing.
func TestRunStopsAtAnInconclusiveProbe(t *testing.T) {
	t.Parallel()
	p := ProberFunc(func(_ context.Context, v float64) (Probe, error) {
		if v > 2 {
			return Probe{Judgement: Judgement{Verdict: Inconclusive, Reason: "inconclusive (3 of 40 needed after 30s): too few requests finish at this load to judge it"}}, nil
		}
		return Probe{Judgement: Judgement{Verdict: Pass, Stable: true, Limiting: "p95(time_to_first_token)"}}, nil
	})
	res, err := Run(context.Background(), Config{Start: 1, Integer: true}, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "the probe at 4 was inconclusive (3 of 40 needed after 30s): too few requests finish at this load to judge it: the capacity is at least 2 (passed)"
	if !res.Inconclusive || len(res.Probes) != 3 || res.Note != want || res.Limiting != "" || res.Found {
		t.Errorf("%+v\nwant 3 probes, the note %q", res, want)
	}
}

// liveSearch runs a concurrency search from 1 against a mock of cfg,
// judged by j, and returns its result.
func liveSearch(t *testing.T, cfg mockserver.Config, j Judging) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mock := httptest.NewServer(mockserver.New(cfg))
	defer mock.Close()
	ds := &datasets.Dataset{Name: "test"}
	for i := range 8 {
		ds.Conversations = append(ds.Conversations, datasets.Conversation{ID: fmt.Sprint(i),
			Turns: []datasets.Turn{{Text: fmt.Sprintf("prompt %d", i), InputTokens: 8, MaxTokens: 4}}})
	}
	start := time.Now()
	clock := func() int64 { return int64(time.Since(start)) }
	ctl, err := loadgen.NewController(loadgen.ControlConcurrency, 1)
	if err != nil {
		t.Fatal(err)
	}
	prober := NewLive(ctl, j, clock)
	prober.Settle = time.Millisecond
	col := metrics.NewCollector(metrics.WithClock(clock), metrics.WithSink(prober))
	prober.InFlight = func() int64 { return col.Snapshot().InFlight }
	gen, err := loadgen.New(mock.URL, &endpoint.Endpoint{Kind: endpoint.Chat, Model: "mock", Streaming: true}, ds, col, loadgen.WithStart(start))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- gen.RunLive(ctx, loadgen.Live{Control: ctl, OnStage: prober.OnStage}) }()
	res, err := Run(ctx, Config{Start: 1, Integer: true, Max: 2}, prober, nil)
	ctl.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	col.Close()
	return res
}

// TestLiveVerdictsNameTheCause: against a server whose every answer is an
// error, the probe fails by that error; against one too slow to finish the
// requests a verdict needs, the search is inconclusive, not failed.
func TestLiveVerdictsNameTheCause(t *testing.T) {
	t.Parallel()
	objs := []Objective{{Tag: "time_to_first_token", Percentile: 95, Limit: 100}}
	j := Judging{Objectives: objs, MinDuration: 200 * time.Millisecond, MaxDuration: 400 * time.Millisecond, MinRequests: 10}
	res := liveSearch(t, mockserver.Config{ErrorRate: 1}, j)
	if len(res.Probes) == 0 || res.Probes[0].Verdict != Fail || !strings.HasPrefix(res.Probes[0].Reason, "every request failed") ||
		!strings.HasPrefix(res.Limiting, "errors: ") {
		t.Errorf("all errors: %+v", res)
	}
	res = liveSearch(t, mockserver.Config{TTFT: 2 * time.Second}, j)
	if !res.Inconclusive || len(res.Probes) != 1 || res.Probes[0].Verdict != Inconclusive || !strings.Contains(res.Note, "inconclusive (0 of 10 needed") ||
		strings.Contains(res.Note, "request_count") {
		t.Errorf("too slow: %+v", res)
	}
}
