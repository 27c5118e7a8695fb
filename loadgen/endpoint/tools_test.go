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

// TestBodyToolCalls: a whole response's calls are collected, with their
// ids, in each API's shape; their text is not the reply's.
func TestBodyToolCalls(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind       Kind
		body, text string
		calls      string
	}{
		{Chat, `{"choices":[{"message":{"role":"assistant","content":"Let me look.","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},{"id":"c2","type":"function","function":{"name":"g","arguments":"oops"}}]},"finish_reason":"tool_calls"}]}`,
			"Let me look.", `c1 f {"a":1}; c2 g oops`},
		{Responses, `{"id":"r","status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"On it."}]},{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}"}]}`,
			"On it.", `call_1 f {}`},
		{Messages, `{"type":"message","role":"assistant","content":[{"type":"text","text":"Sure."},{"type":"tool_use","id":"toolu_1","name":"f","input":{"q":"x"}}],"stop_reason":"tool_use"}`,
			"Sure.", `toolu_1 f {"q":"x"}`},
	} {
		e := &Endpoint{Kind: tc.kind}
		var out Output
		d, err := e.NewDecoder().Body([]byte(tc.body), &out)
		if err != nil || !d.ToolCall {
			t.Fatalf("%s: %+v, %v", tc.kind, d, err)
		}
		if string(out.Text) != tc.text || formatCalls(out.Tools.Calls()) != tc.calls {
			t.Errorf("%s: text %q calls %q, want %q %q", tc.kind, out.Text, formatCalls(out.Tools.Calls()), tc.text, tc.calls)
		}
	}
	if !ValidArguments("") || !ValidArguments(`{"a":1}`) || ValidArguments("oops") || ValidArguments(`{"a":`) {
		t.Error("ValidArguments")
	}
}

// BenchmarkToolCallDeltas decodes a streamed call's argument deltas with a
// pooled Output: collecting them must not allocate.
func BenchmarkToolCallDeltas(b *testing.B) {
	streams := map[Kind][]string{
		Chat: {`{"choices":[{"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}}]}`},
		Responses: {`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":""}}`,
			`{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"{\"city\":"}`,
			`{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"\"Paris\"}"}`},
		Messages: {`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"city\":"}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"Paris\"}"}}`},
	}
	for _, k := range []Kind{Chat, Responses, Messages} {
		var events [][]byte
		for _, e := range streams[k] {
			events = append(events, []byte(e))
		}
		b.Run(string(k), func(b *testing.B) {
			d := (&Endpoint{Kind: k}).NewDecoder()
			var out Output
			b.ReportAllocs()
			for b.Loop() {
				d.Reset()
				out.Reset()
				for _, e := range events {
					if _, err := d.Event(nil, e, &out); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
