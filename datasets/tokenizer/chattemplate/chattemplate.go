// Package chattemplate renders a model's chat template, the Jinja template
// of its tokenizer_config.json (or chat_template.jinja), and counts a chat
// request's prompt tokens as Hugging Face's
// apply_chat_template(messages, tokenize=True, add_generation_prompt=True)
// does: the rendered text, with every special token of the model
// (<|im_start|>, <|begin_of_text|> …) one token and the text between them
// counted by the model's tokenizer. This is what AIPerf's
// --apply-chat-template reports as ISL, and what the server's prefill sees.
//
// The Jinja engine is github.com/ardanlabs/jinja, written for LLM chat
// templates: the Qwen3 and Llama 3 templates render as Hugging Face's
// (tests pin Qwen3's, which the package embeds). A template it cannot
// compile or render is an error at Load or at the first Overheads probe,
// never a silent bare count.
package chattemplate

import (
	"context"
	_ "embed" // for Qwen3's tokenizer_config.json
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/ardanlabs/jinja"

	"github.com/surgebench/surge/internal/bounded"
)

// ConfigName and TemplateName are the files a model's repository keeps its
// chat template in: tokenizer_config.json's chat_template, else (newer
// repositories) chat_template.jinja beside it.
const (
	ConfigName   = "tokenizer_config.json"
	TemplateName = "chat_template.jinja"
)

// ErrNoTemplate is the error of a model without a chat template.
var ErrNoTemplate = errors.New("the model has no chat template")

// Bounds on what is read from outside: tokenizer_config.json files are
// tens of kilobytes, templates a few.
const (
	maxConfigBytes   = 16 << 20
	maxTemplateBytes = 1 << 20
)

// qwen3Config is Qwen3's tokenizer_config.json (Apache-2.0, see NOTICE),
// the chat template of the embedded Qwen3 tokenizer.
//
//go:embed qwen3_tokenizer_config.json
var qwen3Config []byte

// Message is one chat message as the template sees it.
type Message struct {
	Role, Content string
}

// Counter counts tokens in text with no special tokens added;
// *tokenizer.Tokenizer satisfies it.
type Counter interface {
	Count(text string) int
}

// Template is a compiled chat template and the special tokens of its
// model. It is safe for concurrent use.
type Template struct {
	name     string
	tpl      *jinja.Template
	vars     map[string]any // bos_token, eos_token … as the template sees them
	specials []string       // special tokens' texts, longest first
	byFirst  [256][]string  // specials by first byte, longest first
	firsts   string         // the specials' first bytes, for IndexAny
	nonASCII bool           // a special starts with a non-ASCII byte
}

// configJSON is what surge reads of tokenizer_config.json.
type configJSON struct {
	ChatTemplate json.RawMessage `json:"chat_template"`
	Added        map[string]struct {
		Content string `json:"content"`
		Special bool   `json:"special"`
	} `json:"added_tokens_decoder"`
	Additional []json.RawMessage `json:"additional_special_tokens"`
	BOS        json.RawMessage   `json:"bos_token"`
	EOS        json.RawMessage   `json:"eos_token"`
	UNK        json.RawMessage   `json:"unk_token"`
	PAD        json.RawMessage   `json:"pad_token"`
}

// Embedded returns the chat template of the embedded Qwen3 tokenizer.
func Embedded() (*Template, error) {
	return Parse("qwen3 (embedded)", qwen3Config, "")
}

// Load reads the chat template of the model whose tokenizer files are at
// path: a tokenizer_config.json, a folder holding one, or a tokenizer.json
// with one beside it. When the config has no chat_template, the folder's
// chat_template.jinja is read instead.
func Load(path string) (*Template, error) {
	file := path
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		file = filepath.Join(path, ConfigName)
	} else if filepath.Base(path) != ConfigName {
		file = filepath.Join(filepath.Dir(path), ConfigName)
	}
	data, err := readBounded(file, maxConfigBytes)
	if err != nil {
		return nil, fmt.Errorf("chat template: %w", err)
	}
	jinjaFile := ""
	if !hasTemplate(data) {
		j := filepath.Join(filepath.Dir(file), TemplateName)
		b, err := readBounded(j, maxTemplateBytes)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("chat template: %s has no chat_template and there is no %s beside it: %w", file, TemplateName, ErrNoTemplate)
		case err != nil:
			return nil, fmt.Errorf("chat template: %w", err)
		}
		jinjaFile = string(b)
	}
	return Parse(file, data, jinjaFile)
}

// hasTemplate reports whether a tokenizer_config.json carries a
// chat_template (a JSON error is left to Parse).
func hasTemplate(config []byte) bool {
	var c configJSON
	if json.Unmarshal(config, &c) != nil {
		return true // Parse says what is wrong
	}
	return len(c.ChatTemplate) > 0 && string(c.ChatTemplate) != "null"
}

// readBounded reads file, refusing one over limit bytes.
func readBounded(file string, limit int64) ([]byte, error) {
	return bounded.ReadFile(context.Background(), file, limit)
}

// Parse reads a tokenizer_config.json's chat template and special tokens;
// name (a file's path) prefixes errors. jinjaFile, when not empty, is the
// template (chat_template.jinja) and config's chat_template is not read.
func Parse(name string, config []byte, jinjaFile string) (*Template, error) {
	var c configJSON
	if err := json.Unmarshal(config, &c); err != nil {
		return nil, fmt.Errorf("chat template: %s: %w", name, err)
	}
	src := jinjaFile
	if src == "" {
		var err error
		if src, err = pickTemplate(c.ChatTemplate); err != nil {
			return nil, fmt.Errorf("chat template: %s: chat_template: %w", name, err)
		}
	}
	if len(src) > maxTemplateBytes {
		return nil, fmt.Errorf("chat template: %s: the template is larger than %d MiB", name, maxTemplateBytes>>20)
	}
	tpl, err := jinja.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("chat template: %s: surge cannot compile the model's template: %w", name, err)
	}
	t := &Template{name: name, tpl: tpl, vars: map[string]any{}}
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			t.specials = append(t.specials, s)
		}
	}
	for _, tok := range []struct {
		key string
		raw json.RawMessage
	}{{"bos_token", c.BOS}, {"eos_token", c.EOS}, {"unk_token", c.UNK}, {"pad_token", c.PAD}} {
		s, err := tokenText(tok.raw)
		if err != nil {
			return nil, fmt.Errorf("chat template: %s: %s: %w", name, tok.key, err)
		}
		if s != "" {
			t.vars[tok.key] = s
			add(s)
		}
	}
	for i, raw := range c.Additional {
		s, err := tokenText(raw)
		if err != nil {
			return nil, fmt.Errorf("chat template: %s: additional_special_tokens[%d]: %w", name, i, err)
		}
		add(s)
	}
	ids := make([]string, 0, len(c.Added))
	for id := range c.Added {
		ids = append(ids, id)
	}
	sort.Strings(ids) // a stable order; the matcher sorts by length
	for _, id := range ids {
		if a := c.Added[id]; a.Special {
			add(a.Content)
		}
	}
	sort.SliceStable(t.specials, func(i, j int) bool { return len(t.specials[i]) > len(t.specials[j]) })
	for _, sp := range t.specials {
		c := sp[0]
		if t.byFirst[c] == nil {
			// IndexAny works on runes: with a non-ASCII first byte
			// every place is tried instead.
			t.nonASCII = t.nonASCII || c >= utf8.RuneSelf
			t.firsts += string(rune(c))
		}
		t.byFirst[c] = append(t.byFirst[c], sp)
	}
	return t, nil
}

// pickTemplate is chat_template's text: a string, or the "default" entry of
// a list of named templates (older multi-template configs).
func pickTemplate(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", fmt.Errorf("missing: %w", ErrNoTemplate)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if strings.TrimSpace(s) == "" {
			return "", fmt.Errorf("empty: %w", ErrNoTemplate)
		}
		return s, nil
	}
	var named []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return "", errors.New("neither a string nor a list of {name, template}")
	}
	for _, n := range named {
		if n.Name == "default" {
			return n.Template, nil
		}
	}
	return "", errors.New("a list of named templates without one named \"default\"")
}

// tokenText is a special token's text: a string, or an AddedToken object's
// content ("" for null).
func tokenText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var o struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return "", errors.New("neither a string nor an object with content")
	}
	return o.Content, nil
}

// Name is where the template came from (a path, or the embedded Qwen3's
// name).
func (t *Template) Name() string { return t.name }

// Render is msgs rendered by the template with add_generation_prompt, as
// apply_chat_template(tokenize=False, add_generation_prompt=True) renders
// them: the model's special tokens (bos_token …) are defined, and so are
// raise_exception and strftime_now.
func (t *Template) Render(msgs []Message) (string, error) {
	list := make([]any, len(msgs))
	for i, m := range msgs {
		list[i] = map[string]any{"role": m.Role, "content": m.Content}
	}
	data := make(map[string]any, len(t.vars)+2)
	for k, v := range t.vars {
		data[k] = v
	}
	data["messages"] = list
	data["add_generation_prompt"] = true
	out, err := t.tpl.Render(data)
	if err != nil {
		return "", fmt.Errorf("chat template %s: %w", t.name, err)
	}
	return out, nil
}

// Count is the number of tokens of msgs rendered by the template:
// apply_chat_template(msgs, tokenize=True, add_generation_prompt=True).
func (t *Template) Count(tok Counter, msgs []Message) (int, error) {
	s, err := t.Render(msgs)
	if err != nil {
		return 0, err
	}
	return t.CountText(tok, s), nil
}

// CountText counts text's tokens as Hugging Face encodes text with special
// tokens in it: each special token is one token, the text between them is
// counted by tok.
func (t *Template) CountText(tok Counter, text string) int {
	n := 0
	for text != "" {
		start, end := t.nextSpecial(text)
		if start < 0 {
			return n + tok.Count(text)
		}
		if start > 0 {
			n += tok.Count(text[:start])
		}
		n++
		text = text[end:]
	}
	return n
}

// nextSpecial is the span of the leftmost special token in s, the longest
// one at that place (Hugging Face's added-token matching); start < 0 when
// there is none. Only places holding a special's first byte are tried.
func (t *Template) nextSpecial(s string) (start, end int) {
	for i := 0; i < len(s); {
		if !t.nonASCII {
			j := strings.IndexAny(s[i:], t.firsts)
			if j < 0 {
				return -1, -1
			}
			i += j
		}
		for _, sp := range t.byFirst[s[i]] { // longest first
			if strings.HasPrefix(s[i:], sp) {
				return i, i + len(sp)
			}
		}
		i++
	}
	return -1, -1
}

// probeSamples are the texts AIPerf's probe measures the template with.
var probeSamples = [...]string{
	"Hello, how are you today?",
	"Could you write a Python function to reverse a string?",
	"What's the difference between TCP and UDP in networking?",
}

// Overheads measures what the template adds to a conversation's text, as
// AIPerf's probe does: for each sample S, single = [user S] and triple =
// [user S, assistant S, user S] are rendered (with the generation prompt)
// and counted; wrap = (triple − single − 2·bare(S))/2 is a message's own
// cost (role header, end of turn) and fixed = single − bare(S) − wrap the
// request's (BOS, the generation prompt). The means over the samples are
// rounded. A template that fails to render these, or whose costs come out
// negative (it does not wrap messages one by one), is an error: surge
// refuses to guess.
func (t *Template) Overheads(tok Counter) (fixed, wrap int, err error) {
	var sumFixed, sumWrap float64
	for _, s := range probeSamples {
		single, err := t.Count(tok, []Message{{"user", s}})
		if err != nil {
			return 0, 0, err
		}
		triple, err := t.Count(tok, []Message{{"user", s}, {"assistant", s}, {"user", s}})
		if err != nil {
			return 0, 0, err
		}
		bare := tok.Count(s)
		w := float64(triple-single-2*bare) / 2
		f := float64(single-bare) - w
		if w < 0 || f < 0 {
			return 0, 0, fmt.Errorf("chat template %s: its overhead measures negative (fixed %g, per message %g tokens): it does not wrap each message", t.name, f, w)
		}
		sumFixed += f
		sumWrap += w
	}
	n := float64(len(probeSamples))
	// Python's round, as AIPerf's: ties to even.
	return int(math.RoundToEven(sumFixed / n)), int(math.RoundToEven(sumWrap / n)), nil
}
