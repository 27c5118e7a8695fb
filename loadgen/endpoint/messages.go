package endpoint

import (
	"encoding/json"

	"github.com/surgebench/surge/metrics"
)

// messages is Anthropic's Messages API (and proxies that speak it, such as
// LiteLLM): the API key goes in x-api-key with an anthropic-version header;
// streams are message_start, content_block_* (text_delta, thinking_delta,
// input_json_delta), message_delta (stop reason, usage) and message_stop.
type messages struct{}

func init() { Register(Messages, messages{}) }

// anthropicVersion is the API version sent, the one Anthropic's docs use.
const anthropicVersion = "2023-06-01"

// defaultMessagesMaxTokens fills max_tokens, which the API requires, for a
// turn without an output length (unless Endpoint.DefaultMaxTokens says).
const defaultMessagesMaxTokens = 4096

// messagesHeaders is shared, not rebuilt per request; nothing writes it.
var messagesHeaders = map[string]string{"anthropic-version": anthropicVersion}

func (messages) Info() Info {
	return Info{Path: "/v1/messages", Streams: true, ProducesTokens: true, CapField: "max_tokens", KeyHeader: "x-api-key", Headers: messagesHeaders}
}

func (messages) Body(e *Endpoint, r *Request) ([]byte, error) {
	body := make(map[string]any, 6+len(e.Extra)+len(r.Turn.Extra))
	body["model"] = e.ModelFor(r.Turn)
	body["messages"] = anthropicMessages(chatMessages(r, false))
	if len(r.Turn.Tools) > 0 {
		body["tools"] = anthropicTools(r.Turn.Tools)
	}
	if r.System != "" {
		body["system"] = r.System
	}
	body["max_tokens"] = defaultMessagesMaxTokens
	if e.DefaultMaxTokens > 0 {
		body["max_tokens"] = e.DefaultMaxTokens
	}
	if r.Turn.MaxTokens > 0 {
		body["max_tokens"] = r.Turn.MaxTokens
	}
	if e.Streaming {
		body["stream"] = true
	}
	return jsonBody(e, r.Turn, body)
}

func (messages) Decoder(*Endpoint) Decoder { return &messagesDecoder{} }

// messagesDecoder keeps the usage across events: message_start carries the
// input tokens, message_delta the output tokens so far.
type messagesDecoder struct {
	usage metrics.Usage
}

func (m *messagesDecoder) reset() { *m = messagesDecoder{} }

func (m *messagesDecoder) Event(_, data []byte, out *Output) (Delta, error) {
	var (
		d          Delta
		typ, dtype []byte
		usage      metrics.Usage
		// index is the event's content block; a tool_use block's id and
		// name go to the tool calls from block on.
		index     int32
		blockType []byte
	)
	n, nr := len(out.Text), len(out.Reasoning)
	tools := &out.Tools
	mark, block := tools.mark(), -1
	s := scanner{b: data}
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "type":
			if s.peek() != '"' {
				return s.skip()
			}
			v, err := s.rawKey()
			typ = v
			return err
		case "delta":
			if s.peek() != '{' {
				return s.skip()
			}
			return s.object(func(key []byte) error {
				var err error
				switch string(key) {
				case "type":
					if s.peek() != '"' {
						return s.skip()
					}
					dtype, err = s.rawKey()
				case "text", "partial_json":
					out.Text, err = s.str(out.Text)
				case "thinking":
					out.Reasoning, err = s.str(out.Reasoning)
				case "stop_reason":
					var finished bool
					finished, _, err = finishReason(&s)
					d.Finished = d.Finished || finished
				default:
					err = s.skip()
				}
				return err
			})
		case "message":
			if s.peek() != '{' {
				return s.skip()
			}
			return s.object(func(key []byte) error {
				if string(key) == "usage" {
					return parseUsage(&s, &usage)
				}
				return s.skip()
			})
		case "usage":
			return parseUsage(&s, &usage)
		case "error":
			e, err := parseErrorValue(&s)
			d.Err = e
			return err
		case "index":
			if s.peek() == 'n' {
				return s.literal("null")
			}
			v, err := s.number()
			index = int32(v)
			return err
		case "content_block":
			block = tools.mark()
			var err error
			blockType, err = toolHead(&s, tools, "id")
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
		tools.drop(mark)
		return Delta{}, syntaxError(data)
	}
	if typ == nil {
		out.Text, out.Reasoning = out.Text[:n], out.Reasoning[:nr]
		tools.drop(mark)
		return Delta{}, missing("type")
	}
	if block >= 0 {
		// A tool_use block opens with its id and name.
		if string(typ) == "content_block_start" && string(blockType) == "tool_use" {
			tools.setCall(block, index)
		} else {
			tools.drop(block)
		}
	}
	switch string(typ) {
	case "content_block_delta":
		switch string(dtype) {
		case "text_delta":
			d.Content = len(out.Text) > n
		case "thinking_delta":
			d.Reasoning = len(out.Reasoning) > nr
		case "input_json_delta":
			tools.add(index, toolArgs, out.Text[n:])
			out.Text = out.Text[:n]
			d.ToolCall = true
		default: // signature_delta and deltas of blocks not timed
			out.Text, out.Reasoning = out.Text[:n], out.Reasoning[:nr]
		}
	case "message_start", "message_delta":
		out.Text, out.Reasoning = out.Text[:n], out.Reasoning[:nr]
	case "message_stop":
		d.Done, d.Finished = true, true
	case "error":
		if d.Err == nil {
			d.Err = &metrics.Error{Type: "error", Message: "error event without an error object"}
		}
	default: // ping, content_block_start/stop
		out.Text, out.Reasoning = out.Text[:n], out.Reasoning[:nr]
	}
	if usage.Present {
		// message_delta's counts are cumulative; it may omit the input.
		mergeUsage(&m.usage, usage)
		d.Usage = m.usage
	}
	if d.Err != nil && d.Err.Type == "" {
		d.Err.Type = "error"
	}
	return d, nil
}

// messageObject is the part of a non-streamed message that is read.
type messageObject struct {
	Type    string `json:"type"`
	Content []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Thinking string          `json:"thinking"`
		Input    json.RawMessage `json:"input"`
		ID       string          `json:"id"`
		Name     string          `json:"name"`
	} `json:"content"`
	StopReason *string         `json:"stop_reason"`
	Usage      json.RawMessage `json:"usage"`
	Error      json.RawMessage `json:"error"`
}

func (m *messagesDecoder) Body(data []byte, out *Output) (Delta, error) {
	var r messageObject
	if err := json.Unmarshal(data, &r); err != nil {
		return Delta{}, syntaxError(data)
	}
	var d Delta
	if e := bodyError(r.Error); e != nil {
		d.Err = e
		return d, nil
	}
	if r.Content == nil {
		return Delta{}, missing("content")
	}
	for i, c := range r.Content {
		switch c.Type {
		case "text":
			out.Text = append(out.Text, c.Text...)
			d.Content = d.Content || c.Text != ""
		case "thinking":
			out.Reasoning = append(out.Reasoning, c.Thinking...)
			d.Reasoning = d.Reasoning || c.Thinking != ""
		case "tool_use":
			out.Tools.add(int32(i), toolID, []byte(c.ID))
			out.Tools.add(int32(i), toolName, []byte(c.Name))
			out.Tools.add(int32(i), toolArgs, c.Input)
			d.ToolCall = true
		}
	}
	d.Finished = r.StopReason != nil && *r.StopReason != "" && *r.StopReason != "null"
	d.Usage = bodyUsage(r.Usage)
	return d, nil
}
