package h1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"time"
)

// Transport is an http.RoundTripper for HTTP/1.1 over TCP, and over TLS
// when TLSClientConfig is set. Its zero value dials with net.Dialer and
// falls back to nothing (https fails); set the fields before its first
// request and do not change them after.
type Transport struct {
	// Dial opens a connection to addr ("host:port"); nil uses a net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxIdlePerHost is how many idle connections a host keeps (0: 2, as
	// net/http's default).
	MaxIdlePerHost int
	// IdleTimeout closes a connection idle for longer (0: 90 s).
	IdleTimeout time.Duration
	// DisableKeepAlives sends "Connection: close" and closes each
	// connection after its response.
	DisableKeepAlives bool
	// Proxy picks a proxy for a request, as http.Transport.Proxy does; a
	// request it gives one goes to Fallback. nil: no proxy.
	Proxy func(*http.Request) (*url.URL, error)
	// TLSClientConfig, when set, has this transport speak https itself
	// (HTTP/1.1 over TLS, the connection pooled and drained as a plain
	// one); nil hands https to Fallback. A config without ServerName
	// verifies the request's host; NextProtos is always http/1.1.
	TLSClientConfig *tls.Config
	// Fallback carries what this transport does not: proxied requests, and
	// https without TLSClientConfig (nil: they fail).
	Fallback http.RoundTripper
	// UserAgent is the User-Agent of a request that sets none (default
	// net/http's, Go-http-client/1.1), written with the request's other
	// headers: no request is copied to carry it.
	UserAgent string

	mu   sync.Mutex
	idle map[string][]*conn // per host:port, most recently used last
}

// Clone returns a copy of t's settings with no connections; an
// *http.Transport fallback is cloned too.
func (t *Transport) Clone() *Transport {
	c := &Transport{Dial: t.Dial, MaxIdlePerHost: t.MaxIdlePerHost, IdleTimeout: t.IdleTimeout,
		DisableKeepAlives: t.DisableKeepAlives, Proxy: t.Proxy, Fallback: t.Fallback, UserAgent: t.UserAgent}
	if t.TLSClientConfig != nil {
		c.TLSClientConfig = t.TLSClientConfig.Clone()
	}
	if ht, ok := t.Fallback.(*http.Transport); ok {
		c.Fallback = ht.Clone()
	}
	return c
}

// CloseIdleConnections closes the idle connections of t and of its
// fallback.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, cs := range idle {
		for _, c := range cs {
			c.nc.Close()
		}
	}
	if f, ok := t.Fallback.(interface{ CloseIdleConnections() }); ok {
		f.CloseIdleConnections()
	}
}

// RoundTrip sends req and returns its response once the headers arrived.
// The body reads from the connection, which returns to the pool when the
// body was read to its end and closed.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil || !t.serves(req.URL.Scheme) || t.proxied(req) {
		return t.fallback(req)
	}
	ctx := req.Context()
	trace := httptrace.ContextClientTrace(ctx)
	addr := HostPort(req.URL)
	if trace != nil && trace.GetConn != nil {
		trace.GetConn(addr)
	}
	key := addr
	if req.URL.Scheme == "https" {
		key = "https://" + addr // never a plain connection's pool
	}
	c, reused, err := t.conn(ctx, req.URL, addr, key)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	if trace != nil && trace.GotConn != nil {
		trace.GotConn(httptrace.GotConnInfo{Conn: c.nc, Reused: reused, WasIdle: reused})
	}
	// The context's end interrupts whatever the exchange is blocked in.
	stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(aLongTimeAgo) })
	fail := func(err error) (*http.Response, error) {
		stop()
		c.nc.Close()
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return nil, err
	}
	if err := c.writeRequest(req, t.DisableKeepAlives, t.UserAgent); err != nil {
		if reused {
			var nw *notWritten
			err = classify(c.nc, err, !errors.As(err, &nw))
		}
		return fail(err)
	}
	if trace != nil && trace.WroteRequest != nil {
		trace.WroteRequest(httptrace.WroteRequestInfo{})
	}
	resp, err := c.readResponse(req, trace)
	if err != nil {
		var na *noAnswer
		if reused && errors.As(err, &na) && ctx.Err() == nil {
			err = classify(c.nc, na.err, true)
		}
		return fail(err)
	}
	keep := !resp.Close && !req.Close && !t.DisableKeepAlives && resp.StatusCode != http.StatusSwitchingProtocols
	resp.Body = &body{rc: resp.Body, c: c, t: t, key: key, stop: stop, keep: keep}
	return resp, nil
}

// serves reports whether the transport speaks scheme itself.
func (t *Transport) serves(scheme string) bool {
	return scheme == "http" || scheme == "https" && t.TLSClientConfig != nil
}

func (t *Transport) proxied(req *http.Request) bool {
	if t.Proxy == nil {
		return false
	}
	u, err := t.Proxy(req)
	return err != nil || u != nil // a proxy error is the fallback's to report
}

func (t *Transport) fallback(req *http.Request) (*http.Response, error) {
	if t.Fallback == nil {
		closeBody(req)
		return nil, fmt.Errorf("h1: no transport for %s", req.URL.Redacted())
	}
	if _, ok := req.Header["User-Agent"]; !ok && t.UserAgent != "" {
		req = req.Clone(req.Context()) // a proxied request: not the common path
		req.Header.Set("User-Agent", t.UserAgent)
	}
	return t.Fallback.RoundTrip(req)
}

// WritesUserAgent reports whether t writes a User-Agent of its own
// (UserAgent is set): a client over it need not add one.
func (t *Transport) WritesUserAgent() bool { return t.UserAgent != "" }

// conn takes the most recently used live idle connection of pool key, or
// dials addr with ctx (whose httptrace hooks see the DNS lookup, the
// connect and the TLS handshake).
func (t *Transport) conn(ctx context.Context, u *url.URL, addr, key string) (*conn, bool, error) {
	for {
		c := t.takeIdle(key)
		if c == nil {
			break
		}
		if time.Since(c.idleSince) > t.idleTimeout() || closedByPeer(c.nc) {
			c.nc.Close()
			continue
		}
		return c, true, nil
	}
	dial := t.Dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	nc, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, false, err
	}
	if u.Scheme == "https" {
		if nc, err = t.handshake(ctx, nc, u.Hostname()); err != nil {
			return nil, false, err
		}
	}
	return newConn(nc), false, nil
}

// handshake runs TLS over nc, reporting it to the context's trace.
func (t *Transport) handshake(ctx context.Context, nc net.Conn, host string) (net.Conn, error) {
	cfg := t.TLSClientConfig.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	cfg.NextProtos = []string{"http/1.1"}
	tc := tls.Client(nc, cfg)
	trace := httptrace.ContextClientTrace(ctx)
	if trace != nil && trace.TLSHandshakeStart != nil {
		trace.TLSHandshakeStart()
	}
	err := tc.HandshakeContext(ctx)
	if trace != nil && trace.TLSHandshakeDone != nil {
		trace.TLSHandshakeDone(tc.ConnectionState(), err)
	}
	if err != nil {
		nc.Close()
		return nil, err
	}
	return tc, nil
}

func (t *Transport) takeIdle(key string) *conn {
	t.mu.Lock()
	defer t.mu.Unlock()
	cs := t.idle[key]
	if len(cs) == 0 {
		return nil
	}
	c := cs[len(cs)-1]
	cs[len(cs)-1] = nil
	t.idle[key] = cs[:len(cs)-1]
	return c
}

// put returns c to the pool, or closes it when the pool is full.
func (t *Transport) put(key string, c *conn) {
	c.idleSince = time.Now()
	t.mu.Lock()
	if t.idle == nil {
		t.idle = make(map[string][]*conn)
	}
	if cs := t.idle[key]; len(cs) < t.maxIdle() {
		t.idle[key] = append(cs, c)
		c = nil
	}
	t.mu.Unlock()
	if c != nil {
		c.nc.Close()
	}
}

func (t *Transport) maxIdle() int {
	if t.MaxIdlePerHost > 0 {
		return t.MaxIdlePerHost
	}
	return 2
}

func (t *Transport) idleTimeout() time.Duration {
	if t.IdleTimeout > 0 {
		return t.IdleTimeout
	}
	return 90 * time.Second
}

// conn is one connection and its read buffer, which outlives a response
// (bytes past it, if any, make the connection unfit for the pool).
type conn struct {
	nc        net.Conn
	br        *bufio.Reader
	wbuf      []byte
	idleSince time.Time
}

func newConn(nc net.Conn) *conn {
	return &conn{nc: nc, br: bufio.NewReaderSize(nc, 4<<10)}
}

// readResponse reads the response's headers, skipping informational (1xx)
// responses but 101.
func (c *conn) readResponse(req *http.Request, trace *httptrace.ClientTrace) (*http.Response, error) {
	if _, err := c.br.Peek(1); err != nil {
		return nil, &noAnswer{err}
	}
	if trace != nil && trace.GotFirstResponseByte != nil {
		trace.GotFirstResponseByte()
	}
	for {
		resp, err := http.ReadResponse(c.br, req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil
		}
	}
}

// noAnswer is a failure before the response's first byte.
type noAnswer struct{ err error }

func (e *noAnswer) Error() string { return e.err.Error() }
func (e *noAnswer) Unwrap() error { return e.err }

// body is a response body on a connection the transport lends: read to
// its end and closed, the connection goes back to the pool; closed earlier,
// it goes back only when the rest of the body comes at once (drain);
// interrupted by the context, it is closed.
type body struct {
	rc   io.ReadCloser
	c    *conn
	t    *Transport
	key  string
	stop func() bool
	keep bool
	eof  bool
	done bool
}

var errBodyClosed = errors.New("h1: read on a closed response body")

func (b *body) Read(p []byte) (int, error) {
	if b.done {
		return 0, errBodyClosed
	}
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

func (b *body) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	interrupted := !b.stop()
	if b.keep && !b.eof && !interrupted {
		b.eof = b.drain()
	}
	if b.keep && b.eof && !interrupted && b.c.br.Buffered() == 0 {
		b.t.put(b.key, b.c)
		return nil
	}
	return b.c.nc.Close()
}

// drain reads what is left of a body its reader stopped short of, waiting
// at most drainWait: a stream's end (the chunked terminator behind its
// [DONE] event) comes a moment after its last event, and a connection kept
// is a dial the next request does not pay. It reports whether it reached
// the end.
func (b *body) drain() bool {
	if b.c.nc.SetReadDeadline(time.Now().Add(drainWait)) != nil {
		return false
	}
	n, err := io.Copy(io.Discard, io.LimitReader(b.rc, drainMax))
	return err == nil && n < drainMax && b.c.nc.SetReadDeadline(time.Time{}) == nil
}

// drainWait and drainMax bound drain.
const (
	drainWait = time.Millisecond
	drainMax  = 4 << 10
)

// HostPort is the address u dials: its host with its port (80, or 443 for
// https, when it names none).
func HostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// aLongTimeAgo is a deadline that has passed: setting it interrupts a
// blocked read or write.
var aLongTimeAgo = time.Unix(1, 0)
