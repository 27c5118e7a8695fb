package endpoint

import (
	"encoding/json"

	"github.com/surgebench/surge/metrics"
)

// huggingfaceGenerate is TGI's native API: /generate answers one JSON body,
// /generate_stream sends one event per token ({token: {text, special}},
// the last with generated_text and details).
type huggingfaceGenerate struct{}

func init() { Register(HuggingFaceGenerate, huggingfaceGenerate{}) }

func (huggingfaceGenerate) Info() Info {
	return Info{Path: "/generate", StreamPath: "/generate_stream", Streams: true, ProducesTokens: true, CapField: "max_new_tokens"}
}

// Body puts generation options in "parameters", where TGI reads them; so
// do --extra-inputs (temperature, top_p, ...), but for a turn's or the
// user's own "inputs" or "parameters".
func (huggingfaceGenerate) Body(e *Endpoint, r *Request) ([]byte, error) {
	params := make(map[string]any, 2+len(e.Extra)+len(r.Turn.Extra))
	params["details"] = true
	if r.Turn.MaxTokens > 0 {
		params["max_new_tokens"] = r.Turn.MaxTokens
	}
	body := map[string]any{"inputs": promptText(r), "parameters": params}
	for _, extra := range []map[string]any{e.Extra, r.Turn.Extra} {
		for k, v := range extra {
			switch k {
			case "inputs", "parameters", "stream":
				body[k] = v
			default:
				params[k] = v
			}
		}
	}
	return json.Marshal(body)
}

func (huggingfaceGenerate) Decoder(*Endpoint) Decoder { return tgiDecoder{} }

type tgiDecoder struct{}

func (tgiDecoder) Event(_, data []byte, out *Output) (Delta, error) {
	var d Delta
	var known bool
	var e metrics.Error
	n := len(out.Text)
	s := scanner{b: data}
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "token":
			known = true
			if s.peek() != '{' {
				return s.skip()
			}
			special := false
			start := len(out.Text)
			err := s.object(func(key []byte) error {
				switch string(key) {
				case "text":
					var err error
					out.Text, err = s.str(out.Text)
					return err
				case "special":
					if s.peek() == 't' {
						special = true
					}
					return s.skip()
				default:
					return s.skip()
				}
			})
			if special { // an end-of-sequence token is not output text
				out.Text = out.Text[:start]
			}
			return err
		case "generated_text":
			if s.peek() != 'n' {
				d.Finished = true
			}
			return s.skip()
		case "details":
			return parseTGIDetails(&s, &d)
		case "error":
			known = true
			v, err := s.str(nil)
			e.Message = string(v)
			return err
		case "error_type":
			v, err := s.str(nil)
			e.Type = string(v)
			return err
		default:
			return s.skip()
		}
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		out.Text = out.Text[:n]
		return Delta{}, syntaxError(data)
	}
	if !known {
		return Delta{}, missing("token")
	}
	if e.Message != "" || e.Type != "" {
		out.Text = out.Text[:n]
		errCopy := e // copied, so e itself stays on the stack
		if errCopy.Type == "" {
			errCopy.Type = "error"
		}
		return Delta{Err: &errCopy}, nil
	}
	d.Content = len(out.Text) > n
	return d, nil
}

// parseTGIDetails reads details' finish_reason and generated_tokens (the
// output length as the server counted it).
func parseTGIDetails(s *scanner, d *Delta) error {
	if s.peek() != '{' {
		return s.skip()
	}
	return s.object(func(key []byte) error {
		switch string(key) {
		case "finish_reason":
			finished, _, err := finishReason(s)
			d.Finished = d.Finished || finished
			return err
		case "generated_tokens":
			n, err := s.number()
			d.Usage.Present, d.Usage.CompletionTokens = true, n
			d.Usage.Fields |= metrics.UsageCompletionField
			return err
		default:
			return s.skip()
		}
	})
}

type tgiBody struct {
	GeneratedText *string `json:"generated_text"`
	Details       *struct {
		FinishReason    string `json:"finish_reason"`
		GeneratedTokens int    `json:"generated_tokens"`
	} `json:"details"`
	Error     string `json:"error"`
	ErrorType string `json:"error_type"`
}

// Body reads /generate's object, or the one-element array the Hugging Face
// Inference API wraps it in.
func (tgiDecoder) Body(data []byte, out *Output) (Delta, error) {
	var b tgiBody
	if err := json.Unmarshal(data, &b); err != nil {
		var list []tgiBody
		if json.Unmarshal(data, &list) != nil || len(list) == 0 {
			return Delta{}, syntaxError(data)
		}
		b = list[0]
	}
	if b.Error != "" {
		t := b.ErrorType
		if t == "" {
			t = "error"
		}
		return Delta{Err: &metrics.Error{Type: t, Message: b.Error}}, nil
	}
	if b.GeneratedText == nil {
		return Delta{}, missing("generated_text")
	}
	out.Text = append(out.Text, *b.GeneratedText...)
	d := Delta{Content: *b.GeneratedText != "", Finished: true}
	if b.Details != nil {
		d.Usage = metrics.Usage{Present: true, CompletionTokens: b.Details.GeneratedTokens, Fields: metrics.UsageCompletionField}
	}
	return d, nil
}
