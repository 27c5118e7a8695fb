package endpoint

import (
	"bytes"
	"errors"
	"fmt"
)

// ShapeError reports a response that does not have the shape its endpoint
// type reads: the server speaks another API, or the type or path is wrong.
type ShapeError struct {
	Kind Kind
	// Field is what the first failing event or body lacked.
	Field string
	// Event is the 1-based index of that event (0 for a whole body).
	Event int
}

// Error names the type and the missing field. The message depends on no
// per-response value, so the error summary counts all such failures under
// one line.
func (e *ShapeError) Error() string {
	where := "the response body"
	if e.Event == 1 {
		where = "the first event"
	} else if e.Event > 1 {
		where = fmt.Sprintf("event %d", e.Event)
	}
	return fmt.Sprintf("response does not match endpoint type %q: %s has no %q field", e.Kind, where, e.Field)
}

// shapeDecoder names the type in a decoder's ShapeError. Once an event has
// matched, later events the type does not know (keep-alives, extensions)
// are skipped rather than failing a response that is working.
type shapeDecoder struct {
	kind    Kind
	inner   Decoder
	events  int // events seen
	matched bool
}

func (d *shapeDecoder) Event(typ, data []byte, out *Output) (Delta, error) {
	d.events++
	delta, err := d.inner.Event(typ, data, out)
	if err == nil {
		d.matched = true
		return delta, nil
	}
	if _, ok := err.(*ShapeError); ok && d.matched {
		return Delta{}, nil // decoders return their shape errors unwrapped
	}
	var se *ShapeError // errors.As makes it escape: only on the error path
	if errors.As(err, &se) {
		// The decoders' shape errors are shared values: report a copy.
		return Delta{}, &ShapeError{Kind: d.kind, Field: se.Field, Event: d.events}
	}
	return delta, err
}

func (d *shapeDecoder) Body(data []byte, out *Output) (Delta, error) {
	delta, err := d.inner.Body(data, out)
	if err == nil {
		return delta, nil
	}
	var se *ShapeError
	if errors.As(err, &se) {
		return delta, &ShapeError{Kind: d.kind, Field: se.Field}
	}
	return delta, err
}

// missing is the error a decoder returns for data without field. The
// fields the decoders name are few and fixed, so each error is made once
// and shared: a stream's unknown keep-alive events, skipped once the
// stream matched, cost no allocation. The shape decoder reports copies.
func missing(field string) error {
	if e, ok := missingFields[field]; ok {
		return e
	}
	return &ShapeError{Field: field}
}

var missingFields = func() map[string]*ShapeError {
	m := map[string]*ShapeError{}
	for _, f := range []string{"choices", "token", "type", "generated_text", "output", "content", "[results]", "data", "results", "rankings"} {
		m[f] = &ShapeError{Field: f}
	}
	return m
}()

var doneMarker = []byte("[DONE]")

// isDone reports OpenAI's end-of-stream marker.
func isDone(data []byte) bool {
	return len(data) < 16 && bytes.Equal(bytes.TrimSpace(data), doneMarker) // a JSON chunk is longer: skip the trim
}
