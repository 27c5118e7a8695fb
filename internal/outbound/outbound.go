// Package outbound is the one place surge's HTTP requests are made from:
// the benchmark's own, the preflight's, readiness and model lists,
// fingerprints and server facts, /metrics scrapes, hooks, Hugging Face
// downloads and every exporter. It owns the rules every request keeps:
//
//   - Redirects: an origin is scheme, host and port. A redirect never
//     goes from https to http; one to another origin carries none of the
//     caller's headers but a few harmless ones (Accept, Content-Type, …),
//     so a credential (an API key, a custom -H header, a Hub token) stays
//     with the origin it was given for unless the caller opts in; one that
//     would change the method (a POST turned into a GET without its body)
//     is handed back to the caller unfollowed.
//   - Timeouts: connect and TLS handshakes are bounded; a whole exchange
//     is bounded where the caller says so (never a stream's: those end by
//     their context).
//   - Body bounds: ReadBody reads a response whole only up to a limit the
//     error names.
//   - The user agent: surge/VERSION unless the caller set one.
//
// No other package builds an http.Client or http.Transport (a test
// checks): they ask for a Client here with the options they need.
package outbound

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/surgebench/surge/internal/bounded"
)

// version is what the user agent names; SetVersion sets it once at start.
var version atomic.Pointer[string]

// SetVersion sets the version the user agent names (main sets it from the
// build's stamp).
func SetVersion(v string) { version.Store(&v) }

// UserAgent is the User-Agent surge sends: "surge/VERSION".
func UserAgent() string {
	if v := version.Load(); v != nil && *v != "" {
		return "surge/" + *v
	}
	return "surge/dev"
}

// Origin is a URL's scheme, host and port, the port made explicit
// ("https://example.com:443", "http://[::1]:8000"): what a credential belongs to.
func Origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		default:
			port = "80"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// MaxRedirects bounds a chain of followed redirects (net/http's own bound).
const MaxRedirects = 10

// harmless are the headers a redirect to another origin keeps: they carry
// nothing of the user's.
var harmless = map[string]bool{
	"Accept": true, "Accept-Encoding": true, "Accept-Language": true, "Content-Type": true,
	"Content-Length": true, "User-Agent": true, "Range": true, "If-None-Match": true,
	"If-Modified-Since": true, "Cache-Control": true, "Traceparent": true, "Tracestate": true,
}

// DowngradeError is a redirect from https to http, which is never
// followed: it would send the request, and whatever it carries, in clear
// text.
type DowngradeError struct {
	From, To string // the origins
}

func (e *DowngradeError) Error() string {
	return fmt.Sprintf("refused a redirect from %s to %s: it would leave https for plain http", e.From, e.To)
}

// Redirect is what a CheckRedirect hook learns of a redirect it follows.
type Redirect struct {
	// Response is the 3xx that asked for it.
	Response *http.Response
	// From and To are the origins of the first request and of this hop.
	From, To string
	// CrossOrigin is true when To differs from From: the caller's headers
	// were dropped unless KeepHeadersAcrossOrigins was given.
	CrossOrigin bool
}

type config struct {
	transport    http.RoundTripper
	follow       bool
	keepHeaders  bool
	timeout      time.Duration
	onRedirect   func(Redirect)
	maxRedirects int
}

// Option configures a Client.
type Option func(*config)

// WithTransport sends through rt (the benchmark's connection pool, say)
// instead of the shared transport.
func WithTransport(rt http.RoundTripper) Option { return func(c *config) { c.transport = rt } }

// NoRedirects hands every 3xx back to the caller unfollowed (what a
// benchmark does by default: it measures the server it was pointed at).
func NoRedirects() Option { return func(c *config) { c.follow = false } }

// KeepHeadersAcrossOrigins sends the caller's headers on a redirect to
// another origin too: only when the user opted in.
func KeepHeadersAcrossOrigins() Option { return func(c *config) { c.keepHeaders = true } }

// WithTimeout bounds each whole exchange, the body's reading included
// (default: none, the caller's context bounds it). Never for streams.
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// OnRedirect calls f before each redirect is followed (the Hub reads its
// first response's headers; the benchmark warns once when it leaves the
// origin).
func OnRedirect(f func(Redirect)) Option { return func(c *config) { c.onRedirect = f } }

// NewClient returns a client that keeps the rules of the package doc.
func NewClient(opts ...Option) *http.Client {
	c := config{follow: true, maxRedirects: MaxRedirects}
	for _, o := range opts {
		o(&c)
	}
	rt := c.transport
	if rt == nil {
		rt = shared
	}
	if w, ok := rt.(AgentWriter); !ok || !w.WritesUserAgent() {
		rt = userAgent{rt}
	}
	return &http.Client{Transport: rt, CheckRedirect: c.checkRedirect, Timeout: c.timeout}
}

// AgentWriter is a transport that writes surge's User-Agent itself (the
// benchmark's HTTP/1.1 transport, set once): a client over it sends its
// requests as they are, where another transport's would each be copied
// to carry the header.
type AgentWriter interface {
	WritesUserAgent() bool
}

// checkRedirect is net/http's hook before it follows a redirect to req.
func (c *config) checkRedirect(req *http.Request, via []*http.Request) error {
	if !c.follow || req.Method != via[0].Method {
		return http.ErrUseLastResponse
	}
	if len(via) >= c.maxRedirects {
		return fmt.Errorf("stopped after %d redirects", c.maxRedirects)
	}
	from, to := Origin(via[0].URL), Origin(req.URL)
	for _, v := range via {
		if strings.EqualFold(v.URL.Scheme, "https") && !strings.EqualFold(req.URL.Scheme, "https") {
			return &DowngradeError{From: Origin(v.URL), To: to}
		}
	}
	cross := from != to
	if cross && !c.keepHeaders {
		for k := range req.Header {
			if !harmless[http.CanonicalHeaderKey(k)] {
				delete(req.Header, k)
			}
		}
	}
	r := Redirect{Response: req.Response, From: from, To: to, CrossOrigin: cross}
	if c.onRedirect != nil {
		c.onRedirect(r)
	}
	if f, ok := req.Context().Value(observerKey{}).(func(Redirect)); ok {
		f(r)
	}
	return nil
}

type observerKey struct{}

// ObserveRedirects returns a context under which f learns of each
// redirect a request made with it follows, as OnRedirect's function does
// (the Hub reads the first answer's headers): one request's hook, where
// OnRedirect is a client's.
func ObserveRedirects(ctx context.Context, f func(Redirect)) context.Context {
	return context.WithValue(ctx, observerKey{}, f)
}

// userAgent sets surge's User-Agent on a request that has none.
type userAgent struct{ next http.RoundTripper }

func (u userAgent) RoundTrip(req *http.Request) (*http.Response, error) {
	if _, ok := req.Header["User-Agent"]; ok {
		return u.next.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.Header.Set("User-Agent", UserAgent())
	return u.next.RoundTrip(r)
}

// Timeouts of the shared transport: a server that takes longer to accept a
// connection, finish a handshake or start an answer to a small request is
// not one a helper request should wait on.
const (
	DialTimeout      = 10 * time.Second
	HandshakeTimeout = 10 * time.Second
)

// TransportOptions shape a Transport.
type TransportOptions struct {
	// Dial dials connections (default: a net.Dialer bounded by DialTimeout).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxIdlePerHost is the idle connections kept per host (default 2).
	MaxIdlePerHost int
	// ResponseHeaderTimeout bounds the wait for an answer's headers
	// (default none: a benchmark's prefill can take minutes).
	ResponseHeaderTimeout time.Duration
	// TLS is the TLS configuration (default: TLS 1.2 or newer).
	TLS *tls.Config
}

// NewTransport returns an http.Transport with proxies from the
// environment, bounded dials and handshakes, no transparent compression
// (a benchmark times the bytes the server sent) and no HTTP/2 unless the
// caller configures it.
func NewTransport(o TransportOptions) *http.Transport {
	dial := o.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: DialTimeout, KeepAlive: 30 * time.Second}).DialContext
	}
	idle := o.MaxIdlePerHost
	if idle <= 0 {
		idle = 2
	}
	cfg := o.TLS
	if cfg == nil {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dial,
		TLSClientConfig:       cfg,
		TLSHandshakeTimeout:   HandshakeTimeout,
		ResponseHeaderTimeout: o.ResponseHeaderTimeout,
		MaxIdleConnsPerHost:   idle,
		IdleConnTimeout:       90 * time.Second,
		DisableCompression:    true,
		ExpectContinueTimeout: time.Second,
	}
}

// shared is the transport of clients given none.
var shared = NewTransport(TransportOptions{})

// ReadBody reads resp's body whole, up to limit bytes, and closes it; a
// larger body is a *bounded.TooLargeError naming what and the limit.
func ReadBody(ctx context.Context, resp *http.Response, limit int64, what string) ([]byte, error) {
	defer resp.Body.Close()
	if resp.ContentLength > limit {
		return nil, &bounded.TooLargeError{What: what, Limit: limit, Size: resp.ContentLength}
	}
	return bounded.ReadAll(ctx, resp.Body, limit, what)
}

// IsDowngrade reports whether err is a refused https→http redirect.
func IsDowngrade(err error) bool {
	var d *DowngradeError
	return errors.As(err, &d)
}
