package loadgen

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/surgebench/surge/metrics"
)

// ErrRedirect is the error type of a response that redirected the request
// and was not followed.
const ErrRedirect = metrics.ErrRedirect

// Redirects. A benchmark measures the server it was pointed at: by
// default no redirect is followed, and a 3xx becomes an error record
// naming the status and its Location. WithFollowRedirects follows them,
// but a credential never leaves the target's origin (scheme, host and
// port): a redirect to another origin is sent without any credential
// header, and a 301/302/303, which would turn the POST into a GET without
// its body, is an error record rather than a different request.

// defaultCredentialHeaders are stripped from every redirect that leaves
// the target's origin, whatever the caller names.
var defaultCredentialHeaders = []string{"Authorization", "Proxy-Authorization", "X-Api-Key", "Api-Key", "Cookie", "Cookie2"}

// maxRedirects bounds a chain of followed redirects (net/http's own bound).
const maxRedirects = 10

// WithFollowRedirects follows the server's redirects (default: none is
// followed). credentialHeaders names the caller's own headers that carry
// secrets (every custom header it was given, say): they are stripped, with
// Authorization, Proxy-Authorization, X-Api-Key, Api-Key and Cookie, from
// a redirect to another origin than the request's target.
func WithFollowRedirects(credentialHeaders ...string) Option {
	return func(g *Generator) {
		g.follow = true
		g.credentials = append(g.credentials[:0], defaultCredentialHeaders...)
		for _, h := range credentialHeaders {
			g.credentials = append(g.credentials, http.CanonicalHeaderKey(h))
		}
	}
}

// redirectClient returns a copy of c that follows redirects as the
// generator's settings say (any CheckRedirect of c's is replaced).
func (g *Generator) redirectClient(c *http.Client) *http.Client {
	r := *c
	r.CheckRedirect = g.checkRedirect
	return &r
}

// checkRedirect is net/http's hook before it sends req, a redirect of
// via[0]. http.ErrUseLastResponse hands the 3xx to the caller (do), which
// turns it into an error record.
func (g *Generator) checkRedirect(req *http.Request, via []*http.Request) error {
	if !g.follow || req.Method != via[0].Method {
		return http.ErrUseLastResponse
	}
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if origin(req.URL) != origin(via[0].URL) {
		for _, h := range g.credentials {
			req.Header.Del(h)
		}
		if g.onWarn != nil && g.redirected.CompareAndSwap(false, true) {
			g.onWarn(fmt.Sprintf("the server redirected a request to another origin, %s: followed without credential headers, so the results include that server's answers",
				origin(req.URL)))
		}
	}
	return nil
}

// origin is a URL's scheme, host and port (the port made explicit).
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return u.Scheme + "://" + u.Hostname() + ":" + port
}

// redirectError describes a 3xx response that came back unfollowed: why it
// was not followed, its status and Location; nil for any other status.
func (g *Generator) redirectError(resp *http.Response) *metrics.Error {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return nil
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		loc = "(none)"
	}
	why := "redirects are not followed (follow redirects is off)"
	if g.follow {
		why = fmt.Sprintf("not followed: it would re-send the %s as a GET without its body", resp.Request.Method)
	}
	return &metrics.Error{Code: resp.StatusCode, Type: ErrRedirect,
		Message: fmt.Sprintf("%d %s to Location %s: %s", resp.StatusCode, http.StatusText(resp.StatusCode), loc, why)}
}
