package endpoint

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkDecoded holds for every decoder: accepted input is JSON (or
// [DONE]), a rejected one leaves the output as it was, and text that grew
// is flagged.
func checkDecoded(t *testing.T, k Kind, data []byte, before, after Output, d Delta, err error) {
	t.Helper()
	if err != nil {
		if !bytes.Equal(before.Text, after.Text) || !bytes.Equal(before.Reasoning, after.Reasoning) {
			t.Fatalf("%s: rejected %q but changed the output to %q %q", k, data, after.Text, after.Reasoning)
		}
		return
	}
	if !json.Valid(data) && !isDone(data) {
		t.Fatalf("%s: accepted %q, which is not JSON", k, data)
	}
	if len(after.Text) > len(before.Text) && !d.Content && !d.ToolCall {
		t.Fatalf("%s: text grew to %q without a content or tool-call flag for %q", k, after.Text, data)
	}
	if len(after.Reasoning) > len(before.Reasoning) && !d.Reasoning {
		t.Fatalf("%s: reasoning grew to %q unflagged for %q", k, after.Reasoning, data)
	}
}

func fuzzSeeds(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"delta":{"content":"a","tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}}]}`,
		`{"type":"response.output_text.delta","delta":"Hi"}`,
		`{"type":"response.completed","response":{"usage":{"input_tokens":1,"output_tokens":2}}}`,
		`{"type":"content_block_delta","delta":{"type":"thinking_delta","thinking":"t"}}`,
		`{"type":"message_start","message":{"usage":{"input_tokens":3}}}`,
		`{"token":{"text":"a","special":false},"generated_text":null,"details":null}`,
		`{"data":[{"embedding":[1,2]}],"usage":{"prompt_tokens":1}}`,
		`[{"index":0,"score":1}]`,
		`{"rankings":[{"index":0,"logit":1}]}`,
		`{"error":{"message":"m","type":"t"}}`,
		`{"error":{"message":"m","http_status_code":422}}`,
		`{"error":"m","error_type":"validation"}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"abort"}]}`,
		`{"type":"error","code":"server_error","message":"m"}`,
		`{"text":"Hello there","output_ids":[1],"meta_info":{"queue_time":0.01,"finish_reason":{"type":"length"},"prompt_tokens":3}}`,
		`{"model":"m","message":{"role":"assistant","content":"a","thinking":"t"},"done":true,"eval_count":2,"eval_duration":5}`,
		`{"choices":[{"delta":{},"finish_reason":"length"}],"timings":{"prompt_ms":1.5,"predicted_ms":2,"queue_ms":0.5}}`,
		`[DONE]`,
	} {
		for k := range len(Kinds()) {
			f.Add(uint8(k), []byte(s))
		}
	}
}

// FuzzStreamError reads error events of any shape: it never fails, and an
// error always has a type and a message (the error summary's row).
func FuzzStreamError(f *testing.F) {
	for _, s := range []string{
		`{"code":500,"message":"Input prompt is too big","type":"server_error"}`,
		`{"error":{"code":400,"message":"m","type":"t"}}`,
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		`{"type":"error","code":"rate_limit_exceeded","message":"m","param":null}`,
		`{"error":"m","error_type":"validation"}`,
		`{"error":{"message":"m","http_status_code":422}}`,
		`{"object":"error","message":"m","code":"503"}`,
		`not json`, ``, `{}`, `{"error":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e := StreamError(data)
		if e == nil || e.Type == "" || e.Message == "" {
			t.Fatalf("StreamError(%q) = %+v: no type or message", data, e)
		}
	})
}

// FuzzEvent runs every type's stream reader (through NewDecoder, reasoning
// splitting and shape checks included) on one event.
func FuzzEvent(f *testing.F) {
	fuzzSeeds(f)
	kinds := Kinds()
	f.Fuzz(func(t *testing.T, ki uint8, data []byte) {
		k := kinds[int(ki)%len(kinds)]
		e := &Endpoint{Kind: k}
		if k == Template {
			e.ResponseField = "a.b[0]"
		}
		before := Output{Text: []byte("x"), Reasoning: []byte("y")}
		after := Output{Text: bytes.Clone(before.Text), Reasoning: bytes.Clone(before.Reasoning)}
		d, err := e.NewDecoder().Event(nil, data, &after)
		checkDecoded(t, k, data, before, after, d, err)
	})
}

// FuzzBody runs every type's whole-body reader.
func FuzzBody(f *testing.F) {
	fuzzSeeds(f)
	kinds := Kinds()
	f.Fuzz(func(t *testing.T, ki uint8, data []byte) {
		k := kinds[int(ki)%len(kinds)]
		e := &Endpoint{Kind: k, Reasoning: ReasoningFields}
		before := Output{}
		var after Output
		d, err := e.NewDecoder().Body(data, &after)
		checkDecoded(t, k, data, before, after, d, err)
	})
}

// unmodelled reports inputs whose duplicate keys encoding/json resolves
// differently (it keeps the last; the scanner reads all).
func unmodelled(data []byte, keys ...string) bool {
	for _, k := range keys {
		if bytes.Count(data, []byte(`"`+k+`"`)) > 1 || caseVariant(data, k) {
			return true
		}
	}
	return bytes.Contains(data, []byte(`\u`)) // escaped keys are never matched by the scanner
}

// caseVariant reports whether data quotes k in another case ("teXt",
// "ſpecial"): encoding/json's struct fields match those, JSON keys and
// the scanner do not.
func caseVariant(data []byte, k string) bool {
	for rest := data; ; {
		i := bytes.IndexByte(rest, '"')
		if i < 0 {
			return false
		}
		rest = rest[i+1:]
		j := 0
		for j < len(rest) && rest[j] != '"' {
			if rest[j] == '\\' {
				j++ // an escaped character, a quote too
			}
			j++
		}
		if j >= len(rest) {
			return false
		}
		if s := rest[:j]; string(s) != k && bytes.EqualFold(s, []byte(k)) {
			return true
		}
		rest = rest[j+1:]
	}
}

// FuzzResponsesEvent checks the Responses reader against encoding/json.
func FuzzResponsesEvent(f *testing.F) {
	f.Add([]byte(`{"type":"response.output_text.delta","delta":"Hi"}`))
	f.Add([]byte(`{"delta":"r","type":"response.reasoning_text.delta"}`))
	f.Add([]byte(`{"type":"response.function_call_arguments.delta","delta":"{}"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out Output
		_, err := responsesDecoder{}.Event(nil, data, &out)
		var ref struct {
			Type  any `json:"type"`
			Delta any `json:"delta"`
		}
		if err != nil || json.Unmarshal(data, &ref) != nil || unmodelled(data, "type", "delta") {
			return
		}
		typ, _ := ref.Type.(string)
		delta, _ := ref.Delta.(string)
		var wantText, wantReasoning, wantArgs string
		switch typ {
		case "response.output_text.delta", "response.refusal.delta":
			wantText = delta
		case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
			wantArgs = delta
		case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
			wantReasoning = delta
		}
		var args string
		for _, c := range out.Tools.Calls() {
			args += c.Arguments
		}
		if string(out.Text) != wantText || string(out.Reasoning) != wantReasoning || args != wantArgs {
			t.Fatalf("got %q %q %q, encoding/json says %q %q %q for %q", out.Text, out.Reasoning, args, wantText, wantReasoning, wantArgs, data)
		}
	})
}

// FuzzMessagesEvent checks the Anthropic reader against encoding/json.
func FuzzMessagesEvent(f *testing.F) {
	f.Add([]byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`))
	f.Add([]byte(`{"type":"content_block_delta","delta":{"thinking":"t","type":"thinking_delta"}}`))
	f.Add([]byte(`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":15}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out Output
		_, err := (&messagesDecoder{}).Event(nil, data, &out)
		var ref struct {
			Type  any            `json:"type"`
			Delta map[string]any `json:"delta"`
		}
		if err != nil || json.Unmarshal(data, &ref) != nil || unmodelled(data, "type", "delta", "text", "thinking", "partial_json") {
			return
		}
		var wantText, wantReasoning, wantArgs string
		if ref.Type == "content_block_delta" {
			switch ref.Delta["type"] {
			case "text_delta":
				wantText, _ = ref.Delta["text"].(string)
			case "thinking_delta":
				wantReasoning, _ = ref.Delta["thinking"].(string)
			case "input_json_delta":
				wantArgs, _ = ref.Delta["partial_json"].(string)
			}
		}
		var args string
		for _, c := range out.Tools.Calls() {
			args += c.Arguments
		}
		if string(out.Text) != wantText || string(out.Reasoning) != wantReasoning || args != wantArgs {
			t.Fatalf("got %q %q %q, encoding/json says %q %q %q for %q", out.Text, out.Reasoning, args, wantText, wantReasoning, wantArgs, data)
		}
	})
}

// FuzzTGIEvent checks the generate_stream reader against encoding/json.
func FuzzTGIEvent(f *testing.F) {
	f.Add([]byte(`{"index":1,"token":{"id":1,"text":" a","logprob":-1,"special":false},"generated_text":null,"details":null}`))
	f.Add([]byte(`{"token":{"text":"</s>","special":true},"generated_text":"x","details":{"finish_reason":"length","generated_tokens":2}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out Output
		d, err := tgiDecoder{}.Event(nil, data, &out)
		var ref struct {
			Token *struct {
				Text    any `json:"text"`
				Special any `json:"special"`
			} `json:"token"`
			Error any `json:"error"`
		}
		if err != nil || json.Unmarshal(data, &ref) != nil || unmodelled(data, "token", "text", "special", "error", "error_type") {
			return
		}
		want := ""
		if ref.Token != nil && ref.Token.Special != true && d.Err == nil {
			want, _ = ref.Token.Text.(string)
		}
		if string(out.Text) != want {
			t.Fatalf("got %q, encoding/json says %q for %q", out.Text, want, data)
		}
	})
}

// FuzzListBody checks the embeddings and rankings reader's item count.
func FuzzListBody(f *testing.F) {
	f.Add("data", []byte(`{"data":[{"embedding":[0.1]},{"embedding":[]}],"usage":{"prompt_tokens":3}}`))
	f.Add("", []byte(`[{"index":0,"score":0.5}]`))
	f.Add("rankings", []byte(`{"rankings":[{"index":0,"logit":1}]}`))
	f.Fuzz(func(t *testing.T, field string, data []byte) {
		if strings.ContainsAny(field, `"\`) {
			return
		}
		d, err := listDecoder{field: field}.Body(data, &Output{})
		if err != nil || d.Err != nil || unmodelled(data, field) {
			return
		}
		var ref any
		if json.Unmarshal(data, &ref) != nil {
			t.Fatalf("accepted %q, which is not JSON", data)
		}
		var list []any
		if field == "" {
			list, _ = ref.([]any)
		} else if m, ok := ref.(map[string]any); ok {
			list, _ = m[field].([]any)
		}
		if d.Items != len(list) {
			t.Fatalf("counted %d items, encoding/json says %d for %q", d.Items, len(list), data)
		}
	})
}

// refPath walks a decoded document as the scanner's path does.
func refPath(v any, steps []pathStep) (string, bool) {
	for _, st := range steps {
		switch x := v.(type) {
		case map[string]any:
			if st.index >= 0 {
				return "", false
			}
			var ok bool
			if v, ok = x[st.key]; !ok {
				return "", false
			}
		case []any:
			if st.index < 0 || st.index >= len(x) {
				return "", false
			}
			v = x[st.index]
		default:
			return "", false
		}
	}
	switch x := v.(type) {
	case string:
		return x, true
	case nil:
		return "", true
	case map[string]any, []any:
		return "", false
	default:
		b, _ := json.Marshal(x)
		return string(b), true
	}
}

// FuzzResponseField checks the response-field reader against a walk over
// encoding/json's values.
func FuzzResponseField(f *testing.F) {
	f.Add("a.b[0]", []byte(`{"a":{"b":["x",1]}}`))
	f.Add("$.choices.0.text", []byte(`{"choices":[{"text":"t"}]}`))
	f.Add("n", []byte(`{"n":true}`))
	f.Fuzz(func(t *testing.T, path string, data []byte) {
		steps, err := parseFieldPath(path)
		if err != nil {
			return
		}
		s := scanner{b: data}
		var got []byte
		found, err := s.path(steps, &got)
		if err == nil {
			err = s.end()
		}
		var ref any
		if err != nil || json.Unmarshal(data, &ref) != nil {
			return
		}
		for _, st := range steps {
			if st.index < 0 && unmodelled(data, st.key) {
				return
			}
		}
		if bytes.ContainsAny(data, "eE.") { // numbers are copied as written, not re-encoded
			return
		}
		want, wantFound := refPath(ref, steps)
		if found != wantFound || string(got) != want {
			t.Fatalf("path %q: got %q %v, encoding/json says %q %v for %q", path, got, found, want, wantFound, data)
		}
	})
}

// FuzzThinkSplit checks that splitting <think> blocks does not depend on
// where the stream's events are cut.
func FuzzThinkSplit(f *testing.F) {
	f.Add("<think>plan</think>answer", uint64(0x0305), true)
	f.Add("  <thi", uint64(1), false)
	f.Add("a<think>b</think>c<think>d", uint64(0xffff), true)
	f.Fuzz(func(t *testing.T, content string, cuts uint64, always bool) {
		format := ReasoningAuto
		if always {
			format = ReasoningThink
		}
		whole := splitEvents(t, format, []string{content})
		var parts []string
		rest := content
		for c := cuts; len(rest) > 0; c >>= 4 {
			n := min(int(c&15)+1, len(rest))
			if c == 0 {
				n = len(rest)
			}
			for n < len(rest) && !utf8.RuneStart(rest[n]) {
				n++ // events carry whole characters (each is JSON)
			}
			parts = append(parts, rest[:n])
			rest = rest[n:]
		}
		cut := splitEvents(t, format, parts)
		if whole != cut {
			t.Fatalf("%q whole gives %q, cut as %q gives %q", content, whole, parts, cut)
		}
	})
}

// splitEvents feeds parts as content events then a finish event, and
// returns "text|reasoning".
func splitEvents(t *testing.T, format ReasoningFormat, parts []string) string {
	d := (&Endpoint{Kind: Chat, Reasoning: format}).NewDecoder()
	var out Output
	for _, p := range parts {
		b, _ := json.Marshal(p)
		if _, err := d.Event(nil, []byte(`{"choices":[{"delta":{"content":`+string(b)+`}}]}`), &out); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Event(nil, []byte(`{"choices":[{"delta":{},"finish_reason":"stop"}]}`), &out); err != nil {
		t.Fatal(err)
	}
	return string(out.Text) + "|" + string(out.Reasoning)
}

// FuzzToolCallChunk checks the chat reader's tool calls against
// encoding/json: each call's arguments are its pieces' concatenation.
func FuzzToolCallChunk(f *testing.F) {
	f.Add([]byte(`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{\"a\""}},{"index":1,"function":{"arguments":"[1]"}}]}}]}`))
	f.Add([]byte(`{"choices":[{"message":{"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}}]}`))
	f.Add([]byte(`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":null},"index":2}]}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out Output
		_, err := openAIDecoder{}.Event(nil, data, &out)
		var ref struct {
			Choices []struct {
				Delta, Message *struct {
					ToolCalls []struct {
						Index    *float64 `json:"index"`
						Function *struct {
							Arguments any `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				}
			} `json:"choices"`
		}
		if err != nil || json.Unmarshal(data, &ref) != nil ||
			unmodelled(data, "choices", "delta", "message", "tool_calls", "index", "function", "arguments", "id", "name") {
			if err != nil && !out.Tools.Empty() {
				t.Fatalf("a rejected chunk left tool call pieces: %q", data)
			}
			return
		}
		want := map[int32]string{}
		if len(ref.Choices) > 0 {
			msg := ref.Choices[0].Delta
			if msg == nil {
				msg = ref.Choices[0].Message
			}
			if msg != nil {
				for i, c := range msg.ToolCalls {
					k := int32(i)
					if c.Index != nil {
						k = int32(*c.Index)
					}
					a := ""
					if c.Function != nil {
						a, _ = c.Function.Arguments.(string)
					}
					want[k] += a
				}
			}
		}
		var got, exp []string
		for _, c := range out.Tools.Calls() {
			if c.Arguments != "" {
				got = append(got, c.Arguments)
			}
		}
		for _, a := range want {
			if a != "" {
				exp = append(exp, a)
			}
		}
		slices.Sort(got)
		slices.Sort(exp)
		if !slices.Equal(got, exp) {
			t.Fatalf("arguments %q, encoding/json says %q for %q", got, exp, data)
		}
	})
}
