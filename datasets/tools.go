package datasets

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// ToolCall is one function call an assistant message makes: the call's
// id, which a tool result names, the function and its arguments as the
// model wrote them (JSON text, not checked here).
type ToolCall struct {
	ID, Name, Arguments string
}

// Message is one chat message of a turn's context when the dataset lays
// the context out as an agent sent it (a trace's calls, their tool calls
// and results), typed so that every endpoint type renders it in its own
// API's shape: OpenAI's tool_calls and role "tool", the Responses API's
// function_call items, Anthropic's tool_use and tool_result blocks.
type Message struct {
	// Role is "system", "user", "assistant" or "tool".
	Role string
	// Text is the content; Parts, when non-nil, replaces it with their
	// concatenation (prefix blocks shared between turns, never copied).
	Text  string
	Parts []string
	// ToolCalls are an assistant message's calls.
	ToolCalls []ToolCall
	// ToolCallID is the call a role "tool" message answers.
	ToolCallID string
}

// Content is the message's text: Text, or its Parts joined.
func (m *Message) Content() string {
	if m.Parts == nil {
		return m.Text
	}
	return strings.Join(m.Parts, "")
}

// ContentLen is the length in bytes of Content, without building it.
func (m *Message) ContentLen() int {
	if m.Parts == nil {
		return len(m.Text)
	}
	n := 0
	for _, p := range m.Parts {
		n += len(p)
	}
	return n
}

// OpenAIToolCalls reads the "tool_calls" of an OpenAI chat message as
// given in a dataset (nil when it has none or they are not a list).
// Entries that are not objects are skipped; arguments given as an object
// rather than JSON text are encoded.
func OpenAIToolCalls(m map[string]any) []ToolCall {
	list, _ := m["tool_calls"].([]any)
	if len(list) == 0 {
		return nil
	}
	out := make([]ToolCall, 0, len(list))
	for _, v := range list {
		c, ok := v.(map[string]any)
		if !ok {
			continue
		}
		tc := ToolCall{}
		tc.ID, _ = c["id"].(string)
		fn, _ := c["function"].(map[string]any)
		tc.Name, _ = fn["name"].(string)
		switch a := fn["arguments"].(type) {
		case string:
			tc.Arguments = a
		case nil:
		default:
			b, err := json.Marshal(a)
			if err == nil {
				tc.Arguments = string(b)
			}
		}
		out = append(out, tc)
	}
	return out
}

// ToolDef is a function the model may call, read from an OpenAI tool
// definition ({"type": "function", "function": {name, description,
// parameters}}), so that the Responses and Anthropic Messages types can
// send it in their own shapes.
type ToolDef struct {
	Name, Description string
	// Parameters is the JSON Schema of the arguments (nil: none given).
	Parameters any
}

// OpenAIToolDefs reads OpenAI tool definitions; entries that are not
// function tools with a name are skipped.
func OpenAIToolDefs(tools []map[string]any) []ToolDef {
	out := make([]ToolDef, 0, len(tools))
	for _, t := range tools {
		fn, _ := t["function"].(map[string]any)
		if fn == nil {
			// The Responses API's flat shape: {"type": "function", "name": …}.
			fn = t
		}
		name, _ := fn["name"].(string)
		if name == "" {
			continue
		}
		d := ToolDef{Name: name, Parameters: fn["parameters"]}
		d.Description, _ = fn["description"].(string)
		out = append(out, d)
	}
	return out
}

// ToolIDs checks the tool results of a message list against the calls
// before them: it counts the role "tool" messages whose tool_call_id names
// no earlier assistant tool call (unknown), and the calls that carry no id
// (anonymous). A dataset may hold either: it is sent as given, and the
// server judges it; the count says so.
func ToolIDs(msgs []map[string]any) (unknown, anonymous int) {
	_, unknown, anonymous = toolIDs(nil, msgs)
	return unknown, anonymous
}

// toolIDs is ToolIDs of msgs sent after prior, whose calls count as
// earlier ones; results counts msgs' tool results.
func toolIDs(prior, msgs []map[string]any) (results, unknown, anonymous int) {
	seen := map[string]bool{}
	for _, m := range prior {
		for _, c := range OpenAIToolCalls(m) {
			seen[c.ID] = c.ID != ""
		}
	}
	for _, m := range msgs {
		for _, c := range OpenAIToolCalls(m) {
			if c.ID == "" {
				anonymous++
				continue
			}
			seen[c.ID] = true
		}
		if role, _ := m["role"].(string); role == "tool" {
			results++
			if id, _ := m["tool_call_id"].(string); !seen[id] {
				unknown++
			}
		}
	}
	return results, unknown, anonymous
}

// toolCheck tallies, over a dataset load, the tool results that name no
// earlier call, for the report's line.
type toolCheck struct {
	results, unknown int
	first            string // where the first unknown one is
}

// add checks one turn's messages, sent after prior; where names the turn.
func (tc *toolCheck) add(prior, msgs []map[string]any, where string) {
	r, u, _ := toolIDs(prior, msgs)
	tc.results += r
	if u > 0 && tc.unknown == 0 {
		tc.first = where
	}
	tc.unknown += u
}

// line is the report's line about the dataset's tool results ("" when it
// has none).
func (tc *toolCheck) line() string {
	switch {
	case tc.results == 0:
		return ""
	case tc.unknown == 0:
		return fmt.Sprintf("dataset: %d tool results, each answering an earlier tool call", tc.results)
	}
	return fmt.Sprintf("dataset: %d tool results, %d of them naming no earlier tool call (first at %s): sent as given, the server judges them",
		tc.results, tc.unknown, tc.first)
}

// RecordedTool is the function a replayed trace's tool calls name: traces
// keep when the agent called a tool, not which one or with what.
const RecordedTool = "recorded_tool"

// recordedToolDefs is the tool definition sent with a trace's turns whose
// context holds tool calls, so that APIs that require the tools a history
// uses to be declared (Anthropic's) accept it.
var recordedToolDefs = []map[string]any{{"type": "function", "function": map[string]any{
	"name": RecordedTool, "description": "A tool call recorded in the trace (its name and arguments were not recorded).",
	"parameters": map[string]any{"type": "object", "properties": map[string]any{}}}}}

// threadText is the text of messages, one a line, for Turn.Content.
func threadText(b *strings.Builder, msgs []Message) {
	for i := range msgs {
		m := &msgs[i]
		n := b.Len()
		if m.Parts != nil {
			for _, p := range m.Parts {
				b.WriteString(p)
			}
		} else {
			b.WriteString(m.Text)
		}
		for _, c := range m.ToolCalls {
			b.WriteString(c.Name)
			b.WriteString(c.Arguments)
		}
		if b.Len() > n {
			b.WriteByte('\n')
		}
	}
}

// checkToolResults checks the tool results of the dataset's messages
// against the tool calls before them in their conversation (a delta
// conversation's earlier turns included), and returns the report's line
// about them ("" when there are none).
func checkToolResults(d *Dataset) string {
	var tc toolCheck
	for ci := range d.Conversations {
		c := &d.Conversations[ci]
		var sent []map[string]any
		for ti := range c.Turns {
			t := &c.Turns[ti]
			if t.Messages == nil {
				continue
			}
			var prior []map[string]any
			if t.MessagesDelta {
				prior = sent
				sent = append(sent, t.Messages...)
			}
			tc.add(prior, t.Messages, fmt.Sprintf("conversation %s turn %d", c.ID, ti))
		}
	}
	return tc.line()
}

// MarshalJSON writes the call in OpenAI's chat shape: {"id", "type":
// "function", "function": {"name", "arguments"}}.
func (c ToolCall) MarshalJSON() ([]byte, error) {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	return json.Marshal(struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}{c.ID, "function", fn{c.Name, c.Arguments}})
}

// AgentTools are the functions a client-side tool loop offers on turns
// that bring none: a coding agent's usual few, as OpenAI tool definitions.
func AgentTools() []map[string]any {
	fn := func(name, desc string, params map[string]any) map[string]any {
		return map[string]any{"type": "function", "function": map[string]any{"name": name, "description": desc,
			"parameters": map[string]any{"type": "object", "properties": params, "required": []any{firstKey(params)}}}}
	}
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	return []map[string]any{
		fn("read_file", "Read a file of the repository.", map[string]any{"path": str("The file's path.")}),
		fn("search_code", "Search the repository for a pattern.", map[string]any{"pattern": str("A regular expression.")}),
		fn("run_command", "Run a shell command in the repository and return its output.", map[string]any{"command": str("The command line.")}),
	}
}

// firstKey is the one key of a one-parameter schema.
func firstKey(m map[string]any) string {
	for k := range m {
		return k
	}
	return ""
}

// ToolResults builds n distinct texts of exactly tokens tokens each under
// tok (nil: the embedded tokenizer), cut from the prompt corpus as
// synthetic prompts are, for a tool loop's results: each opens with a
// head of its own, so two results never share a cached prefix by chance.
func ToolResults(ctx context.Context, tok Tokenizer, seed uint64, tokens, n int) ([]string, error) {
	switch {
	case tokens < 1:
		return nil, optionErrorf("ToolResultTokens", "must be positive, got %d", tokens)
	case n < 1:
		return nil, optionErrorf("ToolResults", "must be positive, got %d", n)
	}
	if err := tokensOption("ToolResultTokens", tokens); err != nil {
		return nil, err
	}
	p, err := newCorpusPrompter(ctx, tok, seed^0x746f6f6c, "")
	if err != nil {
		return nil, fmt.Errorf("tool results: %w", err)
	}
	digits := p.digits(int64(n)) + 2 // an id space apart from prompts'
	out := make([]string, n)
	for i := range out {
		parts, _ := p.prompt(nil, int64(i), digits, tokens, int(mix64(seed+uint64(i))%uint64(len(p.starts))))
		out[i] = strings.Join(parts, "")
	}
	return out, nil
}
