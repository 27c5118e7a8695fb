package search

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// The searches are judged against a server of known capacity: K slots,
// each request holding one for a fixed service time S = TTFT + (out−1)·ITL
// and waiting in a FIFO for the first free one, so the capacity is K / S
// requests/s, or a concurrency of K. That server is a model (modelServer)
// fed the arrival of each request at the mock's handler: its queue wait
// is computed on that clock from the arrivals alone, and a request's TTFT
// is that wait plus the mock's TTFT. A busy machine makes the client read
// late and the mock's timers fire late, by tens of ms under -race with
// every core taken, and neither moves the model. (Judged by the client's
// clock, or by the mock's own --max-running queue, whose slots stay busy
// while its late timers catch up, the searches failed 3 runs in 5 on such
// a machine.) Nor does a client that stalls and then catches up at once:
// at a request rate r the model takes arrivals at most r a second, as the
// schedule offers them, so below the capacity nothing waits, ever, and
// above it the queue grows by the excess. A search that misread a probe,
// or a controller that applied another value, still finds the wrong
// capacity.
const (
	mockTTFT = 25 * time.Millisecond
	mockITL  = 25 * time.Millisecond
	mockOut  = 4 // few events: the client must keep up on a starved machine
)

var mockService = mockTTFT + (mockOut-1)*mockITL // 100 ms

// modelServer passes requests on to the mock and keeps, per X-Request-ID,
// the TTFT the K-slot model gives it (ms).
type modelServer struct {
	next  http.Handler
	start time.Time
	mu    sync.Mutex
	free  []time.Duration // when each slot is next free, since start
	gap   time.Duration   // the least time between arrivals (1/rate; 0: any)
	last  time.Duration   // the latest arrival the model took
	ttft  map[string]float64
}

func newModelServer(k int, next http.Handler) *modelServer {
	return &modelServer{next: next, start: time.Now(), free: make([]time.Duration, k), ttft: map[string]float64{}}
}

func (m *modelServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	arrival := max(time.Since(m.start), m.last+m.gap) // under the lock: arrivals in order
	m.last = arrival
	slot := 0
	for i, f := range m.free {
		if f < m.free[slot] {
			slot = i
		}
	}
	admitted := max(arrival, m.free[slot])
	m.free[slot] = admitted + mockService
	m.ttft[r.Header.Get("X-Request-ID")] = float64(admitted-arrival+mockTTFT) / float64(time.Millisecond)
	m.mu.Unlock()
	m.next.ServeHTTP(w, r)
}

// reset empties the model's queue when a probe starts, as the live
// search lets a real server's queue drain after a failed probe (this
// mock's own queue is always empty), and takes the probe's request rate
// (0: a concurrency probe). Requests still in flight then are sent before
// the probe's settling time ends, and so not judged.
func (m *modelServer) reset(rate float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Since(m.start)
	for i := range m.free {
		m.free[i] = min(m.free[i], now)
	}
	m.gap, m.last = 0, now
	if rate > 0 {
		m.gap = time.Duration(float64(time.Second) / rate)
		m.last = now - m.gap
	}
}

// judged hands the prober each record with the model's TTFT in place of
// the client's.
type judged struct {
	next  metrics.RecordSink
	model *modelServer
	t     *testing.T
}

func (j judged) WriteRecord(r *metrics.Record, v *metrics.Values, good bool) {
	if !r.Failed() {
		j.model.mu.Lock()
		ttft, ok := j.model.ttft[r.RequestID]
		j.model.mu.Unlock()
		if !ok {
			j.t.Errorf("request %s never reached the mock", r.RequestID)
		}
		own := *v
		own.TTFT = ttft
		v = &own
	}
	j.next.WriteRecord(r, v, good)
}

// searchMock runs a search against the mock judged as a k-slot server and
// returns its result and the run's summary.
func searchMock(t *testing.T, k int, mode string, cfg Config, objectives string) (Result, *metrics.Summary) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	model := newModelServer(k, mockserver.New(mockserver.Config{TTFT: mockTTFT, ITL: mockITL}))
	mock := httptest.NewServer(model)
	defer mock.Close()
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
	// The mock has no queue, so a rate probe's completions come at the
	// rate the client sent: one it could not deliver on a starved machine
	// (only 19 of 22 requests/s, which the model serves without a queue)
	// would pass at the default 0.85 and overstate the capacity.
	prober := NewLive(ctl, Judging{Objectives: objs, MinDuration: time.Second, MaxDuration: 3 * time.Second, MinRequests: 30, KeepUp: 0.95}, clock)
	col := metrics.NewCollector(metrics.WithClock(clock), metrics.WithSink(judged{prober, model, t}))
	prober.InFlight = func() int64 { return col.Snapshot().InFlight }
	gen, err := loadgen.New(mock.URL, &endpoint.Endpoint{Kind: endpoint.Chat, Model: "mock", Streaming: true}, ds, col, loadgen.WithStart(start))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		onStage := func(stage int, st loadgen.ControlState) {
			rate := 0.0
			if st.Mode == loadgen.ControlRequestRate {
				rate = st.Value
			}
			model.reset(rate)
			prober.OnStage(stage, st)
		}
		done <- gen.RunLive(ctx, loadgen.Live{Control: ctl, OnStage: onStage,
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
		t.Skip("a capacity search takes about ten seconds")
	}
	t.Parallel()
	// Below 40 requests/s no request waits; above it the queue grows by
	// the excess every second (by 100 ms a second at 44), past the 50 ms
	// of wait the limit allows within a probe (1 s).
	const k = 4
	known := k / mockService.Seconds() // 40 requests/s
	// From three quarters of the capacity: a probe needs 30 requests,
	// 1.5 s at 20 a second; and the doubling lands nearer, 60, so the
	// bisection takes two probes fewer than from 20 (7 s rather than 9).
	res, sum := searchMock(t, k, loadgen.ControlRequestRate, Config{Start: 30, Resolution: 0.05}, "time_to_first_token:p95:75")
	if !res.Found {
		t.Fatalf("no capacity found: %s", res.Note)
	}
	if math.Abs(res.Capacity-known)/known > 0.10 {
		t.Errorf("capacity %.1f requests/s, the mock's model capacity %.1f: more than 10%% off", res.Capacity, known)
	}
	checkProbesAreStages(t, res, sum, loadgen.ControlRequestRate)
}

func TestSearchFindsTheMockConcurrencyCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("a capacity search takes about ten seconds")
	}
	t.Parallel()
	// At concurrency K a request never waits for a slot: TTFT is 25 ms
	// exactly (a client sends its next request after its last one ended,
	// no sooner than the model freed its slot). At K+1 the mock (which has
	// no queue of its own) answers each client as fast as at K, so the
	// model's queue grows by a request every service time, and with it
	// TTFT, past 65 ms within half a second.
	const k = 4
	// From half the capacity: a probe needs 30 requests, 3 s at 1 at once.
	res, sum := searchMock(t, k, loadgen.ControlConcurrency, Config{Start: 2, Integer: true}, "time_to_first_token:p95:65")
	if !res.Found || res.Capacity != k {
		t.Errorf("capacity %v (found %v), the model server has %d slots", res.Capacity, res.Found, k)
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
