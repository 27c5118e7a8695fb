package cmdline

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeConfig writes a config file into a test's temporary folder.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "surge.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConfigFileSetsFlags: a config file sets flags by their long names
// (an alias, underscores for dashes), or nested as input_config nests
// them; the command line wins; input_config shows the effective values.
func TestConfigFileSetsFlags(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	flat := writeConfig(t, `# a run kept in a file
model: [qwen, llama]
concurrency: [1, 2, 4]
request_count: 7
num-warmup-requests: 3
streaming: true
benchmark-grace-period: 2.5
extra-inputs: {temperature: 0.5, top_k: 4}
header:
  - "X-A: 1"
random-seed: 11
`)
	nested := writeConfig(t, `endpoint:
  model_names: [qwen]
  streaming: true
loadgen:
  request_rate: 5
  request_count: 9
input:
  prompt:
    input_tokens: {mean: 64, stddev: 2}
  extra: [[temperature, 0.5]]
  headers: [[X-B, "2"]]
`)
	for _, tc := range []struct {
		name  string
		args  []string
		check func(t *testing.T, c Config)
	}{
		{"flat", []string{"-f", flat}, func(t *testing.T, c Config) {
			if d := cmp.Diff([]string{"qwen", "llama"}, c.Models); d != "" {
				t.Errorf("model (-want +got)\n%s", d)
			}
			if c.Concurrency != "1,2,4" || c.RequestCount != 7 || c.WarmupCount != 3 || !c.Streaming || c.Grace != 2500*time.Millisecond || c.Seed != 11 || c.SeedDrawn {
				t.Errorf("got %+v", c)
			}
			if d := cmp.Diff([]string{`{"temperature":0.5,"top_k":4}`}, c.ExtraInputs); d != "" {
				t.Errorf("extra-inputs (-want +got)\n%s", d)
			}
			if d := cmp.Diff([]string{"X-A: 1"}, c.Headers); d != "" {
				t.Errorf("header (-want +got)\n%s", d)
			}
		}},
		{"the command line wins", []string{"--config", flat, "--concurrency", "8", "-m", "mistral", "--request-count=2", "--streaming=false"}, func(t *testing.T, c Config) {
			if c.Concurrency != "8" || c.RequestCount != 2 || c.Streaming || c.WarmupCount != 3 {
				t.Errorf("got concurrency %q, count %d, streaming %v, warmup %d", c.Concurrency, c.RequestCount, c.Streaming, c.WarmupCount)
			}
			if d := cmp.Diff([]string{"mistral"}, c.Models); d != "" {
				t.Errorf("model (-want +got)\n%s", d)
			}
		}},
		{"nested as input_config", []string{"-f", nested}, func(t *testing.T, c Config) {
			if c.RequestRate != "5" || c.RequestCount != 9 || c.ISL != 64 || c.ISLStddev != 2 || !c.Streaming || c.Models[0] != "qwen" {
				t.Errorf("got %+v", c)
			}
			if d := cmp.Diff([]string{`{"temperature":0.5}`}, c.ExtraInputs); d != "" {
				t.Errorf("extra (-want +got)\n%s", d)
			}
			if d := cmp.Diff([]string{`{"X-B":"2"}`}, c.Headers); d != "" {
				t.Errorf("headers (-want +got)\n%s", d)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, parseProfile(t, tc.args...))
		})
	}

	// input_config holds the effective values: the file's where the
	// command line gave none, the command line's where it did.
	c := parseProfile(t, "-f", flat, "--isl", "99")
	ic := c.InputConfig(nil)
	for path, want := range map[string]any{
		"loadgen.concurrency":             []any{int64(1), int64(2), int64(4)},
		"loadgen.request_count":           7,
		"loadgen.warmup_request_count":    3,
		"input.prompt.input_tokens.mean":  99,
		"endpoint.model_names":            []string{"qwen", "llama"},
		"loadgen.benchmark_grace_period":  2.5,
		"config_file":                     flat,
		"input.random_seed":               uint64(11),
		"endpoint.streaming":              true,
		"input.prompt.output_tokens.mean": 0,
	} {
		got, ok := PathValue(ic, path)
		if !ok {
			t.Errorf("input_config has no %s", path)
			continue
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("input_config %s (-want +got)\n%s", path, d)
		}
	}
}

// TestConfigFileErrors: every refusal names the file, the line and the
// key; an unknown key gets the nearest name.
func TestConfigFileErrors(t *testing.T) {
	big := "isl: 1\n" + strings.Repeat("# padding\n", MaxConfigBytes/10+1)
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"unknown key", "isl: 5\nrequest-cont: 5\n", []string{":2: unknown key request-cont (did you mean request-count?)"}},
		{"unknown nested key", "loadgen:\n  concurency: 4\n", []string{":2: unknown key loadgen.concurency (did you mean loadgen.concurrency?)"}},
		{"unknown section", "loadgne:\n  concurrency: 4\n", []string{":1: unknown key loadgne (did you mean loadgen?)"}},
		{"wrong type", "isl: 5\nrequest-count: ten\n", []string{":2: request-count: \"ten\": want an integer"}},
		{"wrong type in a section", "loadgen:\n  benchmark_duration: soon\n", []string{":2: loadgen.benchmark_duration: \"soon\": want a number"}},
		{"a list for one value", "isl-block-size: [1, 2]\n", []string{":1: isl-block-size: \"1,2\": want an integer"}},
		{"a mapping for one value", "osl:\n  mean: 3\n", []string{":2: osl: want a value, got a mapping"}},
		{"a switch given a list", "streaming: [true]\n", []string{":1: streaming: want true or false, got a list"}},
		{"a switch given a word", "streaming: maybe\n", []string{":1: streaming: \"maybe\": want true or false"}},
		{"set twice", "isl: 1\ninput:\n  prompt:\n    input_tokens:\n      mean: 2\n", []string{":5: input.prompt.input_tokens.mean sets --isl again (first at line 1)"}},
		{"set twice by an alias", "request-count: 1\nnum-requests: 2\n", []string{":2: num-requests sets --request-count again"}},
		{"not a mapping", "- isl\n", []string{":1: want a mapping"}},
		{"bad YAML", "isl: 1\n  osl: [\n", []string{":2: "}},
		{"two documents", "isl: 1\n---\nosl: 2\n", []string{": a second YAML document"}},
		{"AIPerf's schema 2.0", "schemaVersion: \"2.0\"\nbenchmark: {model: x}\n", []string{":1: schemaVersion: AIPerf's schema 2.0 layout", "docs/config-file.md"}},
		{"a config naming a config", "config: other.yaml\n", []string{":1: config: a config file cannot load another"}},
		{"a redacted secret", "endpoint:\n  api_key: <redacted>\n", []string{":2: endpoint.api_key holds <redacted>"}},
		{"a section given a value", "loadgen: 4\n", []string{":1: loadgen: a section"}},
		{"too large", big, []string{"over the 1 MiB limit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, tc.text)
			_, err := ParseProfile("-f", path)
			var ue *UsageError
			if err == nil || !errors.As(err, &ue) {
				t.Fatalf("got %v, want a usage error", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, path) {
				t.Errorf("%q does not name the file", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q does not say %q", msg, w)
				}
			}
		})
	}
	if _, err := ParseProfile("-f", filepath.Join(t.TempDir(), "none.yaml")); err == nil || !strings.Contains(err.Error(), "--config") {
		t.Errorf("a missing file: got %v, want an error naming --config", err)
	}
}

// TestConfigFileEdges: an empty file, nulls and YAML anchors.
func TestConfigFileEdges(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	for _, text := range []string{"", "# nothing\n", "~\n", "osl: ~\n"} {
		c := parseProfile(t, "-f", writeConfig(t, text))
		if c.OSL != 0 || c.ISL != 550 {
			t.Errorf("%q: got osl %d isl %d, want the defaults", text, c.OSL, c.ISL)
		}
	}
	c := parseProfile(t, "-f", writeConfig(t, "isl: &n 42\nosl: *n\nurl: [mock]\n"))
	if c.ISL != 42 || c.OSL != 42 {
		t.Errorf("anchors: got isl %d osl %d, want 42", c.ISL, c.OSL)
	}
}

// FuzzParseConfig: any bytes give settings of known flags or an error
// that names the file; never a panic.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"isl: 5\n", "loadgen:\n  concurrency: [1, 2]\n", "extra-inputs: {a: 1}\n", "header: [[A, b]]\n",
		"a: &x [1]\nb: *x\n", "- 1\n", "isl: 1\n---\n", "schemaVersion: 2\n", "{", "input: {prompt: {input_tokens: {mean: 1}}}",
	} {
		f.Add([]byte(s))
	}
	keys := newConfigKeys(ProfileFlags(&Config{}))
	f.Fuzz(func(t *testing.T, data []byte) {
		settings, err := parseConfig("f.yaml", data, keys)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, s := range settings {
			if _, ok := keys.flags[s.flag]; !ok || seen[s.flag] || s.line < 1 {
				t.Fatalf("setting %+v: unknown, repeated or without a line", s)
			}
			seen[s.flag] = true
		}
	})
}

// TestConfigFileReadsInputConfig: a run's input_config (JSON is YAML),
// given back as a config file, is the same configuration.
func TestConfigFileReadsInputConfig(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	first := parseProfile(t, "-m", "qwen", "--concurrency", "2,4", "--isl", "64", "--osl-stddev", "3", "--streaming",
		"--extra-inputs", "temperature:0.5", "--benchmark-grace-period", "inf", "--random-seed", "5", "--fixed-schedule-end-offset", "1500")
	ic := first.InputConfig(nil)
	b, err := json.MarshalIndent(ic, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	path := writeConfig(t, string(b))
	second := parseProfile(t, "-f", path)
	again := second.InputConfig(nil)
	delete(ic, "config_file")
	delete(again, "config_file")
	if d := cmp.Diff(ic, again); d != "" {
		t.Errorf("input_config read back (-first +second)\n%s", d)
	}
}
