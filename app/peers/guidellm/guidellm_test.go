package guidellm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// TestStatisticsAreGuideLLMs: surge's port of GuideLLM's statistics gives
// GuideLLM's numbers on the same inputs (testdata/statistics.json: computed
// by GuideLLM's own code).
func TestStatisticsAreGuideLLMs(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("testdata", "statistics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct {
			Kind   string          `json:"kind"`
			Values [][]float64     `json:"values"`
			Start  *float64        `json:"start,omitempty"`
			End    *float64        `json:"end,omitempty"`
			Want   json.RawMessage `json:"want"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for i, c := range doc.Cases {
		var got summary
		switch c.Kind {
		case "values", "rate":
			w := make([]weighted, len(c.Values))
			for k, v := range c.Values {
				w[k] = weighted{v[0], v[1]}
			}
			if c.Kind == "values" {
				got = fromValues(w, nil)
			} else {
				got = rateFromTimings(w, c.Start, c.End)
			}
		case "concurrency":
			ivs := make([]interval, len(c.Values))
			for k, v := range c.Values {
				ivs[k] = interval{v[0], v[1], v[2]}
			}
			got = concurrencyFromTimings(ivs, c.Start, c.End)
		}
		gb, _ := got.object().MarshalJSON()
		var g, want map[string]any
		if err := json.Unmarshal(gb, &g); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(c.Want, &want); err != nil {
			t.Fatal(err)
		}
		for _, d := range diff("", want, g) {
			t.Errorf("case %d (%s): %s", i, c.Kind, d)
		}
	}
}

// diff lists where got's numbers differ from want's (relative 1e-9).
func diff(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, _ := got.(map[string]any)
		var out []string
		for k, v := range w {
			out = append(out, diff(path+"."+k, v, g[k])...)
		}
		return out
	case float64:
		g, ok := got.(float64)
		if !ok || math.Abs(g-w) > 1e-9*math.Max(1, math.Abs(w)) {
			return []string{path + ": GuideLLM " + fmtFloat(w) + ", surge " + strings.TrimSpace(strings.Trim(fmtAny(got), "\n"))}
		}
	}
	return nil
}

func fmtAny(v any) string { b, _ := json.Marshal(v); return string(b) }

// The GuideLLM report's schema, from GuideLLM's pydantic models (v0.6.0
// and v0.7: guidellm/schemas/statistics.py, request_stats.py, info.py,
// request.py, benchmark/schemas/…/benchmark.py, metrics.py, base.py,
// report.py, scheduler/schemas.py): field names and JSON types.
var (
	numS, integer, str = shape.Number, shape.Integer, shape.String
	percentiles        = shape.Model{Fields: map[string]shape.Shape{"p001": numS, "p01": numS, "p05": numS, "p10": numS, "p25": numS,
		"p50": numS, "p75": numS, "p90": numS, "p95": numS, "p99": numS, "p999": numS}}
	distribution = shape.Model{Fields: map[string]shape.Shape{"mean": numS, "median": numS, "mode": numS, "variance": numS, "std_dev": numS,
		"min": numS, "max": numS, "count": integer, "total_sum": numS, "percentiles": percentiles, "pdf": shape.OrNull(shape.List(shape.List(numS)))},
		Optional: []string{"pdf"}}
	statusDistribution = shape.Model{Fields: map[string]shape.Shape{"successful": distribution, "errored": distribution,
		"incomplete": distribution, "total": distribution}}
	breakdownInts = shape.Model{Fields: map[string]shape.Shape{"successful": integer, "errored": integer, "incomplete": integer, "total": integer}}
	timedShape    = shape.OrNull(shape.Model{Fields: map[string]shape.Shape{"input": shape.OrNull(statusDistribution), "input_per_second": shape.OrNull(statusDistribution),
		"input_concurrency": shape.OrNull(statusDistribution), "output": shape.OrNull(statusDistribution), "output_per_second": shape.OrNull(statusDistribution),
		"output_concurrency": shape.OrNull(statusDistribution), "total": shape.OrNull(statusDistribution), "total_per_second": shape.OrNull(statusDistribution),
		"total_concurrency": shape.OrNull(statusDistribution)},
		Optional: []string{"input", "input_per_second", "input_concurrency", "output", "output_per_second", "output_concurrency", "total", "total_per_second", "total_concurrency"}})
)

func modalityShape(props ...string) shape.Model {
	m := shape.Model{Fields: map[string]shape.Shape{}}
	for _, p := range props {
		m.Fields[p] = timedShape
		m.Optional = append(m.Optional, p)
	}
	return m
}

func usageModel() shape.Model {
	f := map[string]shape.Shape{}
	var opt []string
	for _, k := range []string{"text_tokens", "text_words", "text_characters", "image_tokens", "image_count", "image_pixels", "image_bytes",
		"video_tokens", "video_frames", "video_bytes", "audio_tokens", "audio_samples", "audio_bytes", "total_tokens"} {
		f[k] = shape.OrNull(integer)
		opt = append(opt, k)
	}
	f["video_seconds"], f["audio_seconds"] = shape.OrNull(numS), shape.OrNull(numS)
	return shape.Model{Fields: f, Optional: append(opt, "video_seconds", "audio_seconds")}
}

func requestStats(version int) shape.Shape {
	timings := map[string]shape.Shape{"request_iterations": integer, "token_iterations": integer}
	var topt []string
	for _, k := range []string{"targeted_start", "queued", "dequeued", "scheduled_at", "resolve_start", "request_start", "first_request_iteration",
		"first_token_iteration", "last_token_iteration", "last_request_iteration", "request_end", "resolve_end", "finalized"} {
		timings[k] = shape.OrNull(numS)
		topt = append(topt, k)
	}
	if version >= 2 {
		timings["first_output_token_iteration"] = shape.OrNull(numS)
		topt = append(topt, "first_output_token_iteration")
	}
	info := shape.Model{Fields: map[string]shape.Shape{"request_id": str, "conversation_id": shape.OrNull(str), "turn_index": integer,
		"status": str, "scheduler_node_id": integer, "scheduler_process_id": integer, "scheduler_start_time": numS,
		"timings": shape.Model{Fields: timings, Optional: topt}, "error": shape.OrNull(str), "traceback": shape.OrNull(str),
		"started_at": shape.OrNull(numS), "completed_at": shape.OrNull(numS)},
		Optional: []string{"conversation_id", "error", "traceback", "started_at", "completed_at"}}
	f := map[string]shape.Shape{"type_": str, "request_id": str, "response_id": shape.OrNull(str), "request_args": shape.OrNull(str),
		"output": shape.OrNull(str), "info": info, "input_metrics": usageModel(), "output_metrics": usageModel(),
		"request_start_time": shape.OrNull(numS), "request_end_time": numS, "request_latency": shape.OrNull(numS), "prompt_tokens": shape.OrNull(integer),
		"output_tokens": shape.OrNull(integer), "total_tokens": shape.OrNull(integer), "time_to_first_token_ms": shape.OrNull(numS),
		"time_per_output_token_ms": shape.OrNull(numS), "inter_token_latency_ms": shape.OrNull(numS), "tokens_per_second": shape.OrNull(numS),
		"output_tokens_per_second": shape.OrNull(numS), "iter_tokens_per_iteration": shape.OrNull(numS), "output_tokens_per_iteration": shape.OrNull(numS)}
	opt := []string{"response_id", "request_args", "output", "request_start_time", "request_latency", "prompt_tokens", "output_tokens", "total_tokens",
		"time_to_first_token_ms", "time_per_output_token_ms", "inter_token_latency_ms", "tokens_per_second", "output_tokens_per_second",
		"iter_tokens_per_iteration", "output_tokens_per_iteration"}
	if version >= 2 {
		f["reasoning_output"], f["tool_calls"], f["time_to_first_output_token_ms"] = shape.OrNull(str), shape.OrNull(shape.List(shape.Object)), shape.OrNull(numS)
		opt = append(opt, "reasoning_output", "tool_calls", "time_to_first_output_token_ms")
	}
	return shape.Model{Fields: f, Optional: opt}
}

// reportShape is the report of schema version (1: v0.6, 2: v0.7).
func reportShape(version int) shape.Shape {
	metrics := map[string]shape.Shape{"request_totals": breakdownInts, "text": modalityShape("tokens", "words", "characters"),
		"image": modalityShape("tokens", "images", "pixels", "bytes"), "video": modalityShape("tokens", "frames", "seconds", "bytes"),
		"audio": modalityShape("tokens", "samples", "seconds", "bytes")}
	for _, k := range []string{"requests_per_second", "request_concurrency", "request_latency", "request_streaming_iterations_count",
		"prompt_token_count", "output_token_count", "total_token_count", "time_to_first_token_ms", "time_per_output_token_ms",
		"inter_token_latency_ms", "prompt_tokens_per_second", "output_tokens_per_second", "tokens_per_second",
		"output_tokens_per_iteration", "iter_tokens_per_iteration"} {
		metrics[k] = statusDistribution
	}
	sample := "sample_requests"
	profile := shape.Shape(shape.Object)
	if version >= 2 {
		metrics["time_to_first_output_token_ms"] = statusDistribution
		metrics["tool_call"] = shape.Model{Fields: map[string]shape.Shape{"tokens": timedShape, "mixed_tokens": timedShape, "count": timedShape},
			Optional: []string{"tokens", "mixed_tokens", "count"}}
		sample = "sample_size"
	}
	transient := shape.Model{Fields: map[string]shape.Shape{"percent": shape.OrNull(numS), "value": shape.OrNull(numS), "mode": str}, Optional: []string{"percent", "value"}}
	config := shape.Model{Fields: map[string]shape.Shape{"id_": str, "run_id": str, "run_index": integer, "strategy": shape.Object,
		"constraints": shape.Dict(shape.Object), sample: shape.OrNull(integer), "warmup": transient, "cooldown": transient,
		"prefer_response_metrics": shape.Bool, "profile": profile, "requests": shape.Object, "backend": shape.Object, "environment": shape.Object},
		Optional: []string{sample}}
	progress := shape.Model{Fields: map[string]shape.Shape{"remaining_requests": shape.OrNull(numS), "total_requests": shape.OrNull(numS),
		"remaining_duration": shape.OrNull(numS), "total_duration": shape.OrNull(numS), "stop_time": shape.OrNull(numS)},
		Optional: []string{"remaining_requests", "total_requests", "remaining_duration", "total_duration", "stop_time"}}
	state := shape.Model{Fields: map[string]shape.Shape{"node_id": integer, "num_processes": integer, "start_time": numS, "end_time": shape.OrNull(numS),
		"start_requests_time": shape.OrNull(numS), "end_requests_time": shape.OrNull(numS), "end_queuing_time": shape.OrNull(numS),
		"end_queuing_constraints": shape.Object, "end_processing_time": shape.OrNull(numS), "end_processing_constraints": shape.Object,
		"scheduler_constraints": shape.Object, "progress": progress, "created_requests": integer, "queued_requests": integer,
		"pending_requests": integer, "processing_requests": integer, "processed_requests": integer, "successful_requests": integer,
		"errored_requests": integer, "cancelled_requests": integer},
		Optional: []string{"end_time", "start_requests_time", "end_requests_time", "end_queuing_time", "end_processing_time"}}
	schedMetrics := map[string]shape.Shape{"requests_made": breakdownInts}
	for _, k := range []string{"start_time", "request_start_time", "measure_start_time", "measure_end_time", "request_end_time", "end_time",
		"queued_time_avg", "resolve_start_delay_avg", "resolve_targeted_start_delay_avg", "request_start_delay_avg",
		"request_targeted_start_delay_avg", "request_time_avg", "resolve_end_delay_avg", "resolve_time_avg", "finalized_delay_avg", "processed_delay_avg"} {
		schedMetrics[k] = numS
	}
	reqs := shape.List(requestStats(version))
	benchmark := shape.Model{Fields: map[string]shape.Shape{"type_": str, "config": config, "scheduler_state": state,
		"scheduler_metrics": shape.Model{Fields: schedMetrics}, "metrics": shape.Model{Fields: metrics},
		"requests":   shape.Model{Fields: map[string]shape.Shape{"successful": reqs, "errored": reqs, "incomplete": reqs, "total": shape.Any}, Optional: []string{"total"}},
		"start_time": numS, "end_time": numS, "duration": numS, "warmup_duration": numS, "cooldown_duration": numS}}
	args := "args"
	if version >= 2 {
		args = "config"
	}
	return shape.Model{Fields: map[string]shape.Shape{
		"metadata":   shape.Model{Fields: map[string]shape.Shape{"version": integer, "guidellm_version": str, "python_version": str, "platform": str}},
		args:         shape.Object,
		"benchmarks": shape.List(benchmark)}}
}

// TestDocumentedLines runs GuideLLM's documented command lines (v0.6's
// benchmark, v0.7's run) against the mock, as a user runs them (surge
// guidellm, in a folder of its own, all lines at once): each one surge
// takes writes GuideLLM's report in the version's schema (JSON, and the
// CSV), each one it refuses exits 2 naming what.
//
// The mock serves at most 8 requests at once, a 128-token answer in about
// 130 ms: a sweep's throughput benchmark finds about 50 requests a second
// rather than the 2,000 a mock without a cap gives, so its ten benchmarks
// take tenths of a CPU second rather than ten (the same reports, written
// from fewer requests). Each benchmark lasts 0.75 s: at 0.5 s a loaded
// machine's throughput benchmark (512 streams to set up) once finished
// none.
func TestDocumentedLines(t *testing.T) {
	t.Parallel()
	f, err := os.Open(filepath.Join("testdata", "documented.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	capSeconds := regexp.MustCompile(`(--max-seconds |seconds=)\d+`)
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
		line = capSeconds.ReplaceAllString(line, "${1}0.75")
		argv := apptest.ShellWords(t, line)[1:] // after "guidellm"
		t.Run(strings.Join(argv[:min(5, len(argv))], " "), func(t *testing.T) {
			t.Parallel()
			// A mock of its own: the sweeps measure its capacity.
			url := apptest.Mock(t, mockserver.Config{TTFT: time.Millisecond, ITL: time.Millisecond, MaxRunning: 8})
			for i, a := range argv {
				argv[i] = strings.ReplaceAll(a, "http://localhost:8000", url)
			}
			dir := t.TempDir()
			out, err := guidellm(t, dir, argv...)
			var exit *exec.ExitError
			if refused != "" {
				code := 0
				if errors.As(err, &exit) {
					code = exit.ExitCode()
				}
				if code != cmdline.ExitUsage || !strings.Contains(string(out), refused) {
					t.Fatalf("documented.txt:%d: exit %d; want %d naming %s\n%s", n, code, cmdline.ExitUsage, refused, out)
				}
				return
			}
			if err != nil {
				t.Fatalf("documented.txt:%d: %v\n%s", n, err, out)
			}
			version := 1
			if argv[0] == "run" {
				version = 2
			}
			checkReport(t, filepath.Join(dir, "benchmarks.json"), version)
			checkCSV(t, filepath.Join(dir, "benchmarks.csv"))
		})
	}
}

// guidellm runs surge guidellm with args in dir, as a user would there:
// its reports in dir, its own default history, and no look at the Hub for
// the mock's tokenizer.
func guidellm(t *testing.T, dir string, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(apptest.SurgeBinary(t), append([]string{"guidellm"}, args...)...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "XDG_DATA_HOME="+dir, "HF_HUB_OFFLINE=1")
	return cmd.CombinedOutput()
}

// checkReport checks a report against GuideLLM's schema and its
// benchmarks for sense.
func checkReport(t *testing.T, path string, version int) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if errs := shape.Check(path, b, reportShape(version)); len(errs) > 0 {
		t.Fatalf("not GuideLLM's report:\n%s", strings.Join(errs[:min(20, len(errs))], "\n"))
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if v := doc["metadata"].(map[string]any)["version"]; v != float64(version) {
		t.Errorf("metadata.version %v, want %d", v, version)
	}
	for i, bm := range doc["benchmarks"].([]any) {
		m := bm.(map[string]any)["metrics"].(map[string]any)
		ok := m["request_totals"].(map[string]any)["successful"].(float64)
		ttft := m["time_to_first_token_ms"].(map[string]any)["successful"].(map[string]any)["mean"].(float64)
		if ok < 1 || !(ttft > 0) {
			t.Errorf("benchmark %d: %v successful, TTFT mean %v", i, ok, ttft)
		}
	}
	return doc
}

// checkCSV checks GuideLLM's CSV layout: three header rows (group, name,
// unit) as wide as each other, then a row per benchmark.
func checkCSV(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// GuideLLM's rows are as wide as their benchmark's statistics (a
	// status with no data has no columns), under the first's headers.
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 4 || rows[0][0] != "Run Info" || rows[1][0] != "Run ID" || rows[1][1] != "Run Index" ||
		len(rows[0]) != len(rows[1]) || len(rows[1]) != len(rows[2]) {
		t.Fatalf("%s: not GuideLLM's header rows: %v", path, rows[:min(3, len(rows))])
	}
	for _, want := range []string{"Request Latency", "Time to First Token", "Server Throughput", "Runtime Info"} {
		if !strings.Contains(strings.Join(rows[0], ","), want) {
			t.Errorf("%s: no %q group", path, want)
		}
	}
}

// TestConcurrentWritesBenchmarks is the "done when": a v0.6
// `benchmark --profile concurrent` line writes its benchmarks file (and
// the YAML, which GuideLLM's loader reads the same), one benchmark a
// stream count, warmup and cooldown left out of the metrics.
func TestConcurrentWritesBenchmarks(t *testing.T) {
	t.Parallel()
	url := apptest.Mock(t, mockserver.Config{TTFT: time.Millisecond, ITL: 200 * time.Microsecond})
	dir := t.TempDir()
	out, err := guidellm(t, dir, "benchmark", "--target", url, "--profile", "concurrent", "--rate", "2,4", "--warmup", "0.1", "--cooldown", "0.1",
		"--max-seconds", "1", "--data", "prompt_tokens=64,output_tokens=16", "--outputs", "json", "--outputs", "yaml", "--disable-progress")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	doc := checkReport(t, filepath.Join(dir, "benchmarks.json"), 1)
	bms := doc["benchmarks"].([]any)
	if len(bms) != 2 {
		t.Fatalf("%d benchmarks, want one a stream count", len(bms))
	}
	for i, streams := range []float64{2, 4} {
		bm := bms[i].(map[string]any)
		st := bm["config"].(map[string]any)["strategy"].(map[string]any)
		if st["type_"] != "concurrent" || st["streams"] != streams {
			t.Errorf("benchmark %d: strategy %v", i, st)
		}
		if w, c := bm["warmup_duration"].(float64), bm["cooldown_duration"].(float64); math.Abs(w-0.1) > 0.02 || c < 0.05 {
			t.Errorf("benchmark %d: warmup %.3f s, cooldown %.3f s, want 10%% of 1 s each", i, w, c)
		}
		conc := bm["metrics"].(map[string]any)["request_concurrency"].(map[string]any)["successful"].(map[string]any)["mean"].(float64)
		if conc > streams+0.01 || conc < streams/2 {
			t.Errorf("benchmark %d: mean concurrency %.2f, want near %g", i, conc, streams)
		}
	}
	y, err := os.ReadFile(filepath.Join(dir, "benchmarks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var fromYAML map[string]any
	if err := yaml.Unmarshal(y, &fromYAML); err != nil || len(fromYAML["benchmarks"].([]any)) != 2 {
		t.Fatalf("benchmarks.yaml: %v", err)
	}
	if a := doc["args"].(map[string]any); a["profile"] != "concurrent" || a["warmup"] != 0.1 || a["max_seconds"] != 1.0 {
		t.Errorf("args %v", a)
	}
}

// TestRefusals: GuideLLM's settings surge cannot honour are refused with
// their reason before any work.
func TestRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"benchmark", "--target", "http://x", "--data", "prompt_tokens=8,output_tokens=8"}, "give --max-seconds or --max-requests"},
		{[]string{"benchmark", "--target", "http://x", "--data", "prompt_tokens=8,output_tokens=8,prompt_tokens_min=2", "--max-requests", "3"}, "prompt_tokens_min is refused"},
		{[]string{"benchmark", "--target", "http://x", "--data", "prompt_tokens=8,output_tokens=8", "--max-requests", "3", "--profile", "synchronous", "--rate", "2"}, "does not accept a rate"},
		{[]string{"benchmark", "--target", "http://x", "--data", "prompt_tokens=8,output_tokens=8", "--max-requests", "3", "--outputs", "html"}, "html is refused"},
		{[]string{"benchmark", "--target", "http://x", "--data", "prompt_tokens=8,output_tokens=8", "--max-requests", "3", "--backend", "vllm_python"}, "--backend vllm_python is refused"},
		{[]string{"benchmark", "--target", "http://x", "--data", "prompt_tokens=8,output_tokens=8", "--max-requests", "3", "--backend-kwargs", `{"verify": true}`}, `"verify" is refused`},
		{[]string{"run", "--backend", "kind=openai_http,target=http://x", "--data", "kind=synthetic_text,prompt_tokens=8,output_tokens=8", "--constraint", "kind=max_duration,seconds=1,stopping_scope=all"}, "stopping_scope all is refused"},
		{[]string{"run", "--backend", "kind=openai_http,target=http://x", "--data", "kind=synthetic_text,prompt_tokens=8,output_tokens=8", "--constraint", "kind=max_requests,count=3", "--override", "profile.sweep_size", "3"}, "--override profile.sweep_size is refused"},
		{[]string{"run", "--backend", "kind=openai_http,target=http://x", "--data", "kind=synthetic_text,prompt_tokens=8,output_tokens=8", "--constraint", "kind=max_requests,count=3", "--data-loader", "kind=pytorch,samples=10"}, "samples=10 is refused"},
		{[]string{"run", "--backend", "kind=vllm_python", "--data", "kind=synthetic_text,prompt_tokens=8,output_tokens=8"}, "kind=vllm_python is refused"},
		{[]string{"benchmark", "from-file", "x.json"}, "from-file is refused"},
	} {
		_, err := Main(context.Background(), tc.argv, Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Now: time.Now})
		var ue *cmdline.UsageError
		if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error containing %q", tc.argv, err, tc.want)
		}
	}
}

// FuzzKeyValues: GuideLLM's key=value and JSON option values are read or
// refused, never a panic.
func FuzzKeyValues(f *testing.F) {
	f.Add("kind=concurrent,streams=[1,2],warmup.percent=0.1")
	f.Add(`{"kind": "synthetic_text", "prompt_tokens": 8}`)
	f.Fuzz(func(t *testing.T, s string) {
		if o, err := keyValues(s); err == nil {
			for _, k := range o.Keys() {
				if _, ok := o.Get(k); !ok {
					t.Fatalf("%q: key %q lost", s, k)
				}
			}
		}
		_, _, _ = kindConfig("profile", s)
		_, _, _ = transientOf("t", "--warmup", s)
	})
}
