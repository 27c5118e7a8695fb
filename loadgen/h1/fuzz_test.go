package h1

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"testing"
)

// captureConn is a net.Conn that keeps what is written to it.
type captureConn struct {
	net.Conn
	out bytes.Buffer
}

func (c *captureConn) Write(p []byte) (int, error) { return c.out.Write(p) }

// FuzzWriteRequest writes requests with arbitrary path, header and body,
// and parses what went out with net/http's server-side parser: a request
// the writer accepts must arrive exactly as given (no header injected, no
// body cut or run on), and one whose header would not must be refused.
func FuzzWriteRequest(f *testing.F) {
	f.Add("/v1/chat/completions", "X-Api-Key", "secret", []byte(`{"model":"m"}`))
	f.Add("/a?b=c", "X-A", "1\r\nX-Injected: 2", []byte{})
	f.Add("/", "Bad Name", "v", []byte("x"))
	f.Add("/", "X-Tab", "a\tb", []byte("\r\n\r\n"))
	f.Fuzz(func(t *testing.T, path, name, value string, body []byte) {
		req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:8000"+path, bytes.NewReader(body))
		if err != nil || req.URL.Host != "127.0.0.1:8000" {
			return // not a URL net/http builds a request for
		}
		req.Header[name] = []string{value}
		c := &captureConn{}
		werr := newConn(c).writeRequest(req, false, "")
		valid := validName(name) && validValue(value) && validURI(req.URL.RequestURI())
		if !valid {
			if werr == nil {
				t.Fatalf("header %q: %q was written", name, value)
			}
			return
		}
		if werr != nil {
			t.Fatalf("valid header %q: %q refused: %v", name, value, werr)
		}
		got, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(c.out.Bytes())))
		if err != nil {
			t.Fatalf("written request does not parse: %v\n%q", err, c.out.Bytes())
		}
		b, err := io.ReadAll(got.Body)
		if err != nil || !bytes.Equal(b, body) {
			t.Fatalf("body %q (%v), want %q", b, err, body)
		}
		if got.RequestURI != req.URL.RequestURI() || got.Host != "127.0.0.1:8000" {
			t.Fatalf("arrived as %s %s, want %s", got.Host, got.RequestURI, req.URL.RequestURI())
		}
		key := textproto.CanonicalMIMEHeaderKey(name)
		switch key {
		case "Host", "Content-Length", "Transfer-Encoding", "Trailer", "Connection", "User-Agent":
			return // the transport's own headers
		}
		want := textproto.TrimString(value)
		if vs := got.Header[key]; len(vs) != 1 || vs[0] != want {
			t.Fatalf("header %q arrived as %q, want [%q]", key, vs, want)
		}
		if n := len(got.Header); n != 3 { // the header, User-Agent, Content-Length
			t.Fatalf("%d headers arrived, want 3: %v", n, got.Header)
		}
	})
}

// TestWriteBufferBound: a connection keeps its write buffer for the next
// request, unless a long body grew it past maxKeptWrite.
func TestWriteBufferBound(t *testing.T) {
	for _, tc := range []struct {
		size int
		kept bool
	}{{1 << 10, true}, {maxKeptWrite + 1, false}} {
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:8000/", bytes.NewReader(make([]byte, tc.size)))
		c := newConn(&captureConn{})
		if err := c.writeRequest(req, false, ""); err != nil {
			t.Fatal(err)
		}
		if kept := c.wbuf != nil; kept != tc.kept {
			t.Errorf("%d-byte body: buffer kept %v, want %v", tc.size, kept, tc.kept)
		}
	}
}
