package endpoint

import (
	"encoding/json"

	"github.com/surgebench/surge/datasets"
)

// Tool calls on the wire. A conversation's messages are held in OpenAI's
// chat shape (an assistant message's tool_calls, a role "tool" result with
// its tool_call_id); the Responses API and Anthropic's Messages API each
// take them in a shape of their own, rendered here.

// hasToolMessages reports whether any message is a tool call or result.
func hasToolMessages(msgs []Message) bool {
	for i := range msgs {
		if len(msgs[i].ToolCalls) > 0 || msgs[i].Role == "tool" {
			return true
		}
	}
	return false
}

// responsesInput is msgs as the Responses API's input items: an assistant
// message's calls become function_call items after its text, a tool
// result a function_call_output item. Messages without tool calls are
// sent as they marshal.
func responsesInput(msgs []Message) any {
	if !hasToolMessages(msgs) {
		return msgs
	}
	out := make([]any, 0, len(msgs)+2)
	for i := range msgs {
		m := &msgs[i]
		switch {
		case m.Role == "tool":
			out = append(out, map[string]any{"type": "function_call_output", "call_id": m.ToolCallID, "output": m.Content})
		case len(m.ToolCalls) > 0:
			if m.Content != "" {
				out = append(out, map[string]any{"role": m.Role, "content": m.Content})
			}
			for _, c := range m.ToolCalls {
				out = append(out, map[string]any{"type": "function_call", "call_id": c.ID, "name": c.Name, "arguments": c.Arguments})
			}
		default:
			out = append(out, map[string]any{"role": m.Role, "content": m.Content})
		}
	}
	return out
}

// anthropicMessages is msgs as Anthropic's Messages API takes them: an
// assistant message's calls are tool_use blocks after its text, tool
// results are tool_result blocks of a user message, and consecutive user
// messages (the results of parallel calls, and a user's text after them)
// are one message, as the API requires roles to alternate. Messages
// without tool calls are sent as they marshal.
func anthropicMessages(msgs []Message) any {
	if !hasToolMessages(msgs) {
		return msgs
	}
	type message struct {
		Role    string `json:"role"`
		Content []any  `json:"content"`
	}
	out := make([]*message, 0, len(msgs))
	text := func(s string) any { return map[string]any{"type": "text", "text": s} }
	for i := range msgs {
		m := &msgs[i]
		role, blocks := m.Role, []any(nil)
		switch {
		case m.Role == "tool":
			role = "user"
			blocks = []any{map[string]any{"type": "tool_result", "tool_use_id": m.ToolCallID, "content": m.Content}}
		case len(m.ToolCalls) > 0:
			if m.Content != "" {
				blocks = append(blocks, text(m.Content))
			}
			for _, c := range m.ToolCalls {
				blocks = append(blocks, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": toolInput(c.Arguments)})
			}
		default:
			blocks = []any{text(m.Content)}
		}
		if n := len(out); n > 0 && out[n-1].Role == role && role == "user" {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			continue
		}
		out = append(out, &message{Role: role, Content: blocks})
	}
	return out
}

// toolInput is a call's arguments as Anthropic's tool_use input, which
// must be an object: the arguments when they are one, {} when there are
// none, and arguments that are not a JSON object (a model's broken call)
// kept as text under "arguments", so the context keeps its length.
func toolInput(args string) any {
	if args == "" {
		return map[string]any{}
	}
	var obj map[string]any
	if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
		return map[string]any{"arguments": args}
	}
	return json.RawMessage(args)
}

// responsesTools is OpenAI chat tool definitions in the Responses API's
// flat shape.
func responsesTools(tools []map[string]any) []any {
	defs := datasets.OpenAIToolDefs(tools)
	out := make([]any, len(defs))
	for i, d := range defs {
		t := map[string]any{"type": "function", "name": d.Name}
		if d.Description != "" {
			t["description"] = d.Description
		}
		if d.Parameters != nil {
			t["parameters"] = d.Parameters
		}
		out[i] = t
	}
	return out
}

// anthropicTools is OpenAI chat tool definitions in Anthropic's shape: the
// schema is input_schema, an object schema when none was given.
func anthropicTools(tools []map[string]any) []any {
	defs := datasets.OpenAIToolDefs(tools)
	out := make([]any, len(defs))
	for i, d := range defs {
		schema := d.Parameters
		if schema == nil {
			schema = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		t := map[string]any{"name": d.Name, "input_schema": schema}
		if d.Description != "" {
			t["description"] = d.Description
		}
		out[i] = t
	}
	return out
}
