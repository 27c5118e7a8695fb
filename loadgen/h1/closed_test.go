package h1

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// secondRequestServer answers a connection's first request with a
// keep-alive response, then does second with the connection once the
// second request's first byte arrived (the rest of it unread).
func secondRequestServer(t *testing.T, second func(c *net.TCPConn, br *bufio.Reader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReaderSize(c, 16)
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				if _, err := br.Peek(1); err != nil {
					return
				}
				second(c.(*net.TCPConn), br)
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/"
}

// TestClosedErrorTellsWhetherTheServerRead checks what a failed second
// request on a pooled connection says about the server having read it.
func TestClosedErrorTellsWhetherTheServerRead(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("x", 64<<10) // more than the server reads
	cases := []struct {
		name      string
		second    func(c *net.TCPConn, br *bufio.Reader)
		unread    bool
		duplicate bool
	}{
		// Closed with the request unread: the TCP stack resets.
		{"reset on unread bytes", func(c *net.TCPConn, _ *bufio.Reader) { c.Close() }, true, false},
		// Read to its end, then closed without an answer: the server
		// may have acted on it.
		{"read, then closed", func(c *net.TCPConn, br *bufio.Reader) {
			if req, err := http.ReadRequest(br); err == nil {
				io.Copy(io.Discard, req.Body)
			}
			c.Close()
		}, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := secondRequestServer(t, tc.second)
			tr := &Transport{}
			defer tr.CloseIdleConnections()
			if b, _ := post(t, tr, u, "x"); b != "ok" {
				t.Fatalf("first answer %q", b)
			}
			req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
			_, err := tr.RoundTrip(req)
			var ce *ClosedError
			if !errors.As(err, &ce) {
				t.Fatalf("second request: %v, want a *ClosedError", err)
			}
			if !ce.Written || ce.Unread != tc.unread || ce.Duplicate() != tc.duplicate {
				t.Errorf("%+v: written %v unread %v duplicate %v, want true %v %v", ce, ce.Written, ce.Unread, ce.Duplicate(), tc.unread, tc.duplicate)
			}
		})
	}
}

// brokenConn fails its writes after the first with a reset, writing
// nothing: a connection the server had reset while it sat in the pool.
type brokenConn struct {
	net.Conn
	writes atomic.Int32
}

func (c *brokenConn) Write(b []byte) (int, error) {
	if c.writes.Add(1) > 1 {
		return 0, &net.OpError{Op: "write", Net: "tcp", Err: syscall.ECONNRESET}
	}
	return c.Conn.Write(b)
}

// TestClosedErrorNotWritten: a write that fails before its first byte is
// a request no server saw.
func TestClosedErrorNotWritten(t *testing.T) {
	t.Parallel()
	s := newRawServer(t, false, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	tr := &Transport{Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		return &brokenConn{Conn: c}, err
	}}
	defer tr.CloseIdleConnections()
	post(t, tr, s.url(), "x")
	req, _ := http.NewRequest(http.MethodPost, s.url(), strings.NewReader("y"))
	_, err := tr.RoundTrip(req)
	var ce *ClosedError
	if !errors.As(err, &ce) || ce.Written || ce.Duplicate() || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("got %v, want a *ClosedError for a request not written", err)
	}
}

// TestResetFollows reads the TCP state: a reset after the peer's FIN
// shows, a FIN alone does not.
func TestResetFollows(t *testing.T) {
	t.Parallel()
	a, b := tcpPair(t)
	b.(*net.TCPConn).CloseWrite()
	if resetFollows(a, time.Millisecond) {
		t.Fatal("a FIN alone was taken for a reset")
	}
	a.Write([]byte("after the close")) // reaches b unread
	b.Close()                          // unread data: the stack resets
	deadline := time.Now().Add(10 * time.Second)
	for !resetFollows(a, 10*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the reset never showed")
		}
	}
}
