package controlport

import (
	"crypto/rand"
	"crypto/subtle"
	"net"
	"net/http"
	"strings"

	"golang.org/x/time/rate"
)

// Who may change a running benchmark. The port answers a script on this
// machine, not a web page: a browser lets any page POST text/plain to a
// local port (a "simple" request, no preflight), and a page whose name
// resolves to 127.0.0.1 (DNS rebinding) reads the answers too. So every
// request must carry the session's token (a page cannot know it), name
// the bound address in Host (a rebound name is refused), and carry no
// Origin (browsers add it to cross-origin requests, scripts do not); the
// port is rate-limited so a flood cannot guess the token or starve the run.

// TokenHeader is the header that carries the token, besides
// "Authorization: Bearer <token>" and the query's ?token=.
const TokenHeader = "X-Surge-Token"

// NewToken returns a random token (128 bits from the system's random
// source, as base32 text).
func NewToken() string { return rand.Text() }

// Default rate of the port: a script's pace, with room for a burst.
const (
	defaultRate  = 20
	defaultBurst = 40
)

// guard is Protect's handler.
type guard struct {
	next  http.Handler
	bound string // host:port the port listens on
	token []byte // nil: no token asked (tests of the handler alone)
	lim   *rate.Limiter
}

// Protect serves h to requests that pass the port's checks, in this order:
// the rate limit (429), no Origin header (403), a Host naming bound (the
// listener's host:port; a loopback name with its port; any IP literal
// with its port when bound to every interface) (403), and, when token is
// not empty, the token as "Authorization: Bearer", X-Surge-Token or
// ?token= (401). lim nil takes the default rate (20/s, bursts of 40).
func Protect(h http.Handler, bound, token string, lim *rate.Limiter) http.Handler {
	if lim == nil {
		lim = rate.NewLimiter(defaultRate, defaultBurst)
	}
	g := &guard{next: h, bound: bound, lim: lim}
	if token != "" {
		g.token = []byte(token)
	}
	return g
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case !g.lim.Allow():
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusTooManyRequests, "rate_limited", "too many control requests: slow down")
	case r.Header.Get("Origin") != "":
		writeError(w, http.StatusForbidden, "forbidden", "requests from web pages (with an Origin header) are refused")
	case !hostAllowed(r.Host, g.bound):
		writeError(w, http.StatusForbidden, "forbidden", "Host "+quoteHost(r.Host)+" is not the control port's address")
	case g.token != nil && !g.hasToken(r):
		w.Header().Set("WWW-Authenticate", `Bearer realm="surge control"`)
		writeError(w, http.StatusUnauthorized, "unauthorized",
			"the control token is missing or wrong: send it as Authorization: Bearer <token>, "+TokenHeader+": <token> or ?token=<token>")
	default:
		g.next.ServeHTTP(w, r)
	}
}

// hasToken reports whether r carries the token, in constant time.
func (g *guard) hasToken(r *http.Request) bool {
	ok := false
	for _, got := range []string{
		strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "),
		r.Header.Get(TokenHeader),
		r.URL.Query().Get("token"),
	} {
		if got != "" && subtle.ConstantTimeCompare([]byte(got), g.token) == 1 {
			ok = true
		}
	}
	return ok
}

// hostAllowed reports whether a request's Host names the bound address:
// the same host and port, a loopback name or address with the port, or,
// bound to every interface, any IP address with the port (a name there
// could be a rebound one).
func hostAllowed(host, bound string) bool {
	bh, bp, err := net.SplitHostPort(bound)
	if err != nil {
		return false
	}
	h, p, err := net.SplitHostPort(host)
	if err != nil {
		h, p = host, "80" // no port: the default one
	}
	if p != bp || h == "" {
		return false
	}
	if strings.EqualFold(h, bh) {
		return true
	}
	switch strings.ToLower(h) {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	ip := net.ParseIP(bh)
	return ip != nil && ip.IsUnspecified() && net.ParseIP(h) != nil
}

// quoteHost is a Host header for a message, bounded.
func quoteHost(h string) string {
	if len(h) > 100 {
		h = h[:100] + "…"
	}
	return `"` + strings.ToValidUTF8(h, "?") + `"`
}

// Exposed reports whether addr (as ListenAddr resolves it) accepts
// connections from other machines: any host but a loopback address or
// "localhost". A name is taken as exposed (it may resolve to anything).
// Such a bind deserves a warning, and the token.
func Exposed(addr string) bool {
	a, err := ListenAddr(addr)
	if err != nil {
		return false
	}
	h, _, _ := net.SplitHostPort(a)
	if strings.EqualFold(h, "localhost") {
		return false
	}
	ip := net.ParseIP(h)
	return ip == nil || !ip.IsLoopback()
}
