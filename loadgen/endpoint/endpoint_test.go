package endpoint

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surgebench/surge/datasets"
)

func TestKindsAndPaths(t *testing.T) {
	t.Parallel()
	want := map[Kind][2]string{ // AIPerf's default paths; streamed path second
		Chat: {"/v1/chat/completions", "/v1/chat/completions"}, Completions: {"/v1/completions", "/v1/completions"},
		Responses: {"/v1/responses", "/v1/responses"}, Messages: {"/v1/messages", "/v1/messages"},
		Embeddings: {"/v1/embeddings", "/v1/embeddings"}, ChatEmbeddings: {"/v1/embeddings", "/v1/embeddings"},
		NIMEmbeddings: {"/v1/embeddings", "/v1/embeddings"}, CohereRankings: {"/v2/rerank", "/v2/rerank"},
		HFTEIRankings: {"/rerank", "/rerank"}, NIMRankings: {"/v1/ranking", "/v1/ranking"},
		HuggingFaceGenerate: {"/generate", "/generate_stream"}, SGLangGenerate: {"/generate", "/generate"}, OllamaChat: {"/api/chat", "/api/chat"},
		Raw:      {"/v1/chat/completions", "/v1/chat/completions"},
		Template: {"", ""},
		// The cloud APIs name the model (here "{model}", escaped) in the path.
		BedrockConverse: {"/model/m%3A1/converse", "/model/m%3A1/converse-stream"},
		BedrockInvoke:   {"/model/m%3A1/invoke", "/model/m%3A1/invoke-with-response-stream"},
		Gemini:          {"/v1beta/models/m%3A1:generateContent", "/v1beta/models/m%3A1:streamGenerateContent?alt=sse"},
	}
	if len(Kinds()) != len(want) {
		t.Errorf("Kinds() = %v, want the %d types", Kinds(), len(want))
	}
	for k, paths := range want {
		for i, streaming := range []bool{false, true} {
			e := Endpoint{Kind: k, Streaming: streaming, Model: "m:1"}
			if got := e.Path(); got != paths[i] {
				t.Errorf("%s streaming=%v: path %q, want %q", k, streaming, got, paths[i])
			}
		}
		e := Endpoint{Kind: k, CustomPath: "custom/x"}
		if e.Path() != "/custom/x" {
			t.Errorf("%s: custom path %q", k, e.Path())
		}
	}
	if _, err := ParseKind("rankings"); err == nil || !strings.Contains(err.Error(), "cohere_rankings") {
		t.Errorf("ParseKind(rankings) error %v does not list the supported types", err)
	}
	if k, err := ParseKind(" Messages "); err != nil || k != Messages {
		t.Errorf("ParseKind(Messages) = %q, %v", k, err)
	}
	if err := (&Endpoint{Kind: Template}).Validate(); err == nil {
		t.Error("template without a template validated")
	}
	tpl, _ := ParseTemplate("t", `{}`)
	if err := (&Endpoint{Kind: Template, Template: tpl}).Validate(); err == nil || !strings.Contains(err.Error(), "no default path") {
		t.Errorf("template without a path: %v", err)
	}
	if err := (&Endpoint{Kind: Chat, ResponseField: "a[x]"}).Validate(); err == nil {
		t.Error("a bad response field validated")
	}
}

func TestHeaders(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	m := &Endpoint{Kind: Messages}
	m.SetHeaders(h)
	if h.Get("anthropic-version") != "2023-06-01" {
		t.Errorf("messages headers %v", h)
	}
	if n, v := m.KeyHeader("sk-ant"); n != "x-api-key" || v != "sk-ant" {
		t.Errorf("messages key header %q: %q", n, v)
	}
	if n, v := (&Endpoint{Kind: Chat}).KeyHeader("sk"); n != "Authorization" || v != "Bearer sk" {
		t.Errorf("chat key header %q: %q", n, v)
	}
	h = http.Header{"Anthropic-Version": {"2024-01-01"}}
	m.SetHeaders(h)
	if h.Get("anthropic-version") != "2024-01-01" {
		t.Error("the type's header replaced the user's")
	}
}

// body builds kind's body for a two-turn conversation and decodes it.
func body(t *testing.T, e *Endpoint, turn datasets.Turn) map[string]any {
	t.Helper()
	b, err := e.Body("be brief", []Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}}, &turn)
	if err != nil {
		t.Fatalf("%s: %v", e.Kind, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: body %s: %v", e.Kind, b, err)
	}
	return m
}

func TestBodies(t *testing.T) {
	t.Parallel()
	turn := datasets.Turn{Text: "why?", MaxTokens: 32, Extra: map[string]any{"seed": 1.0}}
	rank := datasets.Turn{Text: "q", Passages: []string{"p1", "p2"}}
	msgs := []any{
		map[string]any{"role": "user", "content": "hi"},
		map[string]any{"role": "assistant", "content": "hello"},
		map[string]any{"role": "user", "content": "why?"},
	}
	withSystem := append([]any{map[string]any{"role": "system", "content": "be brief"}}, msgs...)
	extra := map[string]any{"temperature": 0.5}
	cases := []struct {
		kind      Kind
		streaming bool
		turn      datasets.Turn
		want      map[string]any
	}{
		{Chat, true, turn, map[string]any{"model": "m", "messages": withSystem, "max_completion_tokens": 32.0, "stream": true,
			"stream_options": map[string]any{"include_usage": true}, "seed": 1.0, "temperature": 0.5}},
		{Completions, false, turn, map[string]any{"model": "m", "prompt": "be brief\n\nhi\n\nhello\n\nwhy?", "max_tokens": 32.0, "seed": 1.0, "temperature": 0.5}},
		{Responses, true, turn, map[string]any{"model": "m", "input": msgs, "instructions": "be brief", "max_output_tokens": 32.0, "stream": true, "seed": 1.0, "temperature": 0.5}},
		{Messages, true, turn, map[string]any{"model": "m", "messages": msgs, "system": "be brief", "max_tokens": 32.0, "stream": true, "seed": 1.0, "temperature": 0.5}},
		{Messages, false, datasets.Turn{Text: "why?"}, map[string]any{"model": "m", "messages": msgs, "system": "be brief", "max_tokens": 4096.0, "temperature": 0.5}},
		{Embeddings, true, datasets.Turn{Text: "why?"}, map[string]any{"model": "m", "input": []any{"why?"}, "encoding_format": "float", "temperature": 0.5}},
		{ChatEmbeddings, false, datasets.Turn{Text: "why?"}, map[string]any{"model": "m", "messages": withSystem, "encoding_format": "float", "temperature": 0.5}},
		{NIMEmbeddings, false, datasets.Turn{Text: "why?"}, map[string]any{"model": "m", "input": []any{"why?"}, "input_type": "query", "encoding_format": "float", "temperature": 0.5}},
		{CohereRankings, false, rank, map[string]any{"model": "m", "query": "q", "documents": []any{"p1", "p2"}, "temperature": 0.5}},
		{HFTEIRankings, false, rank, map[string]any{"query": "q", "texts": []any{"p1", "p2"}, "temperature": 0.5}},
		{NIMRankings, false, rank, map[string]any{"model": "m", "query": map[string]any{"text": "q"},
			"passages": []any{map[string]any{"text": "p1"}, map[string]any{"text": "p2"}}, "truncate": "END", "temperature": 0.5}},
		{HuggingFaceGenerate, true, turn, map[string]any{"inputs": "be brief\n\nhi\n\nhello\n\nwhy?",
			"parameters": map[string]any{"max_new_tokens": 32.0, "details": true, "seed": 1.0, "temperature": 0.5}}},
		{Raw, false, datasets.Turn{Text: `{"anything": [1]}`}, map[string]any{"anything": []any{1.0}}},
	}
	for _, tc := range cases {
		e := &Endpoint{Kind: tc.kind, Model: "m", Streaming: tc.streaming, Extra: extra}
		if d := cmp.Diff(tc.want, body(t, e, tc.turn)); d != "" {
			t.Errorf("%s streaming=%v body (-want +got)\n%s", tc.kind, tc.streaming, d)
		}
	}
	// A default cap replaces messages' 4096; a turn's own cap still wins.
	e := &Endpoint{Kind: Messages, Model: "m", DefaultMaxTokens: 128}
	for _, tc := range []struct {
		turn datasets.Turn
		want float64
	}{{datasets.Turn{Text: "why?"}, 128}, {datasets.Turn{Text: "why?", MaxTokens: 7}, 7}} {
		if got := body(t, e, tc.turn)["max_tokens"]; got != tc.want {
			t.Errorf("messages with DefaultMaxTokens 128, turn cap %d: max_tokens %v, want %v", tc.turn.MaxTokens, got, tc.want)
		}
	}
}

// TestDatasetMessagesAndPayloads: a turn's role, its dataset messages
// (whole conversations, or deltas after the history) with tools, and a
// verbatim payload, as AIPerf's Mooncake rows give them.
func TestDatasetMessagesAndPayloads(t *testing.T) {
	t.Parallel()
	sys := map[string]any{"role": "system", "content": "be brief"}
	hist := []any{map[string]any{"role": "user", "content": "hi"}, map[string]any{"role": "assistant", "content": "hello"}}
	raw := []map[string]any{{"role": "user", "content": []any{map[string]any{"type": "text", "text": "look"}}},
		{"role": "assistant", "tool_calls": []any{map[string]any{"id": "c1"}}}, {"role": "tool", "tool_call_id": "c1", "content": "42"}}
	rawAny := []any{raw[0], raw[1], raw[2]}
	tools := []map[string]any{{"type": "function", "function": map[string]any{"name": "f"}}}
	chat := &Endpoint{Kind: Chat, Model: "m"}
	cases := []struct {
		name string
		e    *Endpoint
		turn datasets.Turn
		want map[string]any
	}{
		{"role", chat, datasets.Turn{Text: "noted", Role: "assistant"},
			map[string]any{"model": "m", "messages": append([]any{sys}, append(hist, map[string]any{"role": "assistant", "content": "noted"})...)}},
		{"history messages replace the conversation", chat, datasets.Turn{Messages: raw, Tools: tools},
			map[string]any{"model": "m", "messages": append([]any{sys}, rawAny...), "tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "f"}}}}},
		{"delta messages follow the history", chat, datasets.Turn{Messages: raw, MessagesDelta: true},
			map[string]any{"model": "m", "messages": append(append([]any{sys}, hist...), rawAny...)}},
		{"messages on a text API", &Endpoint{Kind: Completions, Model: "m"}, datasets.Turn{Messages: raw, MaxTokens: 3},
			map[string]any{"model": "m", "prompt": "be brief\n\nlook\n42", "max_tokens": 3.0}},
		{"payload verbatim", &Endpoint{Kind: Chat, Model: "m", Streaming: true, Extra: map[string]any{"temperature": 0.5}},
			datasets.Turn{Payload: map[string]any{"prompt": "Hello", "max_tokens": 50.0}, MaxTokens: 9},
			map[string]any{"prompt": "Hello", "max_tokens": 50.0}},
	}
	for _, tc := range cases {
		if d := cmp.Diff(tc.want, body(t, tc.e, tc.turn)); d != "" {
			t.Errorf("%s (-want +got)\n%s", tc.name, d)
		}
	}
	// The history a session keeps after a dataset-messages turn holds the
	// messages as given.
	got := TurnMessages(&datasets.Turn{Messages: raw})
	if len(got) != 3 || got[0].Content != "look" || got[1].Role != "assistant" || got[2].Raw["tool_call_id"] != "c1" {
		t.Errorf("TurnMessages = %+v", got)
	}
	if got := TurnMessages(&datasets.Turn{Text: "x"}); len(got) != 1 || got[0].Role != "user" {
		t.Errorf("TurnMessages of a text turn = %+v", got)
	}
}

func TestTemplateBody(t *testing.T) {
	t.Parallel()
	tpl, err := ParseTemplate("body", `{"q": {{json .Text}}, "m": {{json .Model}}, "n": {{.MaxTokens}}, "hist": {{len .Messages}}, "t": {{json .Extra.temperature}}}`)
	if err != nil {
		t.Fatal(err)
	}
	e := &Endpoint{Kind: Template, Model: "m", Template: tpl, Extra: map[string]any{"temperature": 0.5}}
	got := body(t, e, datasets.Turn{Text: "say \"hi\"\n", MaxTokens: 8})
	want := map[string]any{"q": "say \"hi\"\n", "m": "m", "n": 8.0, "hist": 4.0, "t": 0.5}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("template body (-want +got)\n%s", d)
	}
	bad, _ := ParseTemplate("bad", `{"q": {{.Text}}}`)
	if _, err := (&Endpoint{Kind: Template, Template: bad}).Body("", nil, &datasets.Turn{Text: "x"}); err == nil || !strings.Contains(err.Error(), "invalid JSON") {
		t.Errorf("unquoted template: %v", err)
	}
	if _, err := ParseTemplate("x", `{{.Text`); err == nil {
		t.Error("a broken template parsed")
	}
}

func TestBodyErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind Kind
		turn datasets.Turn
		want string
	}{
		{Raw, datasets.Turn{Text: "not json"}, "not JSON"},
		{CohereRankings, datasets.Turn{Text: "q"}, "needs passages"},
		{HFTEIRankings, datasets.Turn{Text: "q"}, "needs passages"},
		{NIMRankings, datasets.Turn{Text: "q"}, "needs passages"},
	} {
		_, err := (&Endpoint{Kind: tc.kind}).Body("", nil, &tc.turn)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.kind, err, tc.want)
		}
	}
}

// BenchmarkChatBody is a streaming chat request's body as the generator
// builds one per request: a 128-token synthetic prompt, one user message.
func BenchmarkChatBody(b *testing.B) {
	words := strings.Fields(strings.Repeat("the quick brown fox jumps over the lazy dog, said Alice. ", 15))
	turn := datasets.Turn{Text: strings.Join(words, " "), MaxTokens: 64}
	e := &Endpoint{Kind: Chat, Model: "Qwen/Qwen3-0.6B", Streaming: true}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Body("", nil, &turn); err != nil {
			b.Fatal(err)
		}
	}
}
