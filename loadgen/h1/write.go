package h1

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// writeRequest writes req in one call: request line, headers as net/http
// writes them (Host from req.Host or the URL, the User-Agent agent when
// req sets none, the body's Content-Length), and the body. The body is read whole first: a
// benchmark's bodies are built in memory, and one write puts the request
// on the wire at once.
func (c *conn) writeRequest(req *http.Request, closeAfter bool, agent string) error {
	b := c.wbuf[:0]
	defer func() {
		if cap(b) <= maxKeptWrite {
			c.wbuf = b[:0]
		} else {
			c.wbuf = nil // a long trace prompt's buffer is not kept by every connection
		}
	}()
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	uri := req.URL.RequestURI()
	if !validValue(host) || !validName(method) || !validURI(uri) {
		closeBody(req)
		return fmt.Errorf("h1: invalid request line or host %q", method+" "+uri+" "+host)
	}
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, uri...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\n"...)
	if _, ok := req.Header["User-Agent"]; !ok {
		if agent == "" {
			agent = "Go-http-client/1.1"
		}
		b = append(b, "User-Agent: "...)
		b = append(b, agent...)
		b = append(b, "\r\n"...)
	}
	for k, vs := range req.Header {
		switch k {
		case "Host", "Content-Length", "Transfer-Encoding", "Trailer", "Connection":
			continue // the transport writes these
		}
		if !validName(k) {
			closeBody(req)
			return fmt.Errorf("h1: invalid header field name %q", k)
		}
		for _, v := range vs {
			if !validValue(v) {
				closeBody(req)
				return fmt.Errorf("h1: invalid header field value for %q", k)
			}
			b = append(b, k...)
			b = append(b, ": "...)
			b = append(b, v...)
			b = append(b, "\r\n"...)
		}
	}
	if closeAfter || req.Close {
		b = append(b, "Connection: close\r\n"...)
	}
	b, err := appendBody(b, req)
	if err != nil {
		return err
	}
	n, err := c.nc.Write(b)
	if err != nil && n == 0 {
		return &notWritten{err}
	}
	return err
}

// notWritten is a write that failed before any byte of the request went
// out.
type notWritten struct{ err error }

func (e *notWritten) Error() string { return e.err.Error() }
func (e *notWritten) Unwrap() error { return e.err }

// maxKeptWrite bounds the write buffer a connection keeps between requests
// (net/http keeps 4 KiB; a chat body is a few KiB, a trace prompt can be
// hundreds, and 256 connections each keeping one would add up).
const maxKeptWrite = 64 << 10

// appendBody appends the Content-Length header, the blank line and the
// body (closing it). A GET or HEAD without a body sends no length.
func appendBody(b []byte, req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		if req.Method != "" && req.Method != http.MethodGet && req.Method != http.MethodHead {
			b = append(b, "Content-Length: 0\r\n"...)
		}
		return append(b, "\r\n"...), nil
	}
	defer req.Body.Close()
	n := req.ContentLength
	var data []byte
	if n < 0 { // unknown length: read it all first
		var err error
		if data, err = io.ReadAll(req.Body); err != nil {
			return b, fmt.Errorf("h1: reading the request body: %w", err)
		}
		n = int64(len(data))
	}
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, n, 10)
	b = append(b, "\r\n\r\n"...)
	if data != nil {
		return append(b, data...), nil
	}
	head := len(b)
	b = append(b, make([]byte, n)...)
	if _, err := io.ReadFull(req.Body, b[head:]); err != nil {
		return b, fmt.Errorf("h1: reading the request body: %w", err)
	}
	return b, nil
}

// validName reports whether s is an HTTP token (RFC 9110 5.1).
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || isDelimiter(c) {
			return false
		}
	}
	return true
}

func isDelimiter(c byte) bool {
	switch c {
	case '"', '(', ')', ',', '/', ':', ';', '<', '=', '>', '?', '@', '[', '\\', ']', '{', '}':
		return true
	}
	return false
}

// validURI reports whether s fits a request line: no spaces or control
// bytes (a query url.Parse kept raw may hold them).
func validURI(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == 0x7f {
			return false
		}
	}
	return s != ""
}

// validValue reports whether s can be a header value: no control bytes
// but tab (no CR or LF that would end the header early).
func validValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
