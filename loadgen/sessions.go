package loadgen

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/surgebench/surge/loadgen/h1"
)

// ConnectionReuse is how requests share connections, as AIPerf's
// --connection-reuse-strategy names it.
type ConnectionReuse string

// The connection reuse strategies.
const (
	// ReusePooled shares one pool of keep-alive connections (the default).
	ReusePooled ConnectionReuse = "pooled"
	// ReuseNever opens a connection per request and closes it after.
	ReuseNever ConnectionReuse = "never"
	// ReuseSticky gives each session (a conversation's turns) its own
	// connection for all its turns, as a load balancer with connection
	// affinity would route them, and closes it when the session ends.
	ReuseSticky ConnectionReuse = "sticky-user-sessions"
)

// ParseConnectionReuse validates a strategy name ("" is pooled).
func ParseConnectionReuse(s string) (ConnectionReuse, error) {
	switch r := ConnectionReuse(strings.ToLower(strings.TrimSpace(s))); r {
	case "":
		return ReusePooled, nil
	case ReusePooled, ReuseNever, ReuseSticky:
		return r, nil
	}
	return "", fmt.Errorf("connection reuse strategy %q is not one of pooled, never, sticky-user-sessions", s)
}

// WithConnectionReuse sets the connection reuse strategy.
func WithConnectionReuse(r ConnectionReuse) Option { return func(g *Generator) { g.reuse = r } }

// WithSessionHeader sends header with one id per session (all turns of one
// conversation run share it), for servers and routers that keep session
// affinity or KV cache by it; "" sends none.
func WithSessionHeader(header string) Option {
	return func(g *Generator) { g.sessionHeader = http.CanonicalHeaderKey(strings.TrimSpace(header)) }
}

// sessionConn is what a session's requests share: its id and, when sticky,
// its own client.
type sessionConn struct {
	id     string
	client *http.Client
}

type sessionKey struct{}

// startSession returns ctx carrying the session's id and connection, and a
// function that ends the session (closing a sticky connection).
func (g *Generator) startSession(ctx context.Context) (context.Context, func()) {
	if g.reuse != ReuseSticky && g.sessionHeader == "" {
		return ctx, func() {}
	}
	sc := &sessionConn{id: requestID()}
	end := func() {}
	if g.reuse == ReuseSticky {
		// A session's turns run one after another, so its own pool holds
		// one connection; net/http's is capped at one to be sure.
		if t := ownTransport(g.transport, func(t *http.Transport) { t.MaxConnsPerHost = 1 }, func(*h1.Transport) {}); t != nil {
			sc.client, end = g.newClient(t), t.CloseIdleConnections
		}
	}
	return context.WithValue(ctx, sessionKey{}, sc), end
}

// sessionID is the id of the session ctx carries, or a new one when the
// session needs none on the wire (it still names the session in the
// records: AIPerf's x_correlation_id).
func sessionID(ctx context.Context) string {
	if sc, ok := ctx.Value(sessionKey{}).(*sessionConn); ok {
		return sc.id
	}
	return requestID()
}

// clientFor is the client a request under ctx goes through.
func (g *Generator) clientFor(ctx context.Context) *http.Client {
	if sc, ok := ctx.Value(sessionKey{}).(*sessionConn); ok && sc.client != nil {
		return sc.client
	}
	return g.client
}

// setSessionHeader adds the session id header, when one is configured.
func (g *Generator) setSessionHeader(ctx context.Context, h http.Header) {
	if g.sessionHeader == "" {
		return
	}
	if sc, ok := ctx.Value(sessionKey{}).(*sessionConn); ok {
		h.Set(g.sessionHeader, sc.id)
	}
}
