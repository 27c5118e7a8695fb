package profile

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surgebench/surge/app/internal/apptest"
)

// inflatedUsage streams "alpha beta gamma delta" and reports 2 more
// completion tokens than the tokenizer finds in it: a server whose count
// includes tokens it does not stream.
func inflatedUsage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	for _, word := range []string{"alpha", " beta", " gamma", " delta"} {
		fmt.Fprintf(w, `data: {"model":"m","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`+"\n\n", word)
	}
	io.WriteString(w, `data: {"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":6,"total_tokens":18}}`+"\n\ndata: [DONE]\n\n")
}

// TestTokenizerGivenIsNotDoubted: with --tokenizer given, counts that
// differ from the server's usage do not ask whether --tokenizer is the
// model's (the user said it is); with the embedded tokenizer they say to
// give the model's.
func TestTokenizerGivenIsNotDoubted(t *testing.T) {
	t.Parallel()
	tokJSON, err := os.ReadFile(filepath.Join("..", "..", "datasets", "tokenizer", "qwen3.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	tokDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(tokDir, "tokenizer.json.gz"), tokJSON, 0o600); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.HandlerFunc(inflatedUsage))
	defer ts.Close()
	for _, tc := range []struct {
		tokenizer, says, never string
	}{
		{tokDir, "the tokenizer is the model's", "--tokenizer the model's?"},
		{"builtin", "give the model's with --tokenizer", "the tokenizer is the model's"},
	} {
		dir := t.TempDir()
		c := parseArgs(t, "--url", ts.URL, "-m", "m", "--streaming", "--ui", "none", "--output-artifact-dir", dir, "--no-gpu-telemetry",
			"--no-server-metrics", "--tokenizer", tc.tokenizer, "--request-count", "4", "--isl", "8", "--osl", "8")
		var out, log bytes.Buffer
		if _, err := runConfig(context.Background(), c, &out, &log); err != nil {
			t.Fatalf("--tokenizer %s: %v", tc.tokenizer, err)
		}
		var w string
		for _, x := range apptest.ReadExport(t, dir)["warnings"].([]any) {
			if s := x.(string); strings.HasPrefix(s, "output token counts disagree") {
				w = s
			}
		}
		if !strings.Contains(w, tc.says) || strings.Contains(w+out.String(), tc.never) {
			t.Errorf("--tokenizer %s: warning %q, want it to say %q and never %q\n%s", tc.tokenizer, w, tc.says, tc.never, out.String())
		}
		if !strings.Contains(out.String(), "warning [osl-count]: output tokens: tokenizer 16 vs server usage 24 (-33.3%)") {
			t.Errorf("--tokenizer %s: the console's line lost its numbers:\n%s", tc.tokenizer, out.String())
		}
	}
}
