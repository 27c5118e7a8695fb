package datasets

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// checkInputError fails unless err is nil or an *InputError for f.jsonl:7.
func checkInputError(t *testing.T, err error, prefix string) {
	t.Helper()
	if err == nil {
		return
	}
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Fatalf("error %v is %T, want *InputError", err, err)
	}
	if !strings.HasPrefix(err.Error(), prefix) {
		t.Fatalf("error %q does not start with %q", err, prefix)
	}
}

func FuzzMooncakeLine(f *testing.F) {
	for _, s := range []string{
		`{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]}`,
		`{"session_id": "a", "delay": 5, "input_length": 3}`,
		`{"text": "hi", "input_length": 2}`,
		`{"input_length": 1025, "hash_ids": [1, 2]}`,
		`{"input_length": 1e400}`, `{"timestamp": -1}`, `[]`, `null`, `{"hash_ids": [-1], "input_length": 3}`,
		`{"text_input": "Hello world", "output_length": 4, "extra": {"temperature": 0.1}}`,
		`{"messages": [{"role": "user", "content": "Hello"}], "tools": [{"type": "function"}], "output_length": 4}`,
		`{"session_id": "s1", "message_mode": "delta", "messages": [{"role": "user", "content": "Hi"}]}`,
		`{"payload": {"prompt": "Hello", "max_tokens": 50}, "timestamp": 1000}`,
		`{"messages": null}`, `{"payload": {}}`, `{"tools": [], "messages": [{"role": "x"}]}`, `{"text_input": "a", "hash_ids": [1]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseMooncakeLine("f.jsonl", 7, b, 512)
		checkInputError(t, err, "f.jsonl:7: ")
		if err != nil {
			return
		}
		modes := 0
		for _, m := range []bool{r.generated(), r.HasText, r.Messages != nil, r.Payload != nil} {
			if m {
				modes++
			}
		}
		if modes != 1 {
			t.Fatalf("accepted a row with %d input modes: %+v", modes, r)
		}
		if r.Messages != nil && checkMessages(r.Messages) != nil || r.Payload != nil && len(r.Payload) == 0 ||
			r.Tools != nil && (r.Messages == nil || checkTools(r.Tools) != nil) || r.Delta && r.Messages == nil {
			t.Fatalf("accepted a malformed row: %+v", r)
		}
		if r.Messages != nil {
			_ = messagesText(r.Messages)
		}
		if r.Payload != nil {
			_ = payloadText(r.Payload)
		}
		if !r.generated() {
			return
		}
		if n := len(r.HashIDs); r.InputLength <= 0 || (n > 0 && (r.InputLength <= (n-1)*512 || r.InputLength > n*512)) {
			t.Fatalf("accepted input_length %d with %d hash ids", r.InputLength, n)
		}
	})
}

func FuzzSingleTurnLine(f *testing.F) {
	for _, s := range []string{
		`{"text": "What is a prime?", "timestamp": 100, "output_length": 20, "extra": {"temperature": 0.5}}`,
		`{"texts": ["a", "b"], "delay": 250}`, `{"texts": [{"name": "query", "contents": ["q"]}, {"name": "passages", "contents": ["p1", "p2"]}]}`, `{"text": "x", "role": "system"}`, `{"image": "a.png"}`, `{"text": 3}`, `"x"`,
		`{"texts": [{"name": "text_field_A", "contents": ["Hello", "World"]}, {"name": "text_field_B", "contents": ["Hi there"]}]}`,
		`{"text": "x", "role": "assistant", "session_id": "s"}`, `{"texts": [{"name": "passages", "contents": []}]}`,
		`{"messages": [{"role": "user", "content": "Weather?"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "w", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "sun"}], "tools": [{"type": "function", "function": {"name": "w"}}], "parallel_tool_calls": false}`,
		`{"messages": [], "tools": [1]}`, `{"messages": [{"role": "tool"}], "text": "x"}`, `{"text": "x", "tools": []}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := ParseSingleTurnLine("f.jsonl", 7, b)
		checkInputError(t, err, "f.jsonl:7: ")
		if err == nil && (tr.MaxTokens < 0 || tr.Delay < 0 || tr.Timestamp < 0) {
			t.Fatalf("accepted negative values: %+v", tr)
		}
		if err == nil && tr.Messages != nil && (checkMessages(tr.Messages) != nil || tr.Text != "") {
			t.Fatalf("accepted messages that are not a chat: %+v", tr)
		}
		if err == nil && tr.Tools != nil && checkTools(tr.Tools) != nil {
			t.Fatalf("accepted tools that are not definitions: %+v", tr.Tools)
		}
	})
}

func FuzzMultiTurnLine(f *testing.F) {
	for _, s := range []string{
		`{"session_id": "s1", "turns": [{"text": "Hi", "timestamp": 0}, {"text": "And then?", "delay": 1000, "output_length": 7}]}`,
		`{"turns": []}`, `{"turns": [{"turns": []}]}`, `{"session_id": 5, "turns": [{"text": "a"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseMultiTurnLine("f.jsonl", 7, b)
		checkInputError(t, err, "f.jsonl:7: ")
		if err == nil && len(c.Turns) == 0 {
			t.Fatal("accepted a conversation without turns")
		}
	})
}

func FuzzAzureLine(f *testing.F) {
	for _, s := range []string{"2023-11-16 18:15:46.6805900,374,44", "2023-11-16 18:15:46,1,0", "x,1,2", "2023-11-16 18:15:46.68,-1,2", "a,b", ""} {
		f.Add([]byte(s))
	}
	idx := [3]int{0, 1, 2}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseAzureLine("f.csv", 7, b, idx, 3)
		checkInputError(t, err, "f.csv:7: ")
		if err == nil && (r.ContextTokens <= 0 || r.GeneratedTokens < 0) {
			t.Fatalf("accepted %+v", r)
		}
	})
}

func FuzzShareGPT(f *testing.F) {
	for _, s := range []string{
		`[{"id": "a", "conversations": [{"from": "human", "value": "Tell me about the sea please"}, {"from": "gpt", "value": "The sea is large and deep."}]}]`,
		"[\n {\"id\": \"a\"}\n]", `{"id": 1}`, `[`, `[{"conversations": 3}]`, `[] []`, "",
	} {
		f.Add([]byte(s))
	}
	tok := qwen(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		d, st, err := readShareGPT(context.Background(), bytes.NewReader(b), "f.json", tok)
		checkInputError(t, err, "f.json:")
		if err == nil && (len(d.Conversations) != st.Kept || st.Kept == 0) {
			t.Fatalf("kept %d, %d conversations", st.Kept, len(d.Conversations))
		}
	})
}
