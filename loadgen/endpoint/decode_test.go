package endpoint

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/metrics"
)

// ev is one streamed SSE event: its event type ("" for none) and data.
type ev struct{ typ, data string }

// streamResult is what decoding a whole stream gave.
type streamResult struct {
	Text, Reasoning  string
	Content, Reasons int // events that carried content / reasoning
	Tools            int
	// Calls are the tool calls put together, "id name args" each.
	Calls                string
	Finished, Done       bool
	Usage                metrics.Usage
	Err                  *metrics.Error
	DecodeErr            string
	EventsAfterDoneError bool
}

// decodeStream feeds events to a fresh decoder of e as the generator does:
// stopping at Done, an error, or a server error.
func decodeStream(e *Endpoint, events []ev) streamResult {
	var out Output
	return decodeWith(e.NewDecoder(), events, &out)
}

// decodeWith feeds events to d, appending to out.
func decodeWith(d *ResponseDecoder, events []ev, out *Output) streamResult {
	var r streamResult
	for _, x := range events {
		var typ []byte
		if x.typ != "" {
			typ = []byte(x.typ)
		}
		delta, err := d.Event(typ, []byte(x.data), out)
		if err != nil {
			r.DecodeErr = err.Error()
			break
		}
		if delta.Usage.Present {
			r.Usage = delta.Usage
		}
		if delta.Err != nil {
			r.Err = delta.Err
			break
		}
		if delta.Content {
			r.Content++
		}
		if delta.Reasoning {
			r.Reasons++
		}
		if delta.ToolCall {
			r.Tools++
		}
		r.Finished = r.Finished || delta.Finished
		if delta.Done {
			r.Done = true
			break
		}
	}
	r.Text, r.Reasoning = string(out.Text), string(out.Reasoning)
	r.Calls = formatCalls(out.Tools.Calls())
	return r
}

// formatCalls writes calls as "id name args", joined by "; ".
func formatCalls(calls []datasets.ToolCall) string {
	var parts []string
	for _, c := range calls {
		parts = append(parts, c.ID+" "+c.Name+" "+c.Arguments)
	}
	return strings.Join(parts, "; ")
}

// streamCases are streams as each server documents them.
var streamCases = []struct {
	name   string
	ep     Endpoint
	events []ev
	want   streamResult
}{
	{"chat: vLLM with usage and [DONE]", Endpoint{Kind: Chat}, []ev{
		{"", `{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`},
		{"", `{"choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]}`},
		{"", `{"choices":[{"index":0,"delta":{"content":" world"},"finish_reason":"stop"}]}`},
		{"", `{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`},
		{"", `[DONE]`},
	}, streamResult{Text: "Hello world", Content: 2, Finished: true, Done: true,
		Usage: metrics.Usage{Present: true, PromptTokens: 5, CompletionTokens: 2, TotalTokens: 7, Fields: metrics.UsagePromptField | metrics.UsageCompletionField | metrics.UsageTotalField}}},
	{"chat: streamed tool_calls deltas are output events", Endpoint{Kind: Chat}, []ev{
		{"", `{"choices":[{"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}`},
		{"", `{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}]}`},
		{"", `{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}}]}`},
		{"", `{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`},
		{"", `[DONE]`},
	}, streamResult{Calls: `call_1 get_weather {"city":"Paris"}`, Tools: 3, Finished: true, Done: true}},
	{"chat: parallel tool calls, interleaved", Endpoint{Kind: Chat}, []ev{
		{"", `{"choices":[{"delta":{"content":"Both.","tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x\""}}]}}]}`},
		{"", `{"choices":[{"delta":{"tool_calls":[{"id":"b","index":1,"function":{"name":"g","arguments":"[1"}}]}}]}`},
		{"", `{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}},{"index":1,"function":{"arguments":"]"}}]}}]}`},
		{"", `{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`},
	}, streamResult{Text: "Both.", Content: 1, Calls: `a f {"x":1}; b g [1]`, Tools: 3, Finished: true}},
	{"chat: <think> opening the content is reasoning (auto)", Endpoint{Kind: Chat}, []ev{
		{"", `{"choices":[{"delta":{"content":"<thi"}}]}`},
		{"", `{"choices":[{"delta":{"content":"nk>\nplan"}}]}`},
		{"", `{"choices":[{"delta":{"content":" more</th"}}]}`},
		{"", `{"choices":[{"delta":{"content":"ink>\n\nAnswer"}}]}`},
		{"", `{"choices":[{"delta":{"content":" <think>kept</think>"},"finish_reason":"stop"}]}`},
		{"", `[DONE]`},
	}, streamResult{Text: "\n\nAnswer <think>kept</think>", Reasoning: "\nplan more", Content: 2, Reasons: 2, Finished: true, Done: true}},
	{"chat: think format splits every block", Endpoint{Kind: Chat, Reasoning: ReasoningThink}, []ev{
		{"", `{"choices":[{"delta":{"content":"a<think>b</think>c<think>d"}}]}`},
		{"", `{"choices":[{"delta":{"content":"e</think>f"},"finish_reason":"stop"}]}`},
	}, streamResult{Text: "acf", Reasoning: "bde", Content: 2, Reasons: 2, Finished: true}},
	{"chat: fields format leaves tags in the content", Endpoint{Kind: Chat, Reasoning: ReasoningFields}, []ev{
		{"", `{"choices":[{"delta":{"content":"<think>x</think>y"}}]}`},
		{"", `{"choices":[{"delta":{"reasoning_content":"r"}}]}`},
	}, streamResult{Text: "<think>x</think>y", Reasoning: "r", Content: 1, Reasons: 1}},
	{"chat: none format counts reasoning as content", Endpoint{Kind: Chat, Reasoning: ReasoningNone}, []ev{
		{"", `{"choices":[{"delta":{"reasoning":"r"}}]}`},
		{"", `{"choices":[{"delta":{"content":"c"}}]}`},
	}, streamResult{Text: "rc", Content: 2}},
	{"chat: a TGI stream is the wrong shape", Endpoint{Kind: Chat}, []ev{
		{"", `{"index":1,"token":{"id":1,"text":"a","logprob":0,"special":false},"generated_text":null,"details":null}`},
	}, streamResult{DecodeErr: `response does not match endpoint type "chat": the first event has no "choices" field`}},
	{"chat: an unknown event after matching ones is skipped", Endpoint{Kind: Chat}, []ev{
		{"", `{"choices":[{"delta":{"content":"a"}}]}`},
		{"", `{"keepalive":true}`},
		{"", `{"choices":[{"delta":{"content":"b"}}]}`},
	}, streamResult{Text: "ab", Content: 2}},
	// Only a non-empty finish_reason other than null and "null" finishes
	// a choice: koboldcpp 1.76 sends the string "null" until its last
	// chunk, distributed-llama "" (koboldcpp.py handle_sse_stream;
	// src/dllama-api.cpp): a stream cut between two such chunks must not
	// pass as a finished answer.
	{"chat: koboldcpp's \"null\" finish_reason does not finish", Endpoint{Kind: Chat}, []ev{
		{"", `{"id":"koboldcpp","object":"chat.completion.chunk","choices":[{"index":0,"finish_reason":"null","delta":{"role":"assistant","content":"a"}}]}`},
	}, streamResult{Text: "a", Content: 1}},
	{"chat: distributed-llama's empty finish_reason does not finish", Endpoint{Kind: Chat}, []ev{
		{"", `{"object":"chat.completion","choices":[{"index":0,"delta":{"role":"assistant","content":"a"},"finish_reason":""}]}`},
		{"", `{"object":"chat.completion","choices":[{"index":0,"delta":{"role":"assistant","content":"b"},"finish_reason":""}]}`},
	}, streamResult{Text: "ab", Content: 2}},
	{"chat: koboldcpp's last chunk finishes", Endpoint{Kind: Chat}, []ev{
		{"", `{"choices":[{"index":0,"finish_reason":"null","delta":{"role":"assistant","content":"a"}}]}`},
		{"", `{"choices":[{"index":0,"finish_reason":"length","delta":{"role":"assistant","content":""}}]}`},
	}, streamResult{Text: "a", Content: 1, Finished: true}},
	{"completions: \"null\" and \"\" do not finish", Endpoint{Kind: Completions}, []ev{
		{"", `{"choices":[{"index":0,"finish_reason":"null","text":"a"}]}`},
		{"", `{"choices":[{"index":0,"finish_reason":"","text":"b"}]}`},
	}, streamResult{Text: "ab", Content: 2}},
	{"messages: empty and \"null\" stop_reason do not finish", Endpoint{Kind: Messages}, []ev{
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}`},
		{"message_delta", `{"type":"message_delta","delta":{"stop_reason":""}}`},
		{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"null"}}`},
	}, streamResult{Text: "a", Content: 1}},
	{"huggingface_generate: empty finish_reason does not finish", Endpoint{Kind: HuggingFaceGenerate}, []ev{
		{"", `{"index":1,"token":{"id":415,"text":" a","logprob":0,"special":false},"generated_text":null,"details":{"finish_reason":"","generated_tokens":1}}`},
	}, streamResult{Text: " a", Content: 1,
		Usage: metrics.Usage{Present: true, CompletionTokens: 1, Fields: metrics.UsageCompletionField}}},
	{"completions", Endpoint{Kind: Completions}, []ev{
		{"", `{"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":" river","logprobs":null,"finish_reason":null}]}`},
		{"", `{"choices":[{"index":0,"text":"","finish_reason":"length"}]}`},
		{"", `[DONE]`},
	}, streamResult{Text: " river", Content: 1, Finished: true, Done: true}},
	{"responses: reasoning, text and completed", Endpoint{Kind: Responses}, []ev{
		{"response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[],"usage":null}}`},
		{"response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`},
		{"response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":0,"delta":"Thinking"}`},
		{"response.reasoning_text.delta", `{"delta":" hard","type":"response.reasoning_text.delta","item_id":"rs_1","output_index":0,"content_index":0}`},
		{"response.content_part.added", `{"type":"response.content_part.added","item_id":"msg_1","output_index":1,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}`},
		{"response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0,"delta":"Hi"}`},
		{"response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0,"delta":" there"}`},
		{"response.output_text.done", `{"type":"response.output_text.done","item_id":"msg_1","output_index":1,"content_index":0,"text":"Hi there"}`},
		{"response.completed", `{"type":"response.completed","response":{"id":"resp_1","status":"completed","error":null,"usage":{"input_tokens":9,"input_tokens_details":{"cached_tokens":0},"output_tokens":12,"output_tokens_details":{"reasoning_tokens":4},"total_tokens":21}}}`},
	}, streamResult{Text: "Hi there", Reasoning: "Thinking hard", Content: 2, Reasons: 2, Finished: true, Done: true,
		Usage: metrics.Usage{Present: true, PromptTokens: 9, CompletionTokens: 12, ReasoningTokens: 4, TotalTokens: 21, Fields: metrics.UsagePromptField | metrics.UsageCompletionField | metrics.UsageTotalField | metrics.UsageReasoningField | metrics.UsageCacheReadField}}},
	{"responses: function call arguments", Endpoint{Kind: Responses}, []ev{
		{"response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"{\"a\":1}"}`},
	}, streamResult{Calls: `  {"a":1}`, Tools: 1}},
	{"responses: a function call item and its arguments", Endpoint{Kind: Responses}, []ev{
		{"response.output_item.added", `{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_9","name":"get_weather","arguments":"","status":"in_progress"}}`},
		{"response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":"{\"city\":"}`},
		{"response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":"\"Oslo\"}"}`},
		{"response.function_call_arguments.done", `{"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":1,"arguments":"{\"city\":\"Oslo\"}"}`},
		{"response.output_item.done", `{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_9","name":"get_weather","arguments":"{\"city\":\"Oslo\"}","status":"completed"}}`},
		{"response.completed", `{"type":"response.completed","response":{"id":"r","status":"completed","output":[{"type":"function_call","call_id":"call_9","name":"get_weather","arguments":"{}"}]}}`},
	}, streamResult{Calls: `call_9 get_weather {"city":"Oslo"}`, Tools: 2, Finished: true, Done: true}},
	{"responses: failed", Endpoint{Kind: Responses}, []ev{
		{"response.failed", `{"type":"response.failed","response":{"id":"r","status":"failed","error":{"code":"server_error","message":"The model crashed"}}}`},
	}, streamResult{Err: &metrics.Error{Type: "server_error", Message: "The model crashed"}}},
	{"responses: error event", Endpoint{Kind: Responses}, []ev{
		{"error", `{"type":"error","code":"rate_limit_exceeded","message":"Slow down","param":null}`},
	}, streamResult{Err: &metrics.Error{Type: "rate_limit_exceeded", Message: "Slow down"}}},
	{"responses: error event without an SSE type", Endpoint{Kind: Responses}, []ev{
		{"", `{"type":"error","code":"server_error","message":"Boom","param":null,"sequence_number":3}`},
	}, streamResult{Err: &metrics.Error{Type: "server_error", Message: "Boom"}}},
	{"responses: a chat stream is the wrong shape", Endpoint{Kind: Responses}, []ev{
		{"", `{"choices":[{"delta":{"content":"a"}}]}`},
	}, streamResult{DecodeErr: `response does not match endpoint type "responses": the first event has no "type" field`}},
	{"messages: Anthropic stream with thinking", Endpoint{Kind: Messages}, []ev{
		{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}`},
		{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`},
		{"ping", `{"type": "ping"}`},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me see"}}`},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}}`},
		{"content_block_stop", `{"type":"content_block_stop","index":0}`},
		{"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`},
		{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hello"}}`},
		{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"!"}}`},
		{"content_block_stop", `{"type":"content_block_stop","index":1}`},
		{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}`},
		{"message_stop", `{"type":"message_stop"}`},
	}, streamResult{Text: "Hello!", Reasoning: "Let me see", Content: 2, Reasons: 1, Finished: true, Done: true,
		Usage: metrics.Usage{Present: true, PromptTokens: 25, CompletionTokens: 15, Fields: metrics.UsagePromptField | metrics.UsageCompletionField}}},
	{"messages: tool use", Endpoint{Kind: Messages}, []ev{
		{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}`},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"loc"}}`},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\":1}"}}`},
	}, streamResult{Calls: `toolu_1 get_weather {"loc":1}`, Tools: 2}},
	{"messages: overloaded error event", Endpoint{Kind: Messages}, []ev{
		{"error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
	}, streamResult{Err: &metrics.Error{Type: "overloaded_error", Message: "Overloaded"}}},
	{"huggingface_generate: TGI generate_stream", Endpoint{Kind: HuggingFaceGenerate}, []ev{
		{"", `{"index":1,"token":{"id":415,"text":" The","logprob":-0.1,"special":false},"generated_text":null,"details":null}`},
		{"", `{"index":2,"token":{"id":2,"text":" end","logprob":-0.2,"special":false},"generated_text":null,"details":null}`},
		{"", `{"index":3,"token":{"id":2,"text":"</s>","logprob":-0.3,"special":true},"generated_text":" The end","details":{"finish_reason":"eos_token","generated_tokens":3,"seed":null}}`},
	}, streamResult{Text: " The end", Content: 2, Finished: true,
		Usage: metrics.Usage{Present: true, CompletionTokens: 3, Fields: metrics.UsageCompletionField}}},
	{"huggingface_generate: error event", Endpoint{Kind: HuggingFaceGenerate}, []ev{
		{"", `{"error":"Input validation error: max_new_tokens too large","error_type":"validation"}`},
	}, streamResult{Err: &metrics.Error{Type: "validation", Message: "Input validation error: max_new_tokens too large"}}},
	// In-stream errors of each engine (the shapes streamerror.go lists).
	// llama.cpp b4747 (examples/server/server.cpp, handle_completions_impl:
	// server_sent_event(sink, "error", error_data), then data: [DONE];
	// format_error_response in the same file): the sse Reader hands the
	// error field over as an event of type "error".
	{"chat: llama.cpp error field", Endpoint{Kind: Chat}, []ev{
		{"error", `{"code":500,"message":"Input prompt is too big compared to KV size. Please try increasing KV size.","type":"server_error"}`},
	}, streamResult{Err: &metrics.Error{Code: 500, Type: "server_error", Message: "Input prompt is too big compared to KV size. Please try increasing KV size."}}},
	{"chat: llama.cpp error field after a token", Endpoint{Kind: Chat}, []ev{
		{"", `{"choices":[{"finish_reason":null,"index":0,"delta":{"content":"a"}}],"object":"chat.completion.chunk"}`},
		{"error", `{"code":503,"message":"Loading model","type":"unavailable_error"}`},
	}, streamResult{Text: "a", Content: 1, Err: &metrics.Error{Code: 503, Type: "unavailable_error", Message: "Loading model"}}},
	// llama.cpp since ggml-org/llama.cpp#16109 (September 2025,
	// tools/server/server.cpp): data: {"error": {...}}.
	{"chat: llama.cpp error as data", Endpoint{Kind: Chat}, []ev{
		{"", `{"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}}`},
	}, streamResult{Err: &metrics.Error{Code: 400, Type: "exceed_context_size_error", Message: "the request exceeds the available context size"}}},
	// vLLM (vllm/entrypoints/openai/engine/serving.py
	// create_streaming_error_response: ErrorResponse(error=ErrorInfo(...)),
	// yielded as data: then data: [DONE]).
	{"chat: vLLM error object", Endpoint{Kind: Chat}, []ev{
		{"", `{"error":{"message":"Internal server error","type":"InternalServerError","param":null,"code":500}}`},
	}, streamResult{Err: &metrics.Error{Code: 500, Type: "InternalServerError", Message: "Internal server error"}}},
	// SGLang (python/sglang/srt/entrypoints/openai/serving_chat.py: an
	// abort with a status is create_streaming_error_response(message,
	// code.name, code.value); serving_base.py nests ErrorResponse with
	// object "error" under "error").
	{"chat: SGLang error object", Endpoint{Kind: Chat}, []ev{
		{"", `{"error":{"object":"error","message":"Request aborted: out of memory","type":"SERVICE_UNAVAILABLE","param":null,"code":503}}`},
	}, streamResult{Err: &metrics.Error{Code: 503, Type: "SERVICE_UNAVAILABLE", Message: "Request aborted: out of memory"}}},
	// SGLang's graceful abort (no status) falls through with
	// finish_reason "abort" (same file); vLLM's FinishReason.ABORT
	// and ERROR read "abort" and "error".
	{"chat: finish_reason abort", Endpoint{Kind: Chat}, []ev{
		{"", `{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}`},
		{"", `{"choices":[{"index":0,"delta":{"content":""},"finish_reason":"abort","matched_stop":null}]}`},
	}, streamResult{Text: "a", Content: 1, Err: &metrics.Error{Type: ErrFinishAbort, Message: `the server aborted the answer (finish_reason "abort")`}}},
	{"completions: finish_reason error", Endpoint{Kind: Completions}, []ev{
		{"", `{"choices":[{"index":0,"text":"","finish_reason":"error"}]}`},
	}, streamResult{Err: &metrics.Error{Type: ErrFinishError, Message: `the server failed during generation (finish_reason "error")`}}},
	// TGI's OpenAI routes (router/src/infer/mod.rs into_openai_event:
	// OpenaiErrorEvent{error: APIError{message, http_status_code: 422}}).
	{"chat: TGI error event", Endpoint{Kind: Chat}, []ev{
		{"", `{"error":{"message":"Input validation error: inputs tokens + max_new_tokens must be <= 4096","http_status_code":422}}`},
	}, streamResult{Err: &metrics.Error{Code: 422, Type: "error", Message: "Input validation error: inputs tokens + max_new_tokens must be <= 4096"}}},
	// TGI before huggingface/text-generation-inference#2668 and on
	// /generate_stream (router/src/server.rs: impl From<InferError> for
	// Event, ErrorResponse{error, error_type}).
	{"chat: TGI error with error_type", Endpoint{Kind: Chat}, []ev{
		{"", `{"error":"Request failed during generation: Server error: CUDA out of memory","error_type":"generation"}`},
	}, streamResult{Err: &metrics.Error{Type: "generation", Message: "Request failed during generation: Server error: CUDA out of memory"}}},
	// An error event on any type: Anthropic's event: error reaches the
	// chat decoder through a proxy as well.
	{"chat: an event named error", Endpoint{Kind: Chat}, []ev{
		{"error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
	}, streamResult{Err: &metrics.Error{Type: "overloaded_error", Message: "Overloaded"}}},
	{"chat: an error event that is not JSON", Endpoint{Kind: Chat}, []ev{
		{"error", `upstream timed out`},
	}, streamResult{Err: &metrics.Error{Type: ErrStreamResponse, Message: "upstream timed out"}}},
	{"template: response field", Endpoint{Kind: Template, ResponseField: "output.chunks[0].text"}, []ev{
		{"", `{"output":{"chunks":[{"text":"a"},{"text":"zzz"}]}}`},
		{"", `{"output":{"chunks":[{"text":"b","n":1}]}}`},
		{"", `{"error":{"message":"quota","type":"limit"}}`},
	}, streamResult{Text: "ab", Content: 2, Err: &metrics.Error{Type: "limit", Message: "quota"}}},
	{"template: field missing in the first event", Endpoint{Kind: Template, ResponseField: "out.text"}, []ev{
		{"", `{"result":"x"}`},
	}, streamResult{DecodeErr: `response does not match endpoint type "template": the first event has no "out.text" field`}},
}

func TestDecodeStreams(t *testing.T) {
	t.Parallel()
	for _, tc := range streamCases {
		got := decodeStream(&tc.ep, tc.events)
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s (-want +got)\n%s", tc.name, d)
		}
	}
}

// Whole bodies as each server documents them.
func TestDecodeBodies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		ep        Endpoint
		body      string
		want      Delta
		text, rsn string
		err       string
	}{
		{"chat", Endpoint{Kind: Chat}, `{"choices":[{"message":{"role":"assistant","content":"<think>r</think>ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}`,
			Delta{Content: true, Reasoning: true, Finished: true, Usage: metrics.Usage{Present: true, PromptTokens: 3, CompletionTokens: 4, Fields: metrics.UsagePromptField | metrics.UsageCompletionField}}, "ok", "r", ""},
		{"chat: tool calls", Endpoint{Kind: Chat}, `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
			Delta{ToolCall: true, Finished: true}, "", "", ""},
		{"responses", Endpoint{Kind: Responses}, `{"id":"resp_1","object":"response","status":"completed","output":[{"type":"reasoning","id":"rs","summary":[{"type":"summary_text","text":"sum"}]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello","annotations":[]}]}],"usage":{"input_tokens":5,"output_tokens":7,"output_tokens_details":{"reasoning_tokens":2}},"error":null}`,
			Delta{Content: true, Reasoning: true, Finished: true, Usage: metrics.Usage{Present: true, PromptTokens: 5, CompletionTokens: 7, ReasoningTokens: 2, Fields: metrics.UsagePromptField | metrics.UsageCompletionField | metrics.UsageReasoningField}}, "Hello", "sum", ""},
		{"responses: wrong shape", Endpoint{Kind: Responses}, `{"choices":[]}`, Delta{}, "", "", `response does not match endpoint type "responses": the response body has no "output" field`},
		{"messages", Endpoint{Kind: Messages}, `{"id":"msg","type":"message","role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"x"},{"type":"text","text":"Hi"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":3}}`,
			Delta{Content: true, Reasoning: true, Finished: true, Usage: metrics.Usage{Present: true, PromptTokens: 10, CompletionTokens: 3, Fields: metrics.UsagePromptField | metrics.UsageCompletionField}}, "Hi", "hm", ""},
		{"messages: error body", Endpoint{Kind: Messages}, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: required"}}`,
			Delta{Err: &metrics.Error{Type: "invalid_request_error", Message: "max_tokens: required"}}, "", "", ""},
		{"embeddings", Endpoint{Kind: Embeddings}, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,-0.2,3e-4]},{"object":"embedding","index":1,"embedding":[0.5]}],"model":"m","usage":{"prompt_tokens":8,"total_tokens":8}}`,
			Delta{Items: 2, Finished: true, Usage: metrics.Usage{Present: true, PromptTokens: 8, TotalTokens: 8, Fields: metrics.UsagePromptField | metrics.UsageTotalField}}, "", "", ""},
		{"embeddings: a chat answer is the wrong shape", Endpoint{Kind: Embeddings}, `{"choices":[]}`, Delta{}, "", "", `response does not match endpoint type "embeddings": the response body has no "data" field`},
		{"nim_embeddings", Endpoint{Kind: NIMEmbeddings}, `{"object":"list","data":[{"index":0,"embedding":[1,2],"object":"embedding"}],"model":"nv","usage":{"prompt_tokens":4,"total_tokens":4}}`,
			Delta{Items: 1, Finished: true, Usage: metrics.Usage{Present: true, PromptTokens: 4, TotalTokens: 4, Fields: metrics.UsagePromptField | metrics.UsageTotalField}}, "", "", ""},
		{"chat_embeddings", Endpoint{Kind: ChatEmbeddings}, `{"data":[{"index":0,"embedding":[1]}]}`, Delta{Items: 1, Finished: true}, "", "", ""},
		{"cohere_rankings", Endpoint{Kind: CohereRankings}, `{"id":"r","results":[{"index":1,"relevance_score":0.9},{"index":0,"relevance_score":0.1}],"meta":{"billed_units":{"search_units":1}}}`,
			Delta{Items: 2, Finished: true}, "", "", ""},
		{"hf_tei_rankings", Endpoint{Kind: HFTEIRankings}, `[{"index":0,"score":0.99},{"index":1,"score":0.01},{"index":2,"score":0.5}]`, Delta{Items: 3, Finished: true}, "", "", ""},
		{"hf_tei_rankings: TEI error", Endpoint{Kind: HFTEIRankings}, `{"error":"Input validation error","error_type":"Validation"}`,
			Delta{Err: &metrics.Error{Type: "error", Message: "Input validation error"}}, "", "", ""},
		{"hf_tei_rankings: wrong shape", Endpoint{Kind: HFTEIRankings}, `{"results":[]}`, Delta{}, "", "", `response does not match endpoint type "hf_tei_rankings": the response body has no "[results]" field`},
		{"nim_rankings", Endpoint{Kind: NIMRankings}, `{"rankings":[{"index":0,"logit":0.7},{"index":1,"logit":-3.1}],"usage":{"prompt_tokens":40,"total_tokens":40}}`,
			Delta{Items: 2, Finished: true, Usage: metrics.Usage{Present: true, PromptTokens: 40, TotalTokens: 40, Fields: metrics.UsagePromptField | metrics.UsageTotalField}}, "", "", ""},
		{"huggingface_generate", Endpoint{Kind: HuggingFaceGenerate}, `{"generated_text":"Deep learning is","details":{"finish_reason":"length","generated_tokens":4,"seed":null,"prefill":[],"tokens":[]}}`,
			Delta{Content: true, Finished: true, Usage: metrics.Usage{Present: true, CompletionTokens: 4, Fields: metrics.UsageCompletionField}}, "Deep learning is", "", ""},
		{"huggingface_generate: Inference API list", Endpoint{Kind: HuggingFaceGenerate}, `[{"generated_text":"x"}]`, Delta{Content: true, Finished: true}, "x", "", ""},
		{"raw: response field", Endpoint{Kind: Raw, ResponseField: "$.result.answer"}, `{"result":{"answer":"42","n":1}}`, Delta{Content: true}, "42", "", ""},
	}
	for _, tc := range cases {
		var out Output
		got, err := tc.ep.NewDecoder().Body([]byte(tc.body), &out)
		if tc.err != "" {
			var se *ShapeError
			if err == nil || err.Error() != tc.err || !errors.As(err, &se) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s: delta (-want +got)\n%s", tc.name, d)
		}
		if string(out.Text) != tc.text || string(out.Reasoning) != tc.rsn {
			t.Errorf("%s: text %q reasoning %q, want %q %q", tc.name, out.Text, out.Reasoning, tc.text, tc.rsn)
		}
	}
}

func TestFieldPaths(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path, doc, want string
		found           bool
	}{
		{"a.b", `{"a":{"b":"x"}}`, "x", true},
		{"a[1]", `{"a":["x","y"]}`, "y", true},
		{"a.1", `{"a":["x","y"]}`, "y", true},
		{"$.a[0][1]", `{"a":[["p","q"]]}`, "q", true},
		{"n", `{"n":12.5}`, "12.5", true},
		{"a.b", `{"a":"str"}`, "", false},
		{"a.b", `{"a":{"c":"x"}}`, "", false},
		{"a[3]", `{"a":[1]}`, "", false},
	} {
		steps, err := parseFieldPath(tc.path)
		if err != nil {
			t.Fatalf("parseFieldPath(%q): %v", tc.path, err)
		}
		s := scanner{b: []byte(tc.doc)}
		var got []byte
		found, err := s.path(steps, &got)
		if err != nil || s.end() != nil || found != tc.found || string(got) != tc.want {
			t.Errorf("path %q in %s = %q, %v, %v; want %q, %v", tc.path, tc.doc, got, found, err, tc.want, tc.found)
		}
	}
	for _, bad := range []string{"", "$", "a..b", "a[x]", "a[1", "a[1]b"} {
		if _, err := parseFieldPath(bad); err == nil {
			t.Errorf("parseFieldPath(%q) accepted a bad path", bad)
		}
	}
}

func TestDecodeErrorsLeaveOutputUnchanged(t *testing.T) {
	t.Parallel()
	for _, k := range Kinds() {
		e := &Endpoint{Kind: k}
		if k == Template {
			e.ResponseField = "a"
		}
		out := Output{Text: []byte("kept"), Reasoning: []byte("r")}
		if _, err := e.NewDecoder().Event(nil, []byte(`{"delta":"x","text":"y","token":{"text":"z"}, broken`), &out); err == nil {
			t.Errorf("%s: accepted malformed JSON", k)
		}
		if string(out.Text) != "kept" || string(out.Reasoning) != "r" {
			t.Errorf("%s: a rejected event changed the output to %q %q", k, out.Text, out.Reasoning)
		}
	}
}

// benchEvents decodes one stream's events per iteration through
// NewDecoder's full stack (shape check, reasoning split), as the generator
// does; allocations per op are per response, not per event.
func benchEvents(b *testing.B, e *Endpoint, events [][]byte) {
	out := Output{Text: make([]byte, 0, 1<<16), Reasoning: make([]byte, 0, 1<<10)}
	b.ReportAllocs()
	for b.Loop() {
		out.Text, out.Reasoning = out.Text[:0], out.Reasoning[:0]
		d := e.NewDecoder()
		for _, ev := range events {
			if _, err := d.Event(nil, ev, &out); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
}

func repeat(ev string, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(ev)
	}
	return out
}

func BenchmarkDecodeChat(b *testing.B) {
	benchEvents(b, &Endpoint{Kind: Chat}, repeat(`{"id":"chatcmpl-8e1b","object":"chat.completion.chunk","created":1733000000,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":" river"},"logprobs":null,"finish_reason":null}]}`, 256))
}

func BenchmarkDecodeResponses(b *testing.B) {
	benchEvents(b, &Endpoint{Kind: Responses}, repeat(`{"type":"response.output_text.delta","sequence_number":12,"item_id":"msg_67c9","output_index":0,"content_index":0,"delta":" river","logprobs":[]}`, 256))
}

func BenchmarkDecodeMessages(b *testing.B) {
	benchEvents(b, &Endpoint{Kind: Messages}, repeat(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" river"}}`, 256))
}

func BenchmarkDecodeTGI(b *testing.B) {
	benchEvents(b, &Endpoint{Kind: HuggingFaceGenerate}, repeat(`{"index":12,"token":{"id":8511,"text":" river","logprob":-0.31,"special":false},"generated_text":null,"details":null}`, 256))
}

func BenchmarkDecodeThink(b *testing.B) {
	ev := repeat(`{"choices":[{"index":0,"delta":{"content":" plan"},"finish_reason":null}]}`, 256)
	ev[0] = []byte(`{"choices":[{"index":0,"delta":{"content":"<think>"},"finish_reason":null}]}`)
	benchEvents(b, &Endpoint{Kind: Chat}, ev)
}
