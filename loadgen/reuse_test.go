package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// keepAliveServer speaks HTTP/1.1 by hand on 127.0.0.1 so it can close
// connections the way real servers do. Each connection answers up to k
// requests with a complete SSE stream and no "Connection: close" header,
// then closes: the client's pool still holds it, as with llama.cpp's
// server. Requests are counted as they are read.
type keepAliveServer struct {
	k int
	// answer, when set, decides per request (1-based on its connection)
	// whether the server answers it or closes the connection having read
	// it, without a byte of response.
	answer func(nth int) bool
	// headersOnly sends the headers and then closes (a failure after the
	// server answered something).
	headersOnly bool

	ln   net.Listener
	read atomic.Int64 // requests read in full
	wg   sync.WaitGroup
}

func startKeepAliveServer(t *testing.T, s *keepAliveServer) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.ln = ln
	var mu sync.Mutex
	var conns []net.Conn
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			s.wg.Go(func() { s.serve(c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		s.wg.Wait()
	})
	return "http://" + ln.Addr().String()
}

const keepAliveBody = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n" +
	"data: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\n" +
	"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"

func (s *keepAliveServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for nth := 1; s.k == 0 || nth <= s.k; nth++ {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return
		}
		s.read.Add(1)
		if s.answer != nil && !s.answer(nth) {
			return
		}
		if s.headersOnly {
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 1000\r\n\r\n")
			return
		}
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(keepAliveBody), keepAliveBody)
	}
}

func retries(recs []*metrics.Record) (n int) {
	for _, r := range recs {
		n += r.ConnectionRetries
	}
	return n
}

// TestStaleKeepAliveIsRetriedNotFailed is the llama.cpp pattern: every
// connection is closed after k responses while the client may already be
// sending the next request on it. None of those requests reached a server
// that would answer them, so none may become an error record.
func TestStaleKeepAliveIsRetriedNotFailed(t *testing.T) {
	t.Parallel()
	srv := &keepAliveServer{k: 3}
	url := startKeepAliveServer(t, srv)
	s, sink := runOnce(t, url, chat(true), []Stage{{Limit: schedule.Constant(8), Count: 500}})
	if len(sink.recs) != 500 {
		t.Fatalf("%d records, want 500", len(sink.recs))
	}
	if s.Run[metrics.ErrorRequestCount] != 0 || s.Run[metrics.RequestCount] != 500 {
		t.Fatalf("ok %v err %v (errors %+v), want 500 and 0", s.Run[metrics.RequestCount], s.Run[metrics.ErrorRequestCount], s.Errors)
	}
	n := retries(sink.recs)
	if int64(n) != s.ConnectionRetries {
		t.Errorf("summary counts %d connection retries, the records %d", s.ConnectionRetries, n)
	}
	// Every retry was a request the server never read: it read exactly
	// one per record, and the transport saw the reset that says so.
	if got := srv.read.Load(); got != 500 {
		t.Errorf("server read %d requests for 500 records (%d retries)", got, n)
	}
	if s.RetryDuplicates != 0 {
		t.Errorf("%d of %d retries counted as possible duplicates; the server read none of them", s.RetryDuplicates, n)
	}
	for _, r := range sink.recs {
		if r.ConnectionRetries > 1 {
			t.Errorf("record retried %d times, want at most once", r.ConnectionRetries)
		}
		if r.Text != "ab" {
			t.Errorf("text %q, want ab", r.Text)
		}
	}
	t.Logf("%d connection retries over 500 requests", n)
}

// TestStaleKeepAliveCountsRetries forces the race: the server reads the
// 2nd request on each connection and closes without a byte of answer,
// exactly what a connection closed while idle looks like from the client.
// Each such request is retried once on a fresh connection (which answers
// its first request), and counted.
func TestStaleKeepAliveCountsRetries(t *testing.T) {
	t.Parallel()
	srv := &keepAliveServer{answer: func(nth int) bool { return nth == 1 }}
	url := startKeepAliveServer(t, srv)
	s, _ := runOnce(t, url, chat(true), []Stage{{Limit: schedule.Constant(1), Count: 20}})
	if s.Run[metrics.ErrorRequestCount] != 0 {
		t.Fatalf("errors %+v, want none", s.Errors)
	}
	// Request 1 opens a connection and pools it; request 2 finds it
	// pooled, is dropped, and is resent on a fresh connection that is not
	// pooled (the retry client keeps none), so request 3 dials anew: every
	// other request is retried.
	if s.ConnectionRetries < 8 || s.ConnectionRetries > 11 {
		t.Errorf("%d connection retries over 20 requests, want ≈ 10 (every other one)", s.ConnectionRetries)
	}
	// The server read each dropped request in full before closing: each
	// retry may have been its second sight of it.
	if s.RetryDuplicates != s.ConnectionRetries {
		t.Errorf("%d of %d retries counted as possible duplicates, want all", s.RetryDuplicates, s.ConnectionRetries)
	}
}

// TestFailureAfterReachingServerIsAnError: a server that fails a request
// it has answered something to, or one that drops every fresh connection
// after reading the request, produces error records; retrying is only for
// pooled connections that died before any answer.
func TestFailureAfterReachingServerIsAnError(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		srv      *keepAliveServer
		wantType string
	}{
		// A fresh connection is never retried: the first request on each
		// is read and dropped. Pooled ones never exist.
		{"closes every connection after reading the request", &keepAliveServer{answer: func(int) bool { return false }}, ErrConnection},
		// Headers then a close: the server answered, so it is an error.
		{"sends headers then closes", &keepAliveServer{headersOnly: true}, ErrStream},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := startKeepAliveServer(t, tc.srv)
			s, sink := runOnce(t, url, chat(true), []Stage{{Limit: schedule.Constant(2), Count: 6}})
			if len(sink.recs) != 6 || s.Run[metrics.ErrorRequestCount] != 6 {
				t.Fatalf("%d records, %v errors, want 6 failed", len(sink.recs), s.Run[metrics.ErrorRequestCount])
			}
			if s.ConnectionRetries != 0 {
				t.Errorf("%d connection retries, want 0", s.ConnectionRetries)
			}
			for _, r := range sink.recs {
				if r.Err.Type != tc.wantType || r.Err.Message == "" || r.ConnectionRetries != 0 {
					t.Errorf("error record %+v with %d retries, want type %s, a message and no retry", r.Err, r.ConnectionRetries, tc.wantType)
				}
			}
			if got := tc.srv.read.Load(); got != 6 {
				t.Errorf("server read %d requests, want 6 (no resends)", got)
			}
		})
	}
}

// TestConnectionRetriesCountAndOff: a server that reads the 2nd request
// on each connection and drops it. With retries (the default) each such
// request is re-sent once, the generator's counter and the records agree,
// and the server read the re-sends too; with WithConnectionRetries(0)
// each is an error record and the server read every request once.
func TestConnectionRetriesCountAndOff(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 0} {
		srv := &keepAliveServer{answer: func(nth int) bool { return nth == 1 }}
		url := startKeepAliveServer(t, srv)
		sink := &collectSink{}
		col := metrics.NewCollector(metrics.WithSink(sink))
		g, err := New(url, chat(true), testDataset(t, 4), col, WithConnectionRetries(n))
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Run(context.Background(), []Stage{{Limit: schedule.Constant(1), Count: 20}}); err != nil {
			t.Fatal(err)
		}
		s := col.Close()
		recRetries, failed := retries(sink.recs), 0
		for _, r := range sink.recs {
			if r.Err != nil {
				failed++
				if r.Err.Type != ErrConnection || !strings.Contains(r.Err.Message, "reused connection") {
					t.Errorf("retries %d: error %+v, want a connection error naming the reused connection", n, r.Err)
				}
			}
		}
		got := g.ConnectionRetries()
		if got != int64(recRetries) || got != s.ConnectionRetries {
			t.Errorf("retries %d: generator counts %d, records %d, summary %d", n, got, recRetries, s.ConnectionRetries)
		}
		read := srv.read.Load()
		switch n {
		case 1:
			if got < 8 || failed != 0 || read != 20+got {
				t.Errorf("retries on: %d re-sent, %d failed, server read %d; want ≈ 10, 0 and 20 + the re-sends", got, failed, read)
			}
		case 0:
			// Request 1 pools its connection, 2 is dropped on it and fails,
			// 3 dials anew: every other request fails.
			if got != 0 || failed < 8 || failed > 11 || read != 20 {
				t.Errorf("retries off: %d re-sent, %d failed, server read %d; want 0, ≈ 10 and 20", got, failed, read)
			}
		}
	}
}
