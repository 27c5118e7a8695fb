package hostile

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/internal/bounded"
)

// The cases of a surface that listens (Listens: surge's OTLP receiver):
// the case plays a client that sends it what no exporter would, once the
// surface accepts connections at Env.Listen, and records how much of its
// body the surface took before it answered or hung up. The surface must
// stop reading near its Limit, answer (or hang up) without crashing, and
// go on with its run.

// clientCase is a listening surface's case: send writes one request to
// the connection (the body at most max bytes, every > 0 dripping it) and
// the case notes the bytes the surface took and its status line.
func clientCase(name string, bounded bool, send func(w io.Writer, max int64) error, every time.Duration) Case {
	return Case{Name: name, Needs: Listens, Bounded: bounded, Setup: func(t *testing.T, e *Env, s *Surface) {
		e.client = func(conn net.Conn) {
			var w io.Writer = conn
			if every > 0 {
				w = &drip{w: conn, every: every}
			}
			cw := &countingConn{w: w}
			errc := make(chan error, 1)
			go func() { errc <- send(cw, e.cap()) }()
			// The answer, read while the body goes: a surface that refuses a
			// body answers before it ends.
			status := readStatus(conn)
			_ = conn.SetDeadline(time.Now())
			<-errc
			e.clientSent.Store(cw.n)
			e.clientStatus.Store(int64(status))
		}
	}}
}

// ListenCases are the cases of a listening surface.
var ListenCases = []Case{
	clientCase("huge body to a receiver", true, func(w io.Writer, max int64) error {
		if _, err := fmt.Fprintf(w, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: %d\r\n\r\n", listenPath, int64(8)<<30); err != nil {
			return err
		}
		return zeros(w, max)
	}, 0),
	clientCase("endless body to a receiver", true, func(w io.Writer, max int64) error {
		if _, err := fmt.Fprintf(w, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", listenPath); err != nil {
			return err
		}
		chunk := []byte(fmt.Sprintf("%x\r\n%s\r\n", 64<<10, strings.Repeat("[", 64<<10)))
		for n := int64(0); n < max; n += 64 << 10 {
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
		return nil
	}, 0),
	clientCase("garbage to a receiver", false, func(w io.Writer, _ int64) error {
		body := make([]byte, 4096)
		_, _ = rand.Read(body)
		_, err := fmt.Fprintf(w, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: %d\r\n\r\n%s", listenPath, len(body), body)
		return err
	}, 0),
	clientCase("gzip bomb to a receiver", true, func(w io.Writer, max int64) error {
		bomb := gzipZeros(max)
		_, err := fmt.Fprintf(w, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s", listenPath, len(bomb), bomb)
		return err
	}, 0),
	clientCase("slow drip to a receiver", false, func(w io.Writer, max int64) error {
		if _, err := fmt.Fprintf(w, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: 1000000\r\n\r\n", listenPath); err != nil {
			return err
		}
		return zeros(w, 1000000)
	}, 100*time.Millisecond),
}

// listenPath is where the client cases send (OTLP/HTTP's traces path).
const listenPath = "/v1/traces"

func zeros(w io.Writer, n int64) error {
	chunk := make([]byte, 64<<10)
	for sent := int64(0); sent < n; sent += int64(len(chunk)) {
		if _, err := w.Write(chunk); err != nil {
			return err
		}
	}
	return nil
}

// readStatus reads the status code of the surface's answer (0: it hung
// up without one).
func readStatus(conn net.Conn) int {
	_ = conn.SetReadDeadline(time.Now().Add(40 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	return resp.StatusCode
}

// drip writes one byte per period.
type drip struct {
	w     io.Writer
	every time.Duration
}

func (d *drip) Write(p []byte) (int, error) {
	for i := range p {
		time.Sleep(d.every)
		if _, err := d.w.Write(p[i : i+1]); err != nil {
			return i, err
		}
	}
	return len(p), nil
}

// countingConn counts the bytes written through it.
type countingConn struct {
	w io.Writer
	n int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// gzipZeros is a gzip stream of n zeros, compressed about a thousandfold.
func gzipZeros(n int64) []byte {
	var b bytes.Buffer
	zw := newGzip(&b)
	_ = zeros(zw, n)
	_ = zw.Close()
	return b.Bytes()
}

// attack connects to the surface once it listens, within wait, and runs
// the case's client; it closes e.arrived when the client has run.
func (e *Env) attack(t *testing.T, wait time.Duration) {
	deadline := time.Now().Add(wait)
	var conn net.Conn
	for {
		c, err := net.DialTimeout("tcp", e.Listen, time.Second)
		if err == nil {
			conn = c
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the surface never listened at %s", e.Listen)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	defer conn.Close()
	e.client(conn)
}

func init() { Cases = append(Cases, ListenCases...) }

func newGzip(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) }

// checkClient asserts what a listening surface keeps against a client:
// it takes no more of a body than its Limit (and the sockets' buffers),
// and refuses a body it cannot read with a client error, not a crash.
func (e *Env) checkClient(t *testing.T, s *Surface, c *Case, o *Outcome) {
	t.Helper()
	t.Logf("the client wrote %s; the surface answered %d", bounded.Bytes(o.ClientSent), o.ClientStatus)
	if slack := s.Limit + 32<<20; c.Bounded && o.ClientSent > slack {
		t.Errorf("the surface took %s of one request, past its %s limit", bounded.Bytes(o.ClientSent), bounded.Bytes(s.Limit))
	}
	if o.ClientStatus >= 500 && o.ClientStatus != http.StatusServiceUnavailable {
		t.Errorf("the surface answered %d: a server error for a client's bad request", o.ClientStatus)
	}
	if c.Name == "garbage to a receiver" && o.ClientStatus != http.StatusBadRequest {
		t.Errorf("garbage answered %d, want 400", o.ClientStatus)
	}
}
