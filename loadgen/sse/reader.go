package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

const (
	// DefaultBufferSize is the read buffer a Reader starts with.
	DefaultBufferSize = 64 << 10
	// DefaultMaxEventSize caps one event's data and any single line.
	DefaultMaxEventSize = 16 << 20

	// maxEmptyReads is how many (0, nil) reads in a row end the stream with
	// io.ErrNoProgress, as bufio does, so a broken source cannot spin forever.
	maxEmptyReads = 100
)

// ErrEventTooLarge is returned by Next when an event's data (its data lines
// joined with "\n") or any single line of the stream is longer than the
// MaxEventSize limit. The Reader keeps returning it: the rest of the stream is
// not trusted.
var ErrEventTooLarge = errors.New("sse: event larger than the maximum event size")

var (
	bom       = []byte("\xEF\xBB\xBF")
	noData    = []byte{} // Data of an empty event that was copied out of buf
	errorType = []byte("error")
)

// Event is one dispatched server-sent event. Data and Type alias the Reader's
// buffers: they are valid until the next call to Next or Reset.
type Event struct {
	// Data is the event's data field lines joined with "\n" (as the spec
	// builds it), without a final newline. It is empty, not nil, for an event
	// made of one empty data line.
	Data []byte
	// Type is the value of the last "event:" field, nil when the event had
	// none or it was empty (the spec then calls the event "message").
	Type []byte
	// At is when the event's bytes arrived: for the Read that completed
	// the event (delivered its dispatching blank line), the source's own
	// arrival stamp when it has one (see Stamped), else ReadAt.
	At int64
	// ReadAt is the clock reading taken right after the Read call that
	// completed the event. ReadAt − At is how late the client read it.
	ReadAt int64
	// ErrorField is set when the event's data came from a line with the
	// field name "error" (llama.cpp's server wrote its in-stream errors as
	// `error: {...}` until September 2025): the spec ignores such a
	// field, which would turn a failed request into an empty success. The
	// Reader reads it as the data of an event of type "error".
	ErrorField bool
	// AtEOF is set on an event the end of the stream completed: its data
	// lines came but not the blank line after them (koboldcpp ends with
	// `data: [DONE]` and no newline at all, distributed-llama with
	// `data: [DONE]\r\n`). The spec drops such an event; the Reader hands
	// it on, and it is whole only if its data is (a JSON payload that
	// parses, [DONE]): a cut one is the caller's to call an error.
	AtEOF bool
}

// Stamped is implemented by a source that knows when the bytes of its
// latest Read arrived, on the Reader's clock: a socket with kernel receive
// timestamps knows it better than the reader's own clock, which is late by
// however long the reading goroutine waited to run. ArrivedAt returns 0
// when it does not know; a stamp later than the Reader's own reading is
// taken as that reading.
type Stamped interface {
	ArrivedAt() int64
}

// Option configures a Reader.
type Option func(*options)

type options struct {
	bufSize  int
	maxEvent int
	lines    bool
}

// Lines reads the stream as newline-delimited JSON (Ollama's native
// API) instead of SSE: each non-empty line is an event of its own, its
// data the whole line, with no field names and no blank line between
// events. Its timestamps and bounds are the SSE reading's.
func Lines() Option { return func(o *options) { o.lines = true } }

// BufferSize sets the size of the read buffer (default 64 KiB). Each Read
// asks for all the free space in it and Next parses every event that arrived
// before reading again, so a server that flushes several events at once costs
// one syscall for all of them. The buffer grows for a line longer than it, up
// to the MaxEventSize limit. n <= 0 keeps the default.
func BufferSize(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.bufSize = n
		}
	}
}

// MaxEventSize caps the size of one event's data and of any single line
// (default 16 MiB); beyond it Next returns ErrEventTooLarge instead of
// buffering without bound. n <= 0 keeps the default.
func MaxEventSize(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxEvent = n
		}
	}
}

// Reader parses a text/event-stream following the WHATWG "event stream
// interpretation" rules. It is not safe for concurrent use.
//
// Timestamps: the Reader calls now exactly once per Read that returns n > 0,
// before it parses any of those bytes (and asks a Stamped source for its
// arrival stamp once). Every event completed by that Read carries the
// readings, so events that arrive together share one timestamp and the
// clock costs one call per syscall, not one per event. An event is stamped
// by the Read that completed it, not the one that began it: until its last
// byte arrived the client could not have used it.
type Reader struct {
	src     io.Reader
	stamped Stamped // src, when it has arrival stamps
	now     func() int64
	opts    options

	buf  []byte
	from int // start of the first unparsed line
	w    int // end of buffered bytes

	// Line-end search state, absolute offsets into buf. They keep the scan
	// linear when a line arrives a byte at a time or lines end in CR with a
	// distant LF.
	lfAt   int // position of a known LF at or after from, or -1
	lfMiss int // no LF in [from, lfMiss)
	crMiss int // no CR in [from, crMiss)
	skipLF bool
	bomOK  bool // the BOM check at the start of the stream is done

	readAt    int64 // clock reading for the latest Read
	arrivedAt int64 // arrival stamp for the latest Read (readAt without one)

	// Pending event.
	started   bool
	dataLines int
	dataLen   int
	alias     []byte // the only data line, still in buf
	aliased   bool
	data      []byte // data lines joined, once there is more than one
	typ       []byte
	errField  bool // an "error" field line replaced the data

	rerr  error // error from src, acted on once buf is parsed
	err   error // sticky result
	empty int
}

// NewReader returns a Reader that parses src. now is the caller's clock
// (monotonic nanoseconds) used for Event.At; nil means no clock (At is 0).
func NewReader(src io.Reader, now func() int64, opts ...Option) *Reader {
	if now == nil {
		now = func() int64 { return 0 }
	}
	o := options{bufSize: DefaultBufferSize, maxEvent: DefaultMaxEventSize}
	for _, opt := range opts {
		opt(&o)
	}
	r := &Reader{now: now, opts: o, buf: make([]byte, o.bufSize)}
	r.Reset(src)
	return r
}

// Reset makes r parse src from its beginning, keeping its buffers, so that
// Readers can be pooled. A buffer that grew past 1 MiB for a huge event is
// dropped back to the configured size. Reset(nil) releases the previous
// source; Next then reports io.EOF.
func (r *Reader) Reset(src io.Reader) {
	if len(r.buf) > 4*r.opts.bufSize && len(r.buf) > 1<<20 {
		r.buf = make([]byte, r.opts.bufSize)
	}
	if cap(r.data) > 1<<20 {
		r.data = nil
	}
	if cap(r.typ) > 1<<20 {
		r.typ = nil
	}
	*r = Reader{
		src: src, now: r.now, opts: r.opts, buf: r.buf,
		lfAt: -1, data: r.data[:0], typ: r.typ[:0],
	}
	r.stamped, _ = src.(Stamped)
	if src == nil {
		r.err = io.EOF
	}
}

// ResetLines is Reset, reading src as newline-delimited JSON when lines
// is set (Lines) and as SSE when not, whatever the Reader was made with:
// a pooled Reader reads each response as its Content-Type says.
func (r *Reader) ResetLines(src io.Reader, lines bool) {
	r.Reset(src)
	r.opts.lines = lines
}

// Next returns the next dispatched event. At the end of the stream an
// event whose data lines came without the blank line after them is
// dispatched with AtEOF set (an unterminated last line counts when it is
// a data line that does not end inside a UTF-8 sequence); then Next
// returns io.EOF, or io.ErrUnexpectedEOF when the stream ended inside an
// event that has no data to dispatch or inside a line that is not a data
// line or a comment. A read error is returned wrapped, after every event
// completed before it. Errors are sticky.
func (r *Reader) Next() (Event, error) {
	for r.err == nil {
		ev, ok := r.parse()
		if ok {
			return ev, nil
		}
		if r.err != nil {
			break
		}
		if r.bomOK && r.w-r.from > r.opts.maxEvent {
			r.err = ErrEventTooLarge
			break
		}
		if r.rerr != nil {
			if ev, ok := r.finish(); ok {
				return ev, nil
			}
			break
		}
		r.fill()
	}
	return Event{}, r.err
}

// finish turns the source's error into the Reader's final one, after
// dispatching the event the end of the stream completed, if any (ok).
func (r *Reader) finish() (ev Event, ok bool) {
	if !errors.Is(r.rerr, io.EOF) {
		r.err = fmt.Errorf("sse: read: %w", r.rerr)
		return Event{}, false
	}
	if r.from < r.w {
		line := r.buf[r.from:r.w]
		r.from = r.w
		if line[0] != ':' && !r.lastLine(line) {
			return Event{}, false
		}
	}
	switch {
	case r.dataLines > 0:
		ev = r.dispatch()
		ev.AtEOF = true
		r.err = io.EOF
		return ev, true
	case r.started:
		r.err = io.ErrUnexpectedEOF
	default:
		r.err = io.EOF
	}
	return Event{}, false
}

// lastLine takes the stream's unterminated last line, which counts only
// as a data (or error) line whose value does not end inside a UTF-8
// sequence: anything else was cut mid-line (r.err says how).
func (r *Reader) lastLine(line []byte) bool {
	field, value, _ := bytes.Cut(line, []byte(":"))
	if len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	name := string(field)
	if name != "data" && name != "error" || cutRune(value) {
		r.err = io.ErrUnexpectedEOF
		return false
	}
	r.started = true
	if name == "error" {
		r.errorLine()
	}
	if !r.addData(value) {
		r.err = ErrEventTooLarge
		return false
	}
	return true
}

// cutRune reports whether b ends inside a multi-byte UTF-8 sequence.
func cutRune(b []byte) bool {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return !utf8.FullRune(b[i:])
		}
	}
	return false
}

// fill makes room in buf and reads once from src.
func (r *Reader) fill() {
	switch {
	case r.from == r.w && !r.aliased:
		r.shift(r.from)
	case len(r.buf)-r.w < len(r.buf)/8 || r.w == len(r.buf):
		if r.from > 0 {
			if r.aliased {
				r.data = append(r.data[:0], r.alias...)
				r.alias, r.aliased = nil, false
			}
			copy(r.buf, r.buf[r.from:r.w])
			r.shift(r.from)
		}
		if r.w == len(r.buf) {
			// One line (or a possible BOM) fills the buffer; Next has
			// checked it is within the limit, so there is room to grow.
			n := max(min(2*len(r.buf), r.opts.maxEvent+1), 2*len(bom))
			nb := make([]byte, n)
			copy(nb, r.buf[:r.w])
			r.buf = nb
		}
	}
	n, err := r.src.Read(r.buf[r.w:])
	if n < 0 || n > len(r.buf)-r.w {
		r.rerr = fmt.Errorf("source returned an invalid count %d", n)
		return
	}
	if n > 0 {
		r.readAt = r.now()
		r.arrivedAt = r.readAt
		if r.stamped != nil {
			if a := r.stamped.ArrivedAt(); a > 0 && a < r.readAt {
				r.arrivedAt = a
			}
		}
		r.w += n
		r.empty = 0
	} else if err == nil {
		r.empty++
		if r.empty >= maxEmptyReads {
			err = io.ErrNoProgress
		}
	}
	r.rerr = err
}

// shift moves every offset d bytes towards the start of buf (after the bytes
// themselves were moved, or when they are all consumed).
func (r *Reader) shift(d int) {
	r.from -= d
	r.w -= d
	r.lfMiss = max(r.lfMiss-d, 0)
	r.crMiss = max(r.crMiss-d, 0)
	if r.lfAt >= 0 {
		r.lfAt -= d
	}
}

// lineEnd finds the end of the line starting at r.from: the index of its
// CR or LF, or -1 when the buffered bytes hold no line terminator.
func (r *Reader) lineEnd() int {
	from, buf := r.from, r.buf[:r.w]
	if r.lfAt < from {
		r.lfAt = -1
		s := max(from, r.lfMiss)
		if i := bytes.IndexByte(buf[s:], '\n'); i >= 0 {
			r.lfAt = s + i
		} else {
			r.lfMiss = len(buf)
		}
	}
	end := r.lfAt
	if end < 0 {
		end = len(buf)
	}
	s := max(from, r.crMiss)
	if s < end {
		if i := bytes.IndexByte(buf[s:end], '\r'); i >= 0 {
			return s + i
		}
	}
	r.crMiss = end
	return r.lfAt
}

// parse processes buffered complete lines until one dispatches an event
// (ok), more bytes are needed, or r.err is set.
func (r *Reader) parse() (ev Event, ok bool) {
	if !r.bomOK {
		b := r.buf[r.from:r.w]
		if len(b) < len(bom) && bytes.HasPrefix(bom, b) && r.rerr == nil {
			return Event{}, false
		}
		if bytes.HasPrefix(b, bom) {
			r.from += len(bom)
		}
		r.bomOK = true
	}
	for {
		if r.skipLF && r.from < r.w {
			if r.buf[r.from] == '\n' {
				r.from++
			}
			r.skipLF = false
		}
		eol := r.lineEnd()
		if eol < 0 {
			return Event{}, false
		}
		start := r.from
		line := r.buf[start:eol]
		if len(line) > r.opts.maxEvent {
			r.err = ErrEventTooLarge
			return Event{}, false
		}
		r.from = eol + 1
		if r.buf[eol] == '\r' {
			switch {
			case r.from < r.w:
				if r.buf[r.from] == '\n' {
					r.from++
				}
			case r.rerr == nil:
				r.skipLF = true
			}
		}
		if r.opts.lines {
			if len(line) == 0 {
				continue
			}
			return Event{Data: line, At: r.arrivedAt, ReadAt: r.readAt}, true
		}
		if len(line) == 0 {
			if r.dataLines > 0 {
				return r.dispatch(), true
			}
			r.started = false
			r.typ = r.typ[:0]
			r.errField = false
			continue
		}
		if line[0] == ':' {
			continue
		}
		r.started = true
		field, value := line, line[len(line):]
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if !r.addData(value) {
				r.err = ErrEventTooLarge
				return Event{}, false
			}
		case "event":
			r.typ = append(r.typ[:0], value...)
		case "error":
			// Not a field of the spec: llama.cpp's in-stream error. Its
			// value is the event's data from here on.
			r.errorLine()
			if !r.addData(value) {
				r.err = ErrEventTooLarge
				return Event{}, false
			}
		}
		// "id" and "retry" only matter for reconnecting, which a
		// benchmark never does; other unknown fields are ignored.
	}
}

// errorLine starts an event's data over for an "error" field line.
func (r *Reader) errorLine() {
	r.dataLines, r.dataLen = 0, 0
	r.alias, r.aliased = nil, false
	r.data = r.data[:0]
	r.errField = true
}

// addData appends one data line's value, reporting false past the limit.
func (r *Reader) addData(value []byte) bool {
	n := r.dataLen + len(value)
	if r.dataLines > 0 {
		n++
	}
	if n > r.opts.maxEvent {
		return false
	}
	switch {
	case r.dataLines == 0:
		r.alias, r.aliased = value, true
	default:
		if r.aliased {
			r.data = append(r.data[:0], r.alias...)
			r.alias, r.aliased = nil, false
		}
		r.data = append(r.data, '\n')
		r.data = append(r.data, value...)
	}
	r.dataLines++
	r.dataLen = n
	return true
}

// dispatch builds the pending event and clears the event state.
func (r *Reader) dispatch() Event {
	ev := Event{Data: r.alias, At: r.arrivedAt, ReadAt: r.readAt}
	if !r.aliased {
		ev.Data = r.data[:r.dataLen]
	}
	if ev.Data == nil {
		ev.Data = noData
	}
	if len(r.typ) > 0 {
		ev.Type = r.typ
	}
	if r.errField {
		ev.Type, ev.ErrorField = errorType, true
		r.errField = false
	}
	r.started = false
	r.dataLines, r.dataLen = 0, 0
	r.alias, r.aliased = nil, false
	r.data = r.data[:0]
	r.typ = r.typ[:0]
	return ev
}
