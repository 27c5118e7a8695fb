package profile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/datasets"
)

// modelServer is an apptest.Server that also counts the models it was asked
// for.
type modelServer struct {
	apptest.Server
	mu     sync.Mutex
	models map[string]int
}

func (s *modelServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" { // the fingerprint's probes
		s.Server.ServeHTTP(w, r)
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
	s.Server.ServeHTTP(w, r)
}

// TestSeveralURLsAndModels: -m a,b and two --url, as AIPerf takes them:
// the servers take the requests round-robin, the prompts the models.
func TestSeveralURLsAndModels(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	var srv [2]modelServer
	var urls []string
	for i := range srv {
		srv[i].Tokens = 3
		ts := httptest.NewServer(&srv[i])
		defer ts.Close()
		urls = append(urls, ts.URL)
	}
	dir := t.TempDir()
	// The models go round-robin over the dataset's entries: 8 entries
	// for 8 requests, each sent once (AIPerf's default 100 would sample).
	c := parseArgs(t, "-m", "a,b", "--skip-preflight", "--url", urls[0], urls[1], "--request-count", "8", "--concurrency", "2", "--num-dataset-entries", "8",
		"--streaming", "--isl", "16", "--ui", "none", "--output-artifact-dir", dir, "--no-gpu-telemetry", "--no-server-metrics")
	if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	total := map[string]int{}
	for i := range srv {
		if n := srv[i].N.Load(); n != 4 {
			t.Errorf("server %d got %d requests, want 4 of 8", i, n)
		}
		for m, n := range srv[i].models {
			total[m] += n
		}
	}
	if d := cmp.Diff(map[string]int{"a": 4, "b": 4}, total); d != "" {
		t.Errorf("models sent (-want +got)\n%s", d)
	}
	export := apptest.ReadExport(t, dir)
	ic := export["input_config"].(map[string]any)
	for path, want := range map[string]any{"endpoint.urls": []any{urls[0], urls[1]}, "endpoint.model_names": []any{"a", "b"},
		"endpoint.model_selection_strategy": "round_robin", "loadgen.request_count": 8.0, "input.prompt.input_tokens.mean": 16.0} {
		got, _ := cmdline.PathValue(ic, path)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("input_config.%s (-want +got)\n%s", path, d)
		}
	}
	info := export["run_info"].(map[string]any)
	if d := cmp.Diff([]any{urls[0], urls[1]}, info["target_urls"]); d != "" {
		t.Errorf("run_info.target_urls (-want +got)\n%s", d)
	}
	for _, bad := range [][]string{{"--url", "mock", urls[0]}, {"-m", "a,b", "--model-selection-strategy", "weighted"}, {"--url", "--streaming"}} {
		c := parseArgs(t, bad...)
		var ue *cmdline.UsageError
		if _, err := prepareConfig(c, io.Discard); !errors.As(err, &ue) {
			t.Errorf("%q: %v, want a usage error", bad, err)
		}
	}
}

func TestAssignModels(t *testing.T) {
	ds := &datasets.Dataset{Conversations: []datasets.Conversation{
		{Turns: make([]datasets.Turn, 2)}, {Turns: make([]datasets.Turn, 3)}}}
	assignModels(ds, []string{"a", "b"}, "round_robin", nil, 1)
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
	assignModels(big, []string{"a", "b"}, "random", nil, 7)
	for _, t := range big.Conversations[0].Turns {
		count[t.Model]++
	}
	if count["a"] < 400 || count["b"] < 400 {
		t.Errorf("random over 1000 prompts: %v", count)
	}
	// weighted: the shares follow the weights (1000 draws: 700 ± 45 at
	// three standard deviations).
	clear(count)
	weighted := &datasets.Dataset{Conversations: []datasets.Conversation{{Turns: make([]datasets.Turn, 1000)}}}
	assignModels(weighted, []string{"a", "b", "c"}, "weighted", []float64{0.7, 0.3, 0}, 7)
	for _, t := range weighted.Conversations[0].Turns {
		count[t.Model]++
	}
	if count["a"] < 655 || count["a"] > 745 || count["c"] != 0 {
		t.Errorf("weighted 0.7/0.3/0 over 1000 prompts: %v", count)
	}
}

// TestWeightedModelsReportEach: a weighted run of two models against the
// mock reports each model's results in the JSON, the CSV, the JSONL and
// the console, its share of the requests near its weight.
func TestWeightedModelsReportEach(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := apptest.RunConfig(apptest.MockForTest(t), dir)
	c.Model, c.Models, c.ModelSelection, c.ModelWeights = "", []string{"big", "small"}, "weighted", "0.75,0.25"
	c.RequestCount, c.NumDatasetEntries, c.Seed = 200, 0, 3
	var out, log bytes.Buffer
	if _, err := runConfig(context.Background(), c, &out, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	models, ok := apptest.ReadExport(t, dir)["models"].(map[string]any)
	if !ok {
		t.Fatalf("no models in the JSON:\n%s", out.String())
	}
	n := map[string]float64{}
	for name, m := range models {
		n[name] = m.(map[string]any)["request_count"].(map[string]any)["avg"].(float64)
		if _, ok := m.(map[string]any)["time_to_first_token"]; !ok {
			t.Errorf("model %s has no TTFT", name)
		}
	}
	if n["big"]+n["small"] != 200 || n["big"] < 125 || n["big"] > 175 {
		t.Errorf("per-model request counts %v: want 200 in all, about 150 to big", n)
	}
	lines := apptest.RecordLines(t, dir)
	big := 0
	for _, l := range lines {
		if l["surge"].(map[string]any)["model"] == "big" {
			big++
		}
	}
	if float64(big) != n["big"] {
		t.Errorf("%d JSONL lines name big, the JSON counts %v", big, n["big"])
	}
	csv, err := os.ReadFile(filepath.Join(dir, "profile_export_aiperf.csv"))
	if err != nil || !strings.Contains(string(csv), "Model,big") || !strings.Contains(string(csv), "Model,small") {
		t.Errorf("CSV has no per-model sections: %v", err)
	}
	if !strings.Contains(out.String(), "Per model:") || !strings.Contains(out.String(), "  small") {
		t.Errorf("console:\n%s", out.String())
	}
}

// parseArgs parses args as `surge profile` would and returns the config.
func parseArgs(t *testing.T, args ...string) cmdline.Config {
	t.Helper()
	c, err := cmdline.ParseProfile(args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return c
}

// refusal is the error args earn: a value its flag's limits refuse as the
// command line is parsed (cmdline.CheckNumbers), else what then does
// with the parsed configuration.
func refusal(args []string, then func(cmdline.Config) error) error {
	c, err := cmdline.ParseProfile(args...)
	if err != nil {
		return err
	}
	return then(c)
}

// TestUsageErrorsComeBeforeTheServer: a bad value is refused before any
// request reaches the server, the /v1/models look-up of a run without
// --model included (it used to come first, and wait up to 3 s).
func TestUsageErrorsComeBeforeTheServer(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.NotFound(w, r)
	}))
	defer srv.Close()
	for _, args := range [][]string{
		{"--request-cancellation-rate", "200"},
		{"--prefill-concurrency", "4", "--concurrency", "2", "--streaming"},
		{"--concurrency", "1,2", "--concurrency-ramp-duration", "5"},
		{"--isl", "16,0", "--request-count", "2"},
	} {
		var ue *cmdline.UsageError
		if err := refusal(append([]string{"--url", srv.URL}, args...), func(c cmdline.Config) error {
			_, err := runConfig(context.Background(), c, io.Discard, io.Discard)
			return err
		}); !errors.As(err, &ue) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server saw %d requests before the usage errors", n)
	}
}
