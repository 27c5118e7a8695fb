package endpoint

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/surgebench/surge/metrics"
)

// ParseChunk decodes one chat or completions chunk (a streamed SSE data
// payload or a whole response body), appending choice 0's content to text
// and its reasoning (reasoning_content or reasoning) to reasoning. It reads
// only the fields a benchmark needs and skips the rest unparsed. Streamed
// tool_calls deltas append their function name and arguments to text. A
// chunk with none of choices, usage or error is a *ShapeError (a shared
// value: read it, do not change it).
func ParseChunk(data []byte, text, reasoning *[]byte) (Delta, error) {
	return parseChunk(data, text, reasoning, nil)
}

// parseChunk is ParseChunk collecting tool calls into tools instead of
// appending them to text (nil: to text).
func parseChunk(data []byte, text, reasoning *[]byte, tools *ToolCalls) (Delta, error) {
	var d Delta
	mark := 0
	if tools != nil {
		mark = tools.mark()
	}
	var (
		isErrObject bool
		known       bool
		topErr      metrics.Error
		tgiType     []byte
	)
	n, nr := len(*text), len(*reasoning)
	s := scanner{b: data}
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "choices":
			known = true
			return s.array(func(i int) error {
				if i != 0 {
					return s.skip()
				}
				return parseChoice(&s, &d, text, reasoning, tools)
			})
		case "usage":
			known = true
			return parseUsage(&s, &d.Usage)
		case "timings": // llama.cpp's, with its last chunk or body
			return parseTimings(&s, &d.Server)
		case "error":
			known = true
			e, err := parseErrorValue(&s)
			d.Err = e
			return err
		case "object":
			// Older vLLM streams {"object":"error","message":...,"type":...}.
			if s.peek() != '"' {
				return s.skip()
			}
			v, err := s.rawKey() // compared raw: no copy per chunk
			isErrObject = string(v) == "error"
			return err
		case "message", "type", "code":
			// Kept in case they belong to an "object":"error" body.
			return errorField(&s, &topErr, key)
		case "error_type": // TGI's {"error":"…","error_type":"validation"}
			if s.peek() != '"' {
				return s.skip()
			}
			v, err := s.rawKey()
			tgiType = v
			return err
		default:
			return s.skip()
		}
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		*text, *reasoning = (*text)[:n], (*reasoning)[:nr]
		if tools != nil {
			tools.drop(mark)
		}
		return Delta{}, syntaxError(data)
	}
	if !known && !isErrObject {
		return Delta{}, missing("choices")
	}
	if isErrObject && d.Err == nil {
		e := topErr // copied, so topErr itself stays on the stack
		d.Err = &e
	}
	if d.Err != nil && (d.Err.Type == "" || d.Err.Type == "error") && len(tgiType) > 0 {
		d.Err.Type = string(tgiType)
	}
	if d.Err != nil && d.Err.Type == "" {
		d.Err.Type = "error"
	}
	return d, nil
}

// syntaxError describes a chunk the scanner rejected, using encoding/json's
// diagnosis, which is slower but precise.
func syntaxError(data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("invalid JSON in response chunk: %w (%s)", err, excerpt(data))
	}
	return fmt.Errorf("unexpected response chunk shape (%s)", excerpt(data))
}

func excerpt(b []byte) string {
	const max = 120
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + "…"
	}
	return strconv.Quote(string(b))
}

func parseChoice(s *scanner, d *Delta, text, reasoning *[]byte, tools *ToolCalls) error {
	return s.object(func(key []byte) error {
		switch string(key) {
		case "delta", "message":
			return parseMessage(s, d, text, reasoning, tools)
		case "text":
			n := len(*text)
			var err error
			*text, err = s.str(*text)
			d.Content = d.Content || len(*text) > n
			return err
		case "finish_reason":
			finished, v, err := finishReason(s)
			d.Finished = d.Finished || finished
			if e := finishError(v); e != nil && d.Err == nil {
				d.Err = e // "abort", "error": the answer failed
			}
			return err
		default:
			return s.skip()
		}
	})
}

func parseMessage(s *scanner, d *Delta, text, reasoning *[]byte, tools *ToolCalls) error {
	if s.peek() == 'n' {
		return s.literal("null")
	}
	return s.object(func(key []byte) error {
		switch string(key) {
		case "content":
			if s.peek() != '"' && s.peek() != 'n' {
				// Content parts arrays are not text deltas we can time.
				return s.skip()
			}
			n := len(*text)
			var err error
			*text, err = s.str(*text)
			d.Content = d.Content || len(*text) > n
			return err
		case "reasoning_content", "reasoning":
			if s.peek() != '"' && s.peek() != 'n' {
				return s.skip()
			}
			n := len(*reasoning)
			var err error
			*reasoning, err = s.str(*reasoning)
			d.Reasoning = d.Reasoning || len(*reasoning) > n
			return err
		case "tool_calls":
			if tools != nil {
				return collectToolCalls(s, d, tools)
			}
			return parseToolCalls(s, d, text)
		default:
			return s.skip()
		}
	})
}

// parseToolCalls reads a tool_calls array (streamed deltas or a whole
// message's calls), appending each function's name and arguments to text:
// they are output the model generated, and usage counts them.
func parseToolCalls(s *scanner, d *Delta, text *[]byte) error {
	if s.peek() != '[' {
		return s.skip()
	}
	return s.array(func(int) error {
		d.ToolCall = true
		if s.peek() != '{' {
			return s.skip()
		}
		return s.object(func(key []byte) error {
			if string(key) != "function" || s.peek() != '{' {
				return s.skip()
			}
			return s.object(func(key []byte) error {
				switch string(key) {
				case "name", "arguments":
					if s.peek() != '"' && s.peek() != 'n' {
						return s.skip()
					}
					var err error
					*text, err = s.str(*text)
					return err
				default:
					return s.skip()
				}
			})
		})
	})
}

// collectToolCalls reads a tool_calls array into tools: a streamed
// delta's calls name themselves by "index" (an id and a name come first,
// then the arguments in pieces); a whole message's are in array order.
func collectToolCalls(s *scanner, d *Delta, tools *ToolCalls) error {
	if s.peek() != '[' {
		return s.skip()
	}
	return s.array(func(i int) error {
		d.ToolCall = true
		if s.peek() != '{' {
			return s.skip()
		}
		mark, call := tools.mark(), int32(i)
		str := func(field uint8) error {
			if c := s.peek(); c != '"' && c != 'n' {
				return s.skip()
			}
			_, err := tools.str(s, call, field)
			return err
		}
		err := s.object(func(key []byte) error {
			switch string(key) {
			case "index":
				if s.peek() == 'n' {
					return s.literal("null")
				}
				n, err := s.number()
				call = int32(n)
				return err
			case "id":
				return str(toolID)
			case "function":
				if s.peek() != '{' {
					return s.skip()
				}
				return s.object(func(key []byte) error {
					switch string(key) {
					case "name":
						return str(toolName)
					case "arguments":
						return str(toolArgs)
					default:
						return s.skip()
					}
				})
			default:
				return s.skip()
			}
		})
		tools.setCall(mark, call)
		return err
	})
}

// parseUsage reads a usage object in any of the shapes servers send:
// OpenAI's prompt/completion/total tokens with their _details (reasoning
// tokens, cached prompt tokens), the Responses API's input/output names,
// Anthropic's cache_read_input_tokens and cache_creation_input_tokens,
// DeepSeek's prompt_cache_hit_tokens. u.Fields records which counts were
// sent (a null count was not).
func parseUsage(s *scanner, u *metrics.Usage) error {
	if s.peek() == 'n' {
		return s.literal("null")
	}
	u.Present = true
	count := func(dst *int, f metrics.UsageFields) error {
		if s.peek() == 'n' {
			return s.literal("null")
		}
		n, err := s.number()
		*dst, u.Fields = n, u.Fields|f
		return err
	}
	details := func(name string, dst *int, f metrics.UsageFields) error {
		if s.peek() != '{' {
			return s.skip()
		}
		return s.object(func(key []byte) error {
			if string(key) == name {
				return count(dst, f)
			}
			return s.skip()
		})
	}
	return s.object(func(key []byte) error {
		switch string(key) {
		case "prompt_tokens", "input_tokens": // OpenAI's chat, Responses and Anthropic's names
			return count(&u.PromptTokens, metrics.UsagePromptField)
		case "completion_tokens", "output_tokens":
			return count(&u.CompletionTokens, metrics.UsageCompletionField)
		case "total_tokens":
			return count(&u.TotalTokens, metrics.UsageTotalField)
		case "completion_tokens_details", "output_tokens_details":
			return details("reasoning_tokens", &u.ReasoningTokens, metrics.UsageReasoningField)
		case "prompt_tokens_details", "input_tokens_details":
			return details("cached_tokens", &u.CacheReadTokens, metrics.UsageCacheReadField)
		case "cache_read_input_tokens", "prompt_cache_hit_tokens":
			return count(&u.CacheReadTokens, metrics.UsageCacheReadField)
		case "cache_creation_input_tokens":
			return count(&u.CacheWriteTokens, metrics.UsageCacheWriteField)
		default:
			return s.skip()
		}
	})
}

// bodyUsage reads a whole body's usage member (raw JSON) with parseUsage;
// a malformed one counts as absent.
func bodyUsage(raw []byte) metrics.Usage {
	var u metrics.Usage
	if len(raw) == 0 {
		return u
	}
	s := scanner{b: raw}
	if parseUsage(&s, &u) != nil {
		return metrics.Usage{}
	}
	return u
}

// mergeUsage updates dst with the counts src carries: servers that send
// usage over several events (Anthropic's message_start, then cumulative
// message_delta counts without the input) leave the others as they were.
func mergeUsage(dst *metrics.Usage, src metrics.Usage) {
	if !src.Present {
		return
	}
	dst.Present = true
	for _, c := range []struct {
		f        metrics.UsageFields
		dst, src *int
	}{
		{metrics.UsagePromptField, &dst.PromptTokens, &src.PromptTokens},
		{metrics.UsageCompletionField, &dst.CompletionTokens, &src.CompletionTokens},
		{metrics.UsageTotalField, &dst.TotalTokens, &src.TotalTokens},
		{metrics.UsageReasoningField, &dst.ReasoningTokens, &src.ReasoningTokens},
		{metrics.UsageCacheReadField, &dst.CacheReadTokens, &src.CacheReadTokens},
		{metrics.UsageCacheWriteField, &dst.CacheWriteTokens, &src.CacheWriteTokens},
	} {
		if src.Fields&c.f != 0 {
			*c.dst = *c.src
			dst.Fields |= c.f
		}
	}
}

// parseErrorValue reads an "error" member: an object with message, type and
// code, or a bare string.
func parseErrorValue(s *scanner) (*metrics.Error, error) {
	switch s.peek() {
	case 'n': // "error": null, as many events carry: no allocation
		return nil, s.literal("null")
	case '"':
		v, err := s.str(nil)
		return &metrics.Error{Message: string(v), Type: "error"}, err
	}
	e := &metrics.Error{}
	err := s.object(func(key []byte) error { return errorField(s, e, key) })
	return e, err
}

// errorField reads one member of an OpenAI-style error object into e.
func errorField(s *scanner, e *metrics.Error, key []byte) error {
	if c := s.peek(); (string(key) == "message" || string(key) == "type") && c != '"' && c != 'n' {
		return s.skip()
	}
	switch string(key) {
	case "message":
		v, err := s.str(nil)
		e.Message = string(v)
		return err
	case "type":
		v, err := s.str(nil)
		e.Type = string(v)
		return err
	case "code", "http_status_code": // TGI's OpenAI routes say http_status_code
		if s.peek() == '"' {
			v, err := s.str(nil)
			codeType(e, v)
			return err
		}
		if s.peek() == 'n' {
			return s.literal("null")
		}
		n, err := s.number()
		if string(key) == "code" || e.Code == 0 {
			e.Code = n
		}
		return err
	default:
		return s.skip()
	}
}

// ParseErrorBody turns a non-200 response into an error record: the
// server's OpenAI-style error object when it sent one (including FastAPI's
// {"detail": ...}), else the status text and the start of the body.
func ParseErrorBody(status int, body []byte) *metrics.Error {
	e := &metrics.Error{Code: status, Type: http.StatusText(status)}
	if e.Type == "" {
		e.Type = "HTTP " + strconv.Itoa(status)
	}
	var parsed struct {
		Error   json.RawMessage `json:"error"`
		Object  string          `json:"object"`
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &parsed) == nil {
		switch {
		case len(parsed.Error) > 0:
			s := scanner{b: parsed.Error}
			if inner, err := parseErrorValue(&s); err == nil && inner != nil {
				if inner.Message != "" {
					e.Message = inner.Message
				}
				if inner.Type != "" && inner.Type != "error" {
					e.Type = inner.Type
				}
			}
		case parsed.Message != "":
			e.Message = parsed.Message
			if parsed.Type != "" {
				e.Type = parsed.Type
			}
		case len(parsed.Detail) > 0:
			var d string
			if json.Unmarshal(parsed.Detail, &d) != nil {
				d = string(parsed.Detail)
			}
			e.Message = d
		}
	}
	if e.Message == "" {
		e.Message = strings.TrimSpace(string(body))
		if len(e.Message) > 200 {
			e.Message = e.Message[:200] + "…"
		}
		if e.Message == "" {
			e.Message = fmt.Sprintf("HTTP %d with an empty body", status)
		}
	}
	return e
}
