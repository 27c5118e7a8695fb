package mockserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

const weatherTool = `[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]`

// chatCall streams a chat request and returns the call its answer made:
// id, name, the arguments' pieces put together and the finish reason.
func chatCall(t *testing.T, url, body string) (id, name, args, finish string) {
	t.Helper()
	_, evs := streamEvents(t, url+"/v1/chat/completions", body)
	for _, e := range evs {
		if e.data == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						ID       string `json:"id"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(e.data), &c); err != nil {
			t.Fatalf("event %q: %v", e.data, err)
		}
		for _, ch := range c.Choices {
			for _, tc := range ch.Delta.ToolCalls {
				id += tc.ID
				name += tc.Function.Name
				args += tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	return id, name, args, finish
}

// TestToolCallStream: a request that offers tools is answered with a call
// of one of them, streamed as OpenAI streams it (id and name first, the
// arguments in pieces); the arguments are JSON unless cut off on purpose.
func TestToolCallStream(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		bad    float64
		valid  bool
		tokens int
	}{{"whole", 0, true, 6}, {"cut off", 1, false, 6}, {"chunks of 4", 0, true, 9}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, ts := newTestServer(t, Config{ToolCallRate: 1, BadToolArgsRate: tc.bad, TokensPerChunk: 4})
			body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"max_tokens":` + itoa(tc.tokens) + `,"messages":[{"role":"user","content":"weather?"}],"tools":` + weatherTool + `}`
			id, name, args, finish := chatCall(t, ts.URL, body)
			if id != "call_mock1" || name != "get_weather" || finish != "tool_calls" {
				t.Fatalf("call %q %q finish %q", id, name, finish)
			}
			if json.Valid([]byte(args)) != tc.valid || !strings.HasPrefix(args, `{"query":"`) {
				t.Fatalf("arguments %q: valid %v, want %v", args, json.Valid([]byte(args)), tc.valid)
			}
			if st := s.Stats(); st.ToolCalls != 1 || st.Completed != 1 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
	// Without tools, or at rate 0, the answer is text.
	_, ts := newTestServer(t, Config{ToolCallRate: 0.5})
	if id, _, _, finish := chatCall(t, ts.URL, `{"model":"m","stream":true,"max_tokens":3,"messages":[{"role":"user","content":"hi"}]}`); id != "" || finish != "length" {
		t.Fatalf("a request without tools got a call %q (%s)", id, finish)
	}
	// A cap too small for a call (its syntax and a word) is kept: the
	// answer is text of at most the cap, as the usage counts it.
	_, ts = newTestServer(t, Config{ToolCallRate: 1})
	for _, cap := range []int{1, toolSyntax} {
		body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"max_tokens":` + itoa(cap) + `,"messages":[{"role":"user","content":"weather?"}],"tools":` + weatherTool + `}`
		if id, _, _, finish := chatCall(t, ts.URL, body); id != "" || finish != "length" {
			t.Errorf("max_tokens %d: a call %q (%s), want text within the cap", cap, id, finish)
		}
		_, evs := streamEvents(t, ts.URL+"/v1/chat/completions", body)
		content, usage := 0, -1
		for _, e := range evs {
			var c struct {
				Choices []struct {
					Delta struct {
						Content string `json:"content"`
					} `json:"delta"`
				} `json:"choices"`
				Usage *struct {
					Completion int `json:"completion_tokens"`
				} `json:"usage"`
			}
			if json.Unmarshal([]byte(e.data), &c) != nil {
				continue
			}
			for _, ch := range c.Choices {
				if ch.Delta.Content != "" {
					content++
				}
			}
			if c.Usage != nil {
				usage = c.Usage.Completion
			}
		}
		if content > cap || usage > cap || usage < 0 {
			t.Errorf("max_tokens %d: %d content events, usage %d: past the cap", cap, content, usage)
		}
	}
}

// TestToolCallRate: the fraction of calls follows the configured rate,
// and which requests get one depends on the seed and the order alone.
func TestToolCallRate(t *testing.T) {
	t.Parallel()
	calls := func(seed uint64) []bool {
		_, ts := newTestServer(t, Config{ToolCallRate: 0.3, Seed: seed})
		var out []bool
		for range 200 {
			id, _, _, _ := chatCall(t, ts.URL, `{"model":"m","stream":true,"max_tokens":8,"messages":[{"role":"user","content":"x"}],"tools":`+weatherTool+`}`)
			out = append(out, id != "")
		}
		return out
	}
	a, b := calls(7), calls(7)
	n := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("request %d: a call in one run and not the other with the same seed", i)
		}
		if a[i] {
			n++
		}
	}
	if n < 40 || n > 80 {
		t.Fatalf("%d calls in 200 answers at rate 0.3", n)
	}
}

// TestToolMessagesChecked: tool calls and results sent back are checked
// in each API's shape; a result that answers no call is refused with 400
// and counted, a good one counted as a result.
func TestToolMessagesChecked(t *testing.T) {
	t.Parallel()
	s, ts := newTestServer(t, Config{})
	for _, tc := range []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"chat: answered", "/v1/chat/completions", `{"model":"m","max_tokens":2,"tools":` + weatherTool + `,"messages":[{"role":"user","content":"w?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"rain"}]}`, 200, ""},
		{"chat: unknown id", "/v1/chat/completions", `{"model":"m","max_tokens":2,"messages":[{"role":"user","content":"w?"},{"role":"tool","tool_call_id":"nope","content":"rain"}]}`, 400, `tool_call_id \"nope\" answers no tool call`},
		{"chat: call without arguments", "/v1/chat/completions", `{"model":"m","max_tokens":2,"messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f"}}]}]}`, 400, "tool_calls[0]"},
		{"chat: bad tool definition", "/v1/chat/completions", `{"model":"m","max_tokens":2,"tools":[{"type":"function"}],"messages":[{"role":"user","content":"x"}]}`, 400, "tools[0]"},
		{"responses: answered", "/v1/responses", `{"model":"m","max_output_tokens":2,"tools":[{"type":"function","name":"get_weather"}],"input":[{"role":"user","content":"w?"},{"type":"function_call","call_id":"c1","name":"get_weather","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"rain"}]}`, 200, ""},
		{"responses: unknown id", "/v1/responses", `{"model":"m","max_output_tokens":2,"input":[{"role":"user","content":"w?"},{"type":"function_call_output","call_id":"c9","output":"rain"}]}`, 400, "no tool call found"},
		{"messages: answered", "/v1/messages", `{"model":"m","max_tokens":2,"tools":[{"name":"get_weather","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"w?"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"get_weather","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"rain"}]}]}`, 200, ""},
		{"messages: unknown id", "/v1/messages", `{"model":"m","max_tokens":2,"tools":[{"name":"get_weather","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t9","content":"rain"}]}]}`, 400, "unexpected tool_use_id"},
		{"chat: a call left unanswered", "/v1/chat/completions", `{"model":"m","max_tokens":2,"tools":` + weatherTool + `,"messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},{"role":"user","content":"and?"}]}`, 400, "must be answered"},
		{"messages: tools not declared", "/v1/messages", `{"model":"m","max_tokens":2,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]}]}`, 400, "must define tools"},
	} {
		resp := post(t, context.Background(), ts.URL+tc.path, tc.body)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s: %d %s, want %d with %q", tc.name, resp.StatusCode, b, tc.status, tc.want)
		}
	}
	if st := s.Stats(); st.ToolResults != 3 || st.ToolRejected != 7 {
		t.Errorf("tool results %d, rejected %d; want 3 and 7", st.ToolResults, st.ToolRejected)
	}
}

// TestOtherAPIToolCalls: the Responses and Messages APIs stream a call in
// their own events, and answer one in a body.
func TestOtherAPIToolCalls(t *testing.T) {
	t.Parallel()
	_, ts := newTestServer(t, Config{ToolCallRate: 1})
	for _, tc := range []struct {
		path, body string
		want       []string
	}{
		{"/v1/responses", `{"model":"m","stream":true,"max_output_tokens":8,"tools":[{"type":"function","name":"lookup"}],"input":"x"}`,
			[]string{`"type":"response.output_item.added"`, `"type":"function_call"`, `"call_id":"call_mock1"`, `"name":"lookup"`, `response.function_call_arguments.delta`, `response.completed`}},
		{"/v1/messages", `{"model":"m","stream":true,"max_tokens":8,"tools":[{"name":"lookup","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"x"}]}`,
			[]string{`"type":"tool_use","id":"call_mock2","name":"lookup"`, `input_json_delta`, `"stop_reason":"tool_use"`, `message_stop`}},
		{"/v1/messages", `{"model":"m","max_tokens":8,"tools":[{"name":"lookup","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"x"}]}`,
			[]string{`"type":"tool_use","id":"call_mock3","name":"lookup","input":{"query":`, `"stop_reason":"tool_use"`}},
		{"/v1/chat/completions", `{"model":"m","max_tokens":8,"tools":` + weatherTool + `,"messages":[{"role":"user","content":"x"}]}`,
			[]string{`"tool_calls":[{"id":"call_mock4","type":"function","function":{"name":"get_weather","arguments":"{\"query\":`, `"finish_reason":"tool_calls"`}},
	} {
		resp := post(t, context.Background(), ts.URL+tc.path, tc.body)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, w := range tc.want {
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), w) {
				t.Errorf("%s: %d, no %q in\n%s", tc.path, resp.StatusCode, w, b)
			}
		}
	}
}

// TestPrefixCacheAndWindow: a request that repeats the leading messages
// of an earlier one reports their tokens as cached; one past the window
// is refused as vLLM refuses it.
func TestPrefixCacheAndWindow(t *testing.T) {
	t.Parallel()
	s, ts := newTestServer(t, Config{PrefixCache: true, MaxModelLen: 64})
	cached := func(body string) int {
		resp := post(t, context.Background(), ts.URL+"/v1/chat/completions", body)
		defer resp.Body.Close()
		var r struct {
			Usage struct {
				Details struct {
					Cached int `json:"cached_tokens"`
				} `json:"prompt_tokens_details"`
			} `json:"usage"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%d: %v", resp.StatusCode, err)
		}
		return r.Usage.Details.Cached
	}
	first := `{"role":"system","content":"be brief and kind"},{"role":"user","content":"one two three"}`
	if n := cached(`{"model":"m","max_tokens":2,"messages":[` + first + `]}`); n != 0 {
		t.Fatalf("a first request reports %d cached tokens", n)
	}
	if n := cached(`{"model":"m","max_tokens":2,"messages":[` + first + `,{"role":"assistant","content":"ok"},{"role":"user","content":"four"}]}`); n != 7 {
		t.Fatalf("the second turn reports %d cached tokens, want its first two messages' 7", n)
	}
	resp := post(t, context.Background(), ts.URL+"/v1/chat/completions", `{"model":"m","max_tokens":60,"messages":[`+first+`]}`)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "maximum context length is 64 tokens") {
		t.Fatalf("past the window: %d %s", resp.StatusCode, b)
	}
	if st := s.Stats(); st.ContextOverflows != 1 || st.CachedTokens != 7 {
		t.Fatalf("stats %+v", st)
	}
}

// FuzzAgentBody checks the tool checks on any body: no panic, and a body
// they accept has results only for calls it made.
func FuzzAgentBody(f *testing.F) {
	f.Add(uint8(0), []byte(`{"messages":[{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a"}],"tools":`+weatherTool+`}`))
	f.Add(uint8(1), []byte(`{"input":[{"type":"function_call","call_id":"a","name":"f","arguments":""},{"type":"function_call_output","call_id":"a","output":"x"}]}`))
	f.Add(uint8(2), []byte(`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x"}]}]}`))
	f.Fuzz(func(t *testing.T, api uint8, body []byte) {
		msgs, names, results, err := readAgent(agentAPI(api%3), body)
		if err != nil {
			return
		}
		if results > len(msgs) {
			t.Fatalf("%d results in %d messages", results, len(msgs))
		}
		for _, n := range names {
			if n == "" {
				t.Fatal("an unnamed tool accepted")
			}
		}
	})
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestUncachedPrefill: with a prefix cache the prefill is charged for the
// prompt tokens it did not hold; without one, for every token.
func TestUncachedPrefill(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		prompt int
		plan   *agentPlan
		want   int
	}{
		{100, nil, 100},
		{100, &agentPlan{cached: -1}, 100},
		{100, &agentPlan{cached: 0}, 100},
		{100, &agentPlan{cached: 70}, 30},
		{100, &agentPlan{cached: 130}, 0},
	} {
		if got := uncached(tc.prompt, tc.plan); got != tc.want {
			t.Errorf("uncached(%d, %+v) = %d, want %d", tc.prompt, tc.plan, got, tc.want)
		}
	}
}
