package mockserver

import (
	"context"
	"io"
	"net"
	"strconv"
	"sync"

	"github.com/surgebench/surge/loadgen/wire"
)

// The mock's wire truth. Its handler-entry clock misses its own accept and
// read queues (at ITL 2 ms with 256 streams that is +23 ms at p50), so a
// client's TTFT compared with it looks better or worse than it is. With a
// WireLog, every streamed request is logged with the kernel's receive time
// of the segment that completed its body (SO_TIMESTAMPNS on the accepted
// socket) and the wall time its first token was flushed: a benchmark can
// judge a client's TTFT against what the wire saw.

type connKey struct{}

// withConn keeps the accepted connection in the request's context.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if wc := wire.Of(c); wc != nil {
		return context.WithValue(ctx, connKey{}, wc)
	}
	return ctx
}

// arrivalOf is the kernel's CLOCK_REALTIME receive time of the latest
// segment read from the request's connection (0: not known).
func arrivalOf(ctx context.Context) int64 {
	if wc, ok := ctx.Value(connKey{}).(*wire.Conn); ok {
		return wc.LastArrival()
	}
	return 0
}

// wireLog writes one JSON line per streamed request:
// {"x_request_id", "arrival_ns", "handler_ns", "first_token_ns"}, wall
// clock (Unix) nanoseconds; arrival_ns is 0 without kernel stamps.
type wireLog struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

func (l *wireLog) add(id string, arrival, handler, first int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := append(l.buf[:0], `{"x_request_id":`...)
	b = strconv.AppendQuote(b, id)
	b = append(b, `,"arrival_ns":`...)
	b = strconv.AppendInt(b, arrival, 10)
	b = append(b, `,"handler_ns":`...)
	b = strconv.AppendInt(b, handler, 10)
	b = append(b, `,"first_token_ns":`...)
	b = strconv.AppendInt(b, first, 10)
	b = append(b, "}\n"...)
	l.buf = b
	_, _ = l.w.Write(b)
}
