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

	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// TestStageHooks: Before runs before each profile stage with nothing in
// flight (the warmup drained first), After once each stage drained; a
// Before error ends the run before that stage sends anything, and every
// hook error comes back from Run.
func TestStageHooks(t *testing.T) {
	t.Parallel()
	var inFlight, served atomic.Int64
	inner := &streamServer{ttft: 50 * time.Millisecond, itl: time.Millisecond, tokens: 2}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inFlight.Add(1)
		defer inFlight.Add(-1)
		served.Add(1)
		inner.ServeHTTP(w, r)
	}))
	defer ts.Close()
	var mu sync.Mutex
	var calls []string
	hook := func(name string, fail int) func(context.Context, int) error {
		return func(_ context.Context, i int) error {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, fmt.Sprintf("%s%d/%d", name, i, inFlight.Load()))
			if i == fail {
				return fmt.Errorf("%s %d failed", name, i)
			}
			return nil
		}
	}
	limit := schedule.Constant(3)
	stages := []Stage{
		{Phase: metrics.Warmup, Limit: limit, Count: 6},
		{Phase: metrics.Profile, Limit: limit, Count: 6},
		{Phase: metrics.Profile, Limit: limit, Count: 6},
	}
	_, sink := runOnce(t, ts.URL, chat(true), stages, WithStageHooks(StageHooks{Before: hook("before", -1), After: hook("after", -1), DrainWarmup: true}))
	if got := fmt.Sprint(calls); got != "[before0/0 after0/0 before1/0 after1/0]" || len(sink.recs) != 18 {
		t.Errorf("hooks (stage/in flight) %s, %d records", got, len(sink.recs))
	}

	calls = nil
	served.Store(0)
	col := metrics.NewCollector()
	g, err := New(ts.URL, chat(true), testDataset(t, 16), col, WithStageHooks(StageHooks{Before: hook("before", 1), After: hook("after", 0), DrainWarmup: true}))
	if err != nil {
		t.Fatal(err)
	}
	err = g.Run(context.Background(), stages)
	col.Close()
	if err == nil || fmt.Sprint(calls) != "[before0/0 after0/0 before1/0]" || served.Load() != 12 {
		t.Errorf("failing hooks: %v, calls %v, %d requests served (want the warmup's and stage 0's)", err, calls, served.Load())
	}
	if msg := fmt.Sprint(err); msg != "after 0 failed\nbefore 1 failed" {
		t.Errorf("Run's error %q, want both hooks'", msg)
	}
}
