package loadgen

import (
	"crypto/tls"
	"io"
	"math"
	"net/http/httptrace"
	"sync"
	"sync/atomic"

	"github.com/surgebench/surge/loadgen/sse"
	"github.com/surgebench/surge/loadgen/wire"
	"github.com/surgebench/surge/metrics"
)

// Timestamps says where a token's time comes from.
type Timestamps uint8

// The timestamp sources of --timestamps.
const (
	// KernelTimestamps stamps each event with the kernel's receive time of
	// the segment that completed it, where the connection has one (Linux,
	// HTTP/1.1 over the transport's own dialer), else with the read time.
	KernelTimestamps Timestamps = iota
	// ReadTimestamps stamps each event when the client read it.
	ReadTimestamps
)

// String names the source as --timestamps and the export do.
func (t Timestamps) String() string {
	if t == ReadTimestamps {
		return "read"
	}
	return "kernel"
}

// ParseTimestamps reads a --timestamps value.
func ParseTimestamps(s string) (Timestamps, bool) {
	switch s {
	case "kernel", "":
		return KernelTimestamps, true
	case "read":
		return ReadTimestamps, true
	}
	return 0, false
}

// WithTimestamps picks the token timestamp source (default kernel). The
// transport must dial through wire (NewTransport does) for kernel stamps.
func WithTimestamps(t Timestamps) Option { return func(g *Generator) { g.stamps = t } }

// reqTrace follows one request through the transport: when it got its
// connection and which, when its last byte was written, and the phases in
// between (AIPerf's http_req_* breakdown); and whether a pooled connection
// failed before any answer (send's retry). It is the request's only trace:
// a second one in the context would make httptrace compose the two
// through reflection, which cost ≈ 9% of the client's CPU at 800 req/s.
type reqTrace struct {
	g *Generator
	// wrote is set by the transport's write goroutine, which may call
	// WroteRequest after the response has already arrived (on loopback the
	// server can answer before the write syscall returns), so nothing
	// orders it before Do's return: atomic.
	wrote atomic.Int64
	// firstByte is set by the transport's read goroutine when a response
	// began (a pooled connection's failure after it is not retried).
	firstByte        atomic.Bool
	getConn, gotConn int64
	reused           bool
	// The dial's phases are reported from the dial goroutine, which may
	// outlive the request (net/http gives a dial's connection to whichever
	// request waits first): mu guards them.
	mu                  sync.Mutex
	dnsStart, dnsDone   int64
	connStart, connDone int64
	tlsStart, tlsDone   int64
	conn                *wire.Conn
	body                stampedBody
	// sentBytes is the request body's length.
	sentBytes int64
	// wroteHook, when set, is called once the request was fully written
	// (a planned cancellation's delay starts then).
	wroteHook func()
	// hdrs back the value slices of the request's X-Request-Id and
	// Traceparent headers.
	hdrs [2]string
}

func (g *Generator) newTrace() (*reqTrace, *httptrace.ClientTrace) {
	t := &reqTrace{g: g}
	return t, &httptrace.ClientTrace{
		GetConn: func(string) { t.getConn = g.now() },
		GotConn: func(i httptrace.GotConnInfo) {
			t.gotConn, t.reused = g.now(), i.Reused
			if c := wire.Of(i.Conn); c != nil && c.Kernel() {
				t.conn = c
			}
		},
		DNSStart:          func(httptrace.DNSStartInfo) { t.stamp(&t.dnsStart) },
		DNSDone:           func(httptrace.DNSDoneInfo) { t.stamp(&t.dnsDone) },
		ConnectStart:      func(string, string) { t.stamp(&t.connStart) },
		ConnectDone:       func(string, string, error) { t.stamp(&t.connDone) },
		TLSHandshakeStart: func() { t.stamp(&t.tlsStart) },
		TLSHandshakeDone:  func(tls.ConnectionState, error) { t.stamp(&t.tlsDone) },
		WroteRequest: func(httptrace.WroteRequestInfo) {
			t.wrote.Store(g.now())
			if t.wroteHook != nil {
				t.wroteHook()
			}
		},
		GotFirstResponseByte: func() { t.firstByte.Store(true) },
	}
}

func (t *reqTrace) stamp(at *int64) {
	now := t.g.now()
	t.mu.Lock()
	*at = now
	t.mu.Unlock()
}

// sent is when the request's last byte was written: the connection's own
// stamp of its latest write when it has one from this request (read just
// before the system call that completed it), else WroteRequest's time,
// else issued (a failed write).
func (t *reqTrace) sent(issued int64) int64 {
	if t.conn != nil {
		if w := t.g.clock.Run(t.conn.LastWrite()); w > 0 && w >= t.gotConn {
			return w
		}
	}
	if w := t.wrote.Load(); w > 0 {
		return w
	}
	return issued
}

// wrap returns the response body, stamping each read with its arrival;
// declared is its Content-Length (-1: unknown).
func (t *reqTrace) wrap(body io.ReadCloser, declared int64) *stampedBody {
	t.body = stampedBody{ReadCloser: body, conn: t.conn, g: t.g, hide: t.g.stamps == ReadTimestamps, max: t.g.maxResponse, declared: declared}
	return &t.body
}

// timing fills the record's breakdown once the response is read, and
// settles its send time: WroteRequest may have come after Do returned.
// A kernel stamp earlier than the send (the answer arrived while the write
// call was still returning) is taken as the send.
func (t *reqTrace) timing(rec *metrics.Record) {
	if rec.SentNs == rec.IssuedNs {
		rec.SentNs = t.sent(rec.IssuedNs)
	}
	for i, at := range rec.TokenNs {
		if at >= rec.SentNs {
			break
		}
		rec.TokenNs[i] = rec.SentNs
	}
	if rec.FirstContentNs > 0 && rec.FirstContentNs < rec.SentNs {
		rec.FirstContentNs = rec.SentNs
	}
	rec.EndNs = max(rec.EndNs, rec.SentNs)
	span := func(a, b int64) int64 {
		if a == 0 || b < a {
			return 0
		}
		return b - a
	}
	h := &rec.HTTP
	h.Traced = t.gotConn > 0
	h.Reused = t.reused
	if !t.reused {
		// A reused connection's dial, if any, was another request's.
		t.mu.Lock()
		h.DNS = span(t.dnsStart, t.dnsDone)
		h.Connecting = span(t.connStart, t.connDone) + span(t.tlsStart, t.tlsDone)
		h.TLS = span(t.tlsStart, t.tlsDone)
		t.mu.Unlock()
	}
	h.Blocked = max(span(t.getConn, t.gotConn)-h.DNS-h.Connecting, 0)
	wrote := t.wrote.Load()
	h.Sending = span(t.gotConn, wrote)
	h.Waiting = span(wrote, t.body.first)
	h.Receiving = span(t.body.first, rec.EndNs)
	h.DataReceived, h.ChunksReceived = t.body.bytes, t.body.reads
	if wrote > 0 && t.sentBytes > 0 {
		// bytes.Reader's body goes out in one write (AIPerf counts the
		// body's chunks too, not the header's).
		h.DataSent, h.ChunksSent = t.sentBytes, 1
	}
	rec.KernelStamps = t.conn != nil && t.g.stamps == KernelTimestamps
}

// stampedBody is a response body that knows when the bytes of its latest
// read arrived (the kernel's stamp of the connection's latest segment, on
// the run clock): the SSE reader takes event times from it (sse.Stamped).
// net/http's buffered reader may hand over bytes a connection read earlier;
// their stamp is then that earlier read's, which is still when they arrived.
type stampedBody struct {
	io.ReadCloser
	conn    *wire.Conn
	g       *Generator
	arrived int64 // kernel stamp of the latest read (0: none)
	first   int64 // arrival of the first body bytes
	// bytes and reads count what was read, for http_req_data_received
	// and http_req_chunks_received.
	bytes, reads int64
	// hide keeps the stamps from timing events (--timestamps read); they
	// still measure the read delay.
	hide bool
	// total is the bytes read so far; past max (when > 0) reads fail.
	total, max int64
	// declared is the response's Content-Length (-1: none, chunked).
	declared int64
}

// Read reads and notes when the bytes arrived. It takes no clock reading
// of its own but for the first read: the SSE reader takes one per read.
func (b *stampedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(b.limit(p))
	if b.total += int64(n); b.max > 0 && b.total > b.max {
		n -= int(b.total - b.max)
		b.total = b.max
		err = &tooLarge{b.max}
	}
	if err == io.ErrUnexpectedEOF && b.declared >= 0 {
		err = &shortBody{got: b.total, want: b.declared}
	}
	if n > 0 {
		b.bytes += int64(n)
		b.reads++
		if b.conn != nil {
			b.arrived = b.g.clock.Run(b.conn.LastArrival())
		}
		if b.first == 0 {
			b.first = b.g.now()
			if b.arrived > 0 && b.arrived < b.first {
				b.first = b.arrived
			}
		}
	}
	return n, err
}

// ArrivedAt is the kernel's receive time of the latest segment read, on the
// run clock (0 without kernel stamps, or with --timestamps read).
func (b *stampedBody) ArrivedAt() int64 {
	if b.hide {
		return 0
	}
	return b.arrived
}

// readDelay is how much later than its arrival the client read the event
// the SSE reader just returned (the latest read completed it: the reader
// reads only when no complete event is buffered), clamped to int32
// (2.1 s: a client that late has bigger problems).
func (b *stampedBody) readDelay(ev sse.Event) int32 {
	if b.arrived <= 0 || b.arrived >= ev.ReadAt {
		return 0
	}
	return int32(min(ev.ReadAt-b.arrived, math.MaxInt32))
}
