package mockserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surgebench/surge/loadgen/wire"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
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

func TestWireLogStampsArrivalAndFirstToken(t *testing.T) {
	t.Parallel()
	var log syncBuffer
	const ttft = 30 * time.Millisecond
	srv, err := Start(context.Background(), "127.0.0.1:0", Config{TTFT: ttft, ITL: time.Millisecond, WireLog: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	// The second request is judged: the socket's stamps are switched on
	// after the accept, too late for a first segment already queued.
	var before int64
	for _, id := range []string{"warm-up", "req-1"} {
		before = time.Now().UnixNano()
		req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/v1/chat/completions",
			strings.NewReader(`{"model":"m","stream":true,"max_tokens":3,"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("X-Request-Id", id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	var line struct {
		ID      string `json:"x_request_id"`
		Arrival int64  `json:"arrival_ns"`
		Handler int64  `json:"handler_ns"`
		First   int64  `json:"first_token_ns"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &line); err != nil {
		t.Fatalf("wire log %q: %v", log.String(), err)
	}
	if line.ID != "req-1" {
		t.Errorf("id %q, want req-1", line.ID)
	}
	if line.First-line.Handler < int64(ttft) {
		t.Errorf("first token %v after the handler, want ≥ TTFT %v", time.Duration(line.First-line.Handler), ttft)
	}
	if !wire.Supported {
		return
	}
	// The kernel stamp is the request's arrival: after the client began,
	// no later than the handler saw it (1 ms for clock reading slack).
	if line.Arrival < before || line.Arrival > line.Handler+int64(time.Millisecond) {
		t.Errorf("arrival %d outside [%d, handler %d]", line.Arrival, before, line.Handler)
	}
}
