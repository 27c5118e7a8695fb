package inferenceperf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/metrics/export/shape"
)

func TestMain(m *testing.M) { apptest.Main(m) }

// summaryShape is a lifecycle report as inference-perf's reportgen
// writes it (ResponsesSummary of summarize_requests, reportgen/base.py):
// a summary of values is mean, min, max and the percentiles, or null.
func summaryShape(stage bool) shape.Shape {
	dist := shape.OrNull(shape.Model{Fields: map[string]shape.Shape{"mean": shape.Number, "min": shape.Number, "max": shape.Number,
		"p0.1": shape.Number, "p1": shape.Number, "p5": shape.Number, "p10": shape.Number, "p25": shape.Number, "median": shape.Number,
		"p75": shape.Number, "p90": shape.Number, "p95": shape.Number, "p99": shape.Number, "p99.9": shape.Number}})
	usage := func(prompt bool) shape.Shape {
		m := shape.Model{Fields: map[string]shape.Shape{"total": shape.Number}, Extra: map[string]shape.Shape{}}
		if prompt {
			m.Fields["cached"], m.Fields["uncached"] = shape.Number, shape.Number
		}
		for _, k := range []string{"mean", "min", "max", "p0.1", "p1", "p5", "p10", "p25", "median", "p75", "p90", "p95", "p99", "p99.9"} {
			m.Extra[k] = shape.Number
		}
		return m
	}
	load := shape.Model{Fields: map[string]shape.Shape{"count": shape.Integer, "schedule_delay": dist}, Optional: []string{"schedule_delay"}}
	if stage {
		load.Fields["send_duration"], load.Fields["requested_rate"], load.Fields["achieved_rate"] = shape.Number, shape.Number, shape.Number
		load.Extra = map[string]shape.Shape{"concurrency": shape.Integer}
	}
	latency := shape.Model{Fields: map[string]shape.Shape{"request_latency": dist, "normalized_time_per_output_token": dist,
		"time_per_output_token": dist, "time_to_first_token": dist, "inter_token_latency": dist},
		Optional: []string{"request_latency", "normalized_time_per_output_token", "time_per_output_token", "time_to_first_token", "inter_token_latency"}}
	throughput := shape.Model{Fields: map[string]shape.Shape{"input_tokens_per_sec": shape.Number, "output_tokens_per_sec": shape.Number,
		"total_tokens_per_sec": shape.Number, "requests_per_sec": shape.Number, "images_per_sec": shape.Number, "videos_per_sec": shape.Number,
		"audios_per_sec": shape.Number}}
	media := func(keys ...string) shape.Shape {
		m := shape.Model{Fields: map[string]shape.Shape{"count": dist}, Optional: append([]string{"count"}, keys...)}
		for _, k := range keys {
			m.Fields[k] = dist
		}
		return m
	}
	successes := shape.Model{Fields: map[string]shape.Shape{"count": shape.Integer, "latency": latency, "throughput": throughput,
		"request_size_bytes": dist, "image": media("pixels", "bytes", "aspect_ratio"), "video": media("frames", "pixels", "bytes", "aspect_ratio"),
		"audio": media("seconds", "bytes"), "prompt_tokens": usage(true), "output_len": dist, "output_tokens": usage(false),
		"token_count_mismatches": shape.Integer}, Optional: []string{"request_size_bytes", "output_len"}}
	failures := shape.Model{Fields: map[string]shape.Shape{"count": shape.Integer, "request_latency": dist, "prompt_tokens": usage(true),
		"by_label": shape.Dict(shape.Model{Fields: map[string]shape.Shape{"count": shape.Integer, "messages": shape.List(shape.Model{
			Fields: map[string]shape.Shape{"message": shape.String, "session_ids": shape.List(shape.String)}, Optional: []string{"session_ids"}})}})},
		Optional: []string{"request_latency"}}
	return shape.Model{Fields: map[string]shape.Shape{"benchmark_time_seconds": shape.Number, "load_summary": load, "successes": successes, "failures": failures}}
}

// run runs inference-perf's command line in the current folder.
func run(t *testing.T, args ...string) (int, string, error) {
	t.Helper()
	var out, log bytes.Buffer
	env := Env{Version: "test", Stdout: &out, Stderr: &log, Now: func() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) },
		Sleep: func(context.Context, time.Duration) {}}
	code, err := Main(context.Background(), args, env)
	return code, log.String(), err
}

// shortened is a documented config with its server at url and each
// stage's duration capped at 1 s (the test's only changes), written into
// the current folder.
func shortened(t *testing.T, name, url string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testdata, name))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if s, ok := cfg["server"].(map[string]any); ok {
		s["base_url"] = url
	}
	if l, ok := cfg["load"].(map[string]any); ok {
		stages, _ := l["stages"].([]any)
		for _, st := range stages {
			if m, ok := st.(map[string]any); ok && m["duration"] != nil {
				m["duration"] = 1
			}
		}
	}
	out, _ := yaml.Marshal(cfg)
	path := filepath.Join(".", name)
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

var testdata, _ = filepath.Abs("testdata")

// TestDocumentedConfigs runs inference-perf's documented configs (its
// examples, its README's command line) against the mock: the ones surge
// takes run their stages and write inference-perf's reports, which match
// its reportgen's layout; the ones it refuses exit 2 naming the key.
func TestDocumentedConfigs(t *testing.T) {
	url := apptest.Mock(t, mockserver.Config{TTFT: time.Millisecond, ITL: 100 * time.Microsecond})
	for _, tc := range []struct {
		name    string
		refused string
	}{
		{"structured-output.yml", ""},
		{"config.yml", "metrics"},
		{"config-random.yml", "metrics"},
		{"config-synthetic.yml", "metrics"},
		{"config-shared-prefix.yml", "metrics"},
		{"config-sweep.yml", "metrics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, log, err := run(t, "--config_file", shortened(t, tc.name, url))
			if tc.refused != "" {
				var ue *cmdline.UsageError
				if code != cmdline.ExitUsage || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.refused) || !strings.Contains(err.Error(), "refused") {
					t.Fatalf("exit %d, %v; want a refusal naming %s", code, err, tc.refused)
				}
				return
			}
			if code != 0 || err != nil {
				t.Fatalf("exit %d: %v\n%s", code, err, log)
			}
			checkReports(t, "reports-20260501-120000", 1, false)
		})
	}
	// The README's quick start, as inference-perf's CLI overrides (its
	// stage shortened to 1 s).
	t.Run("README command line", func(t *testing.T) {
		t.Chdir(t.TempDir())
		code, log, err := run(t, "--server.type", "vllm", "--server.base_url", url, "--data.type", "random", "--load.type", "constant",
			"--load.stages", `[{"rate": 10, "duration": 1}]`, "--api.streaming", "true")
		if code != 0 || err != nil {
			t.Fatalf("exit %d: %v\n%s", code, err, log)
		}
		doc := checkReports(t, "reports-20260501-120000", 1, false)
		lat := doc["successes"].(map[string]any)["latency"].(map[string]any)
		if lat["time_to_first_token"] == nil || lat["inter_token_latency"] == nil {
			t.Errorf("a streamed run has no TTFT or ITL: %v", lat)
		}
	})
}

// checkReports checks the reports written into dir: the summary and
// each stage's against reportgen's layout, config.yaml, and the
// per-request file when asked.
func checkReports(t *testing.T, dir string, stages int, perRequest bool) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary_lifecycle_metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	if errs := shape.Check("summary", b, summaryShape(false)); len(errs) > 0 {
		t.Fatalf("%s", strings.Join(errs, "\n"))
	}
	for i := range stages {
		name := filepath.Join(dir, "stage_"+string(rune('0'+i))+"_lifecycle_metrics.json")
		sb, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if errs := shape.Check(name, sb, summaryShape(true)); len(errs) > 0 {
			t.Fatalf("%s", strings.Join(errs, "\n"))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "config.yaml")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "per_request_lifecycle_metrics.json")); (err == nil) != perRequest {
		t.Errorf("per_request_lifecycle_metrics.json: %v, want written %v", err, perRequest)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if n := doc["successes"].(map[string]any)["count"].(float64); n < 1 {
		t.Errorf("no successful request: %v", doc)
	}
	return doc
}

// TestStagesAndReports: a two-stage concurrent load with per-request
// reports, a prefix for the file names and a storage path of its own:
// each stage one surge run, the stage reports' load summaries what was
// asked, TPOT and ITL as inference-perf defines them.
func TestStagesAndReports(t *testing.T) {
	url := apptest.Mock(t, mockserver.Config{TTFT: time.Millisecond, ITL: 100 * time.Microsecond})
	t.Chdir(t.TempDir())
	cfg := `
load:
  type: concurrent
  interval: 0
  stages:
  - num_requests: 6
    concurrency_level: 2
  - num_requests: 4
    concurrency_level: 4
api: {type: chat, streaming: true}
server: {type: vllm, model_name: mock, base_url: ` + url + `, ignore_eos: true}
data:
  type: synthetic
  input_distribution: {min: 10, max: 40, mean: 20, std_dev: 5}
  output_distribution: {min: 4, max: 12, mean: 8, std_dev: 2, type: uniform}
report:
  request_lifecycle: {summary: true, per_stage: true, per_request: true, percentiles: [50, 99]}
storage:
  local_storage: {path: "out-{timestamp}", report_file_prefix: run1_}
`
	if err := os.WriteFile("c.yaml", []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	code, log, err := run(t, "-c", "c.yaml")
	if code != 0 || err != nil {
		t.Fatalf("exit %d: %v\n%s", code, err, log)
	}
	dir := "out-20260501-120000"
	for _, f := range []string{"run1_summary_lifecycle_metrics.json", "run1_stage_0_lifecycle_metrics.json", "run1_stage_1_lifecycle_metrics.json",
		"run1_per_request_lifecycle_metrics.json", "run1_config.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "run1_stage_1_lifecycle_metrics.json"))
	var st map[string]any
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	load := st["load_summary"].(map[string]any)
	if load["count"] != 4.0 || load["concurrency"] != 4.0 {
		t.Errorf("stage 1 load summary %v", load)
	}
	lat := st["successes"].(map[string]any)["latency"].(map[string]any)
	if _, ok := lat["time_per_output_token"].(map[string]any)["median"]; !ok {
		t.Errorf("percentiles [50, 99] give median and p99: %v", lat["time_per_output_token"])
	}
	pb, _ := os.ReadFile(filepath.Join(dir, "run1_per_request_lifecycle_metrics.json"))
	var per []map[string]any
	if err := json.Unmarshal(pb, &per); err != nil || len(per) != 10 {
		t.Fatalf("per-request entries: %d, %v", len(per), err)
	}
	if req, _ := per[0]["request"].(string); !strings.Contains(req, `"messages"`) {
		t.Errorf("a request's body is not the chat body sent: %q", req)
	}
	if dirs, _ := filepath.Glob(filepath.Join(dir, "surge", "stage_*")); len(dirs) != 2 {
		t.Errorf("surge's exports: %v, want a folder a stage", dirs)
	}
}

// TestRefusals: keys surge cannot honour are refused with their reason;
// a key inference-perf does not define is an error, as its strict models
// make it.
func TestRefusals(t *testing.T) {
	t.Parallel()
	base := "server: {base_url: http://x}\nload: {stages: [{rate: 1, duration: 1}]}\ndata: {type: random}\n"
	for _, tc := range []struct{ cfg, want string }{
		{base + "metrics: {type: prometheus, prometheus: {url: http://p}}\n", "metrics is refused"},
		{"server: {base_url: http://x}\nload: {sweep: {type: linear}, stages: [{rate: 1, duration: 1}]}\ndata: {type: random}\n", "load.sweep is refused"},
		{"server: {base_url: http://x}\nload: {stages: [{rate: 1, duration: 1}]}\ndata: {type: shareGPT}\n", "data.type shareGPT is refused"},
		{"server: {base_url: http://x, type: mock}\nload: {stages: [{rate: 1, duration: 1}]}\n", "server.type mock is refused"},
		{base + "storage: {google_cloud_storage: {bucket_name: b}}\n", "storage.google_cloud_storage is refused"},
		{base + "report: {goodput: {constraints: {ttft: 1}}}\n", "report.goodput is refused"},
		{base + "api: {headers: {x-slo-ttft-ms: '100'}}\n", "x-slo-ttft-ms is refused"},
		{base + "bogus: 1\n", `unknown key "bogus"`},
		{"server: {base_url: http://x}\nload: {type: concurrent, stages: [{rate: 1, duration: 1}]}\ndata: {type: random}\n", "needs num_requests and concurrency_level"},
		{"server: {base_url: http://x}\nload: {stages: [{rate: 1, duration: 1}]}\ndata: {type: random, input_distribution: {min: 50, max: 10}}\n", "Minimum value cannot be greater"},
		{"load: {stages: [{rate: 1, duration: 1}]}\n", "server section is required"},
	} {
		var cfg map[string]any
		if err := yaml.Unmarshal([]byte(tc.cfg), &cfg); err != nil {
			t.Fatal(err)
		}
		_, err := buildPlan(cfg, time.Now())
		var ue *cmdline.UsageError
		if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a usage error containing %q", tc.cfg, err, tc.want)
		}
	}
}

// TestTranslation: stages and data become surge's flags as
// inference-perf runs them.
func TestTranslation(t *testing.T) {
	t.Parallel()
	cfg := map[string]any{}
	for k, v := range map[string]string{"server.base_url": "http://x:1", "server.model_name": "m", "load.type": "poisson",
		"load.stages": `[{"rate": 2.5, "duration": 4}]`, "load.num_workers": "2", "load.worker_max_concurrency": "3", "load.base_seed": "9",
		"api.type": "chat", "api.streaming": "true", "data.type": "shared_prefix", "data.shared_prefix": `{num_groups: 3, num_prompts_per_group: 4, system_prompt_len: 20, question_len: 10, output_len: 5}`} {
		if err := setPath(cfg, k, cliValue(v)); err != nil {
			t.Fatal(err)
		}
	}
	p, err := buildPlan(cfg, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	data, err := p.dataArgs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(p.surgeArgs(0, "d", data), " ")
	for _, want := range []string{"--endpoint-type chat --streaming --model m", "--request-rate 2.5 --arrival-pattern poisson --request-count 10 --concurrency 6",
		"--random-seed 9", `"ignore_eos":true`, "--use-legacy-max-tokens", "--retokenize-output",
		"--isl 10 --osl 5 --prompt-prefix-pool-size 3 --prompt-prefix-length 20 --num-dataset-entries 12"} {
		if !strings.Contains(got, want) {
			t.Errorf("%s\nlacks %s", got, want)
		}
	}
}

// FuzzConfig: any config file is read into a plan or refused as a usage
// error, never a panic.
func FuzzConfig(f *testing.F) {
	for _, name := range []string{"config.yml", "structured-output.yml", "config-shared-prefix.yml"} {
		if b, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("server: {base_url: http://x}\nload: {type: concurrent, stages: [{num_requests: 1, concurrency_level: 1}]}\ndata: {type: random}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, err := parseYAML("c.yml", b)
		if err != nil {
			return
		}
		if _, err := buildPlan(cfg, time.Now()); err != nil {
			var ue *cmdline.UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("%q: %v is not a usage error", b, err)
			}
		}
	})
}
