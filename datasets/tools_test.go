package datasets

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestChatFileSingleTurn: a line in OpenAI's chat-file form is a turn that
// sends its messages and tools as given; the load reports its tool results,
// and one naming no earlier call is counted, not refused.
func TestChatFileSingleTurn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "chat.jsonl")
	lines := `{"messages": [{"role": "system", "content": "Use tools."}, {"role": "user", "content": "Weather in Oslo?"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]}, {"role": "tool", "tool_call_id": "call_1", "content": "rain, 9 C"}], "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}], "parallel_tool_calls": false}
{"messages": [{"role": "user", "content": "Hi"}, {"role": "tool", "tool_call_id": "nobody", "content": "stray"}]}
`
	if err := os.WriteFile(p, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	d, rep, err := Load(Options{InputFile: p, CustomDatasetType: TypeSingleTurn})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Conversations) != 2 {
		t.Fatalf("%d conversations, want 2", len(d.Conversations))
	}
	tr := d.Conversations[0].Turns[0]
	if len(tr.Messages) != 4 || len(tr.Tools) != 1 || tr.Extra["parallel_tool_calls"] != false {
		t.Fatalf("turn %+v", tr)
	}
	calls := OpenAIToolCalls(tr.Messages[2])
	if len(calls) != 1 || calls[0] != (ToolCall{ID: "call_1", Name: "get_weather", Arguments: `{"city": "Oslo"}`}) {
		t.Fatalf("tool calls %+v", calls)
	}
	if defs := OpenAIToolDefs(tr.Tools); len(defs) != 1 || defs[0].Name != "get_weather" || defs[0].Parameters == nil {
		t.Fatalf("tool definitions %+v", defs)
	}
	want := "dataset: 2 tool results, 1 of them naming no earlier tool call (first at conversation line-2 turn 0): sent as given, the server judges them"
	if !strings.Contains(strings.Join(rep.Lines, "\n"), want) {
		t.Fatalf("report %q, want a line %q", rep.Lines, want)
	}
}

// TestToolIDs: results are checked against the calls before them, a delta
// conversation's earlier turns included.
func TestToolIDs(t *testing.T) {
	t.Parallel()
	call := func(id string) map[string]any {
		return map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": id, "function": map[string]any{"name": "f", "arguments": map[string]any{"a": 1.0}}}}}
	}
	result := func(id string) map[string]any {
		return map[string]any{"role": "tool", "tool_call_id": id, "content": "ok"}
	}
	for _, tc := range []struct {
		name               string
		msgs               []map[string]any
		unknown, anonymous int
	}{
		{"answered", []map[string]any{call("a"), result("a")}, 0, 0},
		{"before its call", []map[string]any{result("a"), call("a")}, 1, 0},
		{"no such call", []map[string]any{call("a"), result("b")}, 1, 0},
		{"anonymous call", []map[string]any{call(""), result("")}, 1, 1},
	} {
		if u, a := ToolIDs(tc.msgs); u != tc.unknown || a != tc.anonymous {
			t.Errorf("%s: unknown %d anonymous %d, want %d %d", tc.name, u, a, tc.unknown, tc.anonymous)
		}
	}
	if c := OpenAIToolCalls(call("x"))[0]; c.Arguments != `{"a":1}` {
		t.Errorf("arguments given as an object: %q, want them encoded", c.Arguments)
	}
	d := &Dataset{Conversations: []Conversation{{ID: "c", Turns: []Turn{
		{Messages: []map[string]any{{"role": "user", "content": "x"}, call("a")}, MessagesDelta: true},
		{Messages: []map[string]any{result("a")}, MessagesDelta: true},
	}}}}
	if got := checkToolResults(d); got != "dataset: 1 tool results, each answering an earlier tool call" {
		t.Errorf("delta conversation: %q", got)
	}
}

// TestWekaToolThread: a WEKA call after a tool use is sent as the earlier
// calls' messages, an assistant tool call and its own new blocks as that
// call's result; later turns share the earlier messages, and the context's
// text is the recorded context's.
func TestWekaToolThread(t *testing.T) {
	t.Parallel()
	tok := qwen(t)
	d, _, err := Load(Options{InputFile: "testdata/weka", CustomDatasetType: TypeWeka, Tokenizer: tok, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	root := d.Conversations[0].Turns
	for k := 1; k < len(root); k++ {
		cur, prev := &root[k], &root[k-1]
		if len(cur.Thread) < 2 {
			t.Fatalf("turn %d: thread of %d messages", k, len(cur.Thread))
		}
		reply := cur.Thread[len(cur.Thread)-1]
		if reply.Role != "assistant" {
			t.Fatalf("turn %d: the message before its own is %q", k, reply.Role)
		}
		switch cur.Role {
		case "tool":
			if len(reply.ToolCalls) != 1 || reply.ToolCalls[0].ID != cur.ToolCallID || reply.ToolCalls[0].Name != RecordedTool {
				t.Fatalf("turn %d: result of %q after calls %+v", k, cur.ToolCallID, reply.ToolCalls)
			}
		case "":
			if reply.ToolCalls != nil {
				t.Fatalf("turn %d: a user message after a tool call", k)
			}
		default:
			t.Fatalf("turn %d: role %q", k, cur.Role)
		}
		// The earlier turn's messages open this one's, unchanged.
		if len(prev.Thread) > 0 && !reflect.DeepEqual(prev.Thread, cur.Thread[:len(prev.Thread)]) {
			t.Errorf("turn %d does not open with the messages turn %d sent", k, k-1)
		}
		if len(cur.Tools) != 1 {
			t.Errorf("turn %d declares %d tools", k, len(cur.Tools))
		}
	}
	// The thread's text is the recorded context: every message but the
	// turn's own closes at a block boundary.
	last := &root[len(root)-1]
	var n int
	for _, m := range last.Thread {
		n += len(tok.Encode(m.Content()))
	}
	n += len(tok.Encode(last.MessageText()))
	if diff := n - last.InputTokens; diff < -2 || diff > 2 {
		t.Errorf("the last turn's messages hold %d tokens, its recorded context %d", n, last.InputTokens)
	}
}

// TestToolResults: a tool loop's results are distinct, each of exactly
// the tokens asked for, the same for the same seed.
func TestToolResults(t *testing.T) {
	t.Parallel()
	tok := qwen(t)
	rs, err := ToolResults(context.Background(), tok, 5, 40, 6)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := ToolResults(context.Background(), tok, 5, 40, 6)
	seen := map[string]bool{}
	for i, r := range rs {
		if n := len(tok.Encode(r)); n < 39 || n > 40 || seen[r] || r != again[i] {
			t.Errorf("result %d: %d tokens, repeated %v: %q", i, n, seen[r], r)
		}
		seen[r] = true
	}
	if _, err := ToolResults(context.Background(), tok, 5, 0, 1); err == nil {
		t.Error("0 tokens accepted")
	}
	if tools := AgentTools(); len(OpenAIToolDefs(tools)) != 3 {
		t.Errorf("agent tools %v", tools)
	}
}
