// Package auth gives the benchmark's requests the credentials of the
// clouds that host models, each from the cloud's own credential chain:
// AWS Signature Version 4 (the AWS SDK for Go v2's signer and default
// credential chain: environment, shared config and profiles, SSO, web
// identity, container and instance roles), Microsoft Entra ID tokens
// (the Azure SDK's DefaultAzureCredential) and Google's application
// default credentials (golang.org/x/oauth2/google).
//
// Authorize runs once per request, after its other headers are set, and
// stays off the token path. A credential that expires is fetched again
// before it does, on a goroutine of its own, so a request only reads the
// current one (an atomic load and a clock reading); a request finds an
// expired credential only when that refresh failed, and then fetches it
// itself, one request at a time. Every fetch goes through the outbound
// policy (internal/outbound) and follows no redirect: a token endpoint
// that redirects, or answers a page, fails the fetch, naming it.
package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/internal/outbound"
)

// Authorizer is what the generator and the preflight ask of a cloud's
// credentials (loadgen.Authorizer).
type Authorizer interface {
	// Authorize sets req's credential headers; body is its whole body.
	Authorize(req *http.Request, body []byte) error
	// Identity names the cloud and who the requests are sent as, never
	// a secret: "AWS SigV4 (bedrock, us-east-1): access key AKIA…MPLE
	// from EnvConfigCredentials".
	Identity() string
	// Secrets are the credentials in use now, to redact wherever a
	// server might echo one.
	Secrets() []string
	// Close stops refreshing.
	Close()
}

// DefaultFetchTimeout bounds one fetch of a credential (a token endpoint,
// the instance metadata service, SSO) when the caller gives no bound.
const DefaultFetchTimeout = 30 * time.Second

// fetchTimeout is d, or DefaultFetchTimeout when d is not above zero.
func fetchTimeout(d time.Duration) time.Duration {
	if d <= 0 {
		return DefaultFetchTimeout
	}
	return d
}

// httpClient is the client of the credential fetches: the outbound
// policy's, following no redirect, each exchange bounded in time (by
// timeout) and its answer in size; the failures it meets are kept in
// seen.
func httpClient(timeout time.Duration, seen *lastError) *http.Client {
	return outbound.NewClient(outbound.WithTransport(boundedBodies{outbound.NewTransport(outbound.TransportOptions{}), seen}),
		outbound.NoRedirects(), outbound.WithTimeout(timeout))
}

// lastError is the last failure a credential source's client met: the
// SDKs try again after one, and when the fetch's time runs out say only
// that, so the fetch says what it was trying again after.
type lastError struct{ p atomic.Pointer[error] }

func (l *lastError) set(err error) {
	if l != nil {
		l.p.Store(&err)
	}
}

// reset forgets the failures of an earlier fetch.
func (l *lastError) reset() {
	if l != nil {
		l.p.Store(nil)
	}
}

// cause is err, with the last failure met added when err is the fetch's
// time running out.
func (l *lastError) cause(err error) error {
	if l == nil || !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if p := l.p.Load(); p != nil {
		return fmt.Errorf("%w (trying again after: %v)", err, *p)
	}
	return err
}

// MaxAnswer bounds a token endpoint's answer: a token is a few KiB.
const MaxAnswer = 512 << 10

// boundedBodies fails an answer past MaxAnswer with an error naming the
// bound (the libraries read at most 1 MiB and then say only that it was
// no JSON).
// The failures met (no answer, an error status, an answer over the
// bound) are kept in seen.
type boundedBodies struct {
	next http.RoundTripper
	seen *lastError
}

func (b boundedBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	what := "the answer of " + req.URL.Host + req.URL.Path
	resp, err := b.next.RoundTrip(req)
	if err != nil {
		if req.Context().Err() == nil {
			b.seen.set(err)
		}
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		b.seen.set(fmt.Errorf("%s: %s", what, resp.Status))
	}
	if resp.ContentLength > MaxAnswer {
		resp.Body.Close()
		err := &bounded.TooLargeError{What: what, Limit: MaxAnswer, Size: resp.ContentLength}
		b.seen.set(err)
		return nil, err
	}
	resp.Body = &limitedBody{ReadCloser: resp.Body, left: MaxAnswer, what: what, seen: b.seen}
	return resp, nil
}

// limitedBody reads a body up to its limit, then fails naming it.
type limitedBody struct {
	io.ReadCloser
	left int64
	what string
	seen *lastError
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.left <= 0 {
		err := &bounded.TooLargeError{What: l.what, Limit: MaxAnswer}
		l.seen.set(err)
		return 0, err
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.ReadCloser.Read(p)
	l.left -= int64(n)
	return n, err
}

// earlyRefresh is how long before it expires a credential is fetched
// again (a quarter of its lifetime when that is shorter).
const earlyRefresh = 5 * time.Minute

// retryRefresh is the pause after a refresh that failed, or that brought
// back the credential it had.
const retryRefresh = 15 * time.Second

// cached holds a credential that may expire, refreshed ahead of time.
type cached[T any] struct {
	// fetch gets the credential anew and says when it expires (zero:
	// never).
	fetch func(ctx context.Context) (T, time.Time, error)
	// timeout bounds one fetch; seen, when set, is the last failure its
	// client met, said when a fetch runs out of time.
	timeout time.Duration
	seen    *lastError
	cur     atomic.Pointer[entry[T]]
	mu      sync.Mutex // one fetch at a time
	stop    context.CancelFunc
	done    chan struct{}
}

type entry[T any] struct {
	v       T
	expires time.Time
	fetched time.Time
}

// start fetches the first credential and refreshes it until ctx ends or
// close is called.
func (c *cached[T]) start(ctx context.Context) error {
	if _, err := c.refresh(ctx, nil); err != nil {
		return err
	}
	ctx, c.stop = context.WithCancel(context.WithoutCancel(ctx))
	c.done = make(chan struct{})
	go c.run(ctx)
	return nil
}

// close stops the refreshing goroutine.
func (c *cached[T]) close() {
	if c.stop != nil {
		c.stop()
		<-c.done
	}
}

// get returns the current credential, fetching it when it has expired.
func (c *cached[T]) get(ctx context.Context) (T, error) {
	if e := c.cur.Load(); e != nil && (e.expires.IsZero() || time.Now().Before(e.expires)) {
		return e.v, nil
	}
	e, err := c.refresh(ctx, c.cur.Load())
	if err != nil {
		var zero T
		return zero, err
	}
	return e.v, nil
}

// refresh fetches the credential unless another call replaced old
// meanwhile.
func (c *cached[T]) refresh(ctx context.Context, old *entry[T]) (*entry[T], error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.cur.Load(); e != nil && e != old {
		return e, nil
	}
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout(c.timeout))
	defer cancel()
	c.seen.reset()
	// Some sources take no context (an oauth2.TokenSource): the wait for
	// one ends with ctx all the same (an interrupt), the fetch with its
	// client's timeout.
	type result struct {
		v   T
		exp time.Time
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, exp, err := c.fetch(ctx)
		done <- result{v, exp, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		return nil, c.seen.cause(ctx.Err())
	}
	v, exp, err := r.v, r.exp, r.err
	if err != nil {
		return nil, c.seen.cause(err)
	}
	e := &entry[T]{v: v, expires: exp, fetched: time.Now()}
	c.cur.Store(e)
	return e, nil
}

// run refreshes the credential ahead of its expiry.
func (c *cached[T]) run(ctx context.Context) {
	defer close(c.done)
	for {
		e := c.cur.Load()
		if e == nil || e.expires.IsZero() {
			return
		}
		early := min(earlyRefresh, e.expires.Sub(e.fetched)/4)
		wait := max(time.Until(e.expires)-early, time.Second)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if n, err := c.refresh(ctx, e); err != nil || !n.expires.After(e.expires) {
			// Failed, or the source gave the same one back: ask again
			// shortly (until it expires, requests still have it).
			t := time.NewTimer(retryRefresh)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			if err == nil {
				c.cur.CompareAndSwap(n, &entry[T]{v: n.v, expires: n.expires, fetched: time.Now()})
			}
		}
	}
}

// mask shows the start and end of an identifier (an access key id), never
// all of it.
func mask(s string) string {
	if len(s) <= 8 {
		return strings.Repeat("*", len(s))
	}
	return s[:4] + "…" + s[len(s)-4:]
}
