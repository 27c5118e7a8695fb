package wire

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"testing"
	"time"
)

// TestLateReaderGetsArrivalTime writes one message, reads it well after it
// arrived and checks that the kernel stamp falls at the sender's write (its
// own clock readings around the write call), not at the late read. Margins
// are the sender's own stamps plus slack for a loaded machine, never a
// configured sleep.
func TestLateReaderGetsArrivalTime(t *testing.T) {
	if !Supported {
		t.Skip("no kernel receive stamps on this system")
	}
	t.Parallel()
	clock := NewClock(time.Now())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type stamps struct{ before, after int64 }
	sent := make(chan stamps, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var b [1]byte
		_, _ = c.Read(b[:]) // the client is ready
		before := clock.Now()
		_, _ = c.Write([]byte("token"))
		sent <- stamps{before, clock.Now()}
		_, _ = c.Read(b[:]) // until the client closes
	}()
	d := NewDialer(true)
	nc, err := d.DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	wc := Of(nc)
	if wc == nil || !wc.Kernel() {
		t.Fatalf("dialled %T without kernel stamps", nc)
	}
	if _, err := nc.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	s := <-sent
	// Read late: at least 30 ms after the write returned.
	for clock.Now() < s.after+int64(30*time.Millisecond) {
		time.Sleep(5 * time.Millisecond)
	}
	buf := make([]byte, 64)
	n, err := nc.Read(buf)
	readAt := clock.Now()
	if err != nil || string(buf[:n]) != "token" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	arrival := clock.Run(wc.LastArrival())
	slack := int64(10 * time.Millisecond) // softirq deferred to ksoftirqd on a busy machine
	if arrival < s.before-int64(time.Millisecond) || arrival > s.after+slack {
		t.Errorf("kernel stamp %d ns outside the write [%d, %d] (+%d slack)", arrival, s.before, s.after, slack)
	}
	if late := readAt - arrival; late < int64(20*time.Millisecond) {
		t.Errorf("read only %v after the kernel stamp; the stamp should be the arrival, not the read", time.Duration(late))
	}
}

func TestEOFAndDeadline(t *testing.T) {
	if !Supported {
		t.Skip("no kernel receive stamps on this system")
	}
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	closeNow := make(chan struct{})
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		_, _ = c.Write([]byte("abc"))
		<-closeNow
		c.Close()
	}()
	nc, err := NewDialer(true).DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetReadDeadline(time.Now().Add(2 * time.Second))
	b := make([]byte, 3)
	if _, err := io.ReadFull(nc, b); err != nil || string(b) != "abc" {
		t.Fatalf("read %q, %v", b, err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	var ne net.Error
	if _, err := nc.Read(b); err == nil || !asNetErr(err, &ne) || !ne.Timeout() {
		t.Fatalf("read past the deadline: %v, want a timeout", err)
	}
	_ = nc.SetReadDeadline(time.Time{})
	close(closeNow)
	if n, err := nc.Read(b); n != 0 || err != io.EOF {
		t.Fatalf("read after the peer closed: %d, %v, want io.EOF", n, err)
	}
}

func asNetErr(err error, ne *net.Error) bool {
	e, ok := err.(net.Error)
	*ne = e
	return ok
}

// TestHTTPAndTLS runs real requests through a transport dialling wrapped
// connections, plain and under TLS, and finds the stamps through the
// connection net/http hands out.
func TestHTTPAndTLS(t *testing.T) {
	if !Supported {
		t.Skip("no kernel receive stamps on this system")
	}
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "hello") })
	for _, tc := range []struct {
		name string
		srv  *httptest.Server
	}{{"http", httptest.NewServer(h)}, {"tls", httptest.NewTLSServer(h)}} {
		t.Run(tc.name, func(t *testing.T) {
			defer tc.srv.Close()
			tr := tc.srv.Client().Transport.(*http.Transport).Clone()
			tr.DialContext = NewDialer(true).DialContext
			tr.ForceAttemptHTTP2 = false
			tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // test server
			clock := NewClock(time.Now())
			var wc *Conn
			trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { wc = Of(i.Conn) }}
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, tc.srv.URL, nil)
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || string(b) != "hello" {
				t.Fatalf("body %q, %v", b, err)
			}
			if wc == nil {
				t.Fatal("no *wire.Conn under the transport's connection")
			}
			at := clock.Run(wc.LastArrival())
			if now := clock.Now(); at <= 0 || at > now {
				t.Fatalf("arrival %d not in (0, %d]", at, now)
			}
		})
	}
}

func TestClockMapsRealtime(t *testing.T) {
	t.Parallel()
	c := NewClock(time.Now().Add(-time.Second))
	before := c.Now()
	got := c.Run(time.Now().UnixNano())
	after := c.Now()
	if got < before-int64(time.Millisecond) || got > after+int64(time.Millisecond) {
		t.Fatalf("Run(now) = %d, want within [%d, %d]", got, before, after)
	}
	if c.Run(0) != 0 {
		t.Fatal("Run(0) must stay 0 (no stamp)")
	}
	if d := c.Check(); d > 5*time.Millisecond {
		t.Fatalf("drift %v with no clock step", d)
	}
}

func TestWrapLeavesOthersAlone(t *testing.T) {
	t.Parallel()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if Wrap(a, true) != a || Of(a) != nil {
		t.Fatal("a pipe is not TCP: it must stay unwrapped")
	}
}
