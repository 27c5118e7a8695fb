package profile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// qwenBytes is the embedded tokenizer's file (gzip-compressed JSON, which
// the loader reads as it reads a plain tokenizer.json).
func qwenBytes(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "datasets", "tokenizer", "qwen3.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hubServer serves the Hub's file layout for one repository:
// /org/model/resolve/<rev>/tokenizer.json, redirecting to the file store
// as the Hub does; it needs the bearer token when one is set.
func hubServer(t *testing.T, file []byte, token string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch {
		case r.URL.Path == "/store/blob1":
			_, _ = w.Write(file)
		case r.URL.Path != "/org/model/resolve/main/tokenizer.json":
			http.NotFound(w, r)
		case token != "" && r.Header.Get("Authorization") != "Bearer "+token:
			http.Error(w, "gated", http.StatusUnauthorized)
		default:
			w.Header().Set("X-Repo-Commit", "89abcdef0123456789abcdef0123456789abcdef")
			w.Header().Set("X-Linked-Etag", `"blob1"`)
			http.Redirect(w, r, "/store/blob1", http.StatusFound)
		}
	}))
	t.Cleanup(ts.Close)
	return ts, &hits
}

// online points the Hub at ts with an empty cache.
func online(t *testing.T, ts *httptest.Server, token string) {
	t.Setenv("HF_HUB_OFFLINE", "")
	t.Setenv("HF_HUB_CACHE", t.TempDir())
	t.Setenv("HF_ENDPOINT", ts.URL)
	t.Setenv("HF_TOKEN", token)
}

func TestTokenizerByModelName(t *testing.T) {
	const token = "hf_test_token_abcdef"
	ts, hits := hubServer(t, qwenBytes(t), token)
	online(t, ts, token)
	var log bytes.Buffer
	l := cmdline.Logger{W: &log, Level: 2}

	// The mock's model is the embedded tokenizer: no look at the Hub.
	c := cmdline.Config{Model: "mock"}
	b, counter, src, err := loadTokenizerOf(c, l)
	if err != nil || b == nil || counter == nil || src.Source != tokBuiltin || hits.Load() != 0 {
		t.Errorf("mock: %+v %v after %d Hub requests; want builtin, counting, none", src, err, hits.Load())
	}
	// A Hub id: downloaded once (the token sent), then from the cache.
	c = cmdline.Config{Model: "org/model"}
	for i, want := range []string{tokDownload, tokCache} {
		b, counter, src, err = loadTokenizerOf(c, l)
		if err != nil || b == nil || counter == nil || src.Source != want || src.Revision != "main" {
			t.Errorf("org/model, try %d: %+v %v; want %s, counting", i, src, err, want)
		}
	}
	if n := hits.Load(); n != 2 { // the redirect and the file, once
		t.Errorf("%d Hub requests, want 2: one download", n)
	}
	if n := counter.Count("Hello world"); n != 2 {
		t.Errorf("the downloaded tokenizer counts %d tokens in \"Hello world\", want 2", n)
	}
	// --use-server-token-count: the tokenizer builds, the server counts.
	c.UseServerTokenCount = true
	if b, counter, src, err = loadTokenizerOf(c, l); err != nil || b == nil || counter != nil || src.Counts != "usage" {
		t.Errorf("--use-server-token-count: builder %v counter %v %+v %v", b != nil, counter, src, err)
	}
	if strings.Contains(log.String(), token) {
		t.Errorf("the token reached the log:\n%s", log.String())
	}
}

func TestTokenizerFallsBackOffline(t *testing.T) {
	ts, hits := hubServer(t, qwenBytes(t), "")
	online(t, ts, "")
	t.Setenv("HF_HUB_OFFLINE", "1")
	var log bytes.Buffer
	c := cmdline.Config{Model: "org/model"}
	b, counter, src, err := loadTokenizerOf(c, cmdline.Logger{W: &log, Level: 2})
	if err != nil || b != nil || counter != nil || src.Source != tokFallback || src.Counts != "usage" {
		t.Errorf("offline, not cached: %+v %v; want the fallback (embedded prompts, usage counts)", src, err)
	}
	if hits.Load() != 0 {
		t.Errorf("offline: %d Hub requests", hits.Load())
	}
	// One warning (wrapped to the width, never cut), naming the model, the
	// fallback and the flags that fix it.
	if said := strings.Join(strings.Fields(log.String()), " "); strings.Count(said, "warning [") != 1 ||
		!strings.Contains(said, "org/model") || !strings.Contains(said, "embedded Qwen3") || !strings.Contains(said, "--tokenizer builtin") {
		t.Errorf("want one warning naming the model, the fallback and the fix, got:\n%s", log.String())
	}
	// Online, but the Hub has no such model: the same, after one request.
	t.Setenv("HF_HUB_OFFLINE", "")
	log.Reset()
	c = cmdline.Config{Model: "org/other"}
	// (-v: the warning's full text under its line.)
	if _, _, src, err := loadTokenizerOf(c, cmdline.Logger{W: &log, Level: 1}); err != nil || src.Source != tokFallback ||
		!strings.Contains(log.String(), "HTTP 404") || !strings.HasPrefix(strings.Join(strings.Fields(log.String()), " "), "warning [tokenizer]: embedded Qwen3 tokenizer used, not org/other's: ") {
		t.Errorf("not on the Hub: %+v %v\n%s", src, err, log.String())
	}
	// --log-level WARNING still says it; ERROR does not.
	log.Reset()
	if _, _, _, _ = loadTokenizerOf(c, cmdline.Logger{W: &log, Level: 6}); log.Len() != 0 {
		t.Errorf("--log-level ERROR printed %q", log.String())
	}
}

func TestTokenizerPathsAndBuiltin(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json.gz"), qwenBytes(t), 0o644); err != nil {
		t.Fatal(err)
	}
	l := cmdline.Logger{W: io.Discard, Level: 2}
	for _, tc := range []struct {
		c    cmdline.Config
		want string
	}{
		{cmdline.Config{Model: "org/model", Tokenizer: dir}, tokPath},
		{cmdline.Config{Model: "org/model", Tokenizer: "builtin"}, tokBuiltin},
		{cmdline.Config{Model: "Qwen/Qwen3-8B", Tokenizer: "BUILTIN"}, tokBuiltin},
	} {
		if _, counter, src, err := loadTokenizerOf(tc.c, l); err != nil || counter == nil || src.Source != tc.want {
			t.Errorf("%+v: %+v %v, want %s", tc.c, src, err, tc.want)
		}
	}
	for _, bad := range []string{"./missing/tokenizer.json", filepath.Join(dir, "none.json"), "not an id"} {
		c := cmdline.Config{Model: "m", Tokenizer: bad}
		var ue *cmdline.UsageError
		if _, _, _, err := loadTokenizerOf(c, l); !errors.As(err, &ue) || !strings.Contains(err.Error(), "--tokenizer") {
			t.Errorf("--tokenizer %q: %v, want a usage error naming the flag", bad, err)
		}
	}
}

// TestTokenizerFromLocalNames: a model name (-m or the server's) that
// matches a local file or folder is read only when it is a tokenizer, and
// is never fatal: llama.cpp lists its model as model.gguf, which may sit in
// the working directory. An explicit --tokenizer that fails is a usage
// error naming the flag.
func TestTokenizerFromLocalNames(t *testing.T) {
	qwen := qwenBytes(t)
	ts, _ := hubServer(t, qwen, "")
	online(t, ts, "") // the test Hub: 404 for any other model
	t.Chdir(t.TempDir())
	for name, data := range map[string][]byte{
		"model.gguf":             []byte("GGUF\x03\x00\x00\x00"),
		"bad.json":               []byte("not json"),
		"qwen/tokenizer.json.gz": qwen,
		"empty/config.json":      []byte("{}"),
		"gguf-dir/model.gguf":    []byte("GGUF"),
		"org/model/README.md":    []byte("no tokenizer here"),
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		c      cmdline.Config
		source string // "" for a usage error
		warn   string // in the one warning line; "" for none
	}{
		// Derived from the model name: the GGUF is not read; the name goes
		// to the (test) Hub, which has no such model.
		{cmdline.Config{Model: "model.gguf"}, tokFallback, "not model.gguf's: "},
		{cmdline.Config{Model: "./model.gguf"}, tokFallback, "not ./model.gguf's: "},
		{cmdline.Config{Model: "gguf-dir"}, tokFallback, "not gguf-dir's: "},
		{cmdline.Config{Model: "empty"}, tokFallback, "not empty's: "},
		// A tokenizer file that fails to load warns as the Hub does.
		{cmdline.Config{Model: "bad.json"}, tokFallback, "not bad.json's: tokenizer bad.json: line 1"},
		{cmdline.Config{Model: "qwen"}, tokPath, ""},
		// A folder without tokenizer.json is no tokenizer: the Hub id is.
		{cmdline.Config{Model: "org/model"}, tokDownload, ""},
		// Explicit: a usage error naming the flag.
		{cmdline.Config{Model: "m", Tokenizer: "model.gguf"}, "", ""},
		{cmdline.Config{Model: "m", Tokenizer: "bad.json"}, "", ""},
		{cmdline.Config{Model: "m", Tokenizer: "qwen"}, tokPath, ""},
	} {
		what := fmt.Sprintf("-m %s --tokenizer %q", tc.c.Model, tc.c.Tokenizer)
		var log bytes.Buffer
		b, counter, src, err := loadTokenizerOf(tc.c, cmdline.Logger{W: &log, Level: 2})
		var ue *cmdline.UsageError
		switch {
		case tc.source == "":
			if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "--tokenizer: ") {
				t.Errorf("%s: %v, want a usage error naming --tokenizer", what, err)
			}
			continue
		case err != nil || src.Source != tc.source:
			t.Errorf("%s: %+v %v, want %s and no error", what, src, err, tc.source)
		case tc.source == tokFallback && (b != nil || counter != nil || src.Path != "" || src.Counts != "usage"):
			t.Errorf("%s: %+v, builder %v, counter %v; want the embedded prompts and usage counts", what, src, b != nil, counter != nil)
		case tc.source != tokFallback && counter == nil:
			t.Errorf("%s: %+v, no counter", what, src)
		}
		// One warning, wrapped to the width.
		said := strings.Join(strings.Fields(log.String()), " ")
		if tc.warn == "" && log.Len() != 0 ||
			tc.warn != "" && (strings.Count(said, "warning [") != 1 || !strings.Contains(said, tc.warn) || !strings.Contains(said, "embedded Qwen3")) ||
			strings.Contains(log.String(), "GGUF") || strings.Contains(log.String(), "--tokenizer:") {
			t.Errorf("%s: log %q, want one line with %q", what, log.String(), tc.warn)
		}
	}
}

// TestRunInfoSaysWhichTokenizer: the export says where the tokenizer came
// from and where the counts did: by default the server's usage (the mock
// sends it), the tokenizer with --retokenize-output; ISL from what was
// sent, or from usage with --use-server-token-count.
func TestRunInfoSaysWhichTokenizer(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	for _, tc := range []struct {
		flag                string
		counts, output, isl string
	}{
		{"", "usage, else tokenizer", "usage", "dataset"},
		{"--retokenize-output", "tokenizer", "tokenizer", "dataset"},
		{"--use-server-token-count", "usage", "usage", "usage"},
	} {
		dir := t.TempDir()
		args := []string{"--request-count", "2", "--isl", "16", "--osl", "4", "--streaming", "--ui", "none",
			"--output-artifact-dir", dir, "--no-gpu-telemetry", "--no-server-metrics"}
		if tc.flag != "" {
			args = append(args, tc.flag)
		}
		if _, err := runConfig(context.Background(), parseArgs(t, args...), io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		m := apptest.ReadExport(t, dir)
		tok, _ := m["run_info"].(map[string]any)["tokenizer"].(map[string]any)
		if tok["name"] != "mock" || tok["source"] != tokBuiltin || tok["counts"] != tc.counts {
			t.Errorf("%s: run_info.tokenizer = %v, want mock from builtin, counts %q", tc.flag, tok, tc.counts)
		}
		if m["token_count_source"] != tc.output || m["input_token_count_source"] != tc.isl {
			t.Errorf("%s: token_count_source = %v, input_token_count_source = %v, want %s and %s", tc.flag,
				m["token_count_source"], m["input_token_count_source"], tc.output, tc.isl)
		}
	}
}
