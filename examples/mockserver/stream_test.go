package mockserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// word is token i of request n (the first request is 1) under seed.
func word(seed, n uint64, i int) string {
	return string(appendWords(nil, splitmix64(seed+n), i, i+1))
}

func TestChatStreamShape(t *testing.T) {
	t.Parallel()
	_, ts := newTestServer(t, Config{ReasoningTokens: 2, Seed: 7, Model: "served"})
	_, evs := streamEvents(t, ts.URL+"/v1/chat/completions",
		`{"model":"m1","messages":[{"role":"user","content":"hello there mock"}],"stream":true,"max_tokens":4,"ignore_eos":true,"stream_options":{"include_usage":true}}`)

	choice := func(delta, finish string) string {
		return `{"id":"chatcmpl-mock-1","object":"chat.completion.chunk","created":0,"model":"m1","choices":[{"index":0,"delta":` +
			delta + `,"logprobs":null,"finish_reason":` + finish + `}]}`
	}
	w := func(i int) string { return word(7, 1, i) }
	want := []string{
		choice(`{"role":"assistant"}`, "null"),
		choice(`{"reasoning_content":"`+w(0)+`"}`, "null"),
		choice(`{"reasoning_content":"`+w(1)+`"}`, "null"),
		choice(`{"content":"`+w(2)+`"}`, "null"),
		choice(`{"content":"`+w(3)+`"}`, "null"),
		choice(`{}`, `"length"`),
		`{"id":"chatcmpl-mock-1","object":"chat.completion.chunk","created":0,"model":"m1","choices":[],` +
			`"usage":{"prompt_tokens":3,"total_tokens":7,"completion_tokens":4,"completion_tokens_details":{"reasoning_tokens":2}}}`,
	}
	if len(evs) != len(want)+1 || evs[len(evs)-1].data != "[DONE]" {
		t.Fatalf("got %d events ending %q, want %d then [DONE]", len(evs), evs[len(evs)-1].data, len(want))
	}
	for i, wantEv := range want {
		got := decode(t, evs[i].data)
		if _, ok := got["created"].(json.Number); !ok {
			t.Errorf("event %d: created = %v, want a number", i, got["created"])
		}
		got["created"] = json.Number("0")
		if diff := cmp.Diff(decode(t, wantEv), got); diff != "" {
			t.Errorf("event %d (-want +got):\n%s", i, diff)
		}
	}
}

func TestCompletionsStreamShape(t *testing.T) {
	t.Parallel()
	// Reasoning is a chat feature: completions get plain text.
	_, ts := newTestServer(t, Config{ReasoningTokens: 5, Seed: 3})
	_, evs := streamEvents(t, ts.URL+"/v1/completions",
		`{"model":"m","prompt":"one two","stream":true,"max_tokens":2,"stream_options":{"include_usage":true}}`)
	choice := func(text, finish string) string {
		return `{"id":"cmpl-mock-1","object":"text_completion","created":0,"model":"m","choices":[{"index":0,"text":"` +
			text + `","logprobs":null,"finish_reason":` + finish + `}]}`
	}
	want := []string{
		choice(word(3, 1, 0), "null"),
		choice(word(3, 1, 1), "null"),
		choice("", `"length"`),
		`{"id":"cmpl-mock-1","object":"text_completion","created":0,"model":"m","choices":[],` +
			`"usage":{"prompt_tokens":2,"total_tokens":4,"completion_tokens":2,"completion_tokens_details":{"reasoning_tokens":0}}}`,
		"[DONE]",
	}
	if len(evs) != len(want) {
		t.Fatalf("got %d events, want %d: %v", len(evs), len(want), evs)
	}
	for i, wantEv := range want[:len(want)-1] {
		got := decode(t, evs[i].data)
		got["created"] = json.Number("0")
		if diff := cmp.Diff(decode(t, wantEv), got); diff != "" {
			t.Errorf("event %d (-want +got):\n%s", i, diff)
		}
	}
}

func TestStreamTokenCounts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		cfg       Config
		api, body string
		tokens    int // output tokens expected
		reasoning int
		events    int // text events expected
		finish    string
		usage     bool
	}{
		{"max_tokens", Config{}, "chat", `"max_tokens":7`, 7, 0, 7, "length", false},
		{"max_completion_tokens wins", Config{}, "chat", `"max_tokens":3,"max_completion_tokens":5`, 5, 0, 5, "length", false},
		{"default length", Config{DefaultOutputTokens: 9}, "chat", ``, 9, 0, 9, "stop", false},
		{"one token", Config{}, "chat", `"max_tokens":1`, 1, 0, 1, "length", false},
		{"usage off", Config{}, "chat", `"max_tokens":2,"stream_options":{"include_usage":false}`, 2, 0, 2, "length", false},
		{"usage on", Config{}, "chat", `"max_tokens":2,"stream_options":{"include_usage":true}`, 2, 0, 2, "length", true},
		{"chunks of 4", Config{TokensPerChunk: 4}, "chat", `"max_tokens":10`, 10, 0, 3, "length", false},
		{"chunks split at reasoning", Config{TokensPerChunk: 4, ReasoningTokens: 5}, "chat", `"max_tokens":10`, 10, 5, 4, "length", false},
		{"all reasoning", Config{ReasoningTokens: 50}, "chat", `"max_tokens":6`, 6, 6, 6, "length", false},
		{"completions", Config{TokensPerChunk: 3}, "completions", `"max_tokens":300`, 300, 0, 100, "length", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, ts := newTestServer(t, tt.cfg)
			path, input := "/v1/chat/completions", `"messages":[{"role":"user","content":[{"type":"text","text":"a b c"}]}]`
			if tt.api == "completions" {
				path, input = "/v1/completions", `"prompt":"a b c"`
			}
			body := `{"stream":true,` + input
			if tt.body != "" {
				body += "," + tt.body
			}
			if tt.usage && !strings.Contains(body, "include_usage") {
				body += `,"stream_options":{"include_usage":true}`
			}
			_, evs := streamEvents(t, ts.URL+path, body+"}")
			var content, reasoning strings.Builder
			events, finishes, usages := 0, 0, 0
			for _, c := range texts(t, evs) {
				if c.Content != "" || c.Reasoning != "" {
					events++
				}
				content.WriteString(c.Content)
				reasoning.WriteString(c.Reasoning)
				if c.Finish != "" {
					finishes++
					if c.Finish != tt.finish {
						t.Errorf("finish_reason %q, want %q", c.Finish, tt.finish)
					}
				}
				if c.Usage {
					usages++
				}
			}
			gotR := len(strings.Fields(reasoning.String()))
			gotT := len(strings.Fields(content.String())) + gotR
			if gotT != tt.tokens || gotR != tt.reasoning || events != tt.events {
				t.Errorf("got %d tokens (%d reasoning) in %d events, want %d (%d) in %d",
					gotT, gotR, events, tt.tokens, tt.reasoning, tt.events)
			}
			if want := 1; finishes != want {
				t.Errorf("%d chunks carry finish_reason, want %d", finishes, want)
			}
			if want := map[bool]int{true: 1, false: 0}[tt.usage]; usages != want {
				t.Errorf("%d usage chunks, want %d", usages, want)
			}
			if last := evs[len(evs)-1].data; last != "[DONE]" {
				t.Errorf("last event %q, want [DONE]", last)
			}
		})
	}
}

func TestNonStreaming(t *testing.T) {
	t.Parallel()
	_, ts := newTestServer(t, Config{ReasoningTokens: 2, Seed: 1})
	tests := []struct {
		name, path, body, want string
	}{
		{
			"chat", "/v1/chat/completions",
			`{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],"max_tokens":3}`,
			`{"id":"chatcmpl-mock-1","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,` +
				`"message":{"role":"assistant","content":"%[3]s","reasoning_content":"%[1]s%[2]s"},"logprobs":null,"finish_reason":"length"}],` +
				`"usage":{"prompt_tokens":3,"total_tokens":6,"completion_tokens":3,"completion_tokens_details":{"reasoning_tokens":2}}}`,
		},
		{
			"completions", "/v1/completions",
			`{"model":"m","prompt":"a b c d","max_tokens":3}`,
			`{"id":"cmpl-mock-2","object":"text_completion","created":0,"model":"m","choices":[{"index":0,` +
				`"text":"%[1]s%[2]s%[3]s","logprobs":null,"finish_reason":"length"}],` +
				`"usage":{"prompt_tokens":4,"total_tokens":7,"completion_tokens":3,"completion_tokens_details":{"reasoning_tokens":0}}}`,
		},
	}
	for i, tt := range tests {
		// Sequential: the request number is part of the expected id.
		resp := post(t, t.Context(), ts.URL+tt.path, tt.body)
		var got map[string]any
		d := json.NewDecoder(resp.Body)
		d.UseNumber()
		err := d.Decode(&got)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: status %d, decode error %v", tt.name, resp.StatusCode, err)
		}
		got["created"] = json.Number("0")
		n := uint64(i + 1)
		want := fmt.Sprintf(tt.want, word(1, n, 0), word(1, n, 1), word(1, n, 2))
		if diff := cmp.Diff(decode(t, want), got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestContinuousUsage: with stream_options.continuous_usage_stats every
// text chunk carries the running usage (vLLM's shape), so a client sees a
// chunk of several tokens as such.
func TestContinuousUsage(t *testing.T) {
	t.Parallel()
	_, ts := newTestServer(t, Config{TokensPerChunk: 3, Seed: 7})
	_, evs := streamEvents(t, ts.URL+"/v1/chat/completions",
		`{"model":"m","messages":[{"role":"user","content":"hello there mock"}],"stream":true,"max_tokens":7,"stream_options":{"include_usage":true,"continuous_usage_stats":true}}`)
	var running []float64
	for _, ev := range evs {
		if ev.data == "[DONE]" {
			continue
		}
		got := decode(t, ev.data)
		choices, _ := got["choices"].([]any)
		if len(choices) == 0 {
			continue // the final usage-only chunk
		}
		delta, _ := choices[0].(map[string]any)["delta"].(map[string]any)
		if _, text := delta["content"]; !text {
			continue
		}
		u, ok := got["usage"].(map[string]any)
		if !ok {
			t.Fatalf("text chunk without usage: %s", ev.data)
		}
		n, _ := u["completion_tokens"].(json.Number).Float64()
		running = append(running, n)
	}
	if d := cmp.Diff([]float64{3, 6, 7}, running); d != "" {
		t.Errorf("running completion_tokens per chunk (-want +got):\n%s", d)
	}
}

// TestContextCut: a prompt longer than ContextTokens is cut as llama.cpp
// cuts it (1,100 in 1,024: one block of 512 erased, 588 kept), and usage
// says so; a prompt that fits is kept whole.
func TestContextCut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ n, ctx, want int }{{1100, 1024, 588}, {1000, 1024, 1000}, {2100, 1024, 564}, {5, 0, 5}} {
		if got := cutPrompt(tc.n, tc.ctx); got != tc.want {
			t.Errorf("cutPrompt(%d, %d) = %d, want %d", tc.n, tc.ctx, got, tc.want)
		}
	}
	_, ts := newTestServer(t, Config{ContextTokens: 8})
	_, evs := streamEvents(t, ts.URL+"/v1/chat/completions",
		`{"model":"m","messages":[{"role":"user","content":"one two three four five six seven eight nine ten"}],"stream":true,"max_tokens":2,"stream_options":{"include_usage":true}}`)
	last := decode(t, evs[len(evs)-2].data)
	u, _ := last["usage"].(map[string]any)
	if n, _ := u["prompt_tokens"].(json.Number).Int64(); n != 6 {
		t.Errorf("prompt_tokens %v for 10 words in a context of 8, want 6", u["prompt_tokens"])
	}
}
