package loadgen

import (
	"bytes"
	"cmp"
	"context"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

func TestCancellationChoiceIsSeeded(t *testing.T) {
	t.Parallel()
	const n = 20000
	chosen := func(g *Generator, phase metrics.Phase, stage int) []int {
		var keys []int
		for k := range n {
			if g.cancelAfter(phase, stage, k, 0) >= 0 {
				keys = append(keys, k)
			}
		}
		return keys
	}
	gen := func(frac float64, seed uint64) *Generator {
		g := &Generator{}
		WithCancellation(frac, 250*time.Millisecond, seed)(g)
		return g
	}
	for _, tt := range []struct {
		frac float64
		seed uint64
	}{{0.1, 1}, {0.5, 1}, {0.5, 2}, {0.9, 7}} {
		g := gen(tt.frac, tt.seed)
		keys := chosen(g, metrics.Profile, 0)
		if got := float64(len(keys)) / n; got < tt.frac-0.02 || got > tt.frac+0.02 {
			t.Errorf("frac %v seed %d: chose %.3f of the requests", tt.frac, tt.seed, got)
		}
		if again := chosen(gen(tt.frac, tt.seed), metrics.Profile, 0); !equalInts(keys, again) {
			t.Errorf("frac %v seed %d: a second generator chose other requests", tt.frac, tt.seed)
		}
		if other := chosen(gen(tt.frac, tt.seed+100), metrics.Profile, 0); equalInts(keys, other) {
			t.Errorf("frac %v: seeds %d and %d chose the same requests", tt.frac, tt.seed, tt.seed+100)
		}
		if other := chosen(g, metrics.Profile, 1); equalInts(keys, other) {
			t.Errorf("frac %v: stages 0 and 1 chose the same requests", tt.frac)
		}
		if w := chosen(g, metrics.Warmup, 0); len(w) != 0 {
			t.Errorf("frac %v: %d warmup requests chosen, want none", tt.frac, len(w))
		}
		if d := g.cancelAfter(metrics.Profile, 0, keys[0], 0); d != 250*time.Millisecond {
			t.Errorf("delay %v, want 250ms", d)
		}
	}
	if g := gen(1, 3); len(chosen(g, metrics.Profile, 0)) != n {
		t.Error("frac 1 did not choose every request")
	}
	if g := gen(0, 3); len(chosen(g, metrics.Profile, 0)) != 0 {
		t.Error("frac 0 chose requests")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// syncBuffer is a bytes.Buffer safe for the mock's log writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitStats polls the mock's counters until ok holds (the server notices a
// client's disconnect at its next write or read), for up to 10 s.
func waitStats(t *testing.T, srv *mockserver.Server, ok func(mockserver.Stats) bool) mockserver.Stats {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := srv.Stats()
		if ok(st) || time.Now().After(deadline) {
			return st
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCancellationAgainstMock cancels half the requests mid-stream (after
// 150 ms of a 10 ms TTFT, 40 × 20 ms answer) or before their first token
// (delay 0, TTFT 400 ms): the chosen ones, and only they, become
// cancelled records, no earlier than the delay after their send, and the
// server saw each client leave at the stage it was in.
func TestCancellationAgainstMock(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		mock      mockserver.Config
		delay     time.Duration
		midStream bool
	}{
		{"mid-stream", mockserver.Config{TTFT: 10 * time.Millisecond, ITL: 20 * time.Millisecond, DefaultOutputTokens: 40}, 150 * time.Millisecond, true},
		{"before the first token", mockserver.Config{TTFT: 400 * time.Millisecond, ITL: time.Millisecond, DefaultOutputTokens: 4}, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var log syncBuffer
			tt.mock.AbortLog = &log
			srv := mockserver.New(tt.mock)
			ts := httptest.NewServer(srv)
			defer ts.Close()
			const count = 24
			sink := &collectSink{}
			col := metrics.NewCollector(metrics.WithSink(sink))
			ds := testDataset(t, count)
			for i := range ds.Conversations {
				ds.Conversations[i].Turns[0].MaxTokens = 0 // the mock's DefaultOutputTokens
			}
			g, err := New(ts.URL, chat(true), ds, col, WithCancellation(0.5, tt.delay, 42), WithFailureThreshold(0.1, 1))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if err := g.Run(ctx, []Stage{{Limit: schedule.Constant(8), Count: count}}); err != nil {
				t.Fatalf("Run = %v (planned cancellations are not failures)", err)
			}
			s := col.Close()
			cancelled := 0
			for _, r := range sink.recs {
				// Single turns, round robin: session start k sends conversation ck.
				k, err := strconv.Atoi(strings.TrimPrefix(r.ConversationID, "c"))
				if err != nil {
					t.Fatal(err)
				}
				want := g.cancelAfter(metrics.Profile, 0, k, 0) >= 0
				if r.CancelPlanned != want {
					t.Errorf("request %d: planned %v, want %v", r.Index, r.CancelPlanned, want)
				}
				if !want {
					if r.Err != nil || r.Cancelled {
						t.Errorf("request %d not chosen: error %+v, cancelled %v", r.Index, r.Err, r.Cancelled)
					}
					continue
				}
				cancelled++
				if !r.Cancelled || r.Err == nil || r.Err.Code != CancelledCode || r.Err.Type != ErrRequestCancelled {
					t.Errorf("request %d chosen: cancelled %v, error %+v", r.Index, r.Cancelled, r.Err)
					continue
				}
				if after := time.Duration(r.CancelledNs - r.SentNs); after < tt.delay || after > tt.delay+5*time.Second {
					t.Errorf("request %d cancelled %v after its send, want %v (+ scheduling)", r.Index, after, tt.delay)
				}
				if r.CancelAfterNs != int64(tt.delay) || r.EndNs < r.CancelledNs {
					t.Errorf("request %d: cancel after %d ns, end %d before the cancel at %d", r.Index, r.CancelAfterNs, r.EndNs, r.CancelledNs)
				}
				if tt.midStream && len(r.TokenNs) == 0 {
					t.Errorf("request %d cancelled mid-stream read no token", r.Index)
				}
			}
			if cancelled == 0 || cancelled == count {
				t.Fatalf("%d of %d cancelled: the seed should choose some, not all", cancelled, count)
			}
			if got := s.Run[metrics.CancelledRequestCount]; got != float64(cancelled) {
				t.Errorf("cancelled_request_count %v, want %d", got, cancelled)
			}
			if got := s.Run[metrics.ErrorRequestCount]; got != float64(cancelled) {
				t.Errorf("error_request_count %v, want %d (cancellations count as errors, as AIPerf)", got, cancelled)
			}
			if n := s.Metrics[metrics.RequestLatency].Count; n != int64(count-cancelled) {
				t.Errorf("request_latency has %d values, want %d: cancelled requests stay out", n, count-cancelled)
			}
			st := waitStats(t, srv, func(st mockserver.Stats) bool { return st.Canceled >= uint64(cancelled) })
			aborted := st.AbortedPrefill
			if tt.midStream {
				aborted = st.AbortedStream
			}
			if st.Canceled != uint64(cancelled) || aborted != uint64(cancelled) || st.Completed != uint64(count-cancelled) {
				t.Errorf("server saw %+v, want %d aborts (mid-stream %v) and %d completed", st, cancelled, tt.midStream, count-cancelled)
			}
			if lines := strings.Count(log.String(), "aborted by its client"); lines != cancelled {
				t.Errorf("abort log has %d lines, want %d:\n%s", lines, cancelled, log.String())
			}
		})
	}
}

// TestPrefillCapHolds runs 8 requests in flight against a mock whose
// prefill takes 150 ms, with a prefill cap of 2: the server never holds
// more than 2 requests before their first token (its own count), and did
// hold 2; without the cap it holds more.
func TestPrefillCapHolds(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		cap      int
		wantPeak func(int64) bool
	}{
		{2, func(p int64) bool { return p == 2 }},
		{0, func(p int64) bool { return p > 2 }},
	} {
		srv := mockserver.New(mockserver.Config{TTFT: 150 * time.Millisecond, ITL: 5 * time.Millisecond})
		ts := httptest.NewServer(srv)
		sink := &collectSink{}
		col := metrics.NewCollector(metrics.WithSink(sink))
		g, err := New(ts.URL, chat(true), testDataset(t, 16), col, WithPrefillConcurrency(tt.cap))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		if err := g.Run(ctx, []Stage{{Limit: schedule.Constant(8), Count: 16}}); err != nil {
			t.Fatal(err)
		}
		cancel()
		s := col.Close()
		ts.Close()
		st := srv.Stats()
		if !tt.wantPeak(st.PrefillingPeak) {
			t.Errorf("cap %d: the server held up to %d requests before their first token", tt.cap, st.PrefillingPeak)
		}
		if s.Run[metrics.RequestCount] != 16 || st.Prefilling != 0 || g.InPrefill() != 0 {
			t.Errorf("cap %d: %v requests, %d still prefilling at the server, %d at the client", tt.cap, s.Run[metrics.RequestCount], st.Prefilling, g.InPrefill())
		}
		waited := 0
		for _, r := range sink.recs {
			if r.PrefillWaitNs > 0 {
				waited++
			}
		}
		if (tt.cap > 0) != (waited > 0) {
			t.Errorf("cap %d: %d requests waited for a prefill slot", tt.cap, waited)
		}
	}
}

// TestWarmupPrefillCap: the warmup waits on its own prefill cap when it
// has one, else on the profile's; the profile never on the warmup's. By
// the mock's own count of requests before their first token.
func TestWarmupPrefillCap(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name       string
		warm, prof int
		phase      metrics.Phase
		wantPeak   func(int64) bool
	}{
		{"the warmup's own cap", 1, 3, metrics.Warmup, func(p int64) bool { return p == 1 }},
		{"the profile's cap in the warmup", 0, 2, metrics.Warmup, func(p int64) bool { return p == 2 }},
		{"no cap of the warmup's in the profile", 1, 0, metrics.Profile, func(p int64) bool { return p > 2 }},
	} {
		srv := mockserver.New(mockserver.Config{TTFT: 100 * time.Millisecond, ITL: 5 * time.Millisecond})
		ts := httptest.NewServer(srv)
		col := metrics.NewCollector()
		g, err := New(ts.URL, chat(true), testDataset(t, 8), col,
			WithPrefillConcurrency(tt.prof), WithWarmupPrefillConcurrency(tt.warm))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		if err := g.Run(ctx, []Stage{{Phase: tt.phase, Limit: schedule.Constant(8), Count: 8}}); err != nil {
			t.Fatal(err)
		}
		cancel()
		col.Close()
		ts.Close()
		if st := srv.Stats(); !tt.wantPeak(st.PrefillingPeak) || st.Completed != 8 {
			t.Errorf("%s: the server held up to %d requests before their first token, completed %d", tt.name, st.PrefillingPeak, st.Completed)
		}
	}
}

// TestPrefillRamp: with a ramp the profile's prefill cap starts at 1 and
// reaches its value by the ramp's end; without, it holds from the start.
// The mock's prefill takes 300 ms and the ramp opens a slot every 300 ms.
func TestPrefillRamp(t *testing.T) {
	t.Parallel()
	for _, ramp := range []time.Duration{900 * time.Millisecond, 0} {
		srv := mockserver.New(mockserver.Config{TTFT: 300 * time.Millisecond, ITL: time.Millisecond})
		ts := httptest.NewServer(srv)
		sink := &collectSink{}
		col := metrics.NewCollector(metrics.WithSink(sink))
		g, err := New(ts.URL, chat(true), testDataset(t, 16), col, WithPrefillConcurrency(4), WithPrefillConcurrencyRamp(ramp))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		if err := g.Run(ctx, []Stage{{Limit: schedule.Constant(16), Count: 16}}); err != nil {
			t.Fatal(err)
		}
		cancel()
		col.Close()
		ts.Close()
		first := slices.MinFunc(sink.recs, func(a, b *metrics.Record) int { return cmp.Compare(a.SentNs, b.SentNs) }).SentNs
		early := 0
		for _, r := range sink.recs {
			if r.SentNs < first+int64(150*time.Millisecond) {
				early++
			}
		}
		st := srv.Stats()
		switch {
		case ramp > 0 && (early != 1 || st.PrefillingPeak != 4):
			t.Errorf("ramp %s: %d requests sent in the first 150 ms (want 1), up to %d in prefill (want 4 by the ramp's end)", ramp, early, st.PrefillingPeak)
		case ramp == 0 && (early < 2 || st.PrefillingPeak != 4):
			t.Errorf("no ramp: %d requests sent in the first 150 ms (want 4), up to %d in prefill (want 4)", early, st.PrefillingPeak)
		}
	}
}
