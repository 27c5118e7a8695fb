package frames

import (
	"errors"
	"fmt"
	"io"

	"github.com/surgebench/surge/loadgen/sse"
)

// JSONArray reads a streamed JSON array, one element at a time, as each
// arrives whole: Gemini's streamGenerateContent without alt=sse answers
// `[{…}` then `,\r\n{…}` per chunk and `]` at the end. Each element is an
// sse.Event with no type whose data is the element's bytes; the array's
// close is the stream's end (io.EOF after it). A stream that is one
// object rather than an array (a server that answered whole) is that one
// element. Elements are found by
// their brackets (strings and escapes followed), not decoded: that is
// the endpoint decoder's job. It is not safe for concurrent use.
type JSONArray struct {
	in input
	// The scan of the element in progress resumes where the last read
	// ended: its start, the next byte to look at, its open brackets and
	// whether that byte is inside a string (after a backslash).
	start, pos        int
	stack             []byte // the element's open brackets, innermost last
	inString, escaped bool
	state             arrayState
	single            bool // the stream is one object, not an array
	err               error
}

type arrayState uint8

const (
	beforeArray   arrayState = iota // expecting '['
	beforeElement                   // after '[' or ','
	inElement                       // scanning an element
	afterElement                    // expecting ',' or ']'
	afterArray                      // after ']': only white space
)

// NewJSONArray returns a reader of src's elements, stamped with now,
// each at most maxElement bytes (≤ 0: sse's default event bound).
func NewJSONArray(src io.Reader, now func() int64, maxElement int) *JSONArray {
	if maxElement <= 0 {
		maxElement = sse.DefaultMaxEventSize
	}
	a := &JSONArray{in: newInput(now, DefaultBufferSize, maxElement)}
	a.Reset(src)
	return a
}

// Reset makes a read src from its start, keeping its buffers.
func (a *JSONArray) Reset(src io.Reader) {
	a.in.reset(src)
	a.start, a.pos, a.stack, a.inString, a.escaped = 0, 0, a.stack[:0], false, false
	a.state, a.single, a.err = beforeArray, false, nil
}

// Next returns the next element (io.EOF after the array's close).
func (a *JSONArray) Next() (sse.Event, error) {
	if a.err != nil {
		return sse.Event{}, a.err
	}
	ev, err := a.next()
	if err != nil {
		a.err = err
	}
	return ev, err
}

func (a *JSONArray) next() (sse.Event, error) {
	in := &a.in
	for {
		// Offsets are relative to in.r, which a fill may move.
		buf := in.buf[in.r:in.w]
		for a.pos < len(buf) {
			c := buf[a.pos]
			switch a.state {
			case beforeArray, beforeElement, afterElement, afterArray:
				a.pos++
				if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
					continue
				}
				switch {
				case a.state == beforeArray && c == '[':
					a.state = beforeElement
				case a.state == beforeArray && c == '{':
					// One object, not in an array: a server that
					// answered whole. It is the stream's one element.
					a.state, a.start, a.stack = inElement, a.pos-1, append(a.stack[:0], c)
					a.single = true
				case a.state == beforeElement && c == ']', a.state == afterElement && c == ']':
					a.state = afterArray
				case a.state == afterElement && c == ',':
					a.state = beforeElement
				case a.state == beforeElement && (c == '{' || c == '['):
					a.state, a.start, a.stack = inElement, a.pos-1, append(a.stack[:0], c)
				default:
					return sse.Event{}, fmt.Errorf("a streamed JSON array: unexpected %q at byte %d", c, a.pos-1)
				}
			case inElement:
				a.pos++
				switch {
				case a.escaped:
					a.escaped = false
				case a.inString && c == '\\':
					a.escaped = true
				case c == '"':
					a.inString = !a.inString
				case a.inString:
				case c == '{' || c == '[':
					a.stack = append(a.stack, c)
				case c == '}' || c == ']':
					if open := a.stack[len(a.stack)-1]; open != c-2 { // '{'+2 == '}', '['+2 == ']'
						return sse.Event{}, fmt.Errorf("a streamed JSON array: %q closes %q at byte %d", c, open, a.pos-1)
					}
					if a.stack = a.stack[:len(a.stack)-1]; len(a.stack) == 0 {
						if a.pos-a.start > in.max {
							return sse.Event{}, fmt.Errorf("%w (over %d bytes)", ErrTooLarge, in.max)
						}
						ev := sse.Event{Data: buf[a.start:a.pos], At: in.arrivedAt, ReadAt: in.readAt}
						in.r += a.pos
						a.pos, a.start, a.state = 0, 0, afterElement
						if a.single {
							a.state = afterArray
						}
						return ev, nil
					}
				}
			}
		}
		if a.state == inElement && a.pos-a.start > in.max {
			return sse.Event{}, fmt.Errorf("%w (over %d bytes)", ErrTooLarge, in.max)
		}
		// Everything buffered is scanned: drop what needs no keeping and
		// read more.
		if a.state != inElement {
			in.r += a.pos
			a.pos = 0
		}
		if in.err != nil {
			if a.state == afterArray && errors.Is(in.err, io.EOF) {
				return sse.Event{}, io.EOF
			}
			return sse.Event{}, in.end(true)
		}
		in.fill(in.w - in.r + 1)
	}
}
