package endpoint

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surgebench/surge/metrics"
)

// TestUsageShapes reads the usage objects servers send: each count the
// server sent is recorded as sent (a zero too), a null or absent one not.
func TestUsageShapes(t *testing.T) {
	t.Parallel()
	const (
		p  = metrics.UsagePromptField
		c  = metrics.UsageCompletionField
		to = metrics.UsageTotalField
		r  = metrics.UsageReasoningField
		cr = metrics.UsageCacheReadField
		cw = metrics.UsageCacheWriteField
	)
	cases := []struct {
		name, in string
		want     metrics.Usage
	}{
		{"vLLM with --enable-prompt-tokens-details",
			`{"prompt_tokens":1200,"total_tokens":1300,"completion_tokens":100,"prompt_tokens_details":{"cached_tokens":1024}}`,
			metrics.Usage{PromptTokens: 1200, CompletionTokens: 100, TotalTokens: 1300, CacheReadTokens: 1024, Fields: p | c | to | cr}},
		{"OpenAI: reasoning and cache details, zero cache hits",
			`{"prompt_tokens":20,"completion_tokens":50,"total_tokens":70,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":32,"audio_tokens":0}}`,
			metrics.Usage{PromptTokens: 20, CompletionTokens: 50, TotalTokens: 70, ReasoningTokens: 32, Fields: p | c | to | r | cr}},
		{"Responses API names",
			`{"input_tokens":9,"input_tokens_details":{"cached_tokens":8},"output_tokens":12,"output_tokens_details":{"reasoning_tokens":4},"total_tokens":21}`,
			metrics.Usage{PromptTokens: 9, CompletionTokens: 12, TotalTokens: 21, ReasoningTokens: 4, CacheReadTokens: 8, Fields: p | c | to | r | cr}},
		{"Anthropic cache reads and writes",
			`{"input_tokens":21,"cache_creation_input_tokens":188086,"cache_read_input_tokens":0,"output_tokens":393}`,
			metrics.Usage{PromptTokens: 21, CompletionTokens: 393, CacheWriteTokens: 188086, Fields: p | c | cr | cw}},
		{"DeepSeek cache hits",
			`{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110,"prompt_cache_hit_tokens":64,"prompt_cache_miss_tokens":36}`,
			metrics.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110, CacheReadTokens: 64, Fields: p | c | to | cr}},
		{"null counts and details are not sent",
			`{"prompt_tokens":5,"completion_tokens":null,"total_tokens":null,"prompt_tokens_details":null,"completion_tokens_details":{"reasoning_tokens":null}}`,
			metrics.Usage{PromptTokens: 5, Fields: p}},
	}
	for _, tc := range cases {
		tc.want.Present = true
		if d := cmp.Diff(tc.want, bodyUsage([]byte(tc.in))); d != "" {
			t.Errorf("%s (-want +got)\n%s", tc.name, d)
		}
	}
	if u := bodyUsage([]byte(`{"prompt_tokens":`)); u.Present {
		t.Errorf("a truncated usage object reads as %+v, want absent", u)
	}
}

// TestMessagesUsageAcrossEvents: Anthropic sends the input and cache counts
// in message_start and cumulative output counts in message_delta; the
// response's usage has all of them.
func TestMessagesUsageAcrossEvents(t *testing.T) {
	t.Parallel()
	got := decodeStream(&Endpoint{Kind: Messages, Streaming: true}, []ev{
		{"message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":12,"cache_creation_input_tokens":0,"cache_read_input_tokens":2048,"output_tokens":1}}}`},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`},
		{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}`},
		{"message_stop", `{"type":"message_stop"}`},
	})
	want := metrics.Usage{Present: true, PromptTokens: 12, CompletionTokens: 15, CacheReadTokens: 2048,
		Fields: metrics.UsagePromptField | metrics.UsageCompletionField | metrics.UsageCacheReadField | metrics.UsageCacheWriteField}
	if d := cmp.Diff(want, got.Usage); d != "" {
		t.Errorf("usage (-want +got)\n%s", d)
	}
}
