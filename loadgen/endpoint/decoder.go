package endpoint

// ResponseDecoder reads an endpoint's responses, one at a time: the type's
// own Decoder (or the --response-field path) under the shape check and the
// reasoning split. Reset readies it for the next response and keeps its
// buffers, so a caller that pools decoders decodes without allocating.
type ResponseDecoder struct {
	e     *Endpoint
	f     Format
	field *fieldDecoder // the response field's decoder, when there is one
	err   error         // the endpoint cannot be decoded (unknown type, bad field)

	// top is what Event and Body call: one of the reasoning wrappers or
	// shape itself, each wrapping the next, all inside this one value.
	top   Decoder
	shape shapeDecoder
	think thinkSplitter
	none  noReasoning
}

// resetter is a type's Decoder that keeps state across a response's events
// and can clear it; Reset makes a new decoder of a type without one.
type resetter interface{ reset() }

// NewDecoder returns a decoder for the responses of this endpoint, with
// the reasoning format and the response field applied.
func (e *Endpoint) NewDecoder() *ResponseDecoder {
	d := &ResponseDecoder{e: e}
	if d.f, d.err = e.format(); d.err != nil {
		return d
	}
	if e.ResponseField != "" {
		if d.field, d.err = newFieldDecoder(e.ResponseField); d.err != nil {
			return d
		}
	}
	d.shape.kind = e.Kind
	switch e.Reasoning {
	case ReasoningFields:
		d.top = &d.shape
	case ReasoningNone:
		d.none.inner = &d.shape
		d.top = &d.none
	default:
		d.think = thinkSplitter{inner: &d.shape, always: e.Reasoning == ReasoningThink}
		d.top = &d.think
	}
	d.Reset()
	return d
}

// Reset readies d for another response.
func (d *ResponseDecoder) Reset() {
	if d.err != nil {
		return
	}
	switch r, ok := d.shape.inner.(resetter); {
	case d.field != nil:
		d.shape.inner = d.field
	case ok:
		r.reset()
	default:
		d.shape.inner = d.f.Decoder(d.e)
	}
	d.shape.events, d.shape.matched = 0, false
	d.think.state = thinkStart
	d.think.pending = d.think.pending[:0]
}

// Event decodes one streamed event (typ is its SSE event type, nil when it
// had none), appending its text to out.
func (d *ResponseDecoder) Event(typ, data []byte, out *Output) (Delta, error) {
	if d.err != nil {
		return Delta{}, d.err
	}
	if isErrorEvent(typ) {
		// Whatever the type: an event the server named "error" (or
		// llama.cpp's error field) is the answer's failure.
		return Delta{Err: StreamError(data)}, nil
	}
	return d.top.Event(typ, data, out)
}

// Body decodes a whole non-streamed response body.
func (d *ResponseDecoder) Body(data []byte, out *Output) (Delta, error) {
	if d.err != nil {
		return Delta{}, d.err
	}
	return d.top.Body(data, out)
}
