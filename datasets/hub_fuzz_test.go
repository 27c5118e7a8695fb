package datasets

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/surgebench/surge/datasets/hf"
)

// hubRecipes are the row readers the fuzz target runs each row through.
func hubRecipes(tb testing.TB) []*hubConv {
	var out []*hubConv
	generic, _ := newHubConv(PublicDataset{Name: TypeHF, kind: hubColumns,
		columns: Columns{Prompt: "prompt", System: "system", OutputLen: "osl", Image: "image", Audio: "audio"}}, []string{"lang=en"}, nil)
	chat, _ := newHubConv(PublicDataset{Name: TypeHF, kind: hubColumns, columns: Columns{Messages: "messages", Image: "image"}}, nil, qwen(tb))
	out = append(out, generic, chat)
	for _, name := range []string{"blazedit_5k", "vision_arena", "llava_onevision", "librispeech", "exgentic", "exgentic_v2", "weka_hf", "spec_al_mtbench"} {
		d, _ := publicDataset(name)
		c, err := newHubConv(d, nil, qwen(tb))
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// FuzzHubRow: any JSON row through any reader gives conversations of at
// least one turn, or is skipped, or is an *hf.Error; never a panic.
func FuzzHubRow(f *testing.F) {
	for _, s := range []string{
		`{"prompt": "hi", "system": "s", "osl": 5, "lang": "en", "image": "https://x/y.png", "audio": "wav,UklGRg=="}`,
		`{"prompt": ["a", "b", 3], "lang": "en", "osl": "7"}`,
		`{"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], "image": {"bytes": "iVBORw0KGgo=", "path": "x"}}`,
		`{"conversation": [[{"role": "user", "content": "x"}]], "images": [null, "data:image/png;base64,AAAA"]}`,
		`{"conversations": [{"from": "human", "value": "<image>q"}], "image": null}`,
		`{"audio": {"array": [0.1, -0.2, 1e9], "sampling_rate": 16000}}`,
		`{"code": "c", "change_request": "r"}`,
		`{"harness": "h", "session_id": "s", "models": ["m"], "spans": [{"type": "llm_call", "start_time": "2026-01-01T00:00:00Z", "end_time": "2026-01-01T00:00:01Z", "attributes": {"gen_ai.usage.input_tokens": 1, "gen_ai.usage.output_tokens": 1, "gen_ai.input.messages": "[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"content\":\"x\"}]}]"}}]}`,
		`{"id": "t", "block_size": 64, "hash_id_scope": "local", "requests": [{"t": 0, "type": "n", "in": 10, "out": 1}]}`,
		`{}`, `{"prompt": {"a": 1}}`, `{"osl": -1, "prompt": "x", "lang": "en"}`,
	} {
		f.Add([]byte(s))
	}
	recipes := hubRecipes(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var m map[string]any
		if d.Decode(&m) != nil || m == nil {
			return
		}
		row := hf.Row(fuzzNumbers(m).(map[string]any))
		for _, c := range recipes {
			c.checked = true // a missing column is what the first row's check says
			cs, err := c.row("f.jsonl", 1, row)
			if err != nil {
				var he *hf.Error
				if !errors.As(err, &he) {
					t.Fatalf("%s: %T %v", c.d.Name, err, err)
				}
				continue
			}
			for _, cv := range cs {
				if len(cv.Turns) == 0 {
					t.Fatalf("%s: a conversation with no turns from %s", c.d.Name, b)
				}
			}
		}
	})
}

// fuzzNumbers turns json.Number into int64 or float64, as hf's readers do.
func fuzzNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, y := range x {
			x[k] = fuzzNumbers(y)
		}
	case []any:
		for i, y := range x {
			x[i] = fuzzNumbers(y)
		}
	}
	return v
}
