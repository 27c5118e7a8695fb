package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"

	"github.com/surgebench/surge/loadgen/h1"
	"github.com/surgebench/surge/metrics"
)

// Connection reuse. A server may close a keep-alive connection while it
// sits idle in the client's pool (llama.cpp's server does so after a few
// requests); a request that picks it up just then fails although the server
// never saw it. net/http retries such a request only when it knows nothing
// was written, or when the request is idempotent, which a POST is not.
// send retries it once on a fresh connection and records the retry, so the
// run counts neither a false error nor a hidden one.
//
// A request is retried when all of these hold: its connection came from
// the pool (httptrace GotConn: Reused), not one byte of a response arrived
// (no GotFirstResponseByte), the failure is the connection closing or
// resetting (EOF, ECONNRESET, EPIPE, "server closed idle connection"), and
// the request's context is live. The h1 transport tells whether the server
// can have read the request (h1.ClosedError): not when no byte of it was
// written, nor when the server's end reset the connection on its bytes
// (what a socket its application had closed does: llama.cpp's server
// closes the connection after every streamed answer while announcing
// keep-alive); possibly when it closed after the request was written.
// Such a retry is recorded as a possible duplicate (Record.RetryDuplicate),
// as is every retry through another transport, which cannot tell. A
// repeat failure on the fresh connection is an error record. Everything
// after the first response byte, and every failure on a fresh connection,
// is an error.

// WithConnectionRetries sets how many times a request is re-sent on a
// fresh connection after a reused one closed before any answer: 1 (the
// default) or 0, which makes such a request an error record instead (a
// server that had read it never sees it twice).
func WithConnectionRetries(n int) Option { return func(g *Generator) { g.noRetry = n <= 0 } }

// ConnectionRetries returns how many requests were re-sent so far (safe
// to call while the run goes on).
func (g *Generator) ConnectionRetries() int64 { return g.resent.Load() }

// errStaleNoRetry marks a request that failed on a reused connection and
// was not re-sent; errUnreadNoRetry one the server had not read.
var (
	errStaleNoRetry  = errors.New("the server closed a reused connection before answering (connection retries are off; it may have read the request)")
	errUnreadNoRetry = errors.New("the server had closed a reused connection; it never read the request (connection retries are off; --connection-reuse-strategy never avoids reuse)")
)

// duplicate reports whether a send that failed with err, on a connection
// the server closed, may have been read by the server.
func duplicate(err error) bool {
	var ce *h1.ClosedError
	if errors.As(err, &ce) {
		return ce.Duplicate()
	}
	return true // another transport cannot tell
}

// stale reports whether err is a pooled connection the server had closed,
// failing before the server answered anything.
func (t *reqTrace) stale(err error) bool {
	return t.reused && !t.firstByte.Load() && connectionClosed(err)
}

// connectionClosed reports whether err is the peer closing or resetting
// the connection (not a timeout, a refusal or a cancellation).
func connectionClosed(err error) bool {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		return true
	}
	// net/http's errServerClosedIdle is not exported.
	return strings.Contains(err.Error(), "server closed idle connection")
}

// freshClient is the generator's client over a clone of its transport
// with keep-alives off: every request it sends dials a new connection. A
// transport of another kind is used as it is (its retries may then reuse
// a pooled connection).
func (g *Generator) freshClient() *http.Client {
	t := ownTransport(g.transport, func(t *http.Transport) { t.DisableKeepAlives = true },
		func(t *h1.Transport) { t.DisableKeepAlives = true })
	if t == nil {
		return g.client
	}
	return g.newClient(t)
}

// ownTransport returns a clone of rt with the changes applied: setH1 to
// an h1.Transport, setHTTP to an *http.Transport, its own or h1's
// fallback; nil when rt is of another kind.
func ownTransport(rt http.RoundTripper, setHTTP func(*http.Transport), setH1 func(*h1.Transport)) interface {
	http.RoundTripper
	CloseIdleConnections()
} {
	switch t := rt.(type) {
	case *http.Transport:
		ht := t.Clone()
		setHTTP(ht)
		return ht
	case *h1.Transport:
		ht := t.Clone()
		setH1(ht)
		if fb, ok := ht.Fallback.(*http.Transport); ok {
			setHTTP(fb)
		}
		return ht
	}
	return nil
}

// send does req, stamping rec.IssuedNs as it goes to the transport (the
// caller takes rec.SentNs from the request's trace), and retries it once
// on a fresh connection when a pooled connection turned out to be closed
// (see above); rec.ConnectionRetries counts the retry and the stamps are
// then the retry's. tr is the trace in req's context: it sees both.
func (g *Generator) send(req *http.Request, rec *metrics.Record, tr *reqTrace) (*http.Response, error) {
	rctx := req.Context()
	rec.IssuedNs = g.now()
	resp, err := g.clientFor(rctx).Do(req)
	if err == nil || !tr.stale(err) || rctx.Err() != nil || req.GetBody == nil {
		return resp, err
	}
	if g.noRetry {
		if !duplicate(err) {
			return nil, fmt.Errorf("%w: %w", errUnreadNoRetry, err)
		}
		return nil, fmt.Errorf("%w: %w", errStaleNoRetry, err)
	}
	body, berr := req.GetBody()
	if berr != nil {
		return nil, err
	}
	retry := req.Clone(rctx)
	retry.Body = body
	rec.ConnectionRetries++
	rec.RetryDuplicate = duplicate(err)
	g.resent.Add(1)
	rec.IssuedNs = g.now()
	return g.fresh.Do(retry)
}
