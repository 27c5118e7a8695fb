package profile

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/metrics"
)

// TestApplyChatTemplateEndToEnd: with --apply-chat-template the ISL is
// what Qwen3's template makes of the whole request: a 50-token system
// prompt in its wrapping (5) plus the turn, whose bare prompt gave up the
// template's 3 + 5 tokens so that it is the --isl 200 asked for: 255. The
// same run without the flag counts the turn's bare 200.
func TestApplyChatTemplateEndToEnd(t *testing.T) {
	t.Parallel()
	url := startMockOf(t, mockserver.Config{})
	args := []string{"--isl", "200", "--osl", "4", "--request-count", "3", "--shared-system-prompt-length", "50"}
	_, m, _, _ := runArgs(t, url, append(args, "--apply-chat-template")...)
	if got := apptest.RunAvg(t, m, "input_sequence_length"); got != 255 {
		t.Errorf("--apply-chat-template: ISL avg %v, want 255 (system 50+5, turn 192+5+3)", got)
	}
	tok, _ := m["run_info"].(map[string]any)["tokenizer"].(map[string]any)
	ct, _ := tok["chat_template"].(map[string]any)
	if ct["fixed_tokens"] != 3.0 || ct["message_tokens"] != 5.0 || ct["source"] != "qwen3 (embedded)" {
		t.Errorf("run_info.tokenizer.chat_template = %v", ct)
	}
	_, m, _, _ = runArgs(t, url, args...)
	if got := apptest.RunAvg(t, m, "input_sequence_length"); got != 200 {
		t.Errorf("without the flag: ISL avg %v, want the bare 200", got)
	}
	if tok, _ := m["run_info"].(map[string]any)["tokenizer"].(map[string]any); tok["chat_template"] != nil {
		t.Errorf("without the flag run_info names a chat template: %v", tok)
	}
}

// TestApplyChatTemplateRefusals: a tokenizer folder without a chat
// template, and one whose template surge cannot compile, stop the run
// before any request with the flag named.
func TestApplyChatTemplateRefusals(t *testing.T) {
	t.Parallel()
	tokJSON, err := os.ReadFile(filepath.Join("..", "..", "datasets", "tokenizer", "qwen3.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	url := startMockOf(t, mockserver.Config{})
	for _, tc := range []struct {
		name, config, want string
	}{
		{"no template", `{"eos_token": "<|im_end|>"}`, "no chat template"},
		{"a template surge cannot compile", `{"chat_template": "{% for %}"}`, "cannot compile"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "tokenizer.json.gz"), tokJSON, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(tc.config), 0o600); err != nil {
			t.Fatal(err)
		}
		c := parseArgs(t, "--url", url, "--skip-preflight", "--model", "mock", "--ui", "none", "--output-artifact-dir", t.TempDir(), "--no-gpu-telemetry",
			"--no-server-metrics", "--tokenizer", dir, "--request-count", "1", "--apply-chat-template")
		var out, log strings.Builder
		_, err := runConfig(t.Context(), c, &out, &log)
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--apply-chat-template") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want a usage error naming the flag and saying %q", tc.name, err, tc.want)
		}
	}
}

// TestApplyChatTemplateFromHub: a Hub model whose tokenizer_config.json
// has no chat_template but whose repository has chat_template.jinja (as
// newer repositories keep it): both are fetched into the cache beside the
// tokenizer, the ChatML template's wrapping is measured (3 a request, 5 a
// message under Qwen3's tokenizer) and ISL is counted on the rendered
// messages.
func TestApplyChatTemplateFromHub(t *testing.T) {
	files := map[string][]byte{
		"tokenizer.json": qwenBytes(t),
		"tokenizer_config.json": []byte(`{"eos_token": "<|im_end|>", "added_tokens_decoder": {
			"151644": {"content": "<|im_start|>", "special": true}, "151645": {"content": "<|im_end|>", "special": true}}}`),
		"chat_template.jinja": []byte("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}" +
			"{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"),
	}
	var asked []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := strings.CutPrefix(r.URL.Path, "/org/model/resolve/main/")
		if store, isStore := strings.CutPrefix(r.URL.Path, "/store/"); isStore {
			_, _ = w.Write(files[store])
			return
		}
		if _, have := files[name]; !ok || !have {
			http.NotFound(w, r)
			return
		}
		asked = append(asked, name)
		w.Header().Set("X-Repo-Commit", "89abcdef0123456789abcdef0123456789abcdef")
		w.Header().Set("X-Linked-Etag", `"`+name+`"`)
		http.Redirect(w, r, "/store/"+name, http.StatusFound)
	}))
	defer ts.Close()
	online(t, ts, "")
	s, err := spec.Parse(cmdline.Config{Model: "org/model", EndpointType: "chat", Timeout: time.Minute, ISL: 8, ApplyChatTemplate: true})
	if err != nil {
		t.Fatal(err)
	}
	b, _, src, err := loadTokenizer(t.Context(), &s.Tokenizer, cmdline.Logger{W: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	counter, err := applyChatTemplate(t.Context(), s, b, &src)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(asked, ","); got != "tokenizer.json,tokenizer_config.json,chat_template.jinja" {
		t.Errorf("fetched %s", got)
	}
	if s.Dataset.ChatOverhead.Fixed != 3 || s.Dataset.ChatOverhead.Wrap != 5 || src.ChatTemplate == nil {
		t.Errorf("overhead %+v, run_info %+v; want 3 and 5", s.Dataset.ChatOverhead, src.ChatTemplate)
	}
	cc, ok := counter.(metrics.ChatCounter)
	if !ok {
		t.Fatalf("the counter %T counts no chat messages", counter)
	}
	n, err := cc.CountChat([]metrics.ChatMessage{{Role: "user", Content: "hi"}})
	if err != nil || n != 9 {
		t.Errorf("CountChat(user hi) = %d, %v; want 9", n, err)
	}
	// --use-server-token-count: the synthetic prompts are still sized for
	// the template, and the server counts.
	s.Tokenizer.UseServerCount = true
	if counter, err = applyChatTemplate(t.Context(), s, b, &src); err != nil || counter != nil {
		t.Errorf("--use-server-token-count: counter %v, %v; want none", counter, err)
	}
}
