package loadgen

import (
	"context"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/surgebench/surge/loadgen/h1"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// TestFDExhaustionIsTheClients: a dial that fails for want of file
// descriptors (as socket(2) does under a low ulimit -n) is an error type
// of its own, on the client's side, never the server's.
func TestFDExhaustionIsTheClients(t *testing.T) {
	t.Parallel()
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE} {
		dial := func(context.Context, string, string) (net.Conn, error) {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", errno)}
		}
		tr := &h1.Transport{Dial: dial}
		s, sink := runOnce(t, "http://127.0.0.1:9", chat(true), []Stage{{Limit: schedule.Constant(2), Count: 4}}, WithTransport(tr))
		if len(sink.recs) != 4 {
			t.Fatalf("%v: %d records, want 4", errno, len(sink.recs))
		}
		for _, r := range sink.recs {
			if r.Err == nil || r.Err.Type != ErrClientResources || !r.Err.ClientSide() || !strings.Contains(r.Err.Message, "file descriptors") {
				t.Errorf("%v: error %+v, want %s on the client's side", errno, r.Err, ErrClientResources)
			}
		}
		if n := s.ClientSideErrors(); n != 4 || s.Run[metrics.ErrorRequestCount] != 4 {
			t.Errorf("%v: %d client-side of %v errors, want 4 of 4", errno, n, s.Run[metrics.ErrorRequestCount])
		}
	}
	// A server's failure is not the client's.
	if (metrics.Error{Type: ErrConnection}).ClientSide() {
		t.Error("a connection error counted as the client's")
	}
}
