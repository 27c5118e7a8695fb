package frames

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/surgebench/surge/loadgen/sse"
)

// The AWS event stream's framing (the SDKs' aws/protocol/eventstream):
// each message is a prelude (its total length and its headers' length, 4
// bytes each, big-endian, and the CRC-32 of those 8 bytes), the headers,
// the payload and the CRC-32 of everything before it. A header is a
// 1-byte name length, the name, a 1-byte value type and the value.
const (
	preludeLen = 12
	crcLen     = 4
	// minMessage is a message with no header and no payload.
	minMessage = preludeLen + crcLen
	// maxHeaders is the SDKs' bound on a message's headers.
	maxHeaders = 128 << 10
)

// Header value types.
const (
	valueTrue = iota
	valueFalse
	valueByte
	valueInt16
	valueInt32
	valueInt64
	valueBytes
	valueString
	valueTimestamp
	valueUUID
)

// ErrChecksum is a message whose prelude or whole CRC-32 does not match:
// the rest of the stream is not trusted.
var ErrChecksum = errors.New("aws event stream: checksum mismatch")

// Message is one decoded event-stream message; its slices alias the
// reader's buffer until the next call.
type Message struct {
	// MessageType is the :message-type header: "event", "exception" or
	// "error".
	MessageType []byte
	// EventType is :event-type ("contentBlockDelta", "chunk",
	// "PayloadPart"), ExceptionType :exception-type
	// ("throttlingException", "ModelStreamError").
	EventType, ExceptionType []byte
	// ErrorCode and ErrorMessage are an "error" message's :error-code and
	// :error-message.
	ErrorCode, ErrorMessage []byte
	Payload                 []byte
	// At and ReadAt stamp the Read that completed the message (see
	// sse.Event).
	At, ReadAt int64
}

// EventStream reads an AWS event stream's messages: an "event" message
// is an sse.Event of its :event-type with its payload as the data; an
// "exception" or "error" message is an event of type "error" whose data
// is a JSON error object naming the exception (a ModelStreamError with
// its message), the shape endpoint.StreamError reads. It is not safe for
// concurrent use.
type EventStream struct {
	in   input
	errb []byte // the last error event's data
	err  error  // sticky
}

// NewEventStream returns a reader of src's messages, stamped with now,
// each at most maxMessage bytes (≤ 0: 16 MiB, the SDKs' bound on a
// payload, with room for its headers).
func NewEventStream(src io.Reader, now func() int64, maxMessage int) *EventStream {
	if maxMessage <= 0 {
		maxMessage = sse.DefaultMaxEventSize + maxHeaders + minMessage
	}
	es := &EventStream{in: newInput(now, DefaultBufferSize, maxMessage)}
	es.Reset(src)
	return es
}

// Reset makes es read src from its start, keeping its buffers.
func (es *EventStream) Reset(src io.Reader) {
	es.in.reset(src)
	es.err = nil
	if cap(es.errb) > 64<<10 {
		es.errb = nil
	}
}

// Next returns the next message as an event (see EventStream).
func (es *EventStream) Next() (sse.Event, error) {
	m, err := es.NextMessage()
	if err != nil {
		return sse.Event{}, err
	}
	ev := sse.Event{At: m.At, ReadAt: m.ReadAt}
	switch string(m.MessageType) {
	case "exception", "error":
		es.errb = errorData(es.errb[:0], &m)
		ev.Type, ev.Data = errorType, es.errb
	default:
		ev.Type, ev.Data = m.EventType, m.Payload
		if ev.Data == nil {
			ev.Data = noData
		}
	}
	return ev, nil
}

var (
	errorType = []byte("error")
	noData    = []byte{}
)

// NextMessage returns the next message whole (its CRCs checked), io.EOF
// at the stream's end between messages.
func (es *EventStream) NextMessage() (Message, error) {
	if es.err != nil {
		return Message{}, es.err
	}
	m, err := es.next()
	if err != nil {
		es.err = err
	}
	return m, err
}

func (es *EventStream) next() (Message, error) {
	in := &es.in
	if !in.need(preludeLen) {
		return Message{}, in.end(in.w > in.r)
	}
	p := in.buf[in.r:in.w]
	total := int(binary.BigEndian.Uint32(p[0:4]))
	hlen := int(binary.BigEndian.Uint32(p[4:8]))
	if crc32.ChecksumIEEE(p[:8]) != binary.BigEndian.Uint32(p[8:12]) {
		return Message{}, fmt.Errorf("%w (prelude)", ErrChecksum)
	}
	switch {
	case total < minMessage || hlen > total-minMessage || hlen > maxHeaders:
		return Message{}, fmt.Errorf("aws event stream: a message of %d bytes with %d bytes of headers", total, hlen)
	case total > in.max:
		return Message{}, fmt.Errorf("%w (%d bytes, over %d)", ErrTooLarge, total, in.max)
	}
	if !in.need(total) {
		return Message{}, in.end(true)
	}
	p = in.buf[in.r : in.r+total]
	if crc32.ChecksumIEEE(p[:total-crcLen]) != binary.BigEndian.Uint32(p[total-crcLen:]) {
		return Message{}, fmt.Errorf("%w (message)", ErrChecksum)
	}
	m := Message{At: in.arrivedAt, ReadAt: in.readAt}
	if err := headers(p[preludeLen:preludeLen+hlen], &m); err != nil {
		return Message{}, err
	}
	if payload := p[preludeLen+hlen : total-crcLen]; len(payload) > 0 {
		m.Payload = payload
	}
	in.r += total
	return m, nil
}

// headers reads the headers m names from h.
func headers(h []byte, m *Message) error {
	for len(h) > 0 {
		n := int(h[0])
		if n > 0 && len(h) == 1 {
			// A name's length and nothing after it: the SDKs read the
			// headers as ended there.
			return nil
		}
		if len(h) < 1+n+1 {
			return errors.New("aws event stream: a header cut short")
		}
		name := h[1 : 1+n]
		typ := h[1+n]
		h = h[2+n:]
		var value []byte
		size := 0
		switch typ {
		case valueTrue, valueFalse:
		case valueByte:
			size = 1
		case valueInt16:
			size = 2
		case valueInt32:
			size = 4
		case valueInt64, valueTimestamp:
			size = 8
		case valueUUID:
			size = 16
		case valueBytes, valueString:
			if len(h) < 2 {
				return errors.New("aws event stream: a header cut short")
			}
			size = 2 + int(binary.BigEndian.Uint16(h))
		default:
			return fmt.Errorf("aws event stream: header value type %d", typ)
		}
		if len(h) < size {
			return errors.New("aws event stream: a header cut short")
		}
		if typ == valueString || typ == valueBytes {
			value = h[2:size]
		}
		h = h[size:]
		switch string(name) {
		case ":message-type":
			m.MessageType = value
		case ":event-type":
			m.EventType = value
		case ":exception-type":
			m.ExceptionType = value
		case ":error-code":
			m.ErrorCode = value
		case ":error-message":
			m.ErrorMessage = value
		}
	}
	return nil
}

// errorData appends to dst the JSON error object of an exception or
// error message: {"type": its exception type or error code, "error": its
// payload when that is a JSON object, else "message": the payload or the
// error message}.
func errorData(dst []byte, m *Message) []byte {
	typ, msg := m.ExceptionType, m.ErrorMessage
	if len(typ) == 0 {
		typ = m.ErrorCode
	}
	if len(typ) == 0 {
		typ = m.MessageType
	}
	t, _ := json.Marshal(string(typ))
	dst = append(dst, `{"type":`...)
	dst = append(dst, t...)
	if code := exceptionStatus(string(typ)); code != 0 {
		dst = append(dst, `,"code":`...)
		dst = strconv.AppendInt(dst, int64(code), 10)
	}
	if p := bytes.TrimSpace(m.Payload); len(p) > 0 && p[0] == '{' && json.Valid(p) {
		dst = append(dst, `,"error":`...)
		dst = append(dst, p...)
		return append(dst, '}')
	}
	if len(msg) == 0 {
		msg = m.Payload
	}
	if len(msg) == 0 {
		msg = []byte("an " + string(m.MessageType) + " message of the event stream")
	}
	s, _ := json.Marshal(string(msg))
	dst = append(dst, `,"message":`...)
	dst = append(dst, s...)
	return append(dst, '}')
}

// exceptionStatus is the HTTP status AWS's references give an exception
// a stream may end with (0: none known), so a throttled stream is counted
// as a 429, not as the 200 it began with.
func exceptionStatus(typ string) int {
	switch strings.ToLower(typ) {
	case "throttlingexception":
		return http.StatusTooManyRequests
	case "serviceunavailableexception":
		return http.StatusServiceUnavailable
	case "internalserverexception", "internalstreamfailure":
		return http.StatusInternalServerError
	case "modelstreamerrorexception", "modelstreamerror":
		return http.StatusFailedDependency
	case "validationexception":
		return http.StatusBadRequest
	case "modeltimeoutexception":
		return http.StatusRequestTimeout
	}
	return 0
}

// Payload reads the payloads of an event stream's "event" messages as one
// byte stream: SageMaker's PayloadPart events carry the serving
// container's own stream (server-sent events, cut anywhere). An exception
// or error message ends it with a *StreamError. Its ArrivedAt is the
// arrival stamp of the message the latest Read's bytes came from, so an
// sse.Reader over it stamps the inner events by the outer messages.
type Payload struct {
	es   EventStream
	cur  []byte
	at   int64
	done error
}

// NewPayload returns a reader of src's payloads, each message at most
// maxMessage bytes (≤ 0: as NewEventStream).
func NewPayload(src io.Reader, maxMessage int) *Payload {
	p := &Payload{es: *NewEventStream(nil, nil, maxMessage)}
	p.Reset(src)
	return p
}

// Reset makes p read src from its start, keeping its buffers.
func (p *Payload) Reset(src io.Reader) {
	p.es.Reset(src)
	p.cur, p.at, p.done = nil, 0, nil
}

// StreamError is an exception or error message that ended a payload
// stream: Data is its JSON error object (as EventStream's error events).
type StreamError struct {
	Data []byte
}

func (e *StreamError) Error() string { return "the event stream sent an error: " + string(e.Data) }

// Read returns the next payload bytes.
func (p *Payload) Read(b []byte) (int, error) {
	for len(p.cur) == 0 {
		if p.done != nil {
			return 0, p.done
		}
		m, err := p.es.NextMessage()
		if err != nil {
			p.done = err
			return 0, err
		}
		switch string(m.MessageType) {
		case "exception", "error":
			p.done = &StreamError{Data: errorData(nil, &m)}
			return 0, p.done
		}
		p.cur, p.at = m.Payload, m.At
	}
	n := copy(b, p.cur)
	p.cur = p.cur[n:]
	return n, nil
}

// ArrivedAt is when the message the latest Read's bytes came from
// arrived (the source's stamp; 0 without one).
func (p *Payload) ArrivedAt() int64 { return p.at }
