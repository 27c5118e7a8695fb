package sse

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestReaderOverHTTP streams events from an httptest server (real HTTP on
// 127.0.0.1, chunked encoding) and checks the timestamps follow the
// server's flushes: the second event is only written after the client has
// read the first, so its At must be later.
func TestReaderOverHTTP(t *testing.T) {
	t.Parallel()
	step := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		fmt.Fprint(w, ": connected\n\ndata: {\"n\":1}\r\n\r\n")
		fl.Flush()
		select {
		case <-step:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, "event: last\ndata: {\"n\":2}\ndata: [DONE]\n\n")
		fl.Flush()
	}))
	t.Cleanup(srv.Close)

	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := NewReader(resp.Body, monotonic())
	e1, err := rd.Next()
	if err != nil || string(e1.Data) != `{"n":1}` {
		t.Fatalf("first event %q, %v", e1.Data, err)
	}
	at1 := e1.At
	close(step)
	e2, err := rd.Next()
	if err != nil || string(e2.Data) != "{\"n\":2}\n[DONE]" || string(e2.Type) != "last" {
		t.Fatalf("second event %q %q, %v", e2.Type, e2.Data, err)
	}
	if e2.At <= at1 {
		t.Errorf("second At %d not after first %d", e2.At, at1)
	}
	if _, err := rd.Next(); err != io.EOF {
		t.Errorf("end: %v, want io.EOF", err)
	}
}
