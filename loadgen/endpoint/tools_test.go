package endpoint

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/surgebench/surge/datasets"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// weatherTools is one OpenAI tool definition.
var weatherTools = []map[string]any{{"type": "function", "function": map[string]any{
	"name": "get_weather", "description": "Weather in a city.",
	"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}}

// toolHistory is a conversation whose assistant made two parallel calls,
// the first answered in the history; the turn sent is the second's result.
func toolHistory() ([]Message, datasets.Turn) {
	h := []Message{
		{Role: "user", Content: "Weather in Oslo and Bergen?"},
		{Role: "assistant", Content: "Checking both.", ToolCalls: []datasets.ToolCall{
			{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Oslo"}`},
			{ID: "call_2", Name: "get_weather", Arguments: `{"city": "Bergen"`}, // cut off: not JSON
		}},
		{Role: "tool", ToolCallID: "call_1", Content: "rain, 9 C"},
	}
	return h, datasets.Turn{Role: "tool", ToolCallID: "call_2", Text: "sun, 12 C", Tools: weatherTools, MaxTokens: 16}
}

// TestToolBodies: each API gets a conversation's tool calls and results in
// its own shape (golden bodies under testdata/tools).
func TestToolBodies(t *testing.T) {
	t.Parallel()
	h, turn := toolHistory()
	for _, k := range []Kind{Chat, Responses, Messages} {
		e := &Endpoint{Kind: k, Model: "m", Streaming: true}
		b, err := e.Body("be brief", h, &turn)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, b, "", "  "); err != nil {
			t.Fatalf("%s: body %s: %v", k, b, err)
		}
		pretty.WriteByte('\n')
		goldenFile(t, filepath.Join("testdata", "tools", string(k)+".json"), pretty.Bytes())
	}
}

// TestWekaThreadBody: a trace turn's Thread goes before its own message,
// its history left out (the turn carries its context).
func TestWekaThreadBody(t *testing.T) {
	t.Parallel()
	turn := datasets.Turn{Standalone: true, Role: "tool", ToolCallID: "call_1", Parts: []string{"new ", "blocks"},
		Thread: []datasets.Message{{Role: "user", Parts: []string{"old ", "blocks"}},
			{Role: "assistant", ToolCalls: []datasets.ToolCall{{ID: "call_1", Name: datasets.RecordedTool, Arguments: "{}"}}}}}
	e := &Endpoint{Kind: Chat, Model: "m"}
	b, err := e.Body("", []Message{{Role: "user", Content: "not sent"}}, &turn)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"messages":[{"role":"user","content":"old blocks"},{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"recorded_tool","arguments":"{}"}}]},{"role":"tool","content":"new blocks","tool_call_id":"call_1"}],"model":"m"}`
	if string(b) != want {
		t.Fatalf("body\n %s\nwant\n %s", b, want)
	}
	if got := turn.Content(); got != "old blocks\nrecorded_tool{}\nnew blocks" {
		t.Errorf("content %q", got)
	}
}

// TestToolInput: Anthropic's tool_use input is always an object.
func TestToolInput(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]string{
		"":                    `{}`,
		`{"a":1}`:             `{"a":1}`,
		`[1]`:                 `{"arguments":"[1]"}`,
		`{"a":`:               `{"arguments":"{\"a\":"}`,
		`null`:                `{"arguments":"null"}`,
		` {"b": "x"} `:        `{"b":"x"}`,
		`"just a string"`:     `{"arguments":"\"just a string\""}`,
		`{"nested":{"x":[]}}`: `{"nested":{"x":[]}}`,
	} {
		got, err := json.Marshal(toolInput(args))
		if err != nil || string(got) != want {
			t.Errorf("toolInput(%q) = %s (%v), want %s", args, got, err, want)
		}
	}
}

// goldenFile compares got with the file at p, rewriting it with -update.
func goldenFile(t *testing.T, p string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n%s\nwant\n%s", p, got, want)
	}
}
