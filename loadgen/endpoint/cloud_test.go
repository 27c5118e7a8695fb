package endpoint

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/metrics"
)

// decodeEvents runs a type's decoder over typed events, as a stream
// brings them.
func decodeEvents(t *testing.T, k Kind, events [][2]string) (Output, []Delta) {
	t.Helper()
	dec := (&Endpoint{Kind: k, Reasoning: ReasoningFields}).NewDecoder()
	var out Output
	var ds []Delta
	for _, ev := range events {
		var typ []byte
		if ev[0] != "" {
			typ = []byte(ev[0])
		}
		d, err := dec.Event(typ, []byte(ev[1]), &out)
		if err != nil {
			t.Fatalf("%s: event %s %s: %v", k, ev[0], ev[1], err)
		}
		ds = append(ds, d)
	}
	return out, ds
}

func TestConverseStream(t *testing.T) {
	t.Parallel()
	// ConverseStream's events as AWS's reference shows them, with a
	// reasoning block and a tool call.
	out, ds := decodeEvents(t, BedrockConverse, [][2]string{
		{"messageStart", `{"p":"abc","role":"assistant"}`},
		{"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"Let me think."}},"p":"ab"}`},
		{"contentBlockDelta", `{"contentBlockIndex":1,"delta":{"text":"Hello"},"p":"abcd"}`},
		{"contentBlockDelta", `{"contentBlockIndex":1,"delta":{"text":" world"},"p":"a"}`},
		{"contentBlockStop", `{"contentBlockIndex":1}`},
		{"contentBlockStart", `{"contentBlockIndex":2,"start":{"toolUse":{"name":"get_weather","toolUseId":"tooluse_1"}}}`},
		{"contentBlockDelta", `{"contentBlockIndex":2,"delta":{"toolUse":{"input":"{\"city\":"}}}`},
		{"contentBlockDelta", `{"contentBlockIndex":2,"delta":{"toolUse":{"input":"\"Paris\"}"}}}`},
		{"messageStop", `{"stopReason":"tool_use"}`},
		{"metadata", `{"metrics":{"latencyMs":1230},"usage":{"inputTokens":25,"outputTokens":12,"totalTokens":37,"cacheReadInputTokens":4}}`},
	})
	if string(out.Text) != "Hello world" || string(out.Reasoning) != "Let me think." {
		t.Errorf("text %q, reasoning %q", out.Text, out.Reasoning)
	}
	if got := out.Tools.Calls(); len(got) != 1 || got[0] != (datasets.ToolCall{ID: "tooluse_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}) {
		t.Errorf("tool calls %+v", got)
	}
	if !ds[1].Reasoning || !ds[2].Content || !ds[6].ToolCall || ds[5].ToolCall || !ds[8].Finished || !ds[9].Done {
		t.Errorf("deltas %+v", ds)
	}
	if u := ds[9].Usage; u.PromptTokens != 25 || u.CompletionTokens != 12 || u.TotalTokens != 37 || u.CacheReadTokens != 4 || !u.Has(metrics.UsageCompletionField) {
		t.Errorf("usage %+v", u)
	}
}

func TestConverseBody(t *testing.T) {
	t.Parallel()
	var out Output
	d, err := (&Endpoint{Kind: BedrockConverse, Reasoning: ReasoningFields}).NewDecoder().Body([]byte(`{"output":{"message":{"role":"assistant","content":[
		{"reasoningContent":{"reasoningText":{"text":"hmm","signature":"s"}}},{"text":"Paris."}]}},
		"stopReason":"end_turn","usage":{"inputTokens":7,"outputTokens":3,"totalTokens":10},"metrics":{"latencyMs":300}}`), &out)
	if err != nil || string(out.Text) != "Paris." || string(out.Reasoning) != "hmm" || !d.Finished || d.Usage.CompletionTokens != 3 {
		t.Errorf("%q %q %+v %v", out.Text, out.Reasoning, d, err)
	}
	if _, err := (&Endpoint{Kind: BedrockConverse}).NewDecoder().Body([]byte(`{"choices":[]}`), &out); err == nil || !strings.Contains(err.Error(), `"output"`) {
		t.Errorf("a chat body read as Converse's: %v", err)
	}
}

func TestConverseRequest(t *testing.T) {
	t.Parallel()
	e := &Endpoint{Kind: BedrockConverse, Model: "amazon.nova-lite-v1:0", Streaming: true}
	b, err := e.Body("Be brief.", []Message{{Role: "user", Content: "Hi"}, {Role: "assistant", Content: "Hello"}},
		&datasets.Turn{Text: "What is 2+2?", MaxTokens: 64})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	_ = json.Unmarshal(b, &got)
	want := map[string]any{
		"messages": []any{
			map[string]any{"role": "user", "content": []any{map[string]any{"text": "Hi"}}},
			map[string]any{"role": "assistant", "content": []any{map[string]any{"text": "Hello"}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"text": "What is 2+2?"}}},
		},
		"system":          []any{map[string]any{"text": "Be brief."}},
		"inferenceConfig": map[string]any{"maxTokens": float64(64)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	if p := e.Path(); p != "/model/amazon.nova-lite-v1%3A0/converse-stream" {
		t.Errorf("path %q", p)
	}
}

// chunk is an InvokeModelWithResponseStream chunk carrying v.
func chunk(v string) string {
	return `{"bytes":"` + base64.StdEncoding.EncodeToString([]byte(v)) + `","p":"abcdefgh"}`
}

func TestInvokeModelStream(t *testing.T) {
	t.Parallel()
	out, ds := decodeEvents(t, BedrockInvoke, [][2]string{
		{"chunk", chunk(`{"type":"message_start","message":{"id":"msg_bdrk_01","type":"message","role":"assistant","model":"claude","content":[],"usage":{"input_tokens":14,"output_tokens":1}}}`)},
		{"chunk", chunk(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)},
		{"chunk", chunk(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`)},
		{"chunk", chunk(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"!"}}`)},
		{"chunk", chunk(`{"type":"content_block_stop","index":0}`)},
		{"chunk", chunk(`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}`)},
		{"chunk", chunk(`{"type":"message_stop","amazon-bedrock-invocationMetrics":{"inputTokenCount":14,"outputTokenCount":2,"invocationLatency":400,"firstByteLatency":300}}`)},
	})
	if string(out.Text) != "Hello!" || !ds[2].Content || !ds[6].Done || ds[5].Usage.CompletionTokens != 2 || ds[5].Usage.PromptTokens != 14 ||
		ds[6].Usage.CompletionTokens != 2 || ds[6].Usage.PromptTokens != 14 {
		t.Errorf("text %q, deltas %+v", out.Text, ds)
	}
	b, err := (&Endpoint{Kind: BedrockInvoke, Model: "anthropic.claude-3-haiku-20240307-v1:0", Streaming: true}).Body("", nil, &datasets.Turn{Text: "Hi"})
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	_ = json.Unmarshal(b, &body)
	if body["anthropic_version"] != "bedrock-2023-05-31" || body["model"] != nil || body["stream"] != nil || body["max_tokens"] == nil {
		t.Errorf("InvokeModel's Claude body %s: want anthropic_version and max_tokens, no model or stream", b)
	}
}

func TestGeminiChunks(t *testing.T) {
	t.Parallel()
	// streamGenerateContent's chunks as Google's reference shows them, a
	// thought first.
	out, ds := decodeEvents(t, Gemini, [][2]string{
		{"", `{"candidates":[{"content":{"parts":[{"text":"Thinking…","thought":true}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":9,"totalTokenCount":9},"modelVersion":"gemini-2.5-flash"}`},
		{"", `{"candidates":[{"content":{"parts":[{"text":"The sky"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":9,"totalTokenCount":9}}`},
		{"", `{"candidates":[{"content":{"parts":[{"text":" is blue."}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":5,"thoughtsTokenCount":3,"totalTokenCount":17}}`},
	})
	if string(out.Text) != "The sky is blue." || string(out.Reasoning) != "Thinking…" {
		t.Errorf("text %q, reasoning %q", out.Text, out.Reasoning)
	}
	if !ds[0].Reasoning || ds[0].Content || !ds[1].Content || ds[1].Finished || !ds[2].Finished {
		t.Errorf("deltas %+v", ds)
	}
	if u := ds[2].Usage; u.PromptTokens != 9 || u.CompletionTokens != 8 || u.ReasoningTokens != 3 || u.TotalTokens != 17 {
		t.Errorf("usage %+v: completion = candidates + thoughts", u)
	}
	var o Output
	d, err := geminiChunk([]byte(`{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}`), &o)
	if err != nil || d.Err == nil || d.Err.Message != "Resource has been exhausted" {
		t.Errorf("an error chunk: %+v, %v", d.Err, err)
	}
	d, err = geminiChunk([]byte(`{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":4}}`), &o)
	if err != nil || d.Err == nil || d.Err.Type != "prompt_blocked" {
		t.Errorf("a blocked prompt: %+v, %v", d.Err, err)
	}
	d, _ = geminiChunk([]byte(`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"a":1}}}]}}]}`), &o)
	if calls := o.Tools.Calls(); !d.ToolCall || len(calls) != 1 || calls[0].Name != "f" || calls[0].Arguments != `{"a":1}` {
		t.Errorf("a function call: %+v", calls)
	}
	b, _ := (&Endpoint{Kind: Gemini}).Body("sys", []Message{{Role: "assistant", Content: "a"}}, &datasets.Turn{Text: "q", MaxTokens: 5})
	if !strings.Contains(string(b), `"role":"model"`) || !strings.Contains(string(b), `"systemInstruction"`) || !strings.Contains(string(b), `"maxOutputTokens":5`) {
		t.Errorf("Gemini's body %s", b)
	}
}

// FuzzConverseEvent checks ConverseStream's reader against encoding/json
// on contentBlockDelta events.
func FuzzConverseEvent(f *testing.F) {
	f.Add([]byte(`{"contentBlockIndex":0,"delta":{"text":"Hello"},"p":"abcd"}`))
	f.Add([]byte(`{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"t"}}}`))
	f.Add([]byte(`{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"a\":"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out Output
		_, err := (&converseDecoder{}).Event([]byte("contentBlockDelta"), data, &out)
		if err != nil && (len(out.Text) > 0 || len(out.Reasoning) > 0) {
			t.Fatalf("rejected %q but kept text %q %q", data, out.Text, out.Reasoning)
		}
		var ref struct {
			Delta struct {
				Text             string `json:"text"`
				ReasoningContent struct {
					Text string `json:"text"`
				} `json:"reasoningContent"`
			} `json:"delta"`
		}
		if err != nil || json.Unmarshal(data, &ref) != nil || unmodelled(data, "delta", "text", "reasoningContent", "toolUse", "input") {
			return
		}
		if string(out.Text) != ref.Delta.Text || string(out.Reasoning) != ref.Delta.ReasoningContent.Text {
			t.Fatalf("got %q %q, encoding/json says %q %q for %q", out.Text, out.Reasoning, ref.Delta.Text, ref.Delta.ReasoningContent.Text, data)
		}
	})
}

// FuzzInvokeEvent reads chunk events of any payload: what is accepted
// carries base64 that decodes to an event the Messages reader accepts.
func FuzzInvokeEvent(f *testing.F) {
	f.Add([]byte(chunk(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`)))
	f.Add([]byte(`{"bytes":"!!"}`))
	f.Add([]byte(`{"bytes":""}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out, ref Output
		d, err := (&invokeDecoder{}).Event([]byte("chunk"), data, &out)
		if err != nil {
			if len(out.Text) > 0 {
				t.Fatalf("rejected %q but kept text %q", data, out.Text)
			}
			return
		}
		var c struct {
			Bytes []byte `json:"bytes"`
		}
		if json.Unmarshal(data, &c) != nil || unmodelled(data, "bytes") {
			return
		}
		rd, rerr := (&messagesDecoder{}).Event(nil, c.Bytes, &ref)
		if rerr != nil || string(ref.Text) != string(out.Text) || rd.Content != d.Content {
			t.Fatalf("chunk %q: %q, the Messages reader says %q (%v)", data, out.Text, ref.Text, rerr)
		}
	})
}

// FuzzGeminiChunk checks Gemini's reader against encoding/json.
func FuzzGeminiChunk(f *testing.F) {
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"text":"Hi"},{"text":"t","thought":true}],"role":"model"},"index":0}]}`))
	f.Add([]byte(`{"candidates":[{"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":2}}`))
	f.Add([]byte(`{"error":{"code":400,"message":"m"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out Output
		_, err := geminiChunk(data, &out)
		if err != nil && (len(out.Text) > 0 || len(out.Reasoning) > 0 || !out.Tools.Empty()) {
			t.Fatalf("rejected %q but kept output", data)
		}
		var ref struct {
			Candidates []struct {
				Content struct {
					Parts []struct {
						Text    string `json:"text"`
						Thought bool   `json:"thought"`
					} `json:"parts"`
				} `json:"content"`
			} `json:"candidates"`
		}
		if err != nil || json.Unmarshal(data, &ref) != nil || unmodelled(data, "candidates", "content", "parts", "text", "thought") {
			return
		}
		var text, thought string
		if len(ref.Candidates) > 0 {
			for _, p := range ref.Candidates[0].Content.Parts {
				if p.Thought {
					thought += p.Text
				} else {
					text += p.Text
				}
			}
		}
		if string(out.Text) != text || string(out.Reasoning) != thought {
			t.Fatalf("got %q %q, encoding/json says %q %q for %q", out.Text, out.Reasoning, text, thought, data)
		}
	})
}
