package loadgen

import (
	"fmt"
	"net/http"

	"github.com/surgebench/surge/internal/outbound"
	"github.com/surgebench/surge/metrics"
)

// ErrRedirect is the error type of a response that redirected the request
// and was not followed.
const ErrRedirect = metrics.ErrRedirect

// Redirects. A benchmark measures the server it was pointed at: by
// default no redirect is followed, and a 3xx becomes an error record
// naming the status and its Location. WithFollowRedirects follows them by
// the outbound policy's rule: a credential never leaves the target's
// origin (scheme, host and port), a redirect never leaves https for http,
// and a 301/302/303, which would turn the POST into a GET without its
// body, is an error record rather than a different request.

// WithFollowRedirects follows the server's redirects (default: none is
// followed) by the outbound policy's rule: a redirect to another origin
// (scheme, host, port) carries none of the request's headers but harmless
// ones (Accept, Content-Type, …), one from https to http is refused, and
// one that would change the method is handed back. The generator warns
// once when a request left the origin.
func WithFollowRedirects() Option { return func(g *Generator) { g.follow = true } }

// newClient is the outbound policy's client over rt, following redirects
// as the generator's settings say.
func (g *Generator) newClient(rt http.RoundTripper) *http.Client {
	opts := []outbound.Option{outbound.WithTransport(rt), outbound.OnRedirect(func(r outbound.Redirect) {
		if r.CrossOrigin && g.onWarn != nil && g.redirected.CompareAndSwap(false, true) {
			g.onWarn(fmt.Sprintf("the server redirected a request to another origin, %s: followed without the request's headers, so the results include that server's answers", r.To))
		}
	})}
	if !g.follow {
		opts = append(opts, outbound.NoRedirects())
	}
	return outbound.NewClient(opts...)
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
