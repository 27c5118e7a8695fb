package loadgen

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surgebench/surge/metrics"
)

// gaugeServer streams a short answer after hold and tracks how many
// requests it serves at once, so the test judges the cap by what the server
// saw. While gather is set, each request first waits (up to 2 s) until that
// many are in flight, so a cap is reached however slowly a busy machine
// runs the client.
type gaugeServer struct {
	hold     time.Duration
	gather   atomic.Int64
	inFlight atomic.Int64
	mu       sync.Mutex
	peak     int64
	requests atomic.Int64
}

func (s *gaugeServer) resetPeak() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.peak
	s.peak = s.inFlight.Load()
	return p
}

func (s *gaugeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	s.mu.Lock()
	s.peak = max(s.peak, n)
	s.mu.Unlock()
	if g := s.gather.Load(); g > 0 {
		for deadline := time.Now().Add(2 * time.Second); s.inFlight.Load() < g && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	select {
	case <-time.After(s.hold):
	case <-r.Context().Done():
		return
	}
	for i := range 3 {
		fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\" t%d\"}}]}\n\n", i)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// stageSink counts records per stage.
type stageSink struct {
	mu     sync.Mutex
	byStg  map[int]int
	failed int
}

func (s *stageSink) WriteRecord(r *metrics.Record, _ *metrics.Values, _ bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byStg == nil {
		s.byStg = map[int]int{}
	}
	s.byStg[r.Stage]++
	if r.Failed() {
		s.failed++
	}
}

func (s *stageSink) count(stage int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byStg[stage]
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRunLiveStagesFollowTheController(t *testing.T) {
	t.Parallel()
	srv := &gaugeServer{hold: 20 * time.Millisecond}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	start := time.Now()
	sink := &stageSink{}
	col := metrics.NewCollector(metrics.WithSink(sink), metrics.WithClock(func() int64 { return int64(time.Since(start)) }))
	g, err := New(ts.URL, chat(true), testDataset(t, 8), col, WithStart(start))
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := NewController(ControlConcurrency, 2)
	if err != nil {
		t.Fatal(err)
	}
	var started []ControlState
	var startedMu sync.Mutex
	done := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	go func() {
		done <- g.RunLive(ctx, Live{Control: ctl, OnStage: func(_ int, st ControlState) {
			startedMu.Lock()
			started = append(started, st)
			startedMu.Unlock()
		}})
	}()

	waitFor(t, "stage 0 records", func() bool { return sink.count(0) >= 10 })
	if p := srv.resetPeak(); p > 2 {
		t.Errorf("server saw %d requests at once under --concurrency 2", p)
	}
	srv.gather.Store(4)
	if _, err := ctl.Double(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "stage 1 records", func() bool { return sink.count(1) >= 10 })
	if p := srv.resetPeak(); p != 4 {
		t.Errorf("server saw at most %d requests at once after doubling to 4, want 4", p)
	}
	srv.gather.Store(0)
	if _, err := ctl.Pause(); err != nil {
		t.Fatal(err)
	}
	// A request issued just before the pause may reach the server late on a
	// busy machine: wait until the server has seen every issued request.
	waitFor(t, "the pause to drain", func() bool {
		return srv.inFlight.Load() == 0 && srv.requests.Load() == g.issued.Load()
	})
	before := srv.requests.Load()
	time.Sleep(100 * time.Millisecond)
	if after := srv.requests.Load(); after != before {
		t.Errorf("%d requests sent while paused", after-before)
	}
	if _, err := ctl.Resume(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "stage 2 records", func() bool { return sink.count(2) >= 5 })
	ctl.Finish()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	sum := col.Close()
	if sink.failed != 0 {
		t.Errorf("%d requests failed: a change must not cut requests off", sink.failed)
	}
	if int64(sink.count(0)+sink.count(1)+sink.count(2)) != srv.requests.Load() {
		t.Errorf("records %v, server saw %d requests", sink.byStg, srv.requests.Load())
	}
	if len(sum.Stages) != 3 {
		t.Fatalf("summary has %d stages, want 3: %+v", len(sum.Stages), sum.Stages)
	}
	for i, want := range []float64{2, 4, 4} {
		st := sum.Stages[i]
		if st.Mode != ControlConcurrency || st.Value != want || st.RequestCount == 0 {
			t.Errorf("stage %d: %s %v with %d requests, want concurrency %v", i, st.Mode, st.Value, st.RequestCount, want)
		}
	}
	if len(started) != 3 || started[2].Changes != 3 {
		t.Errorf("stages started: %+v", started)
	}
}

func TestRunLiveRequestRateAndCount(t *testing.T) {
	t.Parallel()
	srv := &gaugeServer{hold: time.Millisecond}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	start := time.Now()
	sink := &stageSink{}
	col := metrics.NewCollector(metrics.WithSink(sink), metrics.WithClock(func() int64 { return int64(time.Since(start)) }))
	g, err := New(ts.URL, chat(true), testDataset(t, 8), col, WithStart(start))
	if err != nil {
		t.Fatal(err)
	}
	// Stage 0 needs 2 s to issue the whole count, so the change below
	// lands while it is still issuing even when a busy machine delays the
	// first records by more than a second.
	ctl, err := NewController(ControlRequestRate, 20)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- g.RunLive(ctx, Live{Control: ctl, Count: 40}) }()
	waitFor(t, "stage 0 records", func() bool { return sink.count(0) >= 3 })
	if _, err := ctl.Set(400); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	sum := col.Close()
	if got := srv.requests.Load(); got != 40 {
		t.Errorf("server saw %d requests, want the session's count 40", got)
	}
	if len(sum.Stages) != 2 || sum.Stages[1].Mode != ControlRequestRate || sum.Stages[1].Value != 400 {
		t.Errorf("stages %+v (records by stage %v, %v)", sum.Stages, sink.byStg, time.Since(start))
	}
}
