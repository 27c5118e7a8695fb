package endpoint

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/surgebench/surge/datasets"
)

func TestJinjaBody(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, tpl string
		e         Endpoint
		turn      datasets.Turn
		want      string
	}{
		{"text", "\n  {\n    \"text\": {{ text|tojson }}\n  }", Endpoint{Kind: Template, Model: "m"}, datasets.Turn{Text: `say "hi"`}, `{"text":"say \"hi\""}`},
		{"texts and model", `{"input": {{ texts|tojson }}, "model": {{ model|tojson }}}`, Endpoint{Kind: Template, Model: "emb"}, datasets.Turn{Parts: []string{"a", "b"}}, `{"input":["a","b"],"model":"emb"}`},
		{"max_tokens and stream", `{"prompt": {{ text|tojson }}, "max_new_tokens": {{ max_tokens|tojson }}, "stream": {{ stream|lower }}}`,
			Endpoint{Kind: Template, Streaming: true}, datasets.Turn{Text: "x", MaxTokens: 7}, `{"max_new_tokens":7,"prompt":"x","stream":true}`},
		{"extra merged", `{"text": {{ text|tojson }}}`, Endpoint{Kind: Template, Extra: map[string]any{"temperature": 0.7}}, datasets.Turn{Text: "x"}, `{"temperature":0.7,"text":"x"}`},
		{"named", mustNamed(t, "nv-embedqa"), Endpoint{Kind: Template}, datasets.Turn{Text: "q"}, `{"text":["q"]}`},
		{"passages", `{"query": {{ query|tojson }}, "docs": {{ passages|tojson }}}`, Endpoint{Kind: Template}, datasets.Turn{Text: "q", Passages: []string{"p1"}}, `{"docs":["p1"],"query":"q"}`},
	} {
		tpl, err := ParseJinjaTemplate(tc.name, tc.tpl)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		e := tc.e
		e.Jinja = tpl
		b, err := e.Body("", nil, &tc.turn)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got, want any
		if json.Unmarshal(b, &got) != nil || json.Unmarshal([]byte(tc.want), &want) != nil {
			t.Fatalf("%s: %s", tc.name, b)
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if string(gb) != string(wb) {
			t.Errorf("%s: body %s, want %s", tc.name, gb, wb)
		}
	}
	tpl, _ := ParseJinjaTemplate("bad", `{"text": {{ text }}}`)
	e := Endpoint{Kind: Template, Jinja: tpl}
	if _, err := e.Body("", nil, &datasets.Turn{Text: "two words"}); err == nil || !strings.Contains(err.Error(), "tojson") {
		t.Errorf("an unquoted string: %v", err)
	}
	if _, err := ParseJinjaTemplate("x", `{{ text `); err == nil {
		t.Error("a template that does not compile was accepted")
	}
}

func mustNamed(t *testing.T, name string) string {
	s, ok := NamedTemplate(name)
	if !ok {
		t.Fatalf("no %s", name)
	}
	return s
}

func TestAutoDecoder(t *testing.T) {
	t.Parallel()
	a := newAutoDecoder()
	for _, tc := range []struct {
		body, text string
		missing    bool
	}{
		{`{"choices":[{"delta":{"content":"tok"}}]}`, "tok", false},
		{`{"choices":[{"message":{"content":"whole"}}]}`, "whole", false},
		{`{"generated_text":"g"}`, "g", false},
		{`{"output":"o","text":"t"}`, "t", false},
		{`{"data":[{"embedding":[0.1]}]}`, "", false},
		{`{"rankings":[1,2]}`, "", false},
		{`{"nothing":1}`, "", true},
	} {
		var out Output
		_, err := a.Body([]byte(tc.body), &out)
		if (err != nil) != tc.missing || string(out.Text) != tc.text {
			t.Errorf("%s: text %q err %v", tc.body, out.Text, err)
		}
	}
	if d, err := a.Event(nil, []byte("[DONE]"), &Output{}); err != nil || !d.Done {
		t.Errorf("[DONE]: %+v %v", d, err)
	}
	var out Output
	if d, _ := a.Body([]byte(`{"error":{"message":"busy","code":503}}`), &out); d.Err == nil {
		t.Errorf("an error body: %+v", d)
	}
}

func FuzzAutoDecoder(f *testing.F) {
	for _, s := range []string{`{"text":"a"}`, `{"choices":[{"delta":{"content":"b"}}]}`, `{"data":[]}`, `[DONE]`, `{"error":{}}`, `{`} {
		f.Add([]byte(s))
	}
	a := newAutoDecoder()
	f.Fuzz(func(t *testing.T, data []byte) {
		var out Output
		before := out
		d, err := a.Event(nil, data, &out)
		checkDecoded(t, Template, data, before, out, d, err)
	})
}
