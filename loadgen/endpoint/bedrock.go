package endpoint

import (
	"encoding/base64"
	"encoding/json"

	"github.com/surgebench/surge/metrics"
)

// Amazon Bedrock Runtime, signed with SigV4 (--auth-type sigv4) or sent a
// Bedrock API key as a bearer token (--api-key). Both types name the model
// in the path, and stream AWS event streams whose messages are their
// events (loadgen/frames reads them).
//
// bedrockConverse is the Converse API (Converse and ConverseStream): one
// request shape for every model. Its stream's events are messageStart,
// contentBlockStart (a tool call's id and name), contentBlockDelta (text,
// reasoningContent, toolUse input), contentBlockStop, messageStop (the
// stop reason) and metadata (usage), the last.
type bedrockConverse struct{}

// bedrockInvoke is InvokeModel and InvokeModelWithResponseStream with the
// body Anthropic's Claude models take on Bedrock (Messages, with its
// anthropic_version and no model or stream field). Each streamed chunk
// event carries one of Claude's Messages stream events, base64-encoded in
// its "bytes".
type bedrockInvoke struct{}

func init() {
	Register(BedrockConverse, bedrockConverse{})
	Register(BedrockInvoke, bedrockInvoke{})
}

func (bedrockConverse) awsEvents() {}
func (bedrockInvoke) awsEvents()   {}

func (bedrockConverse) Info() Info {
	return Info{Path: "/model/{model}/converse", StreamPath: "/model/{model}/converse-stream", Streams: true,
		ProducesTokens: true, CapField: "inferenceConfig.maxTokens"}
}

func (bedrockInvoke) Info() Info {
	return Info{Path: "/model/{model}/invoke", StreamPath: "/model/{model}/invoke-with-response-stream", Streams: true,
		ProducesTokens: true, CapField: "max_tokens", Headers: bedrockInvokeHeaders}
}

// bedrockInvokeHeaders ask for JSON (the stream's type is the API's own).
var bedrockInvokeHeaders = map[string]string{"Accept": "application/json"}

// bedrockAnthropicVersion is the version InvokeModel's Claude bodies name.
const bedrockAnthropicVersion = "bedrock-2023-05-31"

func (bedrockConverse) Body(e *Endpoint, r *Request) ([]byte, error) {
	body := make(map[string]any, 4+len(e.Extra)+len(r.Turn.Extra))
	body["messages"] = converseMessages(chatMessages(r, false))
	if r.System != "" {
		body["system"] = []any{map[string]any{"text": r.System}}
	}
	if r.Turn.MaxTokens > 0 {
		body["inferenceConfig"] = map[string]any{"maxTokens": r.Turn.MaxTokens}
	}
	if len(r.Turn.Tools) > 0 {
		body["toolConfig"] = converseTools(r.Turn.Tools)
	}
	return jsonBody(e, r.Turn, body)
}

func (bedrockInvoke) Body(e *Endpoint, r *Request) ([]byte, error) {
	body := make(map[string]any, 5+len(e.Extra)+len(r.Turn.Extra))
	body["anthropic_version"] = bedrockAnthropicVersion
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
	return jsonBody(e, r.Turn, body)
}

// converseMessages is msgs in the Converse shape: user and assistant
// messages of content blocks (text, toolUse, toolResult); a tool's result
// is a user message, and consecutive user messages are one, as the API
// wants roles to alternate.
func converseMessages(msgs []Message) any {
	type message struct {
		Role    string `json:"role"`
		Content []any  `json:"content"`
	}
	out := make([]*message, 0, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		role, blocks := m.Role, []any(nil)
		switch {
		case m.Role == "tool":
			role = "user"
			blocks = []any{map[string]any{"toolResult": map[string]any{"toolUseId": m.ToolCallID,
				"content": []any{map[string]any{"text": m.Content}}}}}
		case len(m.ToolCalls) > 0:
			if m.Content != "" {
				blocks = append(blocks, map[string]any{"text": m.Content})
			}
			for _, c := range m.ToolCalls {
				blocks = append(blocks, map[string]any{"toolUse": map[string]any{"toolUseId": c.ID, "name": c.Name, "input": toolInput(c.Arguments)}})
			}
		default:
			blocks = []any{map[string]any{"text": m.Content}}
		}
		if role != "assistant" {
			role = "user" // Converse has no system or other role in messages
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			continue
		}
		out = append(out, &message{Role: role, Content: blocks})
	}
	return out
}

// converseTools is OpenAI chat tool definitions as Converse's toolConfig.
func converseTools(tools []map[string]any) any {
	defs := anthropicTools(tools)
	specs := make([]any, len(defs))
	for i, d := range defs {
		t := d.(map[string]any)
		spec := map[string]any{"name": t["name"], "inputSchema": map[string]any{"json": t["input_schema"]}}
		if desc, ok := t["description"]; ok {
			spec["description"] = desc
		}
		specs[i] = map[string]any{"toolSpec": spec}
	}
	return map[string]any{"tools": specs}
}

func (bedrockConverse) Decoder(*Endpoint) Decoder { return &converseDecoder{} }

func (bedrockInvoke) Decoder(*Endpoint) Decoder { return &invokeDecoder{} }

// converseDecoder reads ConverseStream's events and Converse's bodies.
type converseDecoder struct{}

func (*converseDecoder) reset() {}

func (*converseDecoder) Event(typ, data []byte, out *Output) (Delta, error) {
	var d Delta
	switch string(typ) {
	case "contentBlockDelta", "contentBlockStart":
	case "messageStop":
		d.Finished = true
		return d, nil
	case "metadata":
		d.Done, d.Finished = true, true
		return d, converseMetadata(data, &d.Usage)
	case "messageStart", "contentBlockStop":
		return d, nil
	case "":
		return Delta{}, missing("type")
	default:
		return d, nil // an event this reader does not time
	}
	var index int32
	n, nr := len(out.Text), len(out.Reasoning)
	tools := &out.Tools
	mark := tools.mark()
	var toolInput bool
	s := scanner{b: data}
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "contentBlockIndex":
			v, err := s.number()
			index = int32(v)
			return err
		case "delta":
			if s.peek() != '{' {
				return s.skip()
			}
			return s.object(func(key []byte) error {
				var err error
				switch string(key) {
				case "text":
					out.Text, err = s.str(out.Text)
				case "reasoningContent":
					if s.peek() != '{' {
						return s.skip()
					}
					return s.object(func(key []byte) error {
						if string(key) == "text" {
							var err error
							out.Reasoning, err = s.str(out.Reasoning)
							return err
						}
						return s.skip()
					})
				case "toolUse":
					if s.peek() != '{' {
						return s.skip()
					}
					return s.object(func(key []byte) error {
						if string(key) == "input" {
							toolInput = true
							_, err := tools.str(&s, -1, toolArgs)
							return err
						}
						return s.skip()
					})
				default:
					err = s.skip()
				}
				return err
			})
		case "start":
			if s.peek() != '{' {
				return s.skip()
			}
			return s.object(func(key []byte) error {
				if string(key) != "toolUse" || s.peek() != '{' {
					return s.skip()
				}
				return s.object(func(key []byte) error {
					switch string(key) {
					case "toolUseId":
						_, err := toolString(&s, tools, toolID)
						return err
					case "name":
						_, err := toolString(&s, tools, toolName)
						return err
					}
					return s.skip()
				})
			})
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
	tools.setCall(mark, index)
	d.Content = len(out.Text) > n
	d.Reasoning = len(out.Reasoning) > nr
	d.ToolCall = toolInput && string(typ) == "contentBlockDelta"
	return d, nil
}

// converseMetadata reads the usage of a metadata event.
func converseMetadata(data []byte, u *metrics.Usage) error {
	s := scanner{b: data}
	err := s.object(func(key []byte) error {
		if string(key) == "usage" {
			return converseUsage(&s, u)
		}
		return s.skip()
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		*u = metrics.Usage{}
		return syntaxError(data)
	}
	return nil
}

// converseUsage reads Bedrock's usage object (inputTokens, outputTokens,
// totalTokens, cacheReadInputTokens, cacheWriteInputTokens).
func converseUsage(s *scanner, u *metrics.Usage) error {
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
	return s.object(func(key []byte) error {
		switch string(key) {
		case "inputTokens":
			return count(&u.PromptTokens, metrics.UsagePromptField)
		case "outputTokens":
			return count(&u.CompletionTokens, metrics.UsageCompletionField)
		case "totalTokens":
			return count(&u.TotalTokens, metrics.UsageTotalField)
		case "cacheReadInputTokens":
			return count(&u.CacheReadTokens, metrics.UsageCacheReadField)
		case "cacheWriteInputTokens":
			return count(&u.CacheWriteTokens, metrics.UsageCacheWriteField)
		}
		return s.skip()
	})
}

// converseResponse is the part of a Converse body that is read.
type converseResponse struct {
	Output *struct {
		Message struct {
			Content []struct {
				Text             *string `json:"text"`
				ReasoningContent *struct {
					ReasoningText struct {
						Text string `json:"text"`
					} `json:"reasoningText"`
				} `json:"reasoningContent"`
				ToolUse *struct {
					ToolUseID string          `json:"toolUseId"`
					Name      string          `json:"name"`
					Input     json.RawMessage `json:"input"`
				} `json:"toolUse"`
			} `json:"content"`
		} `json:"message"`
	} `json:"output"`
	StopReason string          `json:"stopReason"`
	Usage      json.RawMessage `json:"usage"`
}

func (*converseDecoder) Body(data []byte, out *Output) (Delta, error) {
	var r converseResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return Delta{}, syntaxError(data)
	}
	if r.Output == nil {
		return Delta{}, missing("output")
	}
	var d Delta
	for i, c := range r.Output.Message.Content {
		switch {
		case c.Text != nil:
			out.Text = append(out.Text, *c.Text...)
			d.Content = d.Content || *c.Text != ""
		case c.ReasoningContent != nil:
			out.Reasoning = append(out.Reasoning, c.ReasoningContent.ReasoningText.Text...)
			d.Reasoning = d.Reasoning || c.ReasoningContent.ReasoningText.Text != ""
		case c.ToolUse != nil:
			out.Tools.add(int32(i), toolID, []byte(c.ToolUse.ToolUseID))
			out.Tools.add(int32(i), toolName, []byte(c.ToolUse.Name))
			out.Tools.add(int32(i), toolArgs, c.ToolUse.Input)
			d.ToolCall = true
		}
	}
	d.Finished = r.StopReason != ""
	if len(r.Usage) > 0 {
		s := scanner{b: r.Usage}
		if converseUsage(&s, &d.Usage) != nil {
			d.Usage = metrics.Usage{}
		}
	}
	return d, nil
}

// invokeDecoder reads InvokeModelWithResponseStream's chunk events: each
// one's "bytes" is a Claude Messages stream event, base64-encoded, which
// the Messages decoder reads. The decoded bytes go to a buffer the
// decoder keeps, so a stream allocates nothing per event.
type invokeDecoder struct {
	inner messagesDecoder
	b64   []byte
	plain []byte
}

func (d *invokeDecoder) reset() {
	d.inner.reset()
	d.b64, d.plain = d.b64[:0], d.plain[:0]
}

func (d *invokeDecoder) Event(typ, data []byte, out *Output) (Delta, error) {
	switch string(typ) {
	case "chunk":
	case "":
		return Delta{}, missing("type")
	default:
		return Delta{}, nil
	}
	d.b64 = d.b64[:0]
	s := scanner{b: data}
	err := s.object(func(key []byte) error {
		if string(key) == "bytes" {
			var err error
			d.b64, err = s.str(d.b64)
			return err
		}
		return s.skip()
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return Delta{}, syntaxError(data)
	}
	if len(d.b64) == 0 {
		return Delta{}, missing("bytes")
	}
	n := base64.StdEncoding.DecodedLen(len(d.b64))
	if cap(d.plain) < n {
		d.plain = make([]byte, n)
	}
	n, err = base64.StdEncoding.Decode(d.plain[:n], d.b64)
	if err != nil {
		return Delta{}, syntaxError(data)
	}
	delta, err := d.inner.Event(nil, d.plain[:n], out)
	if err == nil && delta.Done {
		invocationMetrics(d.plain[:n], &delta.Usage)
	}
	return delta, err
}

// invocationMetrics reads the token counts Bedrock adds to a stream's
// last event (amazon-bedrock-invocationMetrics) into u, where the model's
// own usage said nothing of them.
func invocationMetrics(data []byte, u *metrics.Usage) {
	var m metrics.Usage
	s := scanner{b: data}
	_ = s.object(func(key []byte) error {
		if string(key) != "amazon-bedrock-invocationMetrics" || s.peek() != '{' {
			return s.skip()
		}
		return s.object(func(key []byte) error {
			var dst *int
			var f metrics.UsageFields
			switch string(key) {
			case "inputTokenCount":
				dst, f = &m.PromptTokens, metrics.UsagePromptField
			case "outputTokenCount":
				dst, f = &m.CompletionTokens, metrics.UsageCompletionField
			default:
				return s.skip()
			}
			v, err := s.number()
			*dst, m.Fields, m.Present = v, m.Fields|f, true
			return err
		})
	})
	if m.Present && !u.Present {
		*u = m
	}
}

func (d *invokeDecoder) Body(data []byte, out *Output) (Delta, error) {
	return d.inner.Body(data, out)
}
