package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surgebench/surge/datasets/hf/hftest"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/internal/hostile"
	"github.com/surgebench/surge/metrics/mlflow"
	"github.com/surgebench/surge/metrics/mlflow/mlflowtest"
	"github.com/surgebench/surge/metrics/otlp"
	"github.com/surgebench/surge/metrics/otlp/otlptest"
	otlpreceiver "github.com/surgebench/surge/telemetry/otlp"
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
		Hostile: hostile.Match{Method: http.MethodPost, Paths: []string{"/v1/chat/completions"}},
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, e.URL, "--skip-preflight", "--max-response-mib", "1")
		},
		Limit: 1 << 20, Bound: 20 * time.Second, Exit: []int{1},
		Escaped: fill(`{"choices":[{"index":0,"message":{"role":"assistant","content":"{{esc}}"},"finish_reason":"{{esc}}"}],"error":{"message":"{{esc}}"}}`),
	},
	{
		Name: "benchmark requests, following redirects", Reads: hostile.Server, Serve: mock,
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
		Hostile: hostile.Match{Method: http.MethodGet, Paths: []string{"/v1/models"}},
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, e.URL, "--skip-preflight", "--wait-for-model-timeout", "3", "--wait-for-model-mode", "models", "--wait-for-model-interval", "0.5")
		},
		Limit: 16 << 20, Bound: 20 * time.Second, Exit: []int{1, 2},
	},
	{
		Name: "model list", Reads: hostile.Server, Serve: mock,
		Hostile: hostile.Match{Method: http.MethodGet, Paths: []string{"/v1/models"}},
		Args: func(e *hostile.Env) []string {
			return withoutModel(profileArgs(e, e.URL, "--skip-preflight", "-v"))
		},
		Limit: 1 << 20, Bound: 20 * time.Second, Exit: []int{0},
	},
	{
		Name: "server facts", Reads: hostile.Server, Serve: mock,
		Hostile: hostile.Match{Method: http.MethodGet, Paths: []string{"/v1/models", "/version", "/props", "/info", "/get_server_info", "/api/version"}},
		Args:    func(e *hostile.Env) []string { return profileArgs(e, e.URL, "--skip-preflight", "-v") },
		Limit:   1 << 20, Bound: 20 * time.Second, Exit: []int{0},
	},
	{
		Name: "fingerprint and /metrics probe", Reads: hostile.Server, Serve: mock,
		Hostile: hostile.Match{Method: http.MethodGet, Paths: []string{"/metrics"}},
		Args:    func(e *hostile.Env) []string { return profileArgs(e, e.URL, "--skip-preflight", "-v") },
		Limit:   4 << 20, Bound: 20 * time.Second, Exit: []int{0},
	},
	{
		Name: "/metrics scraper", Reads: hostile.Server, Serve: mock,
		Hostile: hostile.Match{Method: http.MethodGet, Paths: []string{"/metrics"}},
		Args: func(e *hostile.Env) []string {
			return withServerMetrics(profileArgs(e, e.URL, "--skip-preflight", "-v", "--server-metrics-timeout", "2"))
		},
		Limit: 16 << 20, Bound: 20 * time.Second, Exit: []int{0},
	},
	{
		Name: "DCGM exporter scrape", Reads: hostile.Server, Serve: mock,
		Args: func(e *hostile.Env) []string {
			// A scrape may take the interval: 6 s, as 16 MiB of a huge
			// body took over 2 s with the other rows running on a CI
			// machine (the interval is the scrape's bound, and a scrape
			// cut by it never reaches the limit the case looks for).
			// The run lasts longer (60 requests of about 36 ms) so that
			// the first scrape is answered.
			args := without(without(profileArgs(e, "", "-v", "--gpu-telemetry", e.URL+"/metrics", "--gpu-telemetry-interval", "6"), "--no-gpu-telemetry", 0), "--request-count", 1)
			return append(args, "--request-count", "60")
		},
		Limit: 16 << 20, Bound: 20 * time.Second, Exit: []int{0},
	},
	{
		Name: "server profiler hooks", Reads: hostile.Server, Serve: mock,
		Hostile: hostile.Match{Method: http.MethodPost, Paths: []string{"/start_profile", "/stop_profile"}},
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, e.URL, "--skip-preflight", "--server-profiler", "--server-profiler-timeout-seconds", "3")
		},
		Limit: 64 << 10, Bound: 20 * time.Second, Exit: []int{0, 1},
		Silent: "a 2xx answer's body says nothing a control call needs: it is not read",
	},
	{
		Name: "Hub tokenizer download", Reads: hostile.Server, Serve: hubTokenizer,
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, "", "--tokenizer", "hostile/tok", "-v")
		},
		// A tokenizer that cannot be had is a warning: the embedded one
		// counts instead.
		Environ: hub, Limit: 256 << 20, Bound: 0, Exit: []int{0}, Check: noPartialDownload,
	},
	{
		Name: "Hub dataset download", Reads: hostile.Server, Serve: hubDataset,
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, "", "--hf-dataset", "hostile/ds", "--hf-column", "prompt=question")
		},
		Rows:    `{"question": "an endless dataset's row"}` + "\n",
		Environ: hub, Limit: 64 << 20, Bound: 0, Exit: []int{2}, Check: noPartialDownload,
	},
	{
		Name: "OpenTelemetry export", Reads: hostile.Server, Serve: otlpCollector,
		Hostile: hostile.Match{Method: http.MethodPost, Paths: []string{"/v1/metrics", "/v1/traces"}},
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, "", "--otel-url", e.URL, "--otel-span-sample-ratio", "1")
		},
		// The collector's credential, as the OpenTelemetry SDK reads it.
		Environ: func(e *hostile.Env) []string {
			return []string{"OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer " + e.Secret}
		},
		// A collector that misbehaves is one warning: the run and its
		// exports stand.
		Limit: otlp.MaxResponse, Bound: 30 * time.Second, Exit: []int{0},
	},
	{
		Name: "MLflow logging", Reads: hostile.Server, Serve: mlflowServer,
		Hostile: hostile.Match{Paths: []string{"/api/2.0/"}},
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, "", "--mlflow-tracking-uri", e.URL)
		},
		Environ: func(e *hostile.Env) []string { return []string{"MLFLOW_TRACKING_TOKEN=" + e.Secret} },
		// A tracking server that misbehaves is one warning: the run and
		// its artifacts stand.
		Limit: mlflow.MaxAnswer, Bound: 40 * time.Second, Exit: []int{0},
	},

	// Remote --input-file: fetched into the cache, then read as a file.
	{
		Name: "remote input file (https)", Reads: hostile.Server, Serve: remoteFile,
		Hostile: hostile.Match{Paths: []string{"/data/"}},
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, "", "--input-file", e.UserURL+"/data/prompts.jsonl", "--custom-dataset-type", "single_turn")
		},
		Environ: remoteCache, Limit: remoteLimit, Bound: 0, Exit: []int{2},
	},
	{
		Name: "remote input file (hf://)", Reads: hostile.Server, Serve: hubDataset,
		Hostile: hostile.Match{Paths: []string{"/datasets/"}},
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, "", "--input-file", "hf://datasets/hostile/ds/data/train.jsonl", "--custom-dataset-type", "single_turn")
		},
		Environ: func(e *hostile.Env) []string { return append(hub(e), remoteCache(e)...) },
		Limit:   remoteLimit, Bound: 0, Exit: []int{2},
	},
	{
		Name: "remote input file (s3://)", Reads: hostile.Server, Serve: remoteFile,
		Hostile: hostile.Match{Paths: []string{"/data/"}},
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, "", "--input-file", "s3://data/prompts.jsonl", "--custom-dataset-type", "single_turn")
		},
		// The AWS SDK's credential chain finds the keys in the
		// environment; the secret key signs and is never sent.
		Environ: func(e *hostile.Env) []string {
			return append(remoteCache(e), "AWS_ENDPOINT_URL_S3="+e.URL, "AWS_ACCESS_KEY_ID=AKIDHOSTILE", "AWS_SECRET_ACCESS_KEY="+e.Secret,
				"AWS_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE="+filepath.Join(e.Dir, "none"),
				"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(e.Dir, "none"), "AWS_CA_BUNDLE=", "AWS_PROFILE=")
		},
		Limit: remoteLimit, Bound: 0, Exit: []int{2},
	},
	{
		Name: "Hub Parquet dataset", Reads: hostile.Server | hostile.Parquet, Serve: hubParquet,
		Hostile: hostile.Match{Paths: []string{"/datasets/hostile/pq/resolve/main/data/train.parquet"}},
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, "", "--hf-dataset", "hostile/pq", "--hf-column", "prompt=question")
		},
		Environ: hub, Limit: 4 << 30, Bound: 0, Exit: []int{2}, Check: noPartialDownload,
	},

	// Files.
	{
		Name: "history import", Reads: hostile.File, File: summary, Prepare: runFolder(cmpSlowAbs),
		Args: func(e *hostile.Env) []string {
			return []string{"history", "import", "--history", filepath.Join(e.Out, "history.db"), filepath.Dir(e.Path)}
		},
		Escaped: escapedSummary, Limit: 64 << 20, Exit: []int{2}, Bound: 20 * time.Second,
	},
	{
		Name: "compare --baseline DIR", Reads: hostile.File, File: summary, Prepare: runFolder(cmpSlowAbs),
		Args: func(e *hostile.Env) []string {
			return []string{"compare", "--baseline", filepath.Dir(e.Path), cmpFastAbs}
		},
		Escaped: escapedSummary, Limit: 64 << 20, Exit: []int{2}, Bound: 30 * time.Second,
	},
	{
		Name: "compare", Reads: hostile.File, File: summary, Prepare: runFolder(cmpSlowAbs),
		Args: func(e *hostile.Env) []string {
			return []string{"compare", filepath.Dir(e.Path), cmpFastAbs}
		},
		Escaped: escapedSummary, Limit: 64 << 20, Exit: []int{2}, Bound: 30 * time.Second,
	},
	{
		Name: "report", Reads: hostile.File, File: summary, Prepare: runFolder(cmpSlowAbs),
		Args: func(e *hostile.Env) []string {
			return []string{"report", "-o", filepath.Join(e.Out, "report.html"), filepath.Dir(e.Path)}
		},
		Escaped: escapedSummary, Limit: 64 << 20, Exit: []int{2}, Bound: 30 * time.Second,
	},
	{
		Name: "records read by report", Reads: hostile.File, File: "profile_export.jsonl", Prepare: runFolder(cmpSlowAbs),
		Args: func(e *hostile.Env) []string {
			return []string{"report", "-o", filepath.Join(e.Out, "report.html"), filepath.Dir(e.Path)}
		},
		Limit: 64 << 20, Exit: []int{2}, Bound: 30 * time.Second,
	},
	{
		Name: "merge", Reads: hostile.File, File: "profile_export_surge_state.json", Prepare: shards,
		Args: func(e *hostile.Env) []string {
			return []string{"merge", "--force", filepath.Dir(e.Path), filepath.Join(e.Dir, "shard1"), "-o", filepath.Join(e.Out, "merged")}
		},
		Limit: 64 << 20, Exit: []int{2}, Bound: 30 * time.Second,
	},
	{
		Name: "config file", Reads: hostile.File, File: "config.yaml",
		Args:    func(e *hostile.Env) []string { return profileArgs(e, "", "-f", e.Path) },
		Escaped: fill(`model: "{{esc}}"` + "\n" + `"{{esc}}": 1` + "\n"),
		Limit:   1 << 20, Exit: []int{2}, Bound: 20 * time.Second,
	},
	{
		// A template that renders no JSON is refused before the run.
		Name: "endpoint template file", Reads: hostile.File, File: "body.tmpl",
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, "", "--endpoint-type", "template", "--endpoint", "/v1/completions", "--endpoint-template", "@"+e.Path)
		},
		Escaped: fill(`{"model": "hostile-model", "prompt": "{{esc}}", "max_tokens": 4}`),
		Limit:   1 << 20, Exit: []int{2}, Bound: 20 * time.Second,
	},
	{
		Name: "payload_template file", Reads: hostile.File, File: "payload.jinja",
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, "", "--endpoint-type", "template", "--endpoint", "/v1/completions", "--extra-inputs", "payload_template:"+e.Path)
		},
		Escaped: fill(`{"model": "hostile-model", "prompt": "{{esc}}", "max_tokens": 4}`),
		Limit:   1 << 20, Exit: []int{2}, Bound: 20 * time.Second,
	},
	{
		Name: "dataset file", Reads: hostile.File, File: "data.jsonl",
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, "", "--input-file", e.Path, "--custom-dataset-type", "single_turn")
		},
		Escaped: fill(`{"text": "{{esc}}"}` + "\n" + `{"{{esc}}": 1}` + "\n"),
		Limit:   16 << 20, Exit: []int{2}, Bound: 20 * time.Second,
	},
	{
		Name: "system prompt file", Reads: hostile.File, File: "system.txt",
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, "", "--system-prompt-file", e.Path)
		},
		Limit: 1 << 20, Exit: []int{2}, Bound: 20 * time.Second,
	},
	{
		Name: "tokenizer file", Reads: hostile.File, File: "tokenizer.json",
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, "", "--tokenizer", e.Path)
		},
		Limit: 256 << 20, Exit: []int{2}, Bound: 20 * time.Second,
	},
	{
		Name: "prompt corpus", Reads: hostile.File, File: "corpus.txt",
		Args: func(e *hostile.Env) []string {
			return profileArgs(e, "", "--prompt-corpus", e.Path)
		},
		// A corpus is any text: bytes that are not are read as text too.
		Limit: 64 << 20, Exit: []int{0, 2}, Bound: 20 * time.Second,
	},
	{
		Name: "history database", Reads: hostile.File | hostile.SQLite, File: "history.db",
		Args: func(e *hostile.Env) []string {
			return []string{"history", "--history", e.Path}
		},
		Escaped: labelledHistory, Limit: 1 << 20, Exit: []int{1, 2}, Bound: 20 * time.Second,
	},
	{
		// The regression gate fails closed: a history it cannot trust is
		// exit 3, never a pass; another application's is left as it was.
		Name: "regression gate on the history", Reads: hostile.File | hostile.SQLite, File: "history.db",
		Args: func(e *hostile.Env) []string {
			return []string{"compare", "--history", e.Path, "--baseline", "history:last-matching", cmpSlowAbs,
				"--fail-on", "time_to_first_token.p50>+25%"}
		},
		Escaped: labelledHistory, Limit: 1 << 20, Exit: []int{3}, Bound: 20 * time.Second,
	},
	{
		Name: "trend", Reads: hostile.File | hostile.SQLite, File: "history.db",
		Args: func(e *hostile.Env) []string {
			return []string{"trend", "--history", e.Path, "--any-workload", "time_to_first_token.p50"}
		},
		Escaped: labelledHistory, Limit: 1 << 20, Exit: []int{1, 2}, Bound: 20 * time.Second,
	},
	{
		// A client sends the receiver what no exporter would while a run
		// (its embedded mock exporting spans to it) goes on: the run ends
		// as planned.
		Name: "OTLP receiver", Reads: hostile.Listens,
		Args: func(e *hostile.Env) []string {
			args := withoutFlag(profileArgs(e, ""), "--request-count")
			return append(args, "--benchmark-duration", "3", "--otlp-receiver", e.Listen, "--mock-server-timings", "otlp", "--otlp-wait", "1")
		},
		Limit: otlpreceiver.MaxBody, Bound: 30 * time.Second, Exit: []int{0},
	},
}

// withoutFlag drops flag and its value from a run's arguments.
func withoutFlag(args []string, flag string) []string {
	for i, a := range args {
		if a == flag {
			return append(args[:i:i], args[i+2:]...)
		}
	}
	return args
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

// without drops flag, and the n values after it, from a run's arguments.
func without(args []string, flag string, n int) []string {
	for i, a := range args {
		if a == flag {
			return append(args[:i:i], args[i+1+n:]...)
		}
	}
	return args
}

// withoutModel drops --model from a run's arguments.
func withoutModel(args []string) []string { return without(args, "--model", 1) }

// withServerMetrics drops --no-server-metrics.
func withServerMetrics(args []string) []string { return without(args, "--no-server-metrics", 0) }

// shardExports are two shards' exports of one small run, made once.
var shardExports struct {
	once sync.Once
	dirs [2]string
	err  error
}

// shards puts shard 0's exports beside the case's file (not over it) and
// shard 1's in e.Dir/shard1: what surge merge reads.
func shards(t *testing.T, e *hostile.Env) {
	shardExports.once.Do(func() {
		// Under the folder TestMain removes.
		base, err := os.MkdirTemp(os.Getenv("XDG_DATA_HOME"), "shards-")
		if err != nil {
			shardExports.err = err
			return
		}
		for i := range shardExports.dirs {
			dir := filepath.Join(base, fmt.Sprint(i))
			shardExports.dirs[i] = dir
			e.Surge(t, nil, "profile", "--request-count", "8", "--concurrency", "2", "--isl", "16", "--osl", "4", "--ui", "none",
				"--no-gpu-telemetry", "--no-server-metrics", "--no-history", "--tokenizer", "builtin", "--random-seed", "7",
				"--shard", fmt.Sprintf("%d/2", i), "--output-artifact-dir", dir)
		}
	})
	if shardExports.err != nil {
		t.Fatal(shardExports.err)
	}
	runFolder(shardExports.dirs[0])(t, e)
	copyDir(t, shardExports.dirs[1], filepath.Join(e.Dir, "shard1"))
}

// copyDir copies a folder's files.
func copyDir(t *testing.T, from, to string) {
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range entries {
		if !de.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, de.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// hub points the Hub at the case's server (a password in its URL), with
// the secret as HF_TOKEN.
func hub(e *hostile.Env) []string {
	return []string{"HF_ENDPOINT=" + e.UserURL, "HF_TOKEN=" + e.Secret, "HF_HUB_OFFLINE=0"}
}

// mock is the well-behaved target: the mock server, quick.
// otlpCollector is a well-behaved OTLP/HTTP collector.
func otlpCollector(*testing.T) http.Handler { return &otlptest.Receiver{} }

// mlflowServer is a well-behaved MLflow tracking server.
func mlflowServer(*testing.T) http.Handler { return mlflowtest.Handler() }

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

// remoteLimit is the bound the remote input surfaces run with
// (SURGE_INPUT_MAX_BYTES: the default, 1 GiB, would fill the sandbox's
// disk against an endless body).
const remoteLimit = 32 << 20

// remoteCache keeps the fetched inputs under e.Out (checked for the
// secret) and lowers their bound.
func remoteCache(e *hostile.Env) []string {
	return []string{"SURGE_CACHE_DIR=" + filepath.Join(e.Out, "inputs"), fmt.Sprintf("SURGE_INPUT_MAX_BYTES=%d", remoteLimit)}
}

// remoteFile serves a JSONL file of prompts at /data/prompts.jsonl, as a
// web server or an S3 bucket (path-style /BUCKET/KEY) does: an ETag, GET
// and HEAD.
func remoteFile(*testing.T) http.Handler {
	var b strings.Builder
	for i := range 8 {
		fmt.Fprintf(&b, `{"text": "remote prompt %d"}`+"\n", i)
	}
	body := b.String()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/data/prompts.jsonl" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("ETag", `"prompts-v1"`)
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write([]byte(body))
	})
}

// hubParquet serves a dataset repository of one Parquet file.
func hubParquet(t *testing.T) http.Handler {
	h := hftest.New(t)
	type row struct {
		Q string `parquet:"question"`
	}
	rows := make([]row, 8)
	for i := range rows {
		rows[i].Q = fmt.Sprintf("question %d", i)
	}
	h.Add("hostile/pq", "main", "data/train.parquet", hftest.Parquet(t, rows, 2))
	return h
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
