package loadgen

import (
	"net/http"

	"github.com/surgebench/surge/metrics"
)

// Authorizer gives each request a cloud's credentials (loadgen/auth): an
// AWS signature, a bearer token from a credential chain. Authorize runs
// once per request, after its other headers are set and before it is
// sent; it must allocate little and take no lock a token waits on.
type Authorizer interface {
	// Authorize sets req's credential headers; body is its whole body.
	Authorize(req *http.Request, body []byte) error
	// Secrets are the credentials in use now: never in a record.
	Secrets() []string
}

// WithAuth authorizes every request with a (the target's requests only:
// a redirect to another origin goes without a's headers).
func WithAuth(a Authorizer) Option { return func(g *Generator) { g.auth = a } }

// ErrAuth is the error type of a request whose credentials could not be
// had (a token endpoint that failed, credentials that expired).
const ErrAuth = "credentials_error"

// authorize gives req its credentials: false, with the record's error
// set, when it cannot.
func (g *Generator) authorize(req *http.Request, body []byte, rec *metrics.Record) bool {
	if g.auth == nil {
		return true
	}
	if err := g.auth.Authorize(req, body); err != nil {
		rec.SentNs, rec.EndNs = g.now(), g.now()
		rec.Err = &metrics.Error{Type: ErrAuth, Message: err.Error()}
		return false
	}
	return true
}

// authSecrets are the credentials of the authorizer in use now.
func (g *Generator) authSecrets() []string {
	if g.auth == nil {
		return nil
	}
	return g.auth.Secrets()
}
