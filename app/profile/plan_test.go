package profile

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/surgebench/surge/app/spec"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/telemetry"
)

func TestBadLoadFlagsNameTheFlag(t *testing.T) {
	t.Parallel()
	synthetic := &datasets.Dataset{Name: "synthetic", Conversations: []datasets.Conversation{{ID: "a", Turns: []datasets.Turn{{Text: "x"}}}}}
	cases := []struct {
		name string
		mod  func(*cmdline.Config)
		want string
	}{
		{"rate 0", func(c *cmdline.Config) { c.RequestRate = "0" }, "--request-rate"},
		{"negative rate", func(c *cmdline.Config) { c.RequestRate = "-5" }, "--request-rate"},
		{"smoothness ≤ 0", func(c *cmdline.Config) {
			c.RequestRate, c.ArrivalPattern, c.Smoothness, c.SmoothnessSet = "10", "gamma", 0, true
		}, "--arrival-smoothness"},
		{"unknown pattern", func(c *cmdline.Config) { c.RequestRate, c.ArrivalPattern = "10", "bursty" }, "--arrival-pattern"},
		{"ramp longer than the run", func(c *cmdline.Config) {
			c.ConcurrencyRamp, c.Duration = time.Minute, 30*time.Second
		}, "--concurrency-ramp-duration"},
		{"stage list with a non-number", func(c *cmdline.Config) { c.Concurrency = "1,2,x" }, "--concurrency"},
		{"rate stage list with a non-number", func(c *cmdline.Config) { c.RequestRate = "5,ten" }, "--request-rate"},
		{"two sweeps", func(c *cmdline.Config) { c.Concurrency, c.RequestRate = "1,2", "5,10" }, "stage"},
		{"fixed schedule without timestamps", func(c *cmdline.Config) { c.FixedSchedule = true }, "--fixed-schedule"},
		{"users without a rate", func(c *cmdline.Config) { c.NumUsers = 4 }, "--user-centric-rate"},
	}
	for _, tc := range cases {
		c := cmdline.Config{Model: "m", ISL: 8, Timeout: time.Second, Concurrency: "1"}
		tc.mod(&c)
		_, err := planOf(&c, synthetic)
		var ue *cmdline.UsageError
		if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want a usage error naming %s", tc.name, err, tc.want)
		}
	}
}

func TestPlanShapes(t *testing.T) {
	t.Parallel()
	trace := &datasets.Dataset{Name: "trace"}
	for i, ms := range []int{300, 0, 100} { // out of order on purpose
		trace.Conversations = append(trace.Conversations, datasets.Conversation{ID: string(rune('a' + i)),
			Turns: []datasets.Turn{{Text: "x", Timestamp: time.Duration(ms) * time.Millisecond, HasTimestamp: true}}})
	}
	synthetic := &datasets.Dataset{Name: "synthetic", Conversations: []datasets.Conversation{{ID: "a", Turns: []datasets.Turn{{Text: "x"}}}}}
	cases := []struct {
		name   string
		mod    func(*cmdline.Config)
		ds     *datasets.Dataset
		mode   string
		stages int // profile stages, after a warmup if any
		total  int
	}{
		{"default closed loop", func(c *cmdline.Config) { c.Concurrency = "" }, synthetic, ModeConcurrency, 1, 10},
		{"sweep", func(c *cmdline.Config) { c.Concurrency = "1,2,4" }, synthetic, ModeConcurrency, 3, 30},
		{"rate", func(c *cmdline.Config) { c.Concurrency, c.RequestRate = "", "20" }, synthetic, ModeRequestRate, 1, 10},
		{"rate sweep under a cap", func(c *cmdline.Config) { c.Concurrency, c.RequestRate = "8", "5,10" }, synthetic, ModeRequestRate, 2, 20},
		{"trace switches to its timestamps", func(c *cmdline.Config) {}, trace, ModeFixedSchedule, 1, 3},
		{"users", func(c *cmdline.Config) { c.UserCentricRate, c.NumUsers = 10, 3 }, synthetic, ModeUserCentric, 1, 10},
		{"warmup first", func(c *cmdline.Config) { c.WarmupCount = 5 }, synthetic, ModeConcurrency, 1, 10},
		// AIPerf's default count: max(10, 2 × concurrency) per stage.
		{"concurrency 8 sends 16", func(c *cmdline.Config) { c.Concurrency = "8" }, synthetic, ModeConcurrency, 1, 16},
		{"sweep counts each stage", func(c *cmdline.Config) { c.Concurrency = "1,8,32" }, synthetic, ModeConcurrency, 3, 10 + 16 + 64},
		{"a count wins", func(c *cmdline.Config) { c.Concurrency, c.RequestCount = "32", 5 }, synthetic, ModeConcurrency, 1, 5},
		{"rate under a cap: 10", func(c *cmdline.Config) { c.Concurrency, c.RequestRate = "64", "5" }, synthetic, ModeRequestRate, 1, 10},
		{"--no-fixed-schedule keeps the concurrency", func(c *cmdline.Config) { c.NoFixedSchedule = true }, trace, ModeConcurrency, 1, 10},
	}
	for _, tc := range cases {
		c := cmdline.Config{Model: "m", ISL: 8, Timeout: time.Second, Concurrency: "1", RequestCount: 0}
		tc.mod(&c)
		p, err := planOf(&c, tc.ds)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		profile := len(p.stages)
		if c.WarmupCount > 0 {
			profile--
			if p.stages[0].Count != c.WarmupCount || p.stages[0].Phase.String() != "warmup" {
				t.Errorf("%s: first stage %+v, want the warmup", tc.name, p.stages[0])
			}
		}
		if p.mode != tc.mode || profile != tc.stages || p.total != tc.total {
			t.Errorf("%s: mode %s, %d profile stages, total %d; want %s, %d, %d", tc.name, p.mode, profile, p.total, tc.mode, tc.stages, tc.total)
		}
	}
	// The replay follows timestamp order: rows 1 (0 ms), 2 (100 ms), 0 (300 ms).
	c := cmdline.Config{Model: "m", ISL: 8, Timeout: time.Second}
	p, err := planOf(&c, trace)
	if err != nil {
		t.Fatal(err)
	}
	st := p.stages[0]
	var rows []int
	var ats []time.Duration
	for i := range st.Count {
		at, ok := st.Schedule.Next()
		if !ok {
			t.Fatalf("schedule ended after %d of %d", i, st.Count)
		}
		rows, ats = append(rows, st.Conversation(i)), append(ats, at)
	}
	if rows[0] != 1 || rows[1] != 2 || rows[2] != 0 || ats[2] != 300*time.Millisecond {
		t.Errorf("replay rows %v at %v, want [1 2 0] at [0 100ms 300ms]", rows, ats)
	}
}

// TestMockServerTelemetryEndToEnd runs against the mock and checks that
// its /metrics was scraped into the exports. A 250 ms TTFT keeps the run
// over a second long, so a busy machine still takes several samples of it.
func TestMockServerTelemetryEndToEnd(t *testing.T) {
	t.Parallel()
	mock, err := mockserver.Start(context.Background(), "127.0.0.1:0", mockserver.Config{TTFT: 250 * time.Millisecond, ITL: 5 * time.Millisecond, Model: "mock"})
	if err != nil {
		t.Fatal(err)
	}
	defer mock.Close(context.Background())
	dir := t.TempDir()
	c := cmdline.Config{Model: "mock", URL: mock.URL(), EndpointType: "chat", Streaming: true, Concurrency: "4", RequestCount: 16,
		ISL: 16, OSL: 16, Timeout: 10 * time.Second, Grace: time.Second, UI: "none", ArtifactDir: dir,
		NoGPUTelemetry: true, GPUInterval: 50 * time.Millisecond, Version: "test"}
	res, err := runConfig(context.Background(), c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Run["request_count"] != 16 {
		t.Fatalf("request_count %v, errors %+v", res.Summary.Run["request_count"], res.Summary.Errors)
	}
	b, err := os.ReadFile(filepath.Join(dir, FileServerMetrics))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 3 {
		t.Fatalf("%d server metric samples, want several at a 50 ms interval", len(lines))
	}
	busy := false
	for _, l := range lines {
		// AIPerf's SlimRecord, surge's sample beside.
		var s struct {
			URL     string         `json:"endpoint_url"`
			Metrics map[string]any `json:"metrics"`
			Surge   struct {
				Running *float64 `json:"num_requests_running"`
			} `json:"surge"`
		}
		if err := json.Unmarshal([]byte(l), &s); err != nil || s.URL == "" || s.Metrics == nil {
			t.Fatalf("bad sample %q: %v", l, err)
		}
		busy = busy || (s.Surge.Running != nil && *s.Surge.Running > 0)
	}
	if !busy {
		t.Error("no sample saw a running request on the mock")
	}
	var doc map[string]any
	b, _ = os.ReadFile(filepath.Join(dir, spec.FileJSON))
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	td, _ := doc["telemetry_data"].(map[string]any)
	if _, ok := td["server_metrics"]; !ok {
		t.Errorf("telemetry_data %v lacks server_metrics", td)
	}
	// AIPerf's server_metrics_export.json and .csv, from the same scrapes,
	// under the run's benchmark_id.
	var sm struct {
		BenchmarkID string `json:"benchmark_id"`
		Metrics     map[string]struct {
			Type   string `json:"type"`
			Series []struct {
				EndpointURL string             `json:"endpoint_url"`
				Stats       map[string]float64 `json:"stats"`
			} `json:"series"`
		} `json:"metrics"`
	}
	b, err = os.ReadFile(filepath.Join(dir, telemetry.ServerMetricsJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sm); err != nil {
		t.Fatal(err)
	}
	run := sm.Metrics["vllm:num_requests_running"]
	gen := sm.Metrics["vllm:generation_tokens_total"]
	if sm.BenchmarkID != doc["benchmark_id"] || run.Type != "gauge" || len(run.Series) != 1 || run.Series[0].Stats["max"] <= 0 ||
		gen.Type != "counter" || len(gen.Series) != 1 || gen.Series[0].Stats["total"] <= 0 {
		t.Errorf("server_metrics_export.json: %s", b)
	}
	b, err = os.ReadFile(filepath.Join(dir, telemetry.ServerMetricsCSVFile))
	if err != nil || !strings.HasPrefix(string(b), "# AIPerf Server Metrics Export (CSV)\n") ||
		!strings.Contains(string(b), ",counter,vllm:generation_tokens_total,tokens,") {
		t.Errorf("server_metrics_export.csv (%v):\n%s", err, b)
	}
}

// TestMooncakeTraceReplay replays the first two seconds of the real
// Mooncake trace (when the shared data folder is there) on a fixed schedule.
func TestMooncakeTraceReplay(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "shared", "data", "mooncake_conversation_trace.jsonl")
	if _, err := os.Stat(path); err != nil {
		path = filepath.Join("..", "..", "datasets", "testdata", "mooncake_head200.jsonl")
	}
	dir := t.TempDir()
	c := cmdline.Config{Model: "mock", EndpointType: "chat", Streaming: true, InputFile: path, CustomDatasetType: "mooncake_trace",
		FixedSchedule: true, EndOffset: 2 * time.Second, ISL: 1, Timeout: 30 * time.Second, Grace: time.Second,
		UI: "none", ArtifactDir: dir, NoGPUTelemetry: true, NoServerMetrics: true, Version: "test",
		ExtraInputs: []string{"max_completion_tokens:4"}} // short answers keep the test quick
	res, err := runConfig(context.Background(), c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	n := res.Summary.Run["request_count"]
	if n < 2 || res.Summary.Run["error_request_count"] != 0 {
		t.Fatalf("%v requests replayed, %v errors (%+v)", n, res.Summary.Run["error_request_count"], res.Summary.Errors)
	}
	if isl := res.Summary.Metrics["input_sequence_length"]; isl.Min < 512 {
		t.Errorf("ISL min %v: trace rows carry thousands of tokens", isl.Min)
	}
}

// TestSameSeedSameBodies: two runs with one --random-seed send byte-identical
// request bodies (inputs.json), and another seed sends different ones.
func TestSameSeedSameBodies(t *testing.T) {
	t.Parallel()
	bodies := func(seed uint64) string {
		dir := t.TempDir()
		c := cmdline.Config{Model: "mock", EndpointType: "chat", Streaming: true, Concurrency: "2", RequestCount: 6,
			ISL: 64, ISLStddev: 16, OSL: 4, OSLStddev: 2, Seed: seed, Timeout: 10 * time.Second, Grace: time.Second,
			UI: "none", ArtifactDir: dir, NoGPUTelemetry: true, NoServerMetrics: true, Version: "test"}
		if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, FileInputs))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Data []struct {
				SessionID string            `json:"session_id"`
				Payloads  []json.RawMessage `json:"payloads"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("inputs.json: %v", err)
		}
		if len(doc.Data) != 6 {
			t.Fatalf("%d bodies in inputs.json, want 6", len(doc.Data))
		}
		// Requests finish in any order: compare them by session.
		bySession := map[string]string{}
		for _, d := range doc.Data {
			bySession[d.SessionID] = string(d.Payloads[0])
		}
		var out []string
		for i := range 6 {
			out = append(out, bySession["synthetic-"+strconv.Itoa(i)])
		}
		return strings.Join(out, "\n")
	}
	a, b, other := bodies(7), bodies(7), bodies(8)
	if a != b {
		t.Errorf("seed 7 sent different bodies on two runs:\n%s\n---\n%s", a, b)
	}
	if a == other {
		t.Error("seeds 7 and 8 sent the same bodies")
	}
}

// TestSimpleUIPrintsProgress: --ui simple prints progress lines to the log.
func TestSimpleUIPrintsProgress(t *testing.T) {
	t.Parallel()
	var log strings.Builder
	c := cmdline.Config{Model: "mock", EndpointType: "chat", Streaming: true, Concurrency: "2", RequestCount: 8,
		ISL: 16, OSL: 48, Timeout: 10 * time.Second, Grace: time.Second, UI: "simple",
		ArtifactDir: t.TempDir(), NoGPUTelemetry: true, NoServerMetrics: true, Version: "test"}
	if _, err := runConfig(context.Background(), c, io.Discard, &syncWriter{w: &log}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "8/8 req") {
		t.Errorf("log lacks a final progress line with 8/8 req:\n%s", log.String())
	}
}

// syncWriter serialises writes from the UI and the run's notices.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// planOf parses c into a spec and plans it over ds, as prepare does.
func planOf(c *cmdline.Config, ds *datasets.Dataset) (*plan, error) {
	pc := *c
	if pc.EndpointType == "" {
		pc.EndpointType = "chat"
	}
	s, err := spec.Parse(pc)
	if err != nil {
		return nil, err
	}
	return buildPlan(s, ds)
}

// TestLibraryFieldsBecomeFlags: the schedule package names its parameters;
// the app says which flag set each, and keeps the cause.
func TestLibraryFieldsBecomeFlags(t *testing.T) {
	t.Parallel()
	synthetic := &datasets.Dataset{Name: "synthetic", Conversations: []datasets.Conversation{{ID: "a", Turns: []datasets.Turn{{Text: "x"}}}}}
	cases := []struct {
		mod  func(*cmdline.Config)
		want string
	}{
		{func(c *cmdline.Config) { c.RequestRate, c.ArrivalPattern = "10", "bursty" }, `--arrival-pattern must be constant, poisson or gamma, got "bursty"`},
		{func(c *cmdline.Config) { c.UserCentricRate, c.NumUsers = 2, 0 }, "--num-users must be ≥ 1, got 0"},
		{func(c *cmdline.Config) { c.FixedSchedule = true }, "synthetic: --fixed-schedule needs a timestamp on every row: row 1 has none"},
	}
	for _, tc := range cases {
		c := cmdline.Config{Model: "m", ISL: 8, Timeout: time.Second}
		tc.mod(&c)
		_, err := planOf(&c, synthetic)
		if err == nil || err.Error() != tc.want {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
	c := cmdline.Config{Model: "m", ISL: 8, Timeout: time.Second, FixedSchedule: true}
	if _, err := planOf(&c, synthetic); !errors.Is(err, schedule.ErrNoTimestamps) {
		t.Errorf("error %v does not wrap ErrNoTimestamps", err)
	}
}

// TestDatasetOptionsBecomeFlags: datasets names its Options fields; the app
// names the flags.
func TestDatasetOptionsBecomeFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c    cmdline.Config
		want string
	}{
		{cmdline.Config{ISL: 8, ISLBlockSize: -1}, "--isl-block-size must be positive, got -1"},
		{cmdline.Config{ISL: 8, CustomDatasetType: "mooncake_trace"}, "--custom-dataset-type mooncake_trace needs an input file"},
		{cmdline.Config{ISL: 8, PrefixPoolSize: 2}, "--prompt-prefix-pool-size and the prefix length must be given together"},
	} {
		tc.c.Model, tc.c.Timeout = "m", time.Second
		_, err := loadDataset(context.Background(), specFor(t, tc.c), nil, 1, io.Discard)
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || err.Error() != tc.want {
			t.Errorf("error %v, want the usage error %q", err, tc.want)
		}
	}
}
