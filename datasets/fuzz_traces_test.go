package datasets

import (
	"bytes"
	"encoding/json"
	"testing"
)

func FuzzBailianLine(f *testing.F) {
	for _, s := range []string{
		`{"chat_id": 159, "parent_chat_id": -1, "timestamp": 61.114, "input_length": 521, "output_length": 132, "type": "text", "turn": 1, "hash_ids": [1089, 1090, 1091]}`,
		`{"chat_id": 160, "parent_chat_id": 159, "timestamp": 62.5, "input_length": 400, "output_length": 0, "type": "text", "turn": 2}`,
		`{"chat_id": 1, "parent_chat_id": 1, "timestamp": 0, "input_length": 1, "output_length": 1, "turn": 1}`,
		`{"chat_id": -3}`, `{"timestamp": 1e400}`, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseBailianLine("f.jsonl", 7, b)
		checkInputError(t, err, "f.jsonl:7: ")
		if err == nil && (r.InputLength <= 0 || r.OutputLength < 0 || r.ChatID < 0 || r.ParentChatID < -1 || r.ParentChatID == r.ChatID || r.Timestamp < 0) {
			t.Fatalf("accepted %+v", r)
		}
		if err == nil {
			// One row always makes one standalone turn of its length.
			rows := bailianSessions([]BailianRow{r})
			if len(rows) != 1 || rows[0].InputLength != r.InputLength {
				t.Fatalf("sessions of one row: %+v", rows)
			}
		}
	})
}

func FuzzBurstGPT(f *testing.F) {
	for _, s := range []string{
		"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation log\n6,GPT-4,1024,0,1024,API log\n",
		"Timestamp,Request tokens,Response tokens\n0.5,1,1\n", "Timestamp,Model\n", "", "Timestamp,Request tokens,Response tokens\n\"1,2,3\n",
		"Timestamp,Request tokens,Response tokens\nNaN,1,1\n", "Timestamp,Request tokens,Response tokens\n1,2\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := readBurstGPT(bytes.NewReader(b), "f.csv")
		checkInputError(t, err, "f.csv")
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.RequestTokens < 0 || r.ResponseTokens < 0 || r.Timestamp < 0 || r.Line < 2 {
				t.Fatalf("accepted %+v", r)
			}
		}
	})
}

func FuzzBasetenLine(f *testing.F) {
	for _, s := range []string{
		`{"timestamp_start_unix_ms": 1718000000000, "prompt": "Hi", "input_tokens": 1, "output_tokens": 9, "provided_session_id": "s", "poor_man_session_id": 3, "duration_e2e_ms": 800, "total_hashes": [1, 2], "block_size": 32}`,
		`{"timestamp_start_unix_ms": 0, "prompt": "", "input_tokens": 0, "output_tokens": 0, "provided_session_id": 12}`,
		`{"timestamp_start_unix_ms": -1}`, `{"provided_session_id": {}}`, `1`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseBasetenLine("f.jsonl", 7, b)
		checkInputError(t, err, "f.jsonl:7: ")
		if err != nil {
			return
		}
		if r.StartMs < 0 || r.InputTokens < 0 || r.OutputTokens < 0 {
			t.Fatalf("accepted %+v", r)
		}
		d, _ := basetenDataset("f.jsonl", []BasetenRow{r}, &ReplayOptions{})
		if tr := d.Conversations[0].Turns[0]; tr.MaxTokens < 1 || tr.Timestamp != 0 {
			t.Fatalf("turn %+v", tr)
		}
	})
}

func FuzzWekaTrace(f *testing.F) {
	for _, s := range []string{
		`{"id": "t", "models": ["m"], "block_size": 64, "hash_id_scope": "local", "tool_tokens": 10, "system_tokens": 5, "requests": [
 {"t": 0, "type": "n", "model": "m", "in": 100, "out": 7, "hash_ids": [1, 2], "stop": "tool_use", "api_time": 1.5},
 {"t": 2, "type": "subagent", "agent_id": "a1", "subagent_type": "Explore", "status": "completed", "models": ["m"], "requests": [
  {"t": 0.5, "type": "s", "model": "m", "in": 30, "out": 2, "ttft": 0.1}]},
 {"t": 3, "type": "s", "model": "m", "in": 140, "out": 0, "hash_ids": [1, 2, 3]}], "totals": {"x": 1}}`,
		`{"id": "t", "models": [], "block_size": 0, "hash_id_scope": "local", "requests": []}`,
		`{"id": "t", "requests": [{"t": 0, "type": "subagent", "requests": [{"type": "subagent"}]}]}`,
		`{"id": "t", "id": "u"}`, `[]`, `{`, `{"requests": [1]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := ParseWekaTrace(bytes.NewReader(b), "f.json")
		checkInputError(t, err, "f.json")
		if err != nil {
			return
		}
		if tr.ID == "" || tr.BlockSize <= 0 {
			t.Fatalf("accepted %+v", tr)
		}
		rows, st := wekaRows([]*WekaTrace{tr}, &ReplayOptions{})
		if len(rows) != st.Calls {
			t.Fatalf("%d rows for %d calls", len(rows), st.Calls)
		}
		for _, r := range rows {
			if r.InputLength <= 0 || r.OutputLength < 1 || r.Delay < 0 {
				t.Fatalf("row %+v", r)
			}
		}
	})
}

func FuzzInputsJSON(f *testing.F) {
	for _, s := range []string{
		"{\"data\":[\n{\"session_id\":\"conv-1\",\"payloads\":[{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":5},null]}\n]}\n",
		`{"data": []}`, `{"data": [{"session_id": "a"}]}`, `{"other": 1, "data": [{"session_id": "a", "payloads": [{"prompt": "x"}]}]}`,
		`[]`, `{"data": [{"session_id": "a", "payloads": [1]}]}`, `{"data": [] } x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, rows, _, err := readInputsJSON(bytes.NewReader(b), "f.json")
		checkInputError(t, err, "f.json")
		if err != nil {
			return
		}
		n := 0
		for _, c := range d.Conversations {
			for _, tr := range c.Turns {
				n++
				if !json.Valid(tr.Body) || !tr.Standalone {
					t.Fatalf("turn %+v", tr)
				}
			}
		}
		if n != rows || n == 0 {
			t.Fatalf("%d turns, %d rows", n, rows)
		}
	})
}
