package endpoint

import (
	"github.com/surgebench/surge/metrics"
)

// gemini is Google's generateContent API: the Gemini API
// (generativelanguage.googleapis.com, its key in x-goog-api-key) and
// Vertex AI's publisher models (aiplatform.googleapis.com, a bearer
// token: --auth-type google), whose paths name the model. The default
// paths are the Gemini API's; Vertex takes --endpoint
// /v1/projects/P/locations/L/publishers/google/models/{model}:streamGenerateContent?alt=sse.
// streamGenerateContent streams server-sent events with ?alt=sse and,
// without it, a JSON array of the same chunks, each read as it arrives
// (loadgen/frames). Every chunk is a GenerateContentResponse: candidates'
// parts (text, a thought's text, a function call), a finishReason, and
// usageMetadata.
type gemini struct{}

func init() { Register(Gemini, gemini{}) }

func (gemini) jsonArray() {}

func (gemini) Info() Info {
	return Info{Path: "/v1beta/models/{model}:generateContent", StreamPath: "/v1beta/models/{model}:streamGenerateContent?alt=sse",
		Streams: true, ProducesTokens: true, CapField: "generationConfig.maxOutputTokens", KeyHeader: "x-goog-api-key"}
}

func (gemini) Body(e *Endpoint, r *Request) ([]byte, error) {
	body := make(map[string]any, 3+len(e.Extra)+len(r.Turn.Extra))
	body["contents"] = geminiContents(chatMessages(r, false))
	if r.System != "" {
		body["systemInstruction"] = map[string]any{"parts": []any{map[string]any{"text": r.System}}}
	}
	if r.Turn.MaxTokens > 0 {
		body["generationConfig"] = map[string]any{"maxOutputTokens": r.Turn.MaxTokens}
	}
	return jsonBody(e, r.Turn, body)
}

// geminiContents is msgs as Gemini's contents: roles user and model, each
// message's text one part, a tool call a functionCall part and a tool's
// result a user's functionResponse part.
func geminiContents(msgs []Message) []any {
	out := make([]any, 0, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		role := "user"
		var parts []any
		switch {
		case m.Role == "assistant":
			role = "model"
			if m.Content != "" || len(m.ToolCalls) == 0 {
				parts = append(parts, map[string]any{"text": m.Content})
			}
			for _, c := range m.ToolCalls {
				parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": toolInput(c.Arguments)}})
			}
		case m.Role == "tool":
			parts = []any{map[string]any{"functionResponse": map[string]any{"name": m.ToolCallID,
				"response": map[string]any{"content": m.Content}}}}
		default:
			parts = []any{map[string]any{"text": m.Content}}
		}
		out = append(out, map[string]any{"role": role, "parts": parts})
	}
	return out
}

func (gemini) Decoder(*Endpoint) Decoder { return geminiDecoder{} }

// geminiDecoder reads one chunk (or a whole body, the same shape).
type geminiDecoder struct{}

func (geminiDecoder) Event(_, data []byte, out *Output) (Delta, error) {
	return geminiChunk(data, out)
}

func (geminiDecoder) Body(data []byte, out *Output) (Delta, error) {
	return geminiChunk(data, out)
}

// geminiChunk reads a GenerateContentResponse: the first candidate's
// parts (a part with "thought": true is reasoning), its finishReason, the
// usageMetadata and an error object.
func geminiChunk(data []byte, out *Output) (Delta, error) {
	var d Delta
	n, nr := len(out.Text), len(out.Reasoning)
	tools := &out.Tools
	mark := tools.mark()
	var shaped, blocked bool
	s := scanner{b: data}
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "candidates":
			shaped = true
			if s.peek() != '[' {
				return s.skip()
			}
			return s.array(func(i int) error {
				if i > 0 || s.peek() != '{' {
					return s.skip() // the first candidate is the answer
				}
				return s.object(func(key []byte) error {
					switch string(key) {
					case "content":
						return geminiContent(&s, &d, out)
					case "finishReason":
						if s.peek() == 'n' {
							return s.literal("null")
						}
						d.Finished = true
						return s.skip()
					}
					return s.skip()
				})
			})
		case "usageMetadata":
			shaped = true
			return geminiUsage(&s, &d.Usage)
		case "promptFeedback":
			shaped = true
			if s.peek() != '{' {
				return s.skip()
			}
			return s.object(func(key []byte) error {
				if string(key) == "blockReason" && s.peek() == '"' {
					blocked = true
				}
				return s.skip()
			})
		case "error":
			shaped = true
			e, err := parseErrorValue(&s)
			d.Err = e
			return err
		}
		return s.skip()
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		out.Text, out.Reasoning = out.Text[:n], out.Reasoning[:nr]
		tools.drop(mark)
		return Delta{}, syntaxError(data)
	}
	if !shaped {
		return Delta{}, missing("candidates")
	}
	if blocked && len(out.Text) == n && d.Err == nil {
		d.Err = &metrics.Error{Type: "prompt_blocked", Message: "the prompt was blocked (promptFeedback.blockReason): " + excerpt(data)}
	}
	if d.Err != nil && d.Err.Type == "" {
		d.Err.Type = "error"
	}
	d.Content = len(out.Text) > n
	d.Reasoning = len(out.Reasoning) > nr
	return d, nil
}

// geminiContent reads a candidate's content: its parts.
func geminiContent(s *scanner, d *Delta, out *Output) error {
	if s.peek() != '{' {
		return s.skip()
	}
	return s.object(func(key []byte) error {
		if string(key) != "parts" || s.peek() != '[' {
			return s.skip()
		}
		return s.array(func(i int) error {
			if s.peek() != '{' {
				return s.skip()
			}
			// A part's text is reasoning when the part says "thought":
			// true, which may come after the text: it is read into a
			// place of its own first.
			start := len(out.Reasoning)
			var thought, hasText bool
			mark := out.Tools.mark()
			err := s.object(func(key []byte) error {
				switch string(key) {
				case "text":
					hasText = true
					var err error
					out.Reasoning, err = s.str(out.Reasoning)
					return err
				case "thought":
					if s.peek() == 't' {
						thought = true
						return s.literal("true")
					}
					return s.skip()
				case "functionCall":
					if s.peek() != '{' {
						return s.skip()
					}
					return s.object(func(key []byte) error {
						switch string(key) {
						case "name":
							_, err := toolString(s, &out.Tools, toolName)
							return err
						case "args":
							from := s.i
							if err := s.skip(); err != nil {
								return err
							}
							out.Tools.add(-1, toolArgs, s.b[from:s.i])
							d.ToolCall = true
							return nil
						}
						return s.skip()
					})
				}
				return s.skip()
			})
			out.Tools.setCall(mark, int32(mark)) // each call comes whole: its first piece names it
			if hasText && !thought {
				// Plain text: move it from the reasoning buffer.
				out.Text = append(out.Text, out.Reasoning[start:]...)
				out.Reasoning = out.Reasoning[:start]
			}
			return err
		})
	})
}

// geminiUsage reads usageMetadata: promptTokenCount, candidatesTokenCount
// (the answer's, thoughts apart), thoughtsTokenCount, totalTokenCount,
// cachedContentTokenCount.
func geminiUsage(s *scanner, u *metrics.Usage) error {
	if s.peek() == 'n' {
		return s.literal("null")
	}
	u.Present = true
	var candidates, thoughts int
	var has metrics.UsageFields
	count := func(dst *int, f metrics.UsageFields) error {
		if s.peek() == 'n' {
			return s.literal("null")
		}
		n, err := s.number()
		*dst, has = n, has|f
		return err
	}
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "promptTokenCount":
			return count(&u.PromptTokens, metrics.UsagePromptField)
		case "candidatesTokenCount":
			return count(&candidates, metrics.UsageCompletionField)
		case "thoughtsTokenCount":
			return count(&thoughts, metrics.UsageReasoningField)
		case "totalTokenCount":
			return count(&u.TotalTokens, metrics.UsageTotalField)
		case "cachedContentTokenCount":
			return count(&u.CacheReadTokens, metrics.UsageCacheReadField)
		}
		return s.skip()
	})
	// OpenAI's completion tokens include the reasoning: so here.
	if has&(metrics.UsageCompletionField|metrics.UsageReasoningField) != 0 {
		u.CompletionTokens = candidates + thoughts
		has |= metrics.UsageCompletionField
	}
	u.ReasoningTokens = thoughts
	u.Fields |= has
	return err
}
