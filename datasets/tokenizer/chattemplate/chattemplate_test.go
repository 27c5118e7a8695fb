package chattemplate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surgebench/surge/datasets/tokenizer"
)

// llama3Dir is the Llama 3 tokenizer in the shared data folder beside the
// checkout (not copied into the repository: see datasets/tokenizer's
// helpers_test.go). The Llama checks skip without it.
const llama3Dir = "../../../../shared/data/tokenizers/llama3"

func qwen3(t testing.TB) (*tokenizer.Tokenizer, *Template) {
	t.Helper()
	tok, err := tokenizer.Default()
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	return tok, tpl
}

// TestQwen3MatchesHuggingFace pins the embedded Qwen3 template against what
// transformers' apply_chat_template gives for Qwen3: the rendered text and
// its token count (one "hi" is the well-known
// [151644 872 198 6023 151645 198 151644 77091 198]).
func TestQwen3MatchesHuggingFace(t *testing.T) {
	tok, tpl := qwen3(t)
	for _, c := range []struct {
		name string
		msgs []Message
		want string
		n    int
	}{
		{"one user message", []Message{{"user", "hi"}},
			"<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", 9},
		{"system, history, question", []Message{{"system", "be brief"}, {"user", "hi"}, {"assistant", "hello"}, {"user", "again"}},
			"<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nhello<|im_end|>\n<|im_start|>user\nagain<|im_end|>\n<|im_start|>assistant\n",
			// system 1+1+1+2+1+1, user 1+1+1+1+1+1, assistant 1+1+1+1+1+1, user 6, prompt 3
			7 + 6 + 6 + 6 + 3},
		{"a reply's reasoning is dropped from history", []Message{{"user", "hi"}, {"assistant", "<think>\nhmm\n</think>\n\nhello"}, {"user", "again"}},
			"<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nhello<|im_end|>\n<|im_start|>user\nagain<|im_end|>\n<|im_start|>assistant\n", 6 + 6 + 6 + 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := tpl.Render(c.msgs)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("rendered\n%q\nwant\n%q", got, c.want)
			}
			n, err := tpl.Count(tok, c.msgs)
			if err != nil {
				t.Fatal(err)
			}
			if n != c.n {
				t.Errorf("Count = %d, want %d", n, c.n)
			}
		})
	}
	// The same ids as Hugging Face: specials are one token each, the text
	// between them is the tokenizer's.
	ids := []int{151644}
	ids = append(ids, tok.Encode("user\nhi")...)
	ids = append(ids, 151645)
	ids = append(ids, tok.Encode("\n")...)
	ids = append(ids, 151644)
	ids = append(ids, tok.Encode("assistant\n")...)
	want := []int{151644, 872, 198, 6023, 151645, 198, 151644, 77091, 198}
	if len(ids) != len(want) {
		t.Fatalf("ids %v, want %v", ids, want)
	}
	for i := range ids {
		if ids[i] != want[i] {
			t.Fatalf("ids %v, want %v", ids, want)
		}
	}
}

// TestOverheadsAsAIPerfsProbe checks the probe against costs counted by
// hand: Qwen3 wraps a message in <|im_start|>ROLE\n … <|im_end|>\n (5
// tokens) and ends a request with <|im_start|>assistant\n (3); the
// Llama-3-style template below opens with BOS, wraps a message in
// <|start_header_id|>ROLE<|end_header_id|>\n\n … <|eot_id|> (5) and ends
// with the assistant header (4): fixed 5 (BOS and the header).
func TestOverheadsAsAIPerfsProbe(t *testing.T) {
	tok, tpl := qwen3(t)
	fixed, wrap, err := tpl.Overheads(tok)
	if err != nil {
		t.Fatal(err)
	}
	if fixed != 3 || wrap != 5 {
		t.Errorf("Qwen3 overheads = (%d, %d), want (3, 5)", fixed, wrap)
	}
	llama, err := Parse("llama-style", []byte(llamaStyleConfig), "")
	if err != nil {
		t.Fatal(err)
	}
	fixed, wrap, err = llama.Overheads(tok)
	if err != nil {
		t.Fatal(err)
	}
	if fixed != 5 || wrap != 5 {
		t.Errorf("Llama-style overheads = (%d, %d), want (5, 5)", fixed, wrap)
	}
	// A template that does not wrap each message measures negative.
	flat, err := Parse("flat", []byte(`{"chat_template": "{{ messages[0].content }}"}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := flat.Overheads(tok); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("a template keeping the first message alone: err = %v, want a negative overhead", err)
	}
}

// llamaStyleConfig is a Llama-3-shaped tokenizer_config.json written for
// these tests (BOS as an AddedToken object, the specials as added tokens).
const llamaStyleConfig = `{
 "bos_token": {"content": "<|begin_of_text|>", "__type": "AddedToken"},
 "eos_token": "<|eot_id|>",
 "added_tokens_decoder": {
  "128000": {"content": "<|begin_of_text|>", "special": true},
  "128006": {"content": "<|start_header_id|>", "special": true},
  "128007": {"content": "<|end_header_id|>", "special": true},
  "128009": {"content": "<|eot_id|>", "special": true},
  "128010": {"content": "not special", "special": false}
 },
 "chat_template": "{{ bos_token }}{% for m in messages %}{{ '<|start_header_id|>' + m['role'] + '<|end_header_id|>\n\n' + m['content'] | trim + '<|eot_id|>' }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"
}`

func TestCountTextSpecials(t *testing.T) {
	tok, _ := qwen3(t)
	tpl, err := Parse("llama-style", []byte(llamaStyleConfig), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"<|begin_of_text|>", 1},
		{"<|begin_of_text|><|eot_id|>", 2},
		{"hello<|eot_id|>world", tok.Count("hello") + 1 + tok.Count("world")},
		{"not special", tok.Count("not special")},    // not a special: the tokenizer's
		{"<|eot_id", tok.Count("<|eot_id")},          // a part is text
		{"x<|start_header_id|>", tok.Count("x") + 1}, // at the end
	} {
		if got := tpl.CountText(tok, c.text); got != c.want {
			t.Errorf("CountText(%q) = %d, want %d", c.text, got, c.want)
		}
	}
	// A special that starts with a non-ASCII byte, and one that is a
	// prefix of another: the longest at a place wins.
	odd, err := Parse("odd", []byte(`{"chat_template": "x", "added_tokens_decoder": {"1": {"content": "«s»", "special": true}, "2": {"content": "<a", "special": true}, "3": {"content": "<ab>", "special": true}}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string]int{
		"«s»":        1,
		"q«s»q":      tok.Count("q") + 1 + tok.Count("q"),
		"<ab><a":     2,
		"<ab«s»<a»":  3 + tok.Count("b") + tok.Count("»"),
		"no special": tok.Count("no special"),
	} {
		if got := odd.CountText(tok, text); got != want {
			t.Errorf("CountText(%q) = %d, want %d", text, got, want)
		}
	}
}

// BenchmarkCountText: a long history's special tokens are found without a
// scan per special (Llama 3 has 256).
func BenchmarkCountText(b *testing.B) {
	tok, tpl := qwen3(b)
	var msgs []Message
	for i := range 50 {
		msgs = append(msgs, Message{"user", strings.Repeat("some words of a question ", 40)}, Message{"assistant", fmt.Sprint("an answer ", i)})
	}
	text, err := tpl.Render(msgs)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tpl.CountText(tok, text)
	}
}

// TestLlama3Shared counts Llama 3's own template and tokenizer when the
// shared data folder is there: one "hi" is 11 tokens,
// [128000 128006 882 128007 271 6151 128009 128006 78191 128007 271].
func TestLlama3Shared(t *testing.T) {
	if _, err := os.Stat(llama3Dir); err != nil {
		t.Skipf("Llama 3 tokenizer not present (%v)", err)
	}
	tok, err := tokenizer.Load(filepath.Join(llama3Dir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := Load(filepath.Join(llama3Dir, "tokenizer.json")) // the config beside it
	if err != nil {
		t.Fatal(err)
	}
	n, err := tpl.Count(tok, []Message{{"user", "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if n != 11 {
		t.Errorf("Count = %d, want 11", n)
	}
}

func TestLoad(t *testing.T) {
	write := func(t *testing.T, files map[string]string) string {
		t.Helper()
		dir := t.TempDir()
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	render := func(t *testing.T, tpl *Template) string {
		t.Helper()
		s, err := tpl.Render([]Message{{"user", "q"}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	t.Run("folder, file and tokenizer.json beside it", func(t *testing.T) {
		dir := write(t, map[string]string{ConfigName: `{"chat_template": "[{{ messages[0].content }}]"}`})
		for _, p := range []string{dir, filepath.Join(dir, ConfigName), filepath.Join(dir, "tokenizer.json")} {
			tpl, err := Load(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := render(t, tpl); got != "[q]" {
				t.Errorf("Load(%s) renders %q", p, got)
			}
		}
	})
	t.Run("chat_template.jinja when the config has none", func(t *testing.T) {
		dir := write(t, map[string]string{ConfigName: `{"eos_token": "</s>"}`, TemplateName: "<{{ messages[0].content }}>{{ eos_token }}"})
		tpl, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := render(t, tpl); got != "<q></s>" {
			t.Errorf("renders %q", got)
		}
	})
	t.Run("named templates", func(t *testing.T) {
		dir := write(t, map[string]string{ConfigName: `{"chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]}`})
		tpl, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := render(t, tpl); got != "D" {
			t.Errorf("renders %q, want the default template", got)
		}
	})
	for _, c := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no template anywhere", map[string]string{ConfigName: `{}`}, "has no chat template"},
		{"no config", map[string]string{}, "no such file"},
		{"bad JSON", map[string]string{ConfigName: `{"chat_template": `}, "unexpected end"},
		{"empty template", map[string]string{ConfigName: `{"chat_template": " "}`}, "empty"},
		{"no default among named", map[string]string{ConfigName: `{"chat_template": [{"name": "x", "template": "T"}]}`}, `"default"`},
		{"a template surge cannot compile", map[string]string{ConfigName: `{"chat_template": "{% if %}"}`}, "cannot compile"},
		{"a bad special token", map[string]string{ConfigName: `{"chat_template": "x", "bos_token": 3}`}, "bos_token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(write(t, c.files))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one saying %q", err, c.want)
			}
			if missing := strings.Contains(c.want, "no chat template") || c.want == "empty"; missing != errors.Is(err, ErrNoTemplate) {
				t.Errorf("errors.Is(%v, ErrNoTemplate) = %v", err, !missing)
			}
		})
	}
	t.Run("too large", func(t *testing.T) {
		dir := t.TempDir()
		f := filepath.Join(dir, ConfigName)
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(f, maxConfigBytes+1); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "over the 16 MiB limit") {
			t.Errorf("err = %v", err)
		}
	})
}

// TestRenderErrorNamesTemplate: a template that raises (as Llama 2's does
// on roles that do not alternate) is an error naming it.
func TestRenderErrorNamesTemplate(t *testing.T) {
	tpl, err := Parse("strict", []byte(`{"chat_template": "{% if messages|length > 1 %}{{ raise_exception('roles must alternate') }}{% endif %}ok"}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tpl.Render([]Message{{"user", "a"}, {"user", "b"}}); err == nil || !strings.Contains(err.Error(), "strict") || !strings.Contains(err.Error(), "alternate") {
		t.Errorf("err = %v", err)
	}
	tok, _ := qwen3(t)
	if _, _, err := tpl.Overheads(tok); err == nil {
		t.Error("Overheads of a template that raises on three messages: no error")
	}
}

// FuzzParse: any tokenizer_config.json is parsed or refused, never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(llamaStyleConfig))
	f.Add(qwen3Config)
	f.Add([]byte(`{"chat_template": [{"name": "default", "template": "{{ x }}"}]}`))
	f.Add([]byte(`{"chat_template": "{% for %}"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tpl, err := Parse("fuzz", data, "")
		if err != nil {
			return
		}
		if tpl.Name() != "fuzz" {
			t.Fatal("name lost")
		}
	})
}
