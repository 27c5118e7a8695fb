package cmdline

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// aiperfFile writes a config file and parses `surge profile -f FILE`.
func aiperfFile(t *testing.T, body string, args ...string) (Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "benchmark.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return ParseProfile(append([]string{"-f", path}, args...)...)
}

// TestAIPerfConfigFiles: AIPerf's YAML configs, as its tutorials write
// them (schema 2.0 and the flat shape before it), set the flags that do
// the same.
func TestAIPerfConfigFiles(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("SURGE_TEST_MODEL", "env-model")
	for _, tc := range []struct {
		name, body string
		check      func(c Config) bool
	}{
		{"minimal (schema 2.0)", `# minimal.yaml
schemaVersion: "2.0"

benchmark:
  model: Qwen/Qwen3-0.6B
  endpoint:
    url: http://localhost:8000
  dataset:
    type: synthetic
    entries: 100
    prompts: {isl: 512, osl: 128}
  phases:
    type: concurrency
    concurrency: 8
    requests: 100
`, func(c Config) bool {
			return c.Models[0] == "Qwen/Qwen3-0.6B" && slices.Equal(c.URLs, []string{"http://localhost:8000"}) && c.NumDatasetEntries == 100 &&
				c.ISL == 512 && c.OSL == 128 && c.Concurrency == "8" && c.RequestCount == 100
		}},
		{"a warmup phase and a sweep", `schemaVersion: "2.0"
benchmark:
  model: meta-llama/Llama-3.1-8B-Instruct
  endpoint:
    url: http://localhost:8000/v1/chat/completions
    type: chat
    streaming: true
  dataset:
    type: synthetic
    entries: 500
    prompts: {isl: 512, osl: 128}
  phases:
    - {name: warmup, type: concurrency, concurrency: 8, requests: 50}
    - {name: profiling, type: concurrency, requests: 500}
  artifacts:
    dir: ./artifacts/my-test
sweep:
  type: grid
  parameters:
    concurrency: [8, 16, 32, 64]
`, func(c Config) bool {
			return c.Streaming && c.EndpointType == "chat" && c.WarmupConcurrency == 8 && c.WarmupCount == 50 && c.RequestCount == 500 &&
				c.Concurrency == "8,16,32,64" && c.ArtifactDir == "./artifacts/my-test"
		}},
		{"poisson, durations, grace, slos, env and variables", `schemaVersion: "2.0"
variables:
  base_concurrency: 16
  test_duration: 120
benchmark:
  model: ${SURGE_TEST_MODEL}
  endpoint:
    url: ${INFERENCE_URL_UNSET:http://localhost:8000}
    api_key: ${API_KEY_UNSET:}
    timeout: 600
    extra: {ignore_eos: true}
    headers: {X-Team: perf}
  dataset:
    type: synthetic
    prompts:
      isl: {mean: 512, stddev: 51}
  phases:
    - name: warmup
      type: concurrency
      concurrency: "{{ base_concurrency // 2 }}"
      duration: 30s
      exclude_from_results: true
    - name: profiling
      type: poisson
      rate: 30.0
      duration: "{{ test_duration }}"
      concurrency: "{{ base_concurrency * 4 }}"
      grace_period: 1m
  slos:
    time_to_first_token: 100
    inter_token_latency: 15
random_seed: 42
multi_run: {num_runs: 3, cooldown_seconds: 15.0}
`, func(c Config) bool {
			return c.Models[0] == "env-model" && c.URLs[0] == "http://localhost:8000" && c.Timeout == 600*time.Second && c.WarmupConcurrency == 8 &&
				c.WarmupDuration == 30*time.Second && c.ArrivalPattern == "poisson" && c.RequestRate == "30.0" && c.Duration == 120*time.Second &&
				c.Concurrency == "64" && c.Grace == time.Minute && c.ISL == 512 && c.ISLStddev == 51 && c.Seed == 42 && c.NumProfileRuns == 3 &&
				strings.Contains(c.Goodput, "time_to_first_token:100") && len(c.ExtraInputs) == 1 && len(c.Headers) == 1
		}},
		{"adaptive scale", `schemaVersion: "2.0"
benchmark:
  model: m
  endpoint: {url: http://localhost:8000/v1/chat/completions, type: chat, streaming: true}
  dataset: {type: synthetic, entries: 1000, prompts: {isl: 512, osl: 128}}
  phases:
    - name: profiling
      type: concurrency
      concurrency: 200
      duration: 3600
      adaptive_scale:
        enabled: true
        control: {variable: concurrency, min: 1, max: 64}
        assessment_period: 60
        min_completed_requests: 20
        sustain_duration: 1800
        strategy: {type: ramp_until_fail, step_policy: sla_margin, base_step: 10, max_step_multiplier: 4}
      sla:
        ttft:
          p95:
            le: 3000
        error_rate:
          avg:
            le: 0.01
`, func(c Config) bool {
			return c.Adaptive && c.AdaptiveVariable == "concurrency" && c.AdaptiveMax == 64 && c.AdaptivePeriod == time.Minute &&
				c.AdaptiveSustain == 30*time.Minute && c.AdaptiveMinCompleted == 20 && slices.Contains(c.AdaptiveSLA, "ttft:p95:le:3000") &&
				slices.Contains(c.AdaptiveSLA, "error_rate:avg:le:0.01")
		}},
		{"the flat shape before the envelope", `models: [llama]
endpoint:
  urls: ["http://localhost:8000/v1/chat/completions"]
datasets:
  - {name: main, type: synthetic, entries: 200}
phases:
  - {name: profiling, type: concurrency, requests: 10, concurrency: 1}
random_seed: 42
sweep:
  type: grid
  variables:
    benchmark.phases.profiling.concurrency: [1, 2, 4]
`, func(c Config) bool {
			return c.Models[0] == "llama" && c.NumDatasetEntries == 200 && c.RequestCount == 10 && c.Concurrency == "1,2,4" && c.Seed == 42
		}},
	} {
		c, err := aiperfFile(t, tc.body)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !tc.check(c) {
			t.Errorf("%s: config %+v", tc.name, c)
		}
	}
	// The command line wins over the file.
	c, err := aiperfFile(t, "schemaVersion: \"2.0\"\nbenchmark:\n  model: a\n  phases: {type: concurrency, concurrency: 8}\n", "--concurrency", "2")
	if err != nil || c.Concurrency != "2" || c.Models[0] != "a" {
		t.Errorf("command line over file: %v %q %q", err, c.Concurrency, c.Models)
	}
}

// Each key surge cannot honour is refused at its line, with the reason.
func TestAIPerfConfigRefusals(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	for _, tc := range []struct{ name, body, says string }{
		{"two profiling phases", "benchmark:\n  phases:\n    - {name: a, kind: profiling, type: concurrency}\n    - {name: b, kind: profiling, type: concurrency}\n", ":4: phases: a second profiling phase"},
		{"inline records", "benchmark:\n  dataset:\n    type: file\n    records: [{text: hi}]\n", ":4: dataset.records"},
		{"a scenario sweep", "schemaVersion: \"2.0\"\nbenchmark: {model: m}\nsweep: {type: scenarios, runs: []}\n", ":3: sweep.type \"scenarios\""},
		{"an unset variable", "benchmark:\n  model: ${SURGE_NOT_SET_ANYWHERE}\n", ":2: ${SURGE_NOT_SET_ANYWHERE}"},
		{"a sweep of another path", "benchmark: {model: m}\nsweep: {parameters: {phases.profiling.smoothness: [1, 2]}}\n", "sweep.parameters.phases.profiling.smoothness"},
		{"accuracy", "benchmark:\n  accuracy: {benchmark: mmlu}\n", ":2: accuracy"},
		{"a phase key", "benchmark:\n  phases: {type: concurrency, concurency: 4}\n", "phases.profiling.concurency: not a key surge reads here (did you mean concurrency?)"},
		{"a schema version", "schemaVersion: \"3.0\"\nbenchmark: {model: m}\n", "schemaVersion \"3.0\""},
	} {
		_, err := aiperfFile(t, tc.body)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.says)
		}
	}
}
