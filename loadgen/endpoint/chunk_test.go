package endpoint

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surgebench/surge/metrics"
)

func TestParseChunk(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                string
		in                  string
		want                Delta
		wantText, wantReasn string
	}{
		{"vLLM role-only first chunk is not a token",
			`{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
			Delta{}, "", ""},
		{"content delta",
			`{"choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}]}`,
			Delta{Content: true}, " the", ""},
		{"escapes and unicode",
			`{"choices":[{"delta":{"content":"a\"b\\c\n\u00e9\ud83d\ude00\/"}}]}`,
			Delta{Content: true}, "a\"b\\c\né😀/", ""},
		{"reasoning_content (DeepSeek, vLLM)",
			`{"choices":[{"delta":{"reasoning_content":"hmm","content":null}}]}`,
			Delta{Reasoning: true}, "", "hmm"},
		{"reasoning (OpenRouter, newer vLLM)",
			`{"choices":[{"delta":{"reasoning":"so"}}]}`,
			Delta{Reasoning: true}, "", "so"},
		{"finish chunk with empty delta (llama.cpp)",
			`{"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"created":1}`,
			Delta{Finished: true}, "", ""},
		{"usage-only chunk",
			`{"id":"x","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":34,"total_tokens":46,"completion_tokens_details":{"reasoning_tokens":5}}}`,
			Delta{Usage: metrics.Usage{Present: true, PromptTokens: 12, CompletionTokens: 34, ReasoningTokens: 5, TotalTokens: 46, Fields: metrics.UsagePromptField | metrics.UsageCompletionField | metrics.UsageTotalField | metrics.UsageReasoningField}}, "", ""},
		{"usage null",
			`{"choices":[{"delta":{"content":"x"}}],"usage":null}`,
			Delta{Content: true}, "x", ""},
		{"completions text",
			`{"id":"cmpl","object":"text_completion","choices":[{"index":0,"text":" river","logprobs":null,"finish_reason":null}]}`,
			Delta{Content: true}, " river", ""},
		{"non-streamed chat message",
			`{"choices":[{"message":{"role":"assistant","content":"hello world","reasoning_content":"think"},"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`,
			Delta{Content: true, Reasoning: true, Finished: true, Usage: metrics.Usage{Present: true, PromptTokens: 3, CompletionTokens: 2, Fields: metrics.UsagePromptField | metrics.UsageCompletionField}}, "hello world", "think"},
		{"only choice 0 counts",
			`{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]}`,
			Delta{Content: true}, "a", ""},
		{"error object mid-stream",
			`{"error":{"message":"context length exceeded","type":"BadRequestError","code":400}}`,
			Delta{Err: &metrics.Error{Code: 400, Type: "BadRequestError", Message: "context length exceeded"}}, "", ""},
		{"old vLLM error shape",
			`{"object":"error","message":"boom","type":"InternalServerError","code":500}`,
			Delta{Err: &metrics.Error{Code: 500, Type: "InternalServerError", Message: "boom"}}, "", ""},
		{"error as a string, code as a string",
			`{"error":"overloaded"}`,
			Delta{Err: &metrics.Error{Type: "error", Message: "overloaded"}}, "", ""},
		{"content parts array is skipped",
			`{"choices":[{"delta":{"content":[{"type":"text","text":"x"}]}}]}`,
			Delta{}, "", ""},
	}
	for _, tc := range cases {
		var text, reasoning []byte
		got, err := ParseChunk([]byte(tc.in), &text, &reasoning)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s: delta (-want +got)\n%s", tc.name, d)
		}
		if string(text) != tc.wantText || string(reasoning) != tc.wantReasn {
			t.Errorf("%s: text %q reasoning %q, want %q %q", tc.name, text, reasoning, tc.wantText, tc.wantReasn)
		}
	}
}

func TestParseChunkRejectsMalformed(t *testing.T) {
	t.Parallel()
	for _, in := range []string{``, `{`, `{"choices":[{"delta":{"content":"x}}]}`, `[1,2]`, `{"choices":[}`, `{"a":1} trailing`, "{\"choices\":[{\"delta\":{\"content\":\"\x01\"}}]}"} {
		var text, reasoning []byte
		if _, err := ParseChunk([]byte(in), &text, &reasoning); err == nil {
			t.Errorf("ParseChunk(%q) accepted malformed input", in)
		} else if !strings.Contains(err.Error(), "response chunk") {
			t.Errorf("ParseChunk(%q) error %q does not say what it parsed", in, err)
		}
	}
}

func TestParseErrorBody(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status int
		body   string
		want   metrics.Error
	}{
		{429, `{"error":{"message":"Rate limit reached","type":"rate_limit_error","code":"429"}}`, metrics.Error{Code: 429, Type: "rate_limit_error", Message: "Rate limit reached"}},
		{400, `{"object":"error","message":"max_tokens too large","type":"BadRequestError","code":400}`, metrics.Error{Code: 400, Type: "BadRequestError", Message: "max_tokens too large"}},
		{422, `{"detail":"Field required"}`, metrics.Error{Code: 422, Type: "Unprocessable Entity", Message: "Field required"}},
		{404, `404 page not found`, metrics.Error{Code: 404, Type: "Not Found", Message: "404 page not found"}},
		{503, ``, metrics.Error{Code: 503, Type: "Service Unavailable", Message: "HTTP 503 with an empty body"}},
	}
	for _, tc := range cases {
		if d := cmp.Diff(tc.want, *ParseErrorBody(tc.status, []byte(tc.body))); d != "" {
			t.Errorf("ParseErrorBody(%d, %q) (-want +got)\n%s", tc.status, tc.body, d)
		}
	}
}

// referenceText decodes a chunk with encoding/json (generic values, so keys
// match exactly), the oracle for the fuzzer: choice 0's content or text,
// and its reasoning_content.
func referenceText(v any) (text, reasoning string) {
	m, _ := v.(map[string]any)
	choices, _ := m["choices"].([]any)
	if len(choices) == 0 {
		return "", ""
	}
	c, _ := choices[0].(map[string]any)
	if t, ok := c["text"].(string); ok {
		text += t
	}
	if d, ok := c["delta"].(map[string]any); ok {
		if t, ok := d["content"].(string); ok {
			text += t
		}
		if r, ok := d["reasoning_content"].(string); ok {
			reasoning = r
		}
	}
	return text, reasoning
}

func FuzzParseChunk(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"delta":{"content":" the"}}]}`,
		`{"choices":[{"delta":{"reasoning_content":"a\u00e9\ud83d\ude00"}}],"usage":null}`,
		`{"choices":[{"text":"x","finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2}}`,
		`{"error":{"message":"m","type":"t","code":1}}`,
		`{"choices":[{"delta":{"content":"\ud800"}}]}`,
		`{"a":[1,2.5e3,true,false,null,{"b":"c"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var text, reasoning []byte
		_, err := ParseChunk(data, &text, &reasoning)
		var ref any
		refErr := json.Unmarshal(data, &ref)
		if err != nil {
			return // the fast path may be stricter on shapes it does not know; never looser
		}
		if refErr != nil {
			t.Fatalf("ParseChunk accepted %q, which encoding/json rejects: %v", data, refErr)
		}
		wantText, wantReasoning := referenceText(ref)
		// Shapes the reference does not model: duplicate keys (encoding/json
		// keeps the last, we keep all), "message" and "reasoning" members,
		// content in an array, and tool calls (their text joins the content).
		s := string(data)
		unmodelled := strings.Count(s, `"content"`)+strings.Count(s, `"text"`) > 1 ||
			strings.Contains(s, `"message"`) || strings.Contains(s, `"reasoning"`) || strings.Contains(s, `"tool_calls"`) ||
			strings.Count(s, `"reasoning_content"`) > 1 || strings.Count(s, `"choices"`) > 1 || strings.Count(s, `"delta"`) > 1
		if unmodelled {
			return
		}
		if string(text) != wantText || string(reasoning) != wantReasoning {
			t.Fatalf("got text %q reasoning %q, encoding/json says %q %q for %q", text, reasoning, wantText, wantReasoning, data)
		}
	})
}

func BenchmarkParseChunk(b *testing.B) {
	data := []byte(`{"id":"chatcmpl-8e1b","object":"chat.completion.chunk","created":1733000000,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":" river"},"logprobs":null,"finish_reason":null}]}`)
	text := make([]byte, 0, 1<<16)
	var reasoning []byte
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		text = text[:0]
		if _, err := ParseChunk(data, &text, &reasoning); err != nil {
			b.Fatal(err)
		}
	}
}
