package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/datasets/hf/hftest"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/internal/hostile"
)

// TestHostile runs every network-facing and file-reading feature of surge
// against the hostile kit's cases (internal/hostile): one row per
// feature, each a command line pointed at what the kit serves or writes.
// A new feature that asks a server or reads a file adds its row here
// (ARCHITECTURE.md, "Where to add…").
func TestHostile(t *testing.T) {
	t.Parallel()
	hostile.Run(t, surfaces)
}

// surfaces are surge's features that read from outside.
var surfaces = []hostile.Surface{
	{
		Name: "benchmark requests", Reads: hostile.Server, Serve: mock,
		Pending: map[string]string{
			"escapes in an answer": "issue 59: the sanitiser",
			"escapes in an error":  "issue 59: the sanitiser",
		},
		Hostile: hostile.Match{Method: http.MethodPost, Paths: []string{"/v1/chat/completions"}},
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, e.URL, "--skip-preflight", "--max-response-mib", "1")
		},
		Limit: 1 << 20, Bound: 20 * time.Second, Exit: []int{1},
		Escaped: fill(`{"choices":[{"index":0,"message":{"role":"assistant","content":"{{esc}}"},"finish_reason":"{{esc}}"}],"error":{"message":"{{esc}}"}}`),
	},
	{
		Name: "benchmark requests, following redirects", Reads: hostile.Server, Serve: mock,
		Pending: map[string]string{
			"escapes in an error":         "issue 59: the sanitiser",
			"redirect from https to http": "issue 59: the outbound policy",
		},
		Hostile: hostile.Match{Method: http.MethodPost, Paths: []string{"/v1/chat/completions"}},
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, e.URL, "--skip-preflight", "--max-response-mib", "1", "--follow-redirects")
		},
		Limit: 1 << 20, Bound: 20 * time.Second, Exit: []int{1},
	},
	{
		// The tool loop sends each reply's calls back: a flood of calls or
		// of arguments ends its session (a session_limit error, its
		// warning naming the limits), never a request that grows with it.
		// Every limit is 4 MiB here: the response's and a call's arguments.
		Name: "tool loop", Reads: hostile.Server | hostile.ToolCalls, Serve: mock,
		Pending: map[string]string{
			"escapes in an answer": "issue 59: the sanitiser",
			"escapes in an error":  "issue 59: the sanitiser",
		},
		Hostile: hostile.Match{Method: http.MethodPost, Paths: []string{"/v1/chat/completions"}},
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, e.URL, "--skip-preflight", "--streaming", "--tool-loop", "--max-response-mib", "4")
		},
		Limit: 4 << 20, Bound: 30 * time.Second, Exit: []int{0, 1},
	},
	{
		Name: "preflight", Reads: hostile.Server, Serve: mock,
		Hostile: hostile.Match{Method: http.MethodPost, Paths: []string{"/v1/chat/completions"}, First: 1},
		Args:    func(e *hostile.Env) []string { return profileArgs(e, e.URL) },
		Limit:   1 << 20, Bound: 20 * time.Second, Exit: []int{0, 2},
	},
	{
		Name: "readiness", Reads: hostile.Server, Serve: mock,
		Pending: map[string]string{
			"endless body":                  "issue 59: the bounded reader",
			"huge body with Content-Length": "issue 59: the bounded reader",
			"redirect from https to http":   "issue 59: the outbound policy",
			"redirect to another host":      "issue 59: the outbound policy",
			"redirect to another port":      "issue 59: the outbound policy",
		},
		Hostile: hostile.Match{Method: http.MethodGet, Paths: []string{"/v1/models"}},
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, e.URL, "--skip-preflight", "--wait-for-model-timeout", "3", "--wait-for-model-mode", "models", "--wait-for-model-interval", "0.5")
		},
		Limit: 16 << 20, Bound: 20 * time.Second, Exit: []int{1, 2},
	},
	{
		Name: "model list", Reads: hostile.Server, Serve: mock,
		Pending: map[string]string{
			"endless body":                  "issue 59: the bounded reader",
			"huge body with Content-Length": "issue 59: the bounded reader",
			"redirect from https to http":   "issue 59: the outbound policy",
			"redirect to another host":      "issue 59: the outbound policy",
			"redirect to another port":      "issue 59: the outbound policy",
		},
		Hostile: hostile.Match{Method: http.MethodGet, Paths: []string{"/v1/models"}},
		Args: func(e *hostile.Env) []string {
			return withoutModel(profileArgs(e, e.URL, "--skip-preflight"))
		},
		Limit: 1 << 20, Bound: 20 * time.Second, Exit: []int{0},
	},
	{
		Name: "server facts", Reads: hostile.Server, Serve: mock,
		Hostile: hostile.Match{Method: http.MethodGet, Paths: []string{"/version", "/props", "/info", "/get_server_info", "/api/version"}},
		Args:    func(e *hostile.Env) []string { return profileArgs(e, e.URL, "--skip-preflight", "-v") },
		Limit:   1 << 20, Bound: 20 * time.Second, Exit: []int{0},
	},
	{
		Name: "fingerprint and /metrics probe", Reads: hostile.Server, Serve: mock,
		Pending: map[string]string{
			"endless body":                  "issue 59: the bounded reader",
			"huge body with Content-Length": "issue 59: the bounded reader",
		},
		Hostile: hostile.Match{Method: http.MethodGet, Paths: []string{"/metrics"}},
		Args:    func(e *hostile.Env) []string { return profileArgs(e, e.URL, "--skip-preflight", "-v") },
		Limit:   4 << 20, Bound: 20 * time.Second, Exit: []int{0},
	},
	{
		Name: "/metrics scraper", Reads: hostile.Server, Serve: mock,
		Pending: map[string]string{
			"endless body":                  "issue 59: the bounded reader",
			"huge body with Content-Length": "issue 59: the bounded reader",
			"redirect from https to http":   "issue 59: the outbound policy",
			"redirect to another host":      "issue 59: the outbound policy",
			"redirect to another port":      "issue 59: the outbound policy",
		},
		Hostile: hostile.Match{Method: http.MethodGet, Paths: []string{"/metrics"}},
		Args: func(e *hostile.Env) []string {
			return withServerMetrics(profileArgs(e, e.URL, "--skip-preflight", "-v", "--server-metrics-timeout", "2"))
		},
		Limit: 64 << 20, Bound: 20 * time.Second, Exit: []int{0},
	},
	{
		Name: "server profiler hooks", Reads: hostile.Server, Serve: mock,
		Pending: map[string]string{
			"escapes in an error": "issue 59: the sanitiser",
		},
		Hostile: hostile.Match{Method: http.MethodPost, Paths: []string{"/start_profile", "/stop_profile"}},
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, e.URL, "--skip-preflight", "--server-profiler", "--server-profiler-timeout-seconds", "3")
		},
		Limit: 64 << 10, Bound: 20 * time.Second, Exit: []int{0, 1},
		Silent: "a 2xx answer's body says nothing a control call needs: it is not read",
	},
	{
		Name: "Hub tokenizer download", Reads: hostile.Server, Serve: hubTokenizer,
		Pending: map[string]string{
			"429 storm":                     "issue 59: the Hub's redaction of HF_ENDPOINT's password",
			"503 storm":                     "issue 59: the Hub's redaction of HF_ENDPOINT's password",
			"closed mid-body":               "issue 59: the Hub's redaction of HF_ENDPOINT's password",
			"endless body":                  "issue 59: the bounded reader",
			"escapes in an error":           "issue 59: the Hub's redaction of HF_ENDPOINT's password",
			"huge body with Content-Length": "issue 59: the bounded reader",
			"redirect from https to http":   "issue 59: the outbound policy",
			"redirect loop":                 "issue 59: the Hub's redaction of HF_ENDPOINT's password",
			"redirect to another port":      "issue 59: the outbound policy",
			"slow drip":                     "issue 59: the Hub's redaction of HF_ENDPOINT's password",
			"stalled and interrupted":       "issue 59: the Hub's redaction of HF_ENDPOINT's password",
		},
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, "", "--tokenizer", "hostile/tok", "-v")
		},
		// A tokenizer that cannot be had is a warning: the embedded one
		// counts instead.
		Environ: hub, Limit: 256 << 20, Bound: 0, Exit: []int{0}, Check: noPartialDownload,
	},
	{
		Name: "Hub dataset download", Reads: hostile.Server, Serve: hubDataset,
		Pending: map[string]string{
			"429 storm":                   "issue 59: the Hub's redaction of HF_ENDPOINT's password",
			"503 storm":                   "issue 59: the Hub's redaction of HF_ENDPOINT's password",
			"HTML instead of JSON":        "issue 59: the Hub's redaction of HF_ENDPOINT's password",
			"closed mid-body":             "issue 59: the Hub's redaction of HF_ENDPOINT's password",
			"escapes in an answer":        "issue 59: the Hub's redaction of HF_ENDPOINT's password",
			"escapes in an error":         "issue 59: the Hub's redaction of HF_ENDPOINT's password",
			"redirect from https to http": "issue 59: the outbound policy, the sanitiser",
			"redirect loop":               "issue 59: the Hub's redaction of HF_ENDPOINT's password",
			"redirect to another host":    "issue 59: the sanitiser",
			"redirect to another port":    "issue 59: the outbound policy, the sanitiser",
			"slow drip":                   "issue 59: the Hub's redaction of HF_ENDPOINT's password",
			"stalled and interrupted":     "issue 59: the Hub's redaction of HF_ENDPOINT's password",
		},
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, "", "--hf-dataset", "hostile/ds", "--hf-column", "prompt=question")
		},
		Rows:    `{"question": "an endless dataset's row"}` + "\n",
		Environ: hub, Limit: 64 << 20, Bound: 0, Exit: []int{2}, Check: noPartialDownload,
	},

	// Files.
	{
		Name: "history import", Reads: hostile.File, File: summary, Prepare: runFolder(cmpSlowAbs),
		Pending: map[string]string{
			"FIFO":                 "issue 59: the bounded reader",
			"escapes in the name":  "issue 59: the sanitiser",
			"huge file":            "issue 59: the bounded reader",
			"symlink to /dev/zero": "issue 59: the bounded reader",
		},
		Args: func(e *hostile.Env) []string {
			return []string{"history", "import", "--history", filepath.Join(e.Out, "history.db"), filepath.Dir(e.Path)}
		},
		Escaped: escapedSummary, Limit: 64 << 20, Exit: []int{2}, Bound: 20 * time.Second,
	},
	{
		Name: "compare --baseline DIR", Reads: hostile.File, File: summary, Prepare: runFolder(cmpSlowAbs),
		Pending: map[string]string{
			"FIFO":                 "issue 59: the bounded reader",
			"escapes in the name":  "issue 59: the sanitiser",
			"huge file":            "issue 59: the bounded reader",
			"symlink to /dev/zero": "issue 59: the bounded reader",
		},
		Args: func(e *hostile.Env) []string {
			return []string{"compare", "--baseline", filepath.Dir(e.Path), cmpFastAbs}
		},
		Escaped: escapedSummary, Limit: 64 << 20, Exit: []int{2}, Bound: 30 * time.Second,
	},
	{
		Name: "compare", Reads: hostile.File, File: summary, Prepare: runFolder(cmpSlowAbs),
		Pending: map[string]string{
			"FIFO":                 "issue 59: the bounded reader",
			"escapes in the name":  "issue 59: the sanitiser",
			"huge file":            "issue 59: the bounded reader",
			"symlink to /dev/zero": "issue 59: the bounded reader",
		},
		Args: func(e *hostile.Env) []string {
			return []string{"compare", filepath.Dir(e.Path), cmpFastAbs}
		},
		Escaped: escapedSummary, Limit: 64 << 20, Exit: []int{2}, Bound: 30 * time.Second,
	},
	{
		Name: "report", Reads: hostile.File, File: summary, Prepare: runFolder(cmpSlowAbs),
		Pending: map[string]string{
			"FIFO":                 "issue 59: the bounded reader",
			"escapes in the name":  "issue 59: the sanitiser",
			"huge file":            "issue 59: the bounded reader",
			"symlink to /dev/zero": "issue 59: the bounded reader",
		},
		Args: func(e *hostile.Env) []string {
			return []string{"report", "-o", filepath.Join(e.Out, "report.html"), filepath.Dir(e.Path)}
		},
		Escaped: escapedSummary, Limit: 64 << 20, Exit: []int{2}, Bound: 30 * time.Second,
	},
	{
		Name: "records read by report", Reads: hostile.File, File: "profile_export.jsonl", Prepare: runFolder(cmpSlowAbs),
		Pending: map[string]string{
			"FIFO":                "issue 59: the bounded reader",
			"escapes in the name": "issue 59: the sanitiser",
			"huge file":           "issue 59: the bounded reader",
		},
		Args: func(e *hostile.Env) []string {
			return []string{"report", "-o", filepath.Join(e.Out, "report.html"), filepath.Dir(e.Path)}
		},
		Limit: 64 << 20, Exit: []int{2}, Bound: 30 * time.Second,
	},
	{
		Name: "config file", Reads: hostile.File, File: "config.yaml",
		Pending: map[string]string{
			"FIFO":                "issue 59: the bounded reader",
			"escapes in the name": "issue 59: the sanitiser",
			"huge file":           "issue 59: the bounded reader",
		},
		Args:    func(e *hostile.Env) []string { return profileArgs(e, "", "-f", e.Path) },
		Escaped: fill(`model: "{{esc}}"` + "\n" + `"{{esc}}": 1` + "\n"),
		Limit:   1 << 20, Exit: []int{2}, Bound: 20 * time.Second,
	},
	{
		Name: "dataset file", Reads: hostile.File, File: "data.jsonl",
		Pending: map[string]string{
			"FIFO":                "issue 59: the bounded reader",
			"escapes in the name": "issue 59: the sanitiser",
			"huge file":           "issue 59: the bounded reader",
		},
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, "", "--input-file", e.Path, "--custom-dataset-type", "single_turn")
		},
		Escaped: fill(`{"text": "{{esc}}"}` + "\n" + `{"{{esc}}": 1}` + "\n"),
		Limit:   64 << 20, Exit: []int{2}, Bound: 20 * time.Second,
	},
	{
		Name: "system prompt file", Reads: hostile.File, File: "system.txt",
		Pending: map[string]string{
			"FIFO":                "issue 59: the bounded reader",
			"escapes in the name": "issue 59: the sanitiser",
			"huge file":           "issue 59: the bounded reader",
		},
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, "", "--system-prompt-file", e.Path)
		},
		Limit: 1 << 20, Exit: []int{2}, Bound: 20 * time.Second,
	},
	{
		Name: "tokenizer file", Reads: hostile.File, File: "tokenizer.json",
		Pending: map[string]string{
			"FIFO":                 "issue 59: the bounded reader",
			"escapes in the name":  "issue 59: the sanitiser",
			"huge file":            "issue 59: the bounded reader",
			"symlink to /dev/zero": "issue 59: the bounded reader",
		},
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, "", "--tokenizer", e.Path)
		},
		Limit: 256 << 20, Exit: []int{2}, Bound: 20 * time.Second,
	},
	{
		Name: "prompt corpus", Reads: hostile.File, File: "corpus.txt",
		Pending: map[string]string{
			"FIFO":                 "issue 59: the bounded reader",
			"escapes in the name":  "issue 59: the sanitiser",
			"huge file":            "issue 59: the bounded reader",
			"symlink to /dev/zero": "issue 59: the bounded reader",
		},
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, "", "--prompt-corpus", e.Path)
		},
		// A corpus is any text: bytes that are not are read as text too.
		Limit: 64 << 20, Exit: []int{0, 2}, Bound: 20 * time.Second,
	},
	{
		Name: "history database", Reads: hostile.File | hostile.SQLite, File: "history.db",
		Pending: map[string]string{
			"escapes in the content": "issue 59: the sanitiser",
			"escapes in the name":    "issue 59: the sanitiser",
		},
		Args: func(e *hostile.Env) []string {
			return []string{"history", "--history", e.Path}
		},
		Escaped: labelledHistory, Limit: 1 << 20, Exit: []int{1, 2}, Bound: 20 * time.Second,
	},
	{
		// The regression gate fails closed: a history it cannot trust is
		// exit 3, never a pass; another application's is left as it was.
		Name: "regression gate on the history", Reads: hostile.File | hostile.SQLite, File: "history.db",
		Pending: map[string]string{
			"escapes in the name": "issue 59: the sanitiser",
		},
		Args: func(e *hostile.Env) []string {
			return []string{"compare", "--history", e.Path, "--baseline", "history:last-matching", cmpSlowAbs,
				"--fail-on", "time_to_first_token.p50>+25%"}
		},
		Escaped: labelledHistory, Limit: 1 << 20, Exit: []int{3}, Bound: 20 * time.Second,
	},
	{
		Name: "trend", Reads: hostile.File | hostile.SQLite, File: "history.db",
		Pending: map[string]string{
			"escapes in the content": "issue 59: the sanitiser",
			"escapes in the name":    "issue 59: the sanitiser",
		},
		Args: func(e *hostile.Env) []string {
			return []string{"trend", "--history", e.Path, "--any-workload", "time_to_first_token.p50"}
		},
		Escaped: labelledHistory, Limit: 1 << 20, Exit: []int{1, 2}, Bound: 20 * time.Second,
	},
}

// The summary's file name, and runs to compare with.
const summary = "profile_export_aiperf.json"

var (
	cmpSlowAbs = filepath.Join(root, cmpSlow)
	cmpFastAbs = filepath.Join(root, cmpFast)
)

// runFolder copies a run's exports beside the case's file (not over it).
func runFolder(from string) func(t *testing.T, e *hostile.Env) {
	return func(t *testing.T, e *hostile.Env) {
		entries, err := os.ReadDir(from)
		if err != nil {
			t.Fatal(err)
		}
		for _, de := range entries {
			to := filepath.Join(filepath.Dir(e.Path), de.Name())
			if de.Name() == filepath.Base(e.Path) {
				continue
			}
			b, err := os.ReadFile(filepath.Join(from, de.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(to, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// fill is a fixed Escaped template.
func fill(doc string) func(*testing.T, *hostile.Env) string {
	return func(*testing.T, *hostile.Env) string { return hostile.Fill(doc) }
}

// escapedSummary is a run's summary whose model name carries escapes.
func escapedSummary(t *testing.T, e *hostile.Env) string {
	b, err := os.ReadFile(filepath.Join(cmpSlow, summary))
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), `"mock"`, `"mock`+hostile.EscapesJSON()+`"`)
}

// labelledHistory is a history holding a run imported with a label of
// escapes (what surge history label or an import could set).
func labelledHistory(t *testing.T, e *hostile.Env) string {
	db := filepath.Join(e.Dir, "labelled.db")
	e.Surge(t, nil, "history", "import", "--history", db, "--label", "label"+hostile.Escapes, cmpSlowAbs)
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noPartialDownload: the Hugging Face cache holds no partial file.
func noPartialDownload(t *testing.T, e *hostile.Env, o *hostile.Outcome) {
	_ = filepath.WalkDir(filepath.Join(e.Out, "hf"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".incomplete") {
			t.Errorf("a partial download stayed in the cache: %s", p)
		}
		return nil
	})
}

// profileArgs is a small profile run (two requests, one at a time) against url
// (the embedded mock when ""), sending the secret as an -H header and the
// API key, its exports under e.Out.
func profileArgs(e *hostile.Env, url string, more ...string) []string {
	args := []string{"profile", "--model", "hostile-model", "--request-count", "2", "--concurrency", "1",
		"--isl", "16", "--osl", "4", "--ui", "none", "--no-gpu-telemetry", "--no-server-metrics", "--no-history",
		"--request-timeout-seconds", "3", "--output-artifact-dir", filepath.Join(e.Out, "run"),
		"-H", "X-Custom-Token:" + e.Secret, "--api-key", e.Secret}
	if url != "" {
		args = append(args, "--url", url)
	}
	if !slices.Contains(more, "--tokenizer") {
		// No look at the Hub for hostile-model's tokenizer.
		args = append(args, "--tokenizer", "builtin")
	}
	return append(args, more...)
}

// withoutModel drops --model from a run's arguments.
func withoutModel(args []string) []string {
	for i, a := range args {
		if a == "--model" {
			return append(args[:i:i], args[i+2:]...)
		}
	}
	return args
}

// withServerMetrics drops --no-server-metrics.
func withServerMetrics(args []string) []string {
	for i, a := range args {
		if a == "--no-server-metrics" {
			return append(args[:i:i], args[i+1:]...)
		}
	}
	return args
}

// hub points the Hub at the case's server (a password in its URL), with
// the secret as HF_TOKEN.
func hub(e *hostile.Env) []string {
	return []string{"HF_ENDPOINT=" + e.UserURL, "HF_TOKEN=" + e.Secret, "HF_HUB_OFFLINE=0"}
}

// mock is the well-behaved target: the mock server, quick.
func mock(*testing.T) http.Handler {
	return mockserver.New(mockserver.Config{TTFT: time.Millisecond, ITL: time.Millisecond})
}

// hubTokenizer serves a model repository's tokenizer.json as the Hub
// does (a redirect to its file store); the mock behind it.
func hubTokenizer(t *testing.T) http.Handler {
	tok, err := os.ReadFile(filepath.Join("datasets", "tokenizer", "qwen3.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	m := mock(t)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/store/tokenizer":
			_, _ = w.Write(tok)
		case "/hostile/tok/resolve/main/tokenizer.json":
			w.Header().Set("X-Repo-Commit", "89abcdef0123456789abcdef0123456789abcdef")
			w.Header().Set("X-Linked-Etag", `"tokenizer"`)
			http.Redirect(w, r, "/store/tokenizer", http.StatusFound)
		default:
			m.ServeHTTP(w, r)
		}
	})
}

// hubDataset serves a dataset repository of one JSONL file.
func hubDataset(t *testing.T) http.Handler {
	h := hftest.New(t)
	var b strings.Builder
	for i := range 8 {
		fmt.Fprintf(&b, `{"question": "question %d"}`+"\n", i)
	}
	h.Add("hostile/ds", "main", "data/train.jsonl", []byte(b.String()))
	return h
}
