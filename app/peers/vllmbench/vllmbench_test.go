package vllmbench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/app/peers"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/metrics/artifact"
	"github.com/surgebench/surge/metrics/compare"
	"github.com/surgebench/surge/metrics/export/shape"
)

func TestMain(m *testing.M) { apptest.Main(m) }

// serve runs a command line's flags against the mock at url, in the
// current folder; it returns stdout, stderr, the exit code and the error.
func serve(t *testing.T, argv []string) (string, string, int, error) {
	t.Helper()
	var out, log bytes.Buffer
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	code, err := Serve(context.Background(), argv, Env{Version: "test", Stdout: &out, Stderr: &log, Now: func() time.Time { return now }})
	return out.String(), log.String(), code, err
}

// atMock points a documented command line at the mock: --port and
// --base-url set to it (added when the line names neither), placeholders
// set to the test's files.
func atMock(argv []string, url string, files map[string]string) []string {
	port := url[strings.LastIndex(url, ":")+1:]
	var out []string
	found := false
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		for k, v := range files {
			a = strings.ReplaceAll(a, k, v)
		}
		switch a {
		case "--port":
			out, found = append(out, a, port), true
			i++
			continue
		case "--base-url":
			out, found = append(out, a, url), true
			i++
			continue
		}
		out = append(out, a)
	}
	if !found {
		out = append(out, "--port", port)
	}
	return out
}

// resultShape is vLLM's result JSON as serve.py writes it: the run's
// setup, the benchmark's counts and throughputs, and each selected
// metric's mean, median, std and percentiles (field names and types from
// vllm/benchmarks/serve.py's main_async and benchmark()).
func resultShape(metrics []string, percentiles []string, detailed bool, extra ...string) shape.Shape {
	f := map[string]shape.Shape{
		"date": shape.String, "endpoint_type": shape.String, "backend": shape.String, "label": shape.OrNull(shape.String),
		"model_id": shape.String, "tokenizer_id": shape.String, "num_prompts": shape.Integer,
		"request_rate": shape.OneOf{shape.String, shape.Number}, "burstiness": shape.Number, "max_concurrency": shape.OrNull(shape.Integer),
		"duration": shape.Number, "completed": shape.Integer, "failed": shape.Integer, "total_input_tokens": shape.Integer,
		"total_output_tokens": shape.Integer, "request_throughput": shape.Number, "request_goodput": shape.OrNull(shape.Number),
		"output_throughput": shape.Number, "total_token_throughput": shape.Number,
		"max_output_tokens_per_s": shape.Number, "max_concurrent_requests": shape.Integer,
	}
	for _, m := range metrics {
		for _, s := range []string{"mean", "median", "std"} {
			f[s+"_"+m+"_ms"] = shape.Number
		}
		for _, p := range percentiles {
			f["p"+p+"_"+m+"_ms"] = shape.Number
		}
	}
	if detailed {
		f["input_lens"] = shape.List(shape.Integer)
		f["output_lens"] = shape.List(shape.Integer)
		f["ttfts"] = shape.List(shape.Number)
		f["itls"] = shape.List(shape.List(shape.Number))
		f["generated_texts"] = shape.List(shape.String)
		f["errors"] = shape.List(shape.String)
	}
	m := shape.Model{Fields: f, Optional: []string{"label", "max_concurrency", "request_goodput"}, Extra: map[string]shape.Shape{}}
	for _, e := range extra {
		m.Extra[e] = shape.String // --metadata KEY=VALUE
	}
	return m
}

// onlyResult is the one result JSON written under dir.
func onlyResult(t *testing.T, dir string) (string, []byte) {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(matches) != 1 {
		t.Fatalf("%s: want one result JSON, got %v", dir, matches)
	}
	b, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	return matches[0], b
}

// TestRandomSaveResult is the "done when": a random-dataset line
// with --save-result writes a result JSON with vLLM's keys and types,
// its numbers vLLM's definitions of the run's own records (numpy's
// percentiles of TTFT and E2EL, TPOT without the first token, ITLs the
// gaps between streamed chunks), and prints vLLM's summary labels.
func TestRandomSaveResult(t *testing.T) {
	url := apptest.Mock(t, mockserver.Config{TTFT: time.Millisecond, ITL: 50 * time.Microsecond})
	t.Chdir(t.TempDir())
	argv := []string{"--backend", "vllm", "--base-url", url, "--model", "mock", "--dataset-name", "random",
		"--random-input-len", "32", "--random-output-len", "16", "--num-prompts", "12", "--max-concurrency", "4",
		"--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", "50,99,99.9", "--goodput", "ttft:10000", "tpot:1000",
		"--save-result", "--save-detailed", "--result-dir", "res", "--metadata", "tp=1", "--disable-tqdm"}
	out, log, code, err := serve(t, argv)
	if err != nil || code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, log)
	}
	for _, label := range []string{"============ Serving Benchmark Result ============", "Successful requests:                     12",
		"Request throughput (req/s):", "Request goodput (req/s):", "Output token throughput (tok/s):", "P99 E2EL (ms):",
		"P99.9 TTFT (ms):", "Median TPOT (ms):", "Mean ITL (ms):", "Maximum request concurrency:             4"} {
		if !strings.Contains(out, label) {
			t.Errorf("summary lacks %q:\n%s", label, out)
		}
	}
	path, b := onlyResult(t, "res")
	if !regexp.MustCompile(`^vllm-infqps-concurrency4-mock-20260501-120000\.json$`).MatchString(filepath.Base(path)) {
		t.Errorf("file name %s, not vLLM's LABEL-RATEqps-concurrencyN-MODEL-DATE.json", filepath.Base(path))
	}
	if errs := shape.Check(path, b, resultShape([]string{"ttft", "tpot", "itl", "e2el"}, []string{"50", "99", "99.9"}, true, "tp")); len(errs) > 0 {
		t.Fatalf("not vLLM's result JSON:\n%s", strings.Join(errs, "\n"))
	}
	var res map[string]any
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res["completed"] != 12.0 || res["failed"] != 0.0 || res["request_rate"] != "inf" || res["tp"] != "1" || res["total_output_tokens"] != 12.0*16 {
		t.Errorf("result %v", res)
	}
	// The numbers, recomputed from surge's records as vLLM defines them.
	dirs, _ := filepath.Glob(filepath.Join("artifacts", "*"))
	if len(dirs) != 1 {
		t.Fatalf("surge's exports: %v", dirs)
	}
	f, err := peers.Load(context.Background(), dirs[0], false)
	if err != nil {
		t.Fatal(err)
	}
	var ttft, tpot, itl, e2el []float64
	for _, r := range f.Requests {
		ttft = append(ttft, r.TTFT)
		tpot = append(tpot, (r.Latency-r.TTFT)/float64(r.CompletionTokens-1))
		itl = append(itl, r.Chunks...)
		e2el = append(e2el, r.Latency)
	}
	near := func(key string, want float64) {
		if got, _ := res[key].(float64); math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %v, want %v", key, got, want)
		}
	}
	near("p99_ttft_ms", peers.NewSample(ttft).Percentile(99))
	near("median_e2el_ms", peers.NewSample(e2el).Median())
	near("mean_tpot_ms", peers.NewSample(tpot).Mean())
	near("std_itl_ms", peers.NewSample(itl).Std())
	near("p99.9_itl_ms", peers.NewSample(itl).Percentile(99.9))
	if n := len(res["itls"].([]any)); n != 12 {
		t.Errorf("itls has %d requests' lists, want 12", n)
	}
	if texts := res["generated_texts"].([]any); texts[0] == "" {
		t.Error("--save-detailed: the generated texts are empty")
	}
	if !strings.Contains(log, "surge: running as: surge profile --url "+url) {
		t.Errorf("the equivalent surge command is not named:\n%s", log)
	}
}

// TestDocumentedLines runs vLLM's documented command lines unchanged
// (their address and data placeholders aside) against the mock: each one
// surge takes runs to a summary, each one it refuses exits 2 naming the
// flag.
func TestDocumentedLines(t *testing.T) {
	url := apptest.Mock(t, mockserver.Config{TTFT: time.Millisecond, ITL: 50 * time.Microsecond})
	here, _ := os.Getwd()
	files := map[string]string{
		"<your data path>/ShareGPT_V3_unfiltered_cleaned_split.json": filepath.Join(here, "..", "..", "..", "datasets", "testdata", "sharegpt_dummy.json"),
		"<path-to-your-data-jsonl>":                                  filepath.Join(here, "testdata", "data.jsonl"),
		"<model>":                                                    "mock",
	}
	f, err := os.Open(filepath.Join("testdata", "documented.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		refused := ""
		if rest, ok := strings.CutPrefix(line, "refused:"); ok {
			refused, line, _ = strings.Cut(rest, " ")
		}
		for k, v := range files {
			line = strings.ReplaceAll(line, k, v)
		}
		argv := apptest.ShellWords(t, line)
		switch {
		case argv[0] == "vllm-bench":
			argv = argv[1:]
		case len(argv) > 3 && argv[0] == "vllm" && argv[1] == "bench" && argv[2] == "serve":
			argv = argv[3:]
		default:
			t.Fatalf("documented.txt:%d: not a vllm bench serve line", n)
		}
		t.Run(strings.Join(argv[:min(6, len(argv))], " "), func(t *testing.T) {
			t.Chdir(t.TempDir())
			out, log, code, err := serve(t, atMock(argv, url, files))
			if refused != "" {
				var ue *cmdline.UsageError
				if code != cmdline.ExitUsage || !errors.As(err, &ue) || !strings.Contains(err.Error(), refused) || !strings.Contains(err.Error(), "refused") {
					t.Fatalf("documented.txt:%d: exit %d, %v; want a refusal naming %s", n, code, err, refused)
				}
				return
			}
			if code != 0 || err != nil || !strings.Contains(out, "Serving Benchmark Result") {
				t.Fatalf("documented.txt:%d: exit %d, %v\n%s\n%s", n, code, err, out, log)
			}
			if strings.Contains(line, "--save-result") {
				dir := "."
				if i := strings.Index(line, "--result-dir"); i >= 0 {
					dir = "log"
				}
				path, b := onlyResult(t, dir)
				if errs := shape.Check(path, b, resultShape([]string{"ttft", "tpot", "itl"}, []string{"99"}, strings.Contains(line, "--save-detailed"))); len(errs) > 0 {
					t.Fatalf("documented.txt:%d: %s", n, strings.Join(errs, "\n"))
				}
			}
		})
	}
}

// TestTranslation: vLLM's load, body and dataset flags become surge's.
func TestTranslation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		argv []string
		want []string // in the surge flags, in order
	}{
		{"rate inf, no cap: every request at once", []string{"--num-prompts", "7"}, []string{"--request-count", "7", "--concurrency", "7"}},
		{"poisson with a cap", []string{"--request-rate", "5", "--max-concurrency", "3"}, []string{"--request-rate", "5", "--arrival-pattern", "poisson", "--concurrency", "3"}},
		{"gamma", []string{"--request-rate", "5", "--burstiness", "0.5"}, []string{"--arrival-pattern", "gamma", "--arrival-smoothness", "0.5"}},
		{"constant", []string{"--request-rate", "5", "--burstiness", "inf"}, []string{"--arrival-pattern", "constant"}},
		{"random defaults ignore EOS", []string{"--dataset-name", "random"}, []string{`"ignore_eos":true`, "--isl", "1024", "--osl", "128"}},
		{"range and prefix", []string{"--random-range-ratio", "0.5", "--random-prefix-len", "16"}, []string{"--random-range-ratio", "0.5", "--prompt-prefix-pool-size", "1", "--prompt-prefix-length", "16"}},
		{"general lengths", []string{"--input-len", "64", "--output-len", "8"}, []string{"--isl", "64", "--osl", "8"}},
		{"chat keeps max_completion_tokens", []string{"--backend", "openai-chat", "--endpoint", "/v1/chat/completions"}, []string{"--endpoint-type", "chat", "--use-legacy-max-tokens=false"}},
		{"served name, tokenizer from --model", []string{"--model", "org/m", "--served-model-name", "m"}, []string{"--model", "m", "--tokenizer", "org/m"}},
		{"lora modules at random", []string{"--model", "org/m", "--lora-modules", "a", "b"}, []string{"--model", "a", "--model", "b", "--model-selection-strategy", "random", "--tokenizer", "org/m"}},
		{"warmup drained", []string{"--num-warmups", "3"}, []string{"--warmup-request-count", "3", "--warmup-concurrency", "3", "--warmup-grace-period", "inf"}},
		{"no ready check", []string{"--ready-check-timeout-sec", "0"}, []string{"--skip-preflight"}},
		{"goodput", []string{"--goodput", "ttft:100", "e2el:900"}, []string{"--goodput", "time_to_first_token:100 request_latency:900"}},
		{"prefix repetition", []string{"--dataset-name", "prefix_repetition", "--num-prompts", "25", "--prefix-repetition-num-prefixes", "4"},
			[]string{"--request-count", "24", "--isl", "256", "--osl", "128", "--prompt-prefix-pool-size", "4", "--prompt-prefix-length", "256"}},
		{"single-size images", []string{"--backend", "openai-chat", "--endpoint", "/v1/chat/completions", "--dataset-name", "random-mm", "--random-mm-bucket-config", "{(64, 32, 1): 1.0}"},
			[]string{"--image-batch-size", "1", "--image-height-mean", "64", "--image-width-mean", "32"}},
		{"hub dataset by AIPerf's name", []string{"--dataset-name", "hf", "--dataset-path", "likaixin/InstructCoder"}, []string{"--public-dataset", "instruct_coder"}},
	} {
		b, err := parse(tc.argv)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		args, err := b.dataset.prepare(context.Background(), t.TempDir())
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got := b.surgeArgs("dir", args)
		if !inOrder(got, tc.want) {
			t.Errorf("%s:\n got  %s\n want, in order, %s", tc.name, strings.Join(got, " "), strings.Join(tc.want, " "))
		}
		if _, err := (peers.Runner{}).Spec(b.surgeArgs(t.TempDir(), args)); err != nil {
			t.Errorf("%s: surge refuses its own translation: %v", tc.name, err)
		}
	}
}

// inOrder reports whether want's words are in got in that order, each
// word a whole argument or a part of one (a JSON body's field).
func inOrder(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && (g == want[i] || (strings.ContainsAny(want[i], `"{:`) && strings.Contains(g, want[i]))) {
			i++
		}
	}
	return i == len(want)
}

// TestRefusals: what surge cannot do as vLLM does is refused before any
// work, with its reason (exit 2).
func TestRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"--ramp-up-strategy", "linear"}, "--ramp-up-strategy is refused"},
		{[]string{"--backend", "openai-embeddings"}, "--backend openai-embeddings is refused"},
		{[]string{"--dataset-name", "sonnet"}, "--dataset-name sonnet is refused"},
		{[]string{"--dataset-name", "custom", "--dataset-path", "x.jsonl"}, "without --skip-chat-template is refused"},
		{[]string{"--dataset-name", "random-mm", "--backend", "openai-chat", "--endpoint", "/v1/chat/completions"}, "mixes 256x256 and 720x1280"},
		{[]string{"--dataset-name", "random-mm", "--backend", "openai-chat", "--endpoint", "/v1/chat/completions", "--random-mm-bucket-config", "{(64, 64, 1): 0.5, (32, 32, 1): 0.5}"}, "mixes 2 image sizes"},
		{[]string{"--dataset-name", "random", "--dataset-path", "x"}, "Cannot use 'random' dataset with --dataset-path"},
		{[]string{"--backend", "openai-chat"}, "must end with one of"},
		{[]string{"--random-range-ratio", "1.5"}, "range_ratio must be in [0, 1)"},
		{[]string{"--goodput", "itl:5"}, "Invalid metric name found, itl"},
		{[]string{"--tokenizer-mode", "mistral"}, "--tokenizer-mode mistral is refused"},
		{[]string{"--dataset-name", "prefix_repetition", "--num-prompts", "3"}, "must be greater than or equal to num_prefixes"},
		{[]string{"--random-batch-size", "4"}, "--random-batch-size 4 is refused"},
		{[]string{"--hf-split", "train"}, "--hf-split goes with --dataset-name hf"},
		{[]string{"--num-prompts", "x"}, "invalid int value"},
	} {
		_, err := parse(tc.argv)
		var ue *cmdline.UsageError
		if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error containing %q", tc.argv, err, tc.want)
		}
	}
}

// TestHelpListsRefusals: --help lists what surge refuses, with reasons.
func TestHelpListsRefusals(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	code, err := Main(context.Background(), []string{"serve", "--help"}, Env{Stdout: &out, Stderr: &out})
	if code != 0 || err != nil {
		t.Fatal(code, err)
	}
	for _, want := range []string{"Flags surge refuses", "--ramp-up-strategy V", "--use-beam-search\n      surge sends no beam search", "--save-result"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

// TestCompareWithAnAIPerfLine: `surge compare` takes a run started from
// vLLM's command line and one started from an AIPerf line of the same
// workload (AIPerf's spelling: key:value extra inputs, no ready check,
// another UI) as the same workload, not refusing them.
func TestCompareWithAnAIPerfLine(t *testing.T) {
	url := apptest.Mock(t, mockserver.Config{TTFT: time.Millisecond, ITL: 50 * time.Microsecond})
	t.Chdir(t.TempDir())
	_, log, code, err := serve(t, []string{"--base-url", url, "--model", "mock", "--random-input-len", "16", "--random-output-len", "4",
		"--num-prompts", "6", "--max-concurrency", "2", "--seed", "3", "--disable-tqdm"})
	if code != 0 || err != nil {
		t.Fatalf("exit %d: %v\n%s", code, err, log)
	}
	aiperf := []string{"--url", url, "--endpoint-type", "completions", "--endpoint", "/v1/completions", "--streaming", "-m", "mock",
		"--request-count", "6", "--concurrency", "2", "--random-seed", "3", "--isl", "16", "--osl", "4",
		"--extra-inputs", "ignore_eos:true", "--extra-inputs", "repetition_penalty:1", "--extra-inputs", "temperature:0",
		"--ui", "simple", "--output-artifact-dir", "aiperf-line"}
	if c, err := (peers.Runner{Version: "test", Log: &bytes.Buffer{}}).Run(context.Background(), aiperf); c != 0 || err != nil {
		t.Fatalf("the AIPerf line: exit %d, %v", c, err)
	}
	dirs, _ := filepath.Glob(filepath.Join("artifacts", "*"))
	var runs []*artifact.Run
	for _, d := range append(dirs, "aiperf-line") {
		r, err := artifact.Load(d)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	if c := compare.Fingerprints(runs); !c.Comparable {
		t.Errorf("surge compare refuses them: %v", c.Reasons)
	}
}
