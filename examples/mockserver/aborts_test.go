package mockserver

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer the server's log writes may share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// until polls s's counters for up to 5 s (a disconnect is noticed at the
// server's next read or write).
func until(s *Server, ok func(Stats) bool) Stats {
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := s.Stats()
		if ok(st) || time.Now().After(deadline) {
			return st
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAbortsAndPrefillCounted: two streams still in their 10 s prefill
// count as prefilling (peak 2); their clients leave and each is counted
// and logged as aborted before its first token. A client that leaves after
// its first token is an abort mid-stream.
func TestAbortsAndPrefillCounted(t *testing.T) {
	t.Parallel()
	var log lockedBuffer
	s, ts := newTestServer(t, Config{TTFT: 10 * time.Second, AbortLog: &log})
	ctx, cancel := context.WithCancel(t.Context())
	for range 2 {
		resp := post(t, ctx, ts.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"stream":true,"max_tokens":3}`)
		defer resp.Body.Close()
	}
	if st := s.Stats(); st.Prefilling != 2 || st.PrefillingPeak != 2 {
		t.Errorf("two streams waiting for their first token: %+v", st)
	}
	cancel()
	st := until(s, func(st Stats) bool { return st.AbortedPrefill == 2 })
	if st.AbortedPrefill != 2 || st.AbortedStream != 0 || st.Canceled != 2 || st.Prefilling != 0 {
		t.Errorf("after the clients left: %+v", st)
	}
	if n := strings.Count(log.String(), "aborted by its client before its first token"); n != 2 {
		t.Errorf("%d prefill aborts logged, want 2:\n%s", n, log.String())
	}

	var log2 lockedBuffer
	s, ts = newTestServer(t, Config{ITL: 50 * time.Millisecond, AbortLog: &log2})
	ctx, cancel = context.WithCancel(t.Context())
	defer cancel()
	resp := post(t, ctx, ts.URL+"/v1/completions", `{"prompt":"x","stream":true,"max_tokens":40}`)
	defer resp.Body.Close()
	if _, err := resp.Body.Read(make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	cancel()
	st = until(s, func(st Stats) bool { return st.AbortedStream == 1 })
	if st.AbortedStream != 1 || st.AbortedPrefill != 0 || st.Completed != 0 || st.PrefillingPeak != 1 {
		t.Errorf("after a client left mid-stream: %+v", st)
	}
	if l := log2.String(); !strings.Contains(l, "aborted by its client mid-stream, after ") || !strings.Contains(l, " of 40 tokens") {
		t.Errorf("abort log: %q", log2.String())
	}
}
