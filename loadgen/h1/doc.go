// Package h1 is an HTTP/1.1 client transport that does each exchange on
// the caller's goroutine: it takes a pooled connection (or dials one),
// writes the request with one write call, and reads the response headers
// and body itself.
//
// Why: net/http's transport gives every connection a read and a write
// goroutine and hands each request and response between them and the
// caller through channels. A load generator with hundreds of streams pays
// those hand-offs (scheduler wake-ups, futexes) on every request, on the
// same cores that read the tokens; at a wave of continuous batching they
// delay first-token reads. Here a request costs no goroutine switch at all.
//
// It serves http:// requests that go straight to the server, and https://
// ones when given a TLS config (TLS over the dialled connection, pooled
// and drained like a plain one); proxied requests, and https without a
// TLS config, go to a Fallback transport (an *http.Transport).
// It keeps what a benchmark needs of net/http's behaviour: keep-alive
// pools per host, httptrace hooks (GetConn, GotConn, DNS and connect
// through the dialer, WroteRequest, GotFirstResponseByte), cancellation
// by the request's context, and HTTP parsing by net/http itself
// (http.ReadResponse). It does not retry: a pooled connection the server
// closed fails with a *ClosedError, which says whether the server can have
// read the request, for the caller to judge. A response with "Connection:
// close" (or an HTTP/1.0 one without keep-alive) never goes back to the
// pool.
package h1
