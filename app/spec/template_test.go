package spec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/datasets"
)

// TestAIPerfTemplateEndpoint: AIPerf's template endpoint form, as its
// tutorial writes it, builds the body from the Jinja2 payload_template
// (inline, a file or a built-in name), reads the text at response_field
// and posts to the URL as given.
func TestAIPerfTemplateEndpoint(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "chat_template.json")
	if err := os.WriteFile(file, []byte(`{"model": {{ model|tojson }}, "prompt": {{ text|tojson }}, "max_new_tokens": {{ max_tokens|tojson }}, "stream": {{ stream|lower }}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args  []string
		body  string
		field string
	}{
		{[]string{"--model", "your-model", "--url", "http://localhost:8000/custom-endpoint", "--endpoint-type", "template", "--extra-inputs", "payload_template:\n  {\n    \"text\": {{ text|tojson }}\n  }",
			"--synthetic-input-tokens-mean", "100", "--output-tokens-mean", "50", "--concurrency", "4", "--request-count", "20"}, `{"text":"hello"}`, ""},
		{[]string{"--model", "embedding-model", "--url", "http://localhost:8000/embed", "--endpoint-type", "template", "--extra-inputs", "payload_template:\n    {\n      \"input\": {{ texts|tojson }},\n      \"model\": {{ model|tojson }}\n    }",
			"--extra-inputs", "response_field:embeddings", "--synthetic-input-tokens-mean", "50"}, `{"input":["hello"],"model":"embedding-model"}`, "embeddings"},
		{[]string{"--model", "nv-embed-v2", "--url", "http://localhost:8000/embeddings", "--endpoint-type", "template", "--extra-inputs", "payload_template:nv-embedqa"}, `{"text":["hello"]}`, ""},
		{[]string{"--model", "custom-llm", "--url", "http://localhost:8000/generate", "--endpoint-type", "template", "--extra-inputs", "payload_template:" + file,
			"--extra-inputs", "response_field:generated_text", "--streaming", "--extra-inputs", "temperature:0.7"}, `{"max_new_tokens":null,"model":"custom-llm","prompt":"hello","stream":true,"temperature":0.7}`, "generated_text"},
	} {
		c, err := cmdline.ParseProfile(tc.args...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		s, err := Parse(c)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		ep := s.Endpoint
		if ep.Jinja == nil || ep.ResponseField != tc.field || ep.Path() != "" {
			t.Errorf("%v: jinja %v field %q path %q", tc.args, ep.Jinja != nil, ep.ResponseField, ep.Path())
		}
		b, err := ep.Body("", nil, &datasets.Turn{Text: "hello"})
		if err != nil || !sameJSON(t, b, tc.body) {
			t.Errorf("%v: body %s (%v), want %s", tc.args, b, err, tc.body)
		}
	}
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notJSON, []byte("not a request body\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		args []string
		says string
	}{
		{[]string{"--endpoint-type", "chat", "--extra-inputs", "payload_template:{\"a\": 1}"}, "give --endpoint-type template"},
		{[]string{"--endpoint-type", "template", "--extra-inputs", "payload_template:{{ text", "--url", "http://x/y"}, "payload_template"},
		{[]string{"--endpoint-type", "template", "--extra-inputs", "payload_template:{\"t\": {{ text|tojson }}}", "--extra-inputs", "response_field:data[].embedding", "--url", "http://x/y"}, "projections"},
		// A template that renders no JSON is refused before the run,
		// naming it; a directory is no template file.
		{[]string{"--endpoint-type", "template", "--extra-inputs", "payload_template:" + notJSON, "--url", "http://x/y"}, "payload_template " + notJSON + " rendered invalid JSON"},
		{[]string{"--endpoint-type", "template", "--extra-inputs", "payload_template:{\"t\": {{ text }}}", "--url", "http://x/y"}, "quote strings with |tojson"},
		{[]string{"--endpoint-type", "template", "--endpoint", "/gen", "--endpoint-template", "@" + notJSON}, "body template " + notJSON + " rendered invalid JSON"},
		{[]string{"--endpoint-type", "template", "--extra-inputs", "payload_template:" + dir, "--url", "http://x/y"}, dir + " is a directory"},
	} {
		c, err := cmdline.ParseProfile(bad.args...)
		if err == nil {
			_, err = Parse(c)
		}
		if err == nil || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%v: %v, want %q", bad.args, err, bad.says)
		}
	}
}

// sameJSON reports whether b and want are the same JSON value.
func sameJSON(t *testing.T, b []byte, want string) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(b, &x) != nil || json.Unmarshal([]byte(want), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
