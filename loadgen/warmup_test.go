package loadgen

import (
	"math"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// TestWarmupDrains: a warmup that drains (Stage.Drain) holds the profile
// back until its requests are done, and cancels those still running
// DrainGrace after its issuing ended; without Drain the two overlap
// (TestWarmupFlowsIntoProfile).
func TestWarmupDrains(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		grace     time.Duration
		cancelled bool
	}{{"forever", time.Duration(math.MaxInt64), false}, {"50ms", 50 * time.Millisecond, true}} {
		srv := &streamServer{ttft: 300 * time.Millisecond, itl: time.Millisecond, tokens: 2}
		ts := httptest.NewServer(srv)
		limit := schedule.Constant(3)
		_, sink := runOnce(t, ts.URL, chat(true), []Stage{
			{Phase: metrics.Warmup, Limit: limit, Count: 3, Drain: true, DrainGrace: tc.grace},
			{Phase: metrics.Profile, Limit: limit, Count: 3},
		})
		ts.Close()
		var lastWarmupEnd, firstProfileSent int64
		failed := 0
		for _, r := range sink.recs {
			if r.Phase == metrics.Warmup {
				lastWarmupEnd = max(lastWarmupEnd, r.EndNs)
				if r.Failed() {
					failed++
				}
				continue
			}
			if firstProfileSent == 0 || r.SentNs < firstProfileSent {
				firstProfileSent = r.SentNs
			}
		}
		if len(sink.recs) != 6 || firstProfileSent < lastWarmupEnd {
			t.Errorf("%s: %d records; first profile send %d before the last warmup end %d", tc.name, len(sink.recs), firstProfileSent, lastWarmupEnd)
		}
		if (failed == 3) != tc.cancelled || (failed != 0 && failed != 3) {
			t.Errorf("%s: %d of 3 warmup requests cancelled, want all %v", tc.name, failed, tc.cancelled)
		}
	}
}

// TestWarmupPrefillRamp: the warmup's prefill cap opens from 1 over the
// ramp, so the later of four requests sent together wait for their
// slots; without the ramp none waits.
func TestWarmupPrefillRamp(t *testing.T) {
	t.Parallel()
	srv := &streamServer{ttft: 400 * time.Millisecond, itl: time.Millisecond, tokens: 2}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	maxWait := func(opts ...Option) time.Duration {
		_, sink := runOnce(t, ts.URL, chat(true), []Stage{
			{Phase: metrics.Warmup, Limit: schedule.Constant(4), Count: 4},
			{Phase: metrics.Profile, Limit: schedule.Constant(1), Count: 1},
		}, opts...)
		var w int64
		for _, r := range sink.recs {
			if r.Phase == metrics.Warmup {
				w = max(w, r.PrefillWaitNs)
			}
		}
		return time.Duration(w)
	}
	if w := maxWait(WithWarmupPrefillConcurrency(4), WithWarmupPrefillRamp(600*time.Millisecond)); w < 150*time.Millisecond {
		t.Errorf("ramped over 600 ms: the longest prefill wait was %v, want the last slot's 400 ms or so", w)
	}
	if w := maxWait(WithWarmupPrefillConcurrency(4)); w > 100*time.Millisecond {
		t.Errorf("no ramp: a request waited %v for a prefill slot", w)
	}
}
