package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v2"

	"github.com/surgebench/surge/datasets"
)

// aiperfOptions reads AIPerf's documented `profile` option names
// (testdata/aiperf_profile_options.txt): one option a line, its names
// separated by spaces.
func aiperfOptions(t *testing.T) [][]string {
	t.Helper()
	f, err := os.Open("testdata/aiperf_profile_options.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, strings.Fields(line))
	}
	if len(out) < 200 {
		t.Fatalf("read %d options: the list is cut short", len(out))
	}
	return out
}

// sampleArgs is a command line that gives flag f (named name) a value its
// type parses.
func sampleArgs(name string, f cli.Flag) []string {
	switch kindOf(f) {
	case argSwitch:
		return []string{name}
	}
	switch f.(type) {
	case *intFlag, *uint64Flag, *float64Flag, *valueFlag:
		if g, ok := f.(*valueFlag); ok {
			if _, isDur := g.Value.(*durationValue); !isDur {
				return []string{name, "x:1"}
			}
		}
		return []string{name, "2"}
	}
	return []string{name, "x:1"}
}

// TestAIPerfOptionsParse walks AIPerf's documented option list: every name
// (aliases included) must be one surge profile accepts.
func TestAIPerfOptionsParse(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	byName := map[string]cli.Flag{}
	for _, f := range profileFlags(&Config{}) {
		for _, n := range f.Names() {
			byName[n] = f
		}
	}
	// Parsed in rounds, each giving a flag under one name only (urfave/cli
	// refuses two forms of one flag on a command line).
	var rounds [][]string
	var used []map[cli.Flag]bool
	for _, opt := range aiperfOptions(t) {
		for _, name := range opt {
			bare := strings.TrimLeft(name, "-")
			f, ok := byName[bare]
			if !ok {
				t.Errorf("AIPerf's %s: surge profile does not accept it", name)
				continue
			}
			r := 0
			for r < len(rounds) && used[r][f] {
				r++
			}
			if r == len(rounds) {
				rounds, used = append(rounds, nil), append(used, map[cli.Flag]bool{})
			}
			rounds[r], used[r][f] = append(rounds[r], sampleArgs(name, f)...), true
			// The names of one AIPerf option are one surge flag (a
			// --no-x negation may be a flag of its own).
			negation := strings.HasPrefix(bare, "no-") || strings.Contains(bare, "-no-")
			if first := byName[strings.TrimLeft(opt[0], "-")]; first != f && !negation {
				t.Errorf("AIPerf's %s and %s are one option; surge binds them to different flags", opt[0], name)
			}
		}
	}
	// Each parses (values are judged later, in prepare).
	for _, args := range rounds {
		if _, err := tryParseProfile(args...); err != nil {
			t.Errorf("AIPerf's options: %v", err)
		}
	}
}

// TestForeignFlagsSayWhatSurgeDoes: each AIPerf flag surge does not
// implement is silent at a neutral value and otherwise either refused
// (exit 2) or noted once, naming the flag and saying what surge does.
func TestForeignFlagsSayWhatSurgeDoes(t *testing.T) {
	for _, o := range foreignOptions {
		name := o.names()[0]
		value := []string{"7"}
		if o.kind == argSwitch {
			value = []string{"true"}
		}
		if o.isNeutral(value) {
			value = []string{"someting-else"}
		}
		c := Config{Foreign: map[string][]string{name: value}}
		notes, err := c.foreignNotes()
		switch {
		case o.refuse && o.isNeutral(value):
			t.Errorf("--%s: no non-neutral sample", name)
		case o.refuse:
			var ue *UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--"+name) || !strings.Contains(err.Error(), o.does) {
				t.Errorf("--%s %v: error %v, want a usage error naming the flag and saying what surge does", name, value, err)
			}
		case err != nil || len(notes) != 1 || !strings.Contains(notes[0], "--"+name) || !strings.Contains(notes[0], o.does):
			t.Errorf("--%s %v: notes %q, error %v; want one note naming the flag", name, value, notes, err)
		}
		for _, n := range o.neutral {
			c := Config{Foreign: map[string][]string{name: {n}}}
			if notes, err := c.foreignNotes(); err != nil || len(notes) > 0 {
				t.Errorf("--%s %s (neutral): notes %q, error %v; want silence", name, n, notes, err)
			}
		}
	}
}

func TestForeignFlagsThroughTheCommand(t *testing.T) {
	// Refused: the run does not start (exit 2), whatever else was given.
	if code := run([]string{"surge", "profile", "--audio-length-mean", "2", "--request-count", "1", "--ui", "none"}); code != exitUsage {
		t.Errorf("--audio-length-mean 2 exited %d, want %d", code, exitUsage)
	}
	// Noted once; a neutral value says nothing; notes go quiet at WARNING.
	for _, tc := range []struct {
		args  []string
		notes int
	}{
		{[]string{"--workers-max", "8", "--zmq-host", "10.0.0.1"}, 2},
		{[]string{"--workers-max", "8", "--log-level", "warning"}, 0},
		{[]string{"--request-cancellation-rate", "0", "--num-profile-runs", "1", "--url-strategy", "round_robin"}, 0},
	} {
		c := parseProfile(t, tc.args...)
		var log bytes.Buffer
		if _, err := c.resolveAIPerf(&log); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if n := strings.Count(log.String(), "note: "); n != tc.notes {
			t.Errorf("%v: %d notes, want %d:\n%s", tc.args, n, tc.notes, log.String())
		}
		if tc.notes > 0 && !strings.Contains(log.String(), "--workers-max 8 is AIPerf's") {
			t.Errorf("%v: the note does not repeat the value as given:\n%s", tc.args, log.String())
		}
	}
}

func TestExpandArgs(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	got := parseProfile(t, "--extra-inputs", "ignore_eos:true", "max_tokens:5", "--streaming",
		"-H", "A: 1", "B:2", "--gpu-telemetry", "--no-gpu-telemetry", "--server-metrics", "a:9400", "b:9400",
		"--fixed-schedule-start-offset", "-5", "--num-requests", "3")
	if d := cmp.Diff([]string{"ignore_eos:true", "max_tokens:5"}, got.ExtraInputs); d != "" {
		t.Errorf("--extra-inputs a b (-want +got)\n%s", d)
	}
	if d := cmp.Diff([]string{"A: 1", "B:2"}, got.Headers); d != "" {
		t.Errorf("-H a b (-want +got)\n%s", d)
	}
	if d := cmp.Diff([]string{"a:9400", "b:9400"}, got.ServerMetricsURLs); d != "" {
		t.Errorf("--server-metrics a b (-want +got)\n%s", d)
	}
	// A bare --gpu-telemetry takes no value: the flag after it stays a flag.
	if !got.NoGPUTelemetry || !got.Streaming || len(got.GPUTelemetryURLs) != 1 || got.GPUTelemetryURLs[0] != "" {
		t.Errorf("bare --gpu-telemetry: urls %q, --no-gpu-telemetry %v, --streaming %v", got.GPUTelemetryURLs, got.NoGPUTelemetry, got.Streaming)
	}
	if got.StartOffset != -5*time.Millisecond || got.RequestCount != 3 {
		t.Errorf("a negative value was taken for a flag: start offset %v, count %d", got.StartOffset, got.RequestCount)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--streaming", "true"}, `unexpected argument "true"`},
		{[]string{"-m", "a", "b"}, `unexpected argument "b": it follows -m, which takes one value`},
		{[]string{"--concurrency", "4", "stray", "--isl", "64"}, `unexpected argument "stray"`},
		{[]string{"--tokenizer", "--streaming"}, "--tokenizer needs a value (got the flag --streaming)"},
		{[]string{"--", "--isl", "64"}, `unexpected argument "--isl"`},
	} {
		_, err := tryParseProfile(tc.args...)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
	// Through the binary: a stray argument is exit 2, not a run of the rest.
	if code := run([]string{"surge", "profile", "--request-count", "1", "oops", "--ui", "none"}); code != exitUsage {
		t.Errorf("a stray argument exited %d, want %d", code, exitUsage)
	}
}

func TestAIPerfAliasesAndValues(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	got := parseProfile(t, "--prompt-input-tokens-mean", "100", "--prompt-input-tokens-stddev", "2.5",
		"--prompt-input-tokens-block-size", "16", "--prompt-output-tokens-mean", "20", "--prompt-output-tokens-stddev", "0.5",
		"--num-prefix-prompts", "3", "--prefix-prompt-length", "40", "--num-warmup-requests", "2",
		"--artifact-dir", "out", "--ui-type", "simple", "--request-rate-mode", "constant",
		"--benchmark-grace-period", "inf", "-vv")
	want := []any{100, 2.5, 16, 20, 0.5, 3, 40, 2, "out", "simple", "constant", Forever, true}
	have := []any{got.ISL, got.ISLStddev, got.ISLBlockSize, got.OSL, got.OSLStddev, got.PrefixPoolSize, got.PrefixLength,
		got.WarmupCount, got.ArtifactDir, got.UI, got.ArrivalPattern, got.Grace, got.ExtraVerbose}
	if d := cmp.Diff(want, have); d != "" {
		t.Errorf("AIPerf's names (-want +got)\n%s", d)
	}
	if v, _ := pathValue(got.inputConfig(http.Header{}), "loadgen.benchmark_grace_period"); v != "inf" {
		t.Errorf("input_config loadgen.benchmark_grace_period = %v, want \"inf\"", v)
	}
	// --vllm-burstiness alone selects gamma arrivals, as AIPerf's does.
	if c := parseProfile(t, "--vllm-burstiness", "0.5"); c.ArrivalPattern != "gamma" || c.Smoothness != 0.5 {
		t.Errorf("--vllm-burstiness 0.5: pattern %q smoothness %g, want gamma 0.5", c.ArrivalPattern, c.Smoothness)
	}
	if c := parseProfile(t, "--vllm-burstiness", "0.5", "--arrival-pattern", "poisson"); c.ArrivalPattern != "poisson" {
		t.Errorf("an explicit --arrival-pattern was replaced by %q", c.ArrivalPattern)
	}
}

func TestLogLevels(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{}, "INFO"}, {Config{LogLevel: "debug"}, "DEBUG"}, {Config{Verbose: true, LogLevel: "error"}, "DEBUG"},
		{Config{ExtraVerbose: true}, "TRACE"}, {Config{LogLevel: "Warning"}, "WARNING"},
	} {
		if lvl, err := tc.c.level(); err != nil || logLevels[lvl] != tc.want {
			t.Errorf("%+v: level %v %v, want %s", tc.c, lvl, err, tc.want)
		}
	}
	var ue *UsageError
	if _, err := (&Config{LogLevel: "loud"}).level(); !errors.As(err, &ue) {
		t.Errorf("--log-level loud: %v, want a usage error", err)
	}
	// -v on a terminal shows the simple UI, as AIPerf's does.
	c := Config{Verbose: true, StdoutTTY: true}
	var log bytes.Buffer
	l, err := c.resolveAIPerf(&log)
	if err != nil || c.UI != "simple" {
		t.Errorf("-v on a terminal: ui %q, %v", c.UI, err)
	}
	l.debugf("shown %d", 1)
	logger{w: &log, level: 2}.debugf("hidden")
	if log.String() != "debug: shown 1\n" {
		t.Errorf("debug lines %q", log.String())
	}
}

func TestTelemetryURLsAsAIPerfGivesThem(t *testing.T) {
	got, err := gpuTelemetryURLs([]string{"", "pynvml", "dashboard", "node1:9400", "http://node2:9401/metrics", "node1:9400"})
	if d := cmp.Diff([]string{"http://node1:9400/metrics", "http://node2:9401/metrics"}, got); err != nil || d != "" {
		t.Errorf("--gpu-telemetry: %v (-want +got)\n%s", err, d)
	}
	for _, bad := range []string{"amdsmi", "custom_gpu_metrics.csv", "ftp://x"} {
		var ue *UsageError
		if _, err := gpuTelemetryURLs([]string{bad}); !errors.As(err, &ue) || !strings.Contains(err.Error(), "--gpu-telemetry") {
			t.Errorf("--gpu-telemetry %s: %v, want a usage error naming the flag", bad, err)
		}
	}
	got, err = metricsURLs("--server-metrics", []string{"node1:8081", "https://node2:9090/custom/metrics"})
	if d := cmp.Diff([]string{"http://node1:8081/metrics", "https://node2:9090/custom/metrics"}, got); err != nil || d != "" {
		t.Errorf("--server-metrics: %v (-want +got)\n%s", err, d)
	}
}

// modelServer is an e2eServer that also counts the models it was asked
// for.
type modelServer struct {
	e2eServer
	mu     sync.Mutex
	models map[string]int
}

func (s *modelServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" { // the fingerprint's probes
		s.e2eServer.ServeHTTP(w, r)
		return
	}
	var body struct{ Model string }
	_ = json.NewDecoder(r.Body).Decode(&body)
	s.mu.Lock()
	if s.models == nil {
		s.models = map[string]int{}
	}
	s.models[body.Model]++
	s.mu.Unlock()
	s.e2eServer.ServeHTTP(w, r)
}

// TestSeveralURLsAndModels: -m a,b and two --url, as AIPerf takes them:
// the servers take the requests round-robin, the prompts the models.
func TestSeveralURLsAndModels(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	var srv [2]modelServer
	var urls []string
	for i := range srv {
		srv[i].tokens = 3
		ts := httptest.NewServer(&srv[i])
		defer ts.Close()
		urls = append(urls, ts.URL)
	}
	dir := t.TempDir()
	c := parseProfile(t, "-m", "a,b", "--url", urls[0], urls[1], "--request-count", "8", "--concurrency", "2",
		"--streaming", "--isl", "16", "--ui", "none", "--output-artifact-dir", dir, "--no-gpu-telemetry", "--no-server-metrics")
	if _, err := Run(context.Background(), c, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	total := map[string]int{}
	for i := range srv {
		if n := srv[i].n.Load(); n != 4 {
			t.Errorf("server %d got %d requests, want 4 of 8", i, n)
		}
		for m, n := range srv[i].models {
			total[m] += n
		}
	}
	if d := cmp.Diff(map[string]int{"a": 4, "b": 4}, total); d != "" {
		t.Errorf("models sent (-want +got)\n%s", d)
	}
	export := readExport(t, dir)
	ic := export["input_config"].(map[string]any)
	for path, want := range map[string]any{"endpoint.urls": []any{urls[0], urls[1]}, "endpoint.model_names": []any{"a", "b"},
		"endpoint.model_selection_strategy": "round_robin", "loadgen.request_count": 8.0, "input.prompt.input_tokens.mean": 16.0} {
		got, _ := pathValue(ic, path)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("input_config.%s (-want +got)\n%s", path, d)
		}
	}
	info := export["run_info"].(map[string]any)
	if d := cmp.Diff([]any{urls[0], urls[1]}, info["target_urls"]); d != "" {
		t.Errorf("run_info.target_urls (-want +got)\n%s", d)
	}
	for _, bad := range [][]string{{"--url", "mock", urls[0]}, {"-m", "a,b", "--model-selection-strategy", "weighted"}, {"--url", "--streaming"}} {
		c := parseProfile(t, bad...)
		var ue *UsageError
		if _, err := prepare(c, io.Discard); !errors.As(err, &ue) {
			t.Errorf("%q: %v, want a usage error", bad, err)
		}
	}
}

func TestAssignModels(t *testing.T) {
	ds := &datasets.Dataset{Conversations: []datasets.Conversation{
		{Turns: make([]datasets.Turn, 2)}, {Turns: make([]datasets.Turn, 3)}}}
	assignModels(ds, []string{"a", "b"}, "round_robin", 1)
	var got []string
	for _, c := range ds.Conversations {
		for _, t := range c.Turns {
			got = append(got, t.Model)
		}
	}
	if d := cmp.Diff([]string{"a", "b", "a", "b", "a"}, got); d != "" {
		t.Errorf("round_robin (-want +got)\n%s", d)
	}
	count := map[string]int{}
	big := &datasets.Dataset{Conversations: []datasets.Conversation{{Turns: make([]datasets.Turn, 1000)}}}
	assignModels(big, []string{"a", "b"}, "random", 7)
	for _, t := range big.Conversations[0].Turns {
		count[t.Model]++
	}
	if count["a"] < 400 || count["b"] < 400 {
		t.Errorf("random over 1000 prompts: %v", count)
	}
}
