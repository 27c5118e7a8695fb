package endpoint

import (
	"bytes"
	"encoding/json"

	"github.com/surgebench/surge/metrics"
)

// sglangGenerate is SGLang's native API: POST /generate with the prompt
// as "text" and "sampling_params"; a stream's events carry the text so
// far (SGLang's default) and each a meta_info, whose last (with
// --enable-metrics) gives the request's queue time and the stamps of its
// prefill and decode (the time breakdown's source "sglang"), and whose
// prompt_tokens and completion_tokens are its usage. It ends with
// [DONE].
type sglangGenerate struct{}

func init() { Register(SGLangGenerate, sglangGenerate{}) }

func (sglangGenerate) Info() Info {
	return Info{Path: "/generate", Streams: true, ProducesTokens: true}
}

// Body puts the output cap and --extra-inputs in sampling_params, where
// SGLang reads them, but for a top-level "text", "stream" or
// "sampling_params" of the user's own.
func (sglangGenerate) Body(e *Endpoint, r *Request) ([]byte, error) {
	params := make(map[string]any, 1+len(e.Extra)+len(r.Turn.Extra))
	if r.Turn.MaxTokens > 0 {
		params["max_new_tokens"] = r.Turn.MaxTokens
	}
	body := map[string]any{"text": promptText(r), "sampling_params": params, "stream": e.Streaming}
	for _, extra := range []map[string]any{e.Extra, r.Turn.Extra} {
		for k, v := range extra {
			switch k {
			case "text", "stream", "sampling_params", "return_logprob", "rid":
				body[k] = v
			default:
				params[k] = v
			}
		}
	}
	return json.Marshal(body)
}

func (sglangGenerate) Decoder(*Endpoint) Decoder { return &sglangDecoder{} }

// sglangDecoder keeps the text a stream has sent so far: each event
// carries all of it, and its new part is what the event added.
type sglangDecoder struct {
	full, prev []byte // the latest event's text, the one's before
	// incremental: the server sends each event's own part
	// (--incremental-streaming-output), found when an event's text does
	// not start with the one's before.
	incremental bool
}

func (d *sglangDecoder) reset() { d.full, d.prev, d.incremental = d.full[:0], d.prev[:0], false }

func (d *sglangDecoder) Event(_, data []byte, out *Output) (Delta, error) {
	if isDone(data) {
		return Delta{Done: true}, nil
	}
	return d.parse(data, out)
}

func (d *sglangDecoder) Body(data []byte, out *Output) (Delta, error) {
	d.reset()
	return d.parse(data, out)
}

// parse reads one event or body: its text (all of it so far: the part
// past what was sent is new), meta_info and error.
func (d *sglangDecoder) parse(data []byte, out *Output) (Delta, error) {
	var delta Delta
	var known, gotText bool
	var e metrics.Error
	s := scanner{b: data}
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "text":
			known = true
			if s.peek() != '"' {
				return s.skip()
			}
			var err error
			d.full, err = s.str(d.full[:0])
			gotText = err == nil
			return err
		case "meta_info":
			known = true
			return parseSGLangMeta(&s, &delta)
		case "error":
			known = true
			ev, err := parseErrorValue(&s)
			if ev != nil {
				e = *ev
			}
			return err
		default:
			return s.skip()
		}
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return Delta{}, syntaxError(data)
	}
	if !known {
		return Delta{}, missing("text")
	}
	if e.Message != "" || e.Type != "" {
		errCopy := e // copied, so e itself stays on the stack
		if errCopy.Type == "" {
			errCopy.Type = "error"
		}
		return Delta{Err: &errCopy}, nil
	}
	if gotText {
		if !d.incremental && !bytes.HasPrefix(d.full, d.prev) {
			d.incremental = true
		}
		part := d.full
		if !d.incremental {
			part = d.full[len(d.prev):]
			d.prev = append(d.prev[:0], d.full...)
		}
		out.Text = append(out.Text, part...)
		delta.Content = len(part) > 0
	}
	return delta, nil
}

// parseSGLangMeta reads meta_info: the server's account of the request's
// time (parseMetaInfo), and its prompt_tokens, completion_tokens and
// finish_reason (an object, null until the end).
func parseSGLangMeta(s *scanner, d *Delta) error {
	if s.peek() != '{' {
		return s.skip()
	}
	// The timing's fields and these are read from one pass: the scanner
	// cannot go back, so the object is scanned twice from a saved cursor.
	start := s.i
	if err := parseMetaInfo(s, &d.Server); err != nil {
		return err
	}
	end := s.i
	s.i = start
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "prompt_tokens":
			n, err := s.number()
			d.Usage.Present, d.Usage.PromptTokens = true, n
			d.Usage.Fields |= metrics.UsagePromptField
			return err
		case "completion_tokens":
			n, err := s.number()
			d.Usage.Present, d.Usage.CompletionTokens = true, n
			d.Usage.Fields |= metrics.UsageCompletionField
			return err
		case "finish_reason":
			if s.peek() != 'n' {
				d.Finished = true
			}
			return s.skip()
		default:
			return s.skip()
		}
	})
	s.i = end
	return err
}
