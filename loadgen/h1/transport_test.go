package h1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// post sends body to u through t and returns the response body read to
// its end, and whether the connection was a pooled one.
func post(t *testing.T, tr http.RoundTripper, u, body string) (string, bool) {
	t.Helper()
	var reused bool
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused },
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return string(b), reused
}

// TestRequestOnTheWire checks what the server receives: method, path and
// query, Host, the body and its length, the caller's headers, a default
// User-Agent; and that one connection serves request after request.
func TestRequestOnTheWire(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	remotes := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		remotes[r.RemoteAddr] = true
		got = append(got, strings.Join([]string{r.Method, r.URL.RequestURI(), r.Host, r.Header.Get("X-Test"),
			r.UserAgent(), r.Header.Get("Content-Length"), string(b)}, "|"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			io.WriteString(w, "data: "+string(rune('a'+i))+"\n\n")
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	for i := range 4 {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat?x=1", strings.NewReader(`{"n":1}`))
		req.Header.Set("X-Test", "yes")
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := "data: a\n\ndata: b\n\ndata: c\n\n"; string(b) != want || resp.StatusCode != 200 {
			t.Fatalf("request %d: %d %q, want 200 %q", i, resp.StatusCode, b, want)
		}
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	want := "POST|/v1/chat?x=1|" + host + "|yes|Go-http-client/1.1|7|{\"n\":1}"
	for i, g := range got {
		if g != want {
			t.Errorf("request %d arrived as %q, want %q", i, g, want)
		}
	}
	if len(remotes) != 1 {
		t.Errorf("4 sequential requests used %d connections, want 1", len(remotes))
	}
}

// rawServer answers each request on a connection with the next of
// answers, as raw bytes; after the last, or after each when closes is set
// (an answer framed by the close), it closes the connection. It counts
// the connections it accepted.
type rawServer struct {
	ln      net.Listener
	accepts atomic.Int32
}

func newRawServer(t *testing.T, closes bool, answers ...string) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepts.Add(1)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for _, a := range answers {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					if _, err := io.WriteString(c, a); err != nil || closes {
						return
					}
				}
			}()
		}
	}()
	return s
}

func (s *rawServer) url() string { return "http://" + s.ln.Addr().String() + "/" }

// TestResponseFraming reads every framing HTTP/1.1 has and checks the body
// and whether the connection may carry the next request.
func TestResponseFraming(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, answer, body string
		reusable, closes   bool
	}{
		{"content length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "hello", true, false},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n", "hello", true, false},
		{"no body", "HTTP/1.1 204 No Content\r\n\r\n", "", true, false},
		{"1xx first", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "ok", true, false},
		{"connection close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", "ok", false, false},
		{"until close", "HTTP/1.1 200 OK\r\n\r\nto the end", "to the end", false, true},
		{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", "ok", false, false},
		{"bytes past the body", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA", "ok", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// A connection closes after two answers, so a third request
			// must dial whatever happened.
			s := newRawServer(t, tc.closes, tc.answer, tc.answer)
			tr := &Transport{}
			defer tr.CloseIdleConnections()
			if b, _ := post(t, tr, s.url(), "x"); b != tc.body {
				t.Fatalf("body %q, want %q", b, tc.body)
			}
			if b, reused := post(t, tr, s.url(), "x"); b != tc.body || reused != tc.reusable {
				t.Fatalf("second request: body %q reused %v, want %q %v", b, reused, tc.body, tc.reusable)
			}
			if want := map[bool]int32{true: 1, false: 2}[tc.reusable]; s.accepts.Load() != want {
				t.Errorf("%d connections, want %d", s.accepts.Load(), want)
			}
		})
	}
}

// TestIdleConnectionClosedByServer: a server that closes a keep-alive
// connection after one answer (llama.cpp does after a few) costs the next
// request nothing: the pool sees the close and dials.
func TestIdleConnectionClosedByServer(t *testing.T) {
	t.Parallel()
	s := newRawServer(t, false, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	post(t, tr, s.url(), "x")
	key := s.ln.Addr().String()
	// The server closes right after its answer; wait (bounded) until the
	// close reached this side's socket.
	deadline := time.Now().Add(10 * time.Second)
	for {
		tr.mu.Lock()
		c := tr.idle[key][0]
		tr.mu.Unlock()
		if closedByPeer(c.nc) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server's close never showed on the idle connection")
		}
		time.Sleep(time.Millisecond)
	}
	if b, reused := post(t, tr, s.url(), "x"); b != "ok" || reused {
		t.Fatalf("after the close: body %q reused %v, want ok on a new connection", b, reused)
	}
}

// TestLiveIdleConnectionIsKept: the peek that finds closed connections
// must not take a live one for closed.
func TestLiveIdleConnectionIsKept(t *testing.T) {
	t.Parallel()
	a, b := tcpPair(t)
	if closedByPeer(a) {
		t.Fatal("an open connection with nothing to read was taken for closed")
	}
	b.Write([]byte("unasked"))
	deadline := time.Now().Add(10 * time.Second)
	for !closedByPeer(a) {
		if time.Now().After(deadline) {
			t.Fatal("a connection with unasked-for bytes was kept")
		}
		time.Sleep(time.Millisecond)
	}
}

func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b := <-accepted
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// TestCancel ends a request's context while the transport waits for the
// headers, and while the body waits for the next event: each returns an
// error (no hang) and the connection is not pooled.
func TestCancel(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/body" {
			io.WriteString(w, "data: first\n\n")
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release) // before Close, which waits for the handlers
	tr := &Transport{}
	defer tr.CloseIdleConnections()

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/headers", strings.NewReader("x"))
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if _, err := tr.RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("waiting for headers: err %v, want context.Canceled", err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/body", strings.NewReader("x"))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if n, err := resp.Body.Read(buf); err != nil || string(buf[:n]) != "data: first\n\n" {
		t.Fatalf("first read: %q %v", buf[:n], err)
	}
	cancel()
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Fatal("a cancelled body read to its end without error")
	}
	resp.Body.Close()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, cs := range tr.idle {
		if len(cs) > 0 {
			t.Fatal("an interrupted connection went back to the pool")
		}
	}
}

// TestEarlyClose: a body closed before its end keeps its connection when
// the rest was already on its way (a stream's terminator behind [DONE]),
// and drops it when the rest does not come at once (the server still
// streaming): those bytes must not reach another request.
func TestEarlyClose(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: 1\n\n")
		if r.URL.Path == "/stalls" {
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	defer close(release)
	for _, tc := range []struct {
		path string
		kept bool
	}{{"/complete", true}, {"/stalls", false}} {
		tr := &Transport{}
		req, _ := http.NewRequest(http.MethodPost, srv.URL+tc.path, strings.NewReader("x"))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := resp.Body.Read(make([]byte, 4)); n == 0 || err != nil {
			t.Fatalf("%s: first read %d %v", tc.path, n, err)
		}
		resp.Body.Close()
		if _, err := resp.Body.Read(make([]byte, 2)); !errors.Is(err, errBodyClosed) {
			t.Errorf("%s: read after close: %v, want errBodyClosed", tc.path, err)
		}
		if _, reused := post(t, tr, srv.URL+"/complete", "x"); reused != tc.kept {
			t.Errorf("%s: next request reused the connection: %v, want %v", tc.path, reused, tc.kept)
		}
		tr.CloseIdleConnections()
	}
}

// TestFallback: https and proxied requests go to the fallback; without one
// they fail naming the URL.
func TestFallback(t *testing.T) {
	t.Parallel()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "tls") }))
	defer tlsSrv.Close()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "direct") }))
	defer plain.Close()
	fb := &countingTransport{rt: tlsSrv.Client().Transport}
	tr := &Transport{Fallback: fb}
	defer tr.CloseIdleConnections()
	if b, _ := post(t, tr, tlsSrv.URL, "x"); b != "tls" || fb.n.Load() != 1 {
		t.Fatalf("https: %q through the fallback %d times, want tls once", b, fb.n.Load())
	}
	if b, _ := post(t, tr, plain.URL, "x"); b != "direct" || fb.n.Load() != 1 {
		t.Fatalf("http: %q, fallback used %d times, want direct and 1", b, fb.n.Load())
	}
	proxyURL, _ := url.Parse(plain.URL) // plain answers any proxied request
	proxy := http.ProxyURL(proxyURL)
	fb = &countingTransport{rt: &http.Transport{Proxy: proxy}}
	tr = &Transport{Proxy: proxy, Fallback: fb}
	defer tr.CloseIdleConnections()
	if b, _ := post(t, tr, "http://example.invalid/", "x"); b != "direct" || fb.n.Load() != 1 {
		t.Fatalf("proxied: %q, fallback used %d times, want direct and 1", b, fb.n.Load())
	}
	req, _ := http.NewRequest(http.MethodPost, tlsSrv.URL, strings.NewReader("x"))
	if _, err := (&Transport{}).RoundTrip(req); err == nil || !strings.Contains(err.Error(), tlsSrv.URL) {
		t.Fatalf("https without a fallback: %v, want an error naming the URL", err)
	}
}

type countingTransport struct {
	rt http.RoundTripper
	n  atomic.Int32
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.rt.RoundTrip(r)
}

// TestInvalidHeaders refuses what would split or corrupt the request.
func TestInvalidHeaders(t *testing.T) {
	t.Parallel()
	s := newRawServer(t, false, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
	cases := map[string]http.Header{
		"CRLF in a value": {"X-A": {"1\r\nX-Injected: 2"}},
		"LF in a value":   {"X-A": {"1\nx"}},
		"space in a name": {"X A": {"1"}},
		"colon in a name": {"X:A": {"1"}},
		"empty name":      {"": {"1"}},
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			req, _ := http.NewRequest(http.MethodPost, s.url(), strings.NewReader("x"))
			req.Header = h
			if _, err := (&Transport{}).RoundTrip(req); err == nil || !strings.Contains(err.Error(), "invalid header") {
				t.Fatalf("err %v, want an invalid header error", err)
			}
		})
	}
}

// okServer answers every request with "ok"; it closes with the test.
func okServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	t.Cleanup(srv.Close)
	return srv
}

// TestTraceHooks: the hooks a load generator times a request by all fire,
// in order, on a fresh connection and on a pooled one.
func TestTraceHooks(t *testing.T) {
	t.Parallel()
	srv := okServer(t)
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	for _, want := range []string{
		"GetConn ConnectStart ConnectDone GotConn(false) WroteRequest GotFirstResponseByte",
		"GetConn GotConn(true) WroteRequest GotFirstResponseByte",
	} {
		var got []string
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GetConn:      func(string) { got = append(got, "GetConn") },
			ConnectStart: func(string, string) { got = append(got, "ConnectStart") },
			ConnectDone:  func(string, string, error) { got = append(got, "ConnectDone") },
			GotConn: func(i httptrace.GotConnInfo) {
				got = append(got, map[bool]string{true: "GotConn(true)", false: "GotConn(false)"}[i.Reused])
			},
			WroteRequest:         func(httptrace.WroteRequestInfo) { got = append(got, "WroteRequest") },
			GotFirstResponseByte: func() { got = append(got, "GotFirstResponseByte") },
		})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("x"))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if g := strings.Join(got, " "); g != want {
			t.Errorf("hooks %q, want %q", g, want)
		}
	}
}

// TestPoolBound keeps at most MaxIdlePerHost idle connections.
func TestPoolBound(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var started sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started.Done()
		<-release
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	tr := &Transport{MaxIdlePerHost: 2}
	defer tr.CloseIdleConnections()
	var done sync.WaitGroup
	started.Add(4)
	for range 4 {
		done.Add(1)
		go func() {
			defer done.Done()
			req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
			if resp, err := tr.RoundTrip(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	started.Wait() // four connections at once
	close(release)
	done.Wait()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if n := len(tr.idle[strings.TrimPrefix(srv.URL, "http://")]); n != 2 {
		t.Fatalf("%d idle connections, want 2", n)
	}
}

// TestCancelAfterEnd: a context ended between the body's end and its
// Close has set a deadline on the connection; it must not reach the pool
// (the next request would fail at once).
func TestCancelAfterEnd(t *testing.T) {
	t.Parallel()
	srv := okServer(t)
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("x"))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "ok" {
		t.Fatalf("body %q %v", b, err)
	}
	cancel()
	resp.Body.Close()
	if b, reused := post(t, tr, srv.URL, "x"); b != "ok" || reused {
		t.Fatalf("next request: %q reused %v, want ok on a new connection", b, reused)
	}
}

// TestCloseIdleConnections closes every pooled connection (the server sees
// each one end), and the transport still serves requests after.
func TestCloseIdleConnections(t *testing.T) {
	t.Parallel()
	var closed atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	tr := &Transport{}
	post(t, tr, srv.URL, "x")
	tr.CloseIdleConnections()
	deadline := time.Now().Add(10 * time.Second)
	for closed.Load() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the server never saw the idle connection close")
		}
		time.Sleep(time.Millisecond)
	}
	if b, reused := post(t, tr, srv.URL, "x"); b != "ok" || reused {
		t.Fatalf("after closing: %q reused %v, want ok on a new connection", b, reused)
	}
	tr.CloseIdleConnections()
}

// TestTLS: with a TLS config the transport speaks https itself: one
// handshake (reported to the trace) serves request after request, a
// stream closed at its last event is drained and kept as over http, and a
// plain and a TLS connection to one address never share a pool.
func TestTLS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		io.WriteString(w, "data: [DONE]\n\n")
		w.(http.Flusher).Flush() // the chunked terminator follows in a record of its own
	}))
	var conns atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	fb := &countingTransport{rt: http.DefaultTransport}
	tr := &Transport{TLSClientConfig: srv.Client().Transport.(*http.Transport).TLSClientConfig, Fallback: fb}
	defer tr.CloseIdleConnections()
	// A stream's terminator that comes later than drainWait (a busy
	// machine) costs its connection; a few such misses are allowed, each
	// with its own handshake.
	misses := 0
	for i := range 20 {
		var handshakes, done int
		var reused bool
		var state tls.ConnectionState
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotConn:           func(i httptrace.GotConnInfo) { reused = i.Reused },
			TLSHandshakeStart: func() { handshakes++ },
			TLSHandshakeDone:  func(s tls.ConnectionState, err error) { done++; state = s },
		})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("x"))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		// Read the event only, as an SSE reader stopping at [DONE] does.
		buf := make([]byte, len("data: [DONE]\n\n"))
		if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "data: [DONE]\n\n" {
			t.Fatalf("request %d: body %q, %v", i, buf, err)
		}
		resp.Body.Close()
		if i > 0 && !reused {
			misses++
		}
		if (handshakes == 1) == reused || (done == 1) == reused || i == 0 && reused {
			t.Fatalf("request %d: reused %v, %d handshakes started, %d done", i, reused, handshakes, done)
		}
		if i == 0 && (!state.HandshakeComplete || state.NegotiatedProtocol == "h2") {
			t.Fatalf("handshake state %+v, want complete and not h2", state)
		}
	}
	if n := conns.Load(); n != int32(1+misses) || misses > 3 || fb.n.Load() != 0 {
		t.Fatalf("%d connections (%d not reused), fallback used %d times, want 1 (at most 3 more on a busy machine) and 0", n, misses, fb.n.Load())
	}
	// The same address over plain http dials its own connection (the TLS
	// server refuses it), never the pooled TLS one.
	req, _ := http.NewRequest(http.MethodPost, strings.Replace(srv.URL, "https://", "http://", 1), strings.NewReader("x"))
	if resp, err := tr.RoundTrip(req); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatalf("plain http to a TLS server answered %d %q: it took the TLS connection", resp.StatusCode, b)
		}
	}
}
