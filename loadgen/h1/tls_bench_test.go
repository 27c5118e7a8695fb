package h1

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
)

// BenchmarkTLSStream is one streamed https request at a time, read to its
// [DONE] event and closed (as the SSE reader does), through h1's own TLS
// and through net/http's transport (the fallback before), which closes a
// connection whose body was closed before its end: the chunked terminator
// arrives in a later TLS record, so each request dials and handshakes.
// It reports the connections opened per request.
func BenchmarkTLSStream(b *testing.B) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n")
		w.(http.Flusher).Flush()
	}))
	var conns atomic.Int64
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	cfg := srv.Client().Transport.(*http.Transport).TLSClientConfig
	const event = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n"
	for _, tc := range []struct {
		name string
		rt   http.RoundTripper
	}{
		{"h1", &Transport{TLSClientConfig: cfg}},
		{"net-http", &http.Transport{TLSClientConfig: cfg.Clone(), ForceAttemptHTTP2: false}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			conns.Store(0)
			buf := make([]byte, len(event))
			ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{})
			for b.Loop() {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("x"))
				resp, err := tc.rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(resp.Body, buf); err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
			}
			b.ReportMetric(float64(conns.Load())/float64(b.N), "conns/op")
			tc.rt.(interface{ CloseIdleConnections() }).CloseIdleConnections()
		})
	}
}
