package search

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// The mock with --max-running K serves K requests at once, each for
// TTFT + (out−1)·ITL; more wait in its queue. Its capacity is therefore
// K / service time requests/s, or a concurrency of K.
//
// The service time is long (200 ms) and the latency objectives generous
// next to it, so that a loaded machine's scheduling noise (tens of ms)
// cannot pass for queueing: above capacity the queue grows without bound
// and the probe fails whatever the headroom.
const (
	mockTTFT = 50 * time.Millisecond
	mockITL  = 10 * time.Millisecond
	mockOut  = 16
)

var mockService = mockTTFT + (mockOut-1)*mockITL // 200 ms

// searchMock runs a search against the embedded mock and returns its
// result and the run's summary.
func searchMock(t *testing.T, k int, mode string, cfg Config, objectives string) (Result, *metrics.Summary) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	mock, err := mockserver.Start(ctx, "127.0.0.1:0", mockserver.Config{TTFT: mockTTFT, ITL: mockITL, MaxRunning: k})
	if err != nil {
		t.Fatal(err)
	}
	defer mock.Close(context.Background())
	objs, err := ParseObjectives("--slo", objectives)
	if err != nil {
		t.Fatal(err)
	}
	ds := &datasets.Dataset{Name: "test"}
	for i := range 64 {
		ds.Conversations = append(ds.Conversations, datasets.Conversation{ID: fmt.Sprint(i),
			Turns: []datasets.Turn{{Text: fmt.Sprintf("prompt %d", i), InputTokens: 8, MaxTokens: mockOut}}})
	}
	start := time.Now()
	clock := func() int64 { return int64(time.Since(start)) }
	ctl, err := loadgen.NewController(mode, cfg.Start)
	if err != nil {
		t.Fatal(err)
	}
	prober := NewLive(ctl, Judging{Objectives: objs, MinDuration: 2 * time.Second, MaxDuration: 6 * time.Second, MinRequests: 30}, clock)
	col := metrics.NewCollector(metrics.WithClock(clock), metrics.WithSink(prober))
	prober.InFlight = func() int64 { return col.Snapshot().InFlight }
	gen, err := loadgen.New(mock.URL(), &endpoint.Endpoint{Kind: endpoint.Chat, Model: "mock", Streaming: true}, ds, col, loadgen.WithStart(start))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- gen.RunLive(ctx, loadgen.Live{Control: ctl, OnStage: prober.OnStage,
			Arrival: func(rate float64, _ int) (schedule.Schedule, error) { return schedule.ConstantRate(rate), nil }})
	}()
	began := time.Now()
	res, err := Run(ctx, cfg, prober, func(s Status) { t.Logf("%s [%v, %v) probing %v", s.Phase, s.Lo, s.Hi, s.Probing) })
	ctl.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	sum := col.Close()
	for _, p := range res.Probes {
		t.Logf("probe stage %d %v: %s %s (%d requests, %.1fs) %v", p.Stage, p.Value, p.Verdict, p.Reason, p.Requests, p.DurationSec, p.Observed)
	}
	t.Logf("%s in %s", res.Note, time.Since(began).Round(time.Second))
	return res, sum
}

func TestSearchFindsTheMockRateCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("a capacity search takes about half a minute")
	}
	const k = 8
	known := k / mockService.Seconds() // 40 requests/s
	res, sum := searchMock(t, k, loadgen.ControlRequestRate, Config{Start: 10, Resolution: 0.05}, "time_to_first_token:p95:250")
	if !res.Found {
		t.Fatalf("no capacity found: %s", res.Note)
	}
	if math.Abs(res.Capacity-known)/known > 0.10 {
		t.Errorf("capacity %.1f requests/s, the mock's known capacity %.1f: more than 10%% off", res.Capacity, known)
	}
	checkProbesAreStages(t, res, sum, loadgen.ControlRequestRate)
}

func TestSearchFindsTheMockConcurrencyCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("a capacity search takes about half a minute")
	}
	// At concurrency K+1 every request waits for a slot (≥ 50 ms, a
	// quarter of the service time, when the slots are staggered; 200 ms
	// for one in five when they are in step), so p95 TTFT ≥ 100 ms.
	const k = 4
	res, sum := searchMock(t, k, loadgen.ControlConcurrency, Config{Start: 1, Integer: true}, "time_to_first_token:p95:90")
	if !res.Found || res.Capacity != k {
		t.Errorf("capacity %v (found %v), the mock's --max-running is %d", res.Capacity, res.Found, k)
	}
	checkProbesAreStages(t, res, sum, loadgen.ControlConcurrency)
}

// checkProbesAreStages: every probe is a stage of the summary, at its value.
func checkProbesAreStages(t *testing.T, res Result, sum *metrics.Summary, mode string) {
	t.Helper()
	for _, p := range res.Probes {
		if p.Stage >= len(sum.Stages) {
			t.Errorf("probe at stage %d, summary has %d stages", p.Stage, len(sum.Stages))
			continue
		}
		st := sum.Stages[p.Stage]
		if st.Mode != mode || st.Value != p.Value || st.RequestCount == 0 {
			t.Errorf("probe %v is stage %d = %s %v with %d requests", p.Value, p.Stage, st.Mode, st.Value, st.RequestCount)
		}
	}
}
