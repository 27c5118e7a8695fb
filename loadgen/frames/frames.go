// Package frames reads the streamed answers that are not server-sent
// events: the AWS event stream (application/vnd.amazon.eventstream:
// Bedrock's ConverseStream and InvokeModelWithResponseStream, SageMaker's
// InvokeEndpointWithResponseStream) and a JSON array whose elements come
// one at a time (Gemini's streamGenerateContent without alt=sse); and
// newline-delimited JSON (Ollama's native API) through sse's line mode. Its
// readers hand out sse.Event values, so the generator and the preflight
// read every framing with one loop, and they stamp them as sse.Reader
// does: one clock reading per Read of the source that returns bytes, taken
// before those bytes are parsed (with the source's own arrival stamp when
// it is sse.Stamped), shared by every event that Read completed.
//
// The event stream's frames are parsed here, in place, without allocating
// per message: the AWS SDK's decoder (aws/protocol/eventstream) allocates
// 38 times a message, which on this path would be 38 a token. The SDK's
// encoder writes the test fixtures and the mock's streams, and its decoder
// is the oracle the fuzz test checks this one against.
package frames

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/sse"
)

// Reader reads one response's events; sse.Reader is one.
type Reader interface {
	// Next returns the next event (io.EOF at the stream's clean end).
	// Its Data and Type alias the reader's buffers until the next call.
	Next() (sse.Event, error)
	// Reset makes the reader read src from its start, keeping its
	// buffers (nil releases the source).
	Reset(src io.Reader)
}

// Content types of the framings.
const (
	EventStreamType = "application/vnd.amazon.eventstream"
	SSEType         = "text/event-stream"
)

// ErrTooLarge ends a stream whose message or element is larger than the
// reader's bound.
var ErrTooLarge = errors.New("a message of the stream is larger than the maximum event size")

// input is a source read in large pieces, each stamped as it arrives.
type input struct {
	src     io.Reader
	stamped sse.Stamped
	now     func() int64
	buf     []byte
	r, w    int // unread bytes are buf[r:w]
	// readAt and arrivedAt stamp the latest Read that returned bytes.
	readAt, arrivedAt int64
	err               error // the source's error, acted on once buf is used
	empty             int
	max               int // bound on one message
}

// maxEmptyReads ends a source that keeps returning nothing (as bufio).
const maxEmptyReads = 100

func newInput(now func() int64, size, max int) input {
	if now == nil {
		now = func() int64 { return 0 }
	}
	return input{now: now, buf: make([]byte, size), max: max}
}

func (in *input) reset(src io.Reader) {
	if len(in.buf) > 4*DefaultBufferSize && len(in.buf) > 1<<20 {
		in.buf = make([]byte, DefaultBufferSize)
	}
	*in = input{src: src, now: in.now, buf: in.buf, max: in.max}
	in.stamped, _ = src.(sse.Stamped)
	if src == nil {
		in.err = io.EOF
	}
}

// need makes at least n unread bytes buffered, reading as needed: false
// when the source ended (or failed) first, in.err then set.
func (in *input) need(n int) bool {
	for in.w-in.r < n {
		if in.err != nil {
			return false
		}
		in.fill(n)
	}
	return true
}

// fill reads once from the source, after making room for n unread bytes.
func (in *input) fill(n int) {
	if in.r > 0 && (in.r == in.w || len(in.buf)-in.r < n || len(in.buf)-in.w < len(in.buf)/8) {
		copy(in.buf, in.buf[in.r:in.w])
		in.w -= in.r
		in.r = 0
	}
	if n > len(in.buf) {
		nb := make([]byte, max(n, 2*len(in.buf)))
		copy(nb, in.buf[:in.w])
		in.buf = nb
	}
	k, err := in.src.Read(in.buf[in.w:])
	if k < 0 || k > len(in.buf)-in.w {
		in.err = fmt.Errorf("source returned an invalid count %d", k)
		return
	}
	if k > 0 {
		in.readAt = in.now()
		in.arrivedAt = in.readAt
		if in.stamped != nil {
			if a := in.stamped.ArrivedAt(); a > 0 && (a < in.readAt || in.readAt == 0) {
				in.arrivedAt = a
			}
		}
		in.w += k
		in.empty = 0
	} else if err == nil {
		if in.empty++; in.empty >= maxEmptyReads {
			err = io.ErrNoProgress
		}
	}
	in.err = err
}

// end is the error of a source that ended: io.EOF when nothing of a
// message was pending, io.ErrUnexpectedEOF inside one, the read error
// wrapped otherwise.
func (in *input) end(pending bool) error {
	switch {
	case !errors.Is(in.err, io.EOF):
		return fmt.Errorf("read: %w", in.err)
	case pending:
		return io.ErrUnexpectedEOF
	}
	return io.EOF
}

// DefaultBufferSize is the read buffer a reader starts with, as sse's.
const DefaultBufferSize = sse.DefaultBufferSize

// Readers are the readers of every framing, pooled together: Open picks
// the one a response needs.
type Readers struct {
	now     func() int64
	max     int
	sse     *sse.Reader
	events  *EventStream
	payload *Payload
	array   *JSONArray
}

// NewReaders returns readers that stamp events with now and bound one
// event (or message, or element) to maxEvent bytes (0: sse's default).
func NewReaders(now func() int64, maxEvent int) *Readers {
	if maxEvent <= 0 {
		maxEvent = sse.DefaultMaxEventSize
	}
	return &Readers{now: now, max: maxEvent, sse: sse.NewReader(nil, now, sse.MaxEventSize(maxEvent))}
}

// Open returns the reader of body for an answer of content type ct to a
// streamed request of ep, and false when ct is no stream framing ep reads
// (a whole JSON body: the server did not stream). An AWS event stream's
// messages are ep's events for the types that say so (Bedrock's);
// otherwise their payloads carry an inner stream of server-sent events
// (SageMaker: the serving container's own stream).
func (rs *Readers) Open(ct string, ep *endpoint.Endpoint, body io.Reader) (Reader, bool) {
	switch Of(ct, ep) {
	case SSE:
		rs.sse.ResetLines(body, false)
		return rs.sse, true
	case NDJSON:
		rs.sse.ResetLines(body, true)
		return rs.sse, true
	case AWSEvents:
		if rs.events == nil {
			rs.events = NewEventStream(nil, rs.now, rs.max)
		}
		rs.events.Reset(body)
		return rs.events, true
	case AWSPayload:
		if rs.payload == nil {
			rs.payload = NewPayload(nil, rs.max)
		}
		rs.payload.Reset(body)
		rs.sse.ResetLines(rs.payload, false)
		return rs.sse, true
	case JSONArrayFraming:
		if rs.array == nil {
			rs.array = NewJSONArray(nil, rs.now, rs.max)
		}
		rs.array.Reset(body)
		return rs.array, true
	}
	return nil, false
}

// Release drops the readers' hold on the last response's body.
func (rs *Readers) Release() {
	rs.sse.Reset(nil)
	if rs.events != nil {
		rs.events.Reset(nil)
	}
	if rs.payload != nil {
		rs.payload.Reset(nil)
	}
	if rs.array != nil {
		rs.array.Reset(nil)
	}
}

// Framing is how a streamed answer's events are laid out.
type Framing uint8

// The framings.
const (
	// Whole is no stream: a body read whole.
	Whole Framing = iota
	// SSE is server-sent events.
	SSE
	// AWSEvents is an AWS event stream whose messages are the events.
	AWSEvents
	// AWSPayload is an AWS event stream whose payloads carry server-sent
	// events (SageMaker's).
	AWSPayload
	// JSONArrayFraming is a JSON array of events.
	JSONArrayFraming
	// NDJSON is newline-delimited JSON, a line an event, for the types
	// that stream it (Ollama's native API).
	NDJSON
)

// Of is the framing of an answer of content type ct to a streamed
// request of ep.
func Of(ct string, ep *endpoint.Endpoint) Framing {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.TrimSpace(mt)
	switch {
	case strings.EqualFold(mt, SSEType):
		return SSE
	case strings.EqualFold(mt, EventStreamType) && ep.EventStreamMessages():
		return AWSEvents
	case strings.EqualFold(mt, EventStreamType):
		return AWSPayload
	case ep.Info().Lines && (strings.EqualFold(mt, "application/x-ndjson") || strings.EqualFold(mt, "application/ndjson")):
		return NDJSON
	case ep.JSONArrayStream() && (strings.EqualFold(mt, "application/json") || strings.HasSuffix(strings.ToLower(mt), "+json")):
		return JSONArrayFraming
	}
	return Whole
}
