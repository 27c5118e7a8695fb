package loadgen

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/loadgen/wire"
	"github.com/surgebench/surge/metrics"
)

// TestTLSConnectionsAreReused: a run over https keeps its connections as a
// run over http does (a handshake per request would land in every TTFT and
// show the server a different load).
func TestTLSConnectionsAreReused(t *testing.T) {
	t.Parallel()
	// Every event is flushed, [DONE] included: the chunked stream's
	// terminator then follows in a TLS record of its own, after the
	// client has read [DONE].
	srv := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\" tok%d\"}}]}\n\n", i)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n")
		w.(http.Flusher).Flush()
	})
	var conns atomic.Int64
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ts.StartTLS()
	defer ts.Close()
	tr := NewTransport(1)
	tr.TLSClientConfig = ts.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	s, sink := runOnce(t, ts.URL, chat(true), []Stage{{Limit: schedule.Constant(1), Count: 50}}, WithTransport(tr))
	if s.Run[metrics.ErrorRequestCount] != 0 {
		t.Fatalf("errors: %+v", s.Errors)
	}
	// A terminator later than the drain's wait (a busy machine) costs a
	// connection now and then; before the fix every request dialled.
	n := conns.Load()
	if n > 4 {
		t.Errorf("%d TLS connections for 50 sequential requests, want 1 (at most 4 on a busy machine)", n)
	}
	reused := 0
	for _, r := range sink.recs {
		if r.HTTP.Reused {
			reused++
		}
		// Kernel receive stamps keep working under TLS.
		if wire.Supported && !r.KernelStamps {
			t.Errorf("record %d has no kernel stamps over TLS", r.Index)
		}
		if !r.HTTP.Reused && r.HTTP.TLS <= 0 {
			t.Errorf("record %d dialled without a TLS handshake time", r.Index)
		}
	}
	if int64(reused) != 50-n {
		t.Errorf("%d of 50 records on a reused connection, want %d (%d connections)", reused, 50-n, n)
	}
}
