package mockserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// median of ds.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func TestTimingMatchesConfig(t *testing.T) {
	// Not parallel: timing is measured, so the test runs alone.
	const ttft, itl, tokens = 50 * time.Millisecond, 5 * time.Millisecond, 20
	s, ts := newTestServer(t, Config{TTFT: ttft, ITL: itl})
	var ttfts, itls []time.Duration
	for range 9 {
		sent, evs := streamEvents(t, ts.URL+"/v1/chat/completions",
			`{"messages":[{"role":"user","content":"x"}],"stream":true,"max_tokens":20}`)
		// evs[0] is role + first token (one write); evs[1] its token.
		first := evs[1].at
		last := evs[tokens].at
		ttfts = append(ttfts, first.Sub(sent))
		itls = append(itls, last.Sub(first)/(tokens-1))
	}
	// The server's deadlines make it never early: that bound holds on any
	// machine. Lateness is the machine's: ≈ 1 ms idle, but a loaded 2-core
	// box has made the server itself 12 ms late at the median. So the
	// upper bound is ¾ of a TTFT: it catches a schedule that is wrong
	// (TTFT counted twice), not scheduling noise. BenchmarkStreamTiming
	// reports the idle figures.
	const late = ttft * 3 / 4
	if got := median(ttfts); got < ttft || got > ttft+late {
		t.Errorf("client TTFT median %v, want %v..%v", got, ttft, ttft+late)
	}
	// Absolute deadlines: the last token is due at ttft+19·itl whatever
	// happened before, so (last−first)/19 strays from itl by the first
	// token's lateness over 19.
	if got := median(itls); got < itl-2*time.Millisecond || got > itl+2*time.Millisecond {
		t.Errorf("client ITL median %v, want %v ± 2ms", got, itl)
	}
	st := s.Stats()
	if st.TTFTCount != 9 {
		t.Errorf("Stats.TTFTCount = %d, want 9", st.TTFTCount)
	}
	want := float64(ttft) / 1e6
	if st.TTFTP50MS < want || st.TTFTP50MS > want+float64(late)/1e6 || st.TTFTP99MS < st.TTFTP50MS {
		t.Errorf("Stats TTFT p50 %.3f ms p99 %.3f ms, want p50 in [%v, %v] ms", st.TTFTP50MS, st.TTFTP99MS, want, want+float64(late)/1e6)
	}
	// The server's own TTFT (handler entry to first flush) lies inside the
	// client's (send to first read), request for request; compare medians
	// (the server stamps after its flush returns, so a descheduled server
	// goroutine can stamp after the client read: allow 5 ms).
	if srv, cl := st.TTFTP50MS, float64(median(ttfts))/1e6; srv > cl+5 {
		t.Errorf("server TTFT p50 %.3f ms above the client's %.3f ms", srv, cl)
	}
}

// slowWriter is a ResponseWriter whose write number slowAt stalls.
type slowWriter struct {
	*httptest.ResponseRecorder
	writes int
	slowAt int
	stall  time.Duration
	at     []time.Time
}

func (w *slowWriter) Write(b []byte) (int, error) {
	w.writes++
	if w.writes == w.slowAt {
		time.Sleep(w.stall)
	}
	w.at = append(w.at, time.Now())
	return w.ResponseRecorder.Write(b)
}

func (w *slowWriter) Flush() {}

func TestSlowWriteDoesNotDrift(t *testing.T) {
	// Not parallel: timing is measured, so the test runs alone.
	// Token 1's write stalls 200 ms, past every later token's deadline
	// (token 11 is due at 110 ms). Absolute deadlines then write tokens
	// 2–11 at once, back to back with no sleep; a schedule relative to the
	// previous write would sleep 10 ITLs (100 ms) between token 1 and 11.
	// Scheduling noise can delay a stall's end, not stretch a burst of
	// CPU-only writes to 50 ms, so the bound holds on a loaded machine.
	const itl, tokens = 10 * time.Millisecond, 12
	s := New(Config{ITL: itl})
	w := &slowWriter{ResponseRecorder: httptest.NewRecorder(), slowAt: 2, stall: 20 * itl}
	r := httptest.NewRequest(http.MethodPost, "/v1/completions",
		strings.NewReader(`{"prompt":"x","stream":true,"max_tokens":12}`))
	start := time.Now()
	s.ServeHTTP(w, r)
	if w.Code != 200 || len(w.at) != tokens+1 {
		t.Fatalf("status %d with %d writes, want 200 with %d", w.Code, len(w.at), tokens+1)
	}
	// w.at[k] is token k's write (the last entry is the closing events).
	if burst := w.at[tokens-1].Sub(w.at[1]); burst > 50*time.Millisecond {
		t.Errorf("tokens 2–11 took %v after the stalled write, want them at once (< 50ms): the schedule drifted", burst)
	}
	if early := start.Add((tokens - 1) * itl).Sub(w.at[tokens-1]); early > 0 {
		t.Errorf("last token %v before its deadline", early)
	}
}

func TestMaxRunningQueues(t *testing.T) {
	// Not parallel: timing is measured, so the test runs alone.
	// Two slots, TTFT 150 ms, three requests: the server's own counters
	// must show two running and one waiting while the first two generate,
	// and the queued request cannot see its first token before one slot's
	// TTFT plus its own (≥ 300 ms after the start), however loaded the
	// machine; nor can the others see theirs before 150 ms.
	const ttft = 150 * time.Millisecond
	s, ts := newTestServer(t, Config{TTFT: ttft, MaxRunning: 2})
	results := make(chan time.Duration, 3)
	start := time.Now()
	for i := range 3 {
		go func() {
			time.Sleep(time.Duration(i) * 5 * time.Millisecond) // arrival order 0, 1, 2
			_, evs := streamEvents(t, ts.URL+"/v1/completions", `{"prompt":"x","stream":true,"max_tokens":1}`)
			results <- evs[0].at.Sub(start)
		}()
	}
	// Poll the server's view until it shows the queue (it lasts from the
	// third arrival until the first answer ends: ≥ 140 ms).
	sawQueue := false
	for deadline := time.Now().Add(5 * time.Second); !sawQueue && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		st := s.Stats()
		sawQueue = st.Running == 2 && st.Waiting == 1
		if st.Completed > 0 {
			break
		}
	}
	var got []time.Duration
	for range 3 {
		got = append(got, <-results)
	}
	slices.Sort(got)
	if !sawQueue {
		t.Error("the server never showed 2 running and 1 waiting")
	}
	if got[0] < ttft || got[2] < 2*ttft {
		t.Errorf("first tokens at %v after start: want all ≥ 150ms and the queued one ≥ 300ms", got)
	}
	if st := s.Stats(); st.Running != 0 || st.Waiting != 0 || st.Completed != 3 {
		t.Errorf("after the run: %+v", st)
	}
}

func TestClientDisconnectStopsStream(t *testing.T) {
	t.Parallel()
	s, ts := newTestServer(t, Config{ITL: time.Hour})
	ctx, cancel := context.WithCancel(t.Context())
	resp := post(t, ctx, ts.URL+"/v1/chat/completions",
		`{"messages":[{"role":"user","content":"x"}],"stream":true,"max_tokens":5}`)
	buf := make([]byte, 1)
	if _, err := resp.Body.Read(buf); err != nil { // the first token arrived
		t.Fatal(err)
	}
	if s.Stats().Running != 1 {
		t.Fatalf("running = %d, want 1", s.Stats().Running)
	}
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(2 * time.Second)
	for s.Stats().Running != 0 || s.Stats().Canceled != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("stream still open 2s after the client left: %+v", s.Stats())
		}
		time.Sleep(time.Millisecond)
	}
}
