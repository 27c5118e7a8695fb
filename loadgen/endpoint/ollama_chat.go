package endpoint

import (
	"encoding/json"

	"github.com/surgebench/surge/metrics"
)

// ollamaChat is Ollama's native chat API: POST /api/chat with the
// messages and "options" (num_predict, the output cap); a stream is
// newline-delimited JSON, one object per chunk ({message: {content,
// thinking}, done: false}), the last {done: true} with the counts
// (prompt_eval_count, eval_count) and the durations of the request
// (nanoseconds): load_duration (its wait for the model, loaded or
// queued), prompt_eval_duration (prefill), eval_duration (decode) and
// total_duration — the time breakdown's source "ollama".
type ollamaChat struct{}

func init() { Register(OllamaChat, ollamaChat{}) }

func (ollamaChat) Info() Info {
	return Info{Path: "/api/chat", Streams: true, ProducesTokens: true, Lines: true}
}

// Body puts the output cap and --extra-inputs in "options", where Ollama
// reads them, but for a top-level field Ollama has (format, keep_alive,
// think, tools, ...) given as such.
func (ollamaChat) Body(e *Endpoint, r *Request) ([]byte, error) {
	opts := make(map[string]any, 1+len(e.Extra)+len(r.Turn.Extra))
	if r.Turn.MaxTokens > 0 {
		opts["num_predict"] = r.Turn.MaxTokens
	}
	body := map[string]any{"model": e.ModelFor(r.Turn), "messages": wireMessages(chatMessages(r, true)), "stream": e.Streaming, "options": opts}
	if r.Turn.Tools != nil {
		body["tools"] = r.Turn.Tools
	}
	for _, extra := range []map[string]any{e.Extra, r.Turn.Extra} {
		for k, v := range extra {
			switch k {
			case "model", "messages", "stream", "options", "format", "keep_alive", "think", "tools":
				body[k] = v
			default:
				opts[k] = v
			}
		}
	}
	return json.Marshal(body)
}

func (ollamaChat) Decoder(*Endpoint) Decoder { return ollamaDecoder{} }

type ollamaDecoder struct{}

func (ollamaDecoder) Event(_, data []byte, out *Output) (Delta, error) { return parseOllama(data, out) }

func (ollamaDecoder) Body(data []byte, out *Output) (Delta, error) { return parseOllama(data, out) }

// parseOllama reads one chunk (or a whole answer): the message's content
// and thinking, done with its counts and durations, or an error.
func parseOllama(data []byte, out *Output) (Delta, error) {
	var d Delta
	var known bool
	var e metrics.Error
	n, nr := len(out.Text), len(out.Reasoning)
	var durs [4]int64 // load, prompt_eval, eval, total
	var has [4]bool
	s := scanner{b: data}
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "message":
			known = true
			if s.peek() != '{' {
				return s.skip()
			}
			return s.object(func(key []byte) error {
				switch string(key) {
				case "content":
					if s.peek() != '"' {
						return s.skip()
					}
					var err error
					out.Text, err = s.str(out.Text)
					return err
				case "thinking":
					if s.peek() != '"' {
						return s.skip()
					}
					var err error
					out.Reasoning, err = s.str(out.Reasoning)
					return err
				default:
					return s.skip()
				}
			})
		case "done":
			known = true
			d.Finished = s.peek() == 't'
			return s.skip()
		case "prompt_eval_count":
			c, err := s.number()
			d.Usage.Present, d.Usage.PromptTokens = true, c
			d.Usage.Fields |= metrics.UsagePromptField
			return err
		case "eval_count":
			c, err := s.number()
			d.Usage.Present, d.Usage.CompletionTokens = true, c
			d.Usage.Fields |= metrics.UsageCompletionField
			return err
		case "load_duration", "prompt_eval_duration", "eval_duration", "total_duration":
			i := 3
			switch string(key) {
			case "load_duration":
				i = 0
			case "prompt_eval_duration":
				i = 1
			case "eval_duration":
				i = 2
			}
			x, ok, err := s.float()
			if ok {
				durs[i], has[i] = int64(x), true
			}
			return err
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
		out.Text, out.Reasoning = out.Text[:n], out.Reasoning[:nr]
		return Delta{}, syntaxError(data)
	}
	if !known {
		return Delta{}, missing("message")
	}
	if e.Message != "" || e.Type != "" {
		out.Text, out.Reasoning = out.Text[:n], out.Reasoning[:nr]
		errCopy := e
		if errCopy.Type == "" {
			errCopy.Type = "error"
		}
		return Delta{Err: &errCopy}, nil
	}
	d.Content, d.Reasoning = len(out.Text) > n, len(out.Reasoning) > nr
	// The last line ends the stream; one that still carries text is read
	// as text, the stream then ending with the connection.
	d.Done = d.Finished && !d.Content && !d.Reasoning
	for i, f := range [4]metrics.ServerFields{metrics.ServerQueue, metrics.ServerPrefill, metrics.ServerDecode, metrics.ServerTotal} {
		if has[i] {
			setDur(&d.Server, f, float64(durs[i]), 1)
		}
	}
	if d.Server.Has != 0 {
		d.Server.Source = metrics.TimingOllama
	}
	return d, nil
}
