package profile

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
)

// workloadConfig is a quick run on the embedded mock with short answers.
func workloadConfig(dir string) cmdline.Config {
	return cmdline.Config{Model: "mock", EndpointType: "chat", Streaming: true, ISL: 16, Timeout: 30 * time.Second, Grace: time.Second,
		UI: "none", ArtifactDir: dir, NoGPUTelemetry: true, NoServerMetrics: true, Version: "test",
		ExtraInputs: []string{"max_completion_tokens:4"}} // short answers keep the tests quick
}

// inputsPayloads reads the bodies of a run's inputs.json, sorted.
func inputsPayloads(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, FileInputs))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Data []struct {
			Payloads []json.RawMessage `json:"payloads"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("inputs.json: %v", err)
	}
	var out []string
	for _, d := range doc.Data {
		for _, p := range d.Payloads {
			out = append(out, string(p))
		}
	}
	slices.Sort(out)
	return out
}

// TestTraceFormatsEndToEnd replays each new trace format on the embedded
// mock: on its own timestamps with --fixed-schedule (a window of the
// first seconds, think times shrunk), and at a chosen concurrency without
// it. Every turn of every replayed session is sent, none fails.
func TestTraceFormatsEndToEnd(t *testing.T) {
	t.Parallel()
	data := filepath.Join("..", "..", "datasets", "testdata")
	for _, tc := range []struct {
		kind, file string
		minFixed   int
		window     time.Duration // the first rows' span, from the trace's zero
	}{
		{"bailian_trace", "bailian_sample.jsonl", 3, 3 * time.Second},
		{"burst_gpt_trace", "burstgpt_sample.csv", 2, 15 * time.Second}, // the sample starts at 12 s
		{"baseten", "baseten_sample.jsonl", 2, 3 * time.Second},
		{"weka", "weka", 5, 3 * time.Second},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(data, tc.file)
			c := workloadConfig(t.TempDir())
			c.InputFile, c.CustomDatasetType = path, tc.kind
			c.FixedSchedule, c.AutoOffset, c.EndOffset, c.TurnDelayRatio = true, true, tc.window, 0.001
			// A session begun in the window keeps its later turns, at
			// their recorded times (baseten's: 11 s on): no gap over 0.5 s.
			c.MaxIdleGapCap = "0.5"
			var log bytes.Buffer
			res, err := runConfig(context.Background(), c, io.Discard, &log)
			if err != nil {
				t.Fatalf("%v\n%s", err, log.String())
			}
			n, bad := res.Summary.Run["request_count"], res.Summary.Run["error_request_count"]
			if n < float64(tc.minFixed) || bad != 0 {
				t.Fatalf("fixed schedule: %v requests, %v errors (%+v)\n%s", n, bad, res.Summary.Errors, log.String())
			}
			if !strings.Contains(log.String(), "replayable with --fixed-schedule") {
				t.Errorf("the load report does not say the trace is timestamped:\n%s", log.String())
			}

			c = workloadConfig(t.TempDir())
			c.InputFile, c.CustomDatasetType, c.NoFixedSchedule = path, tc.kind, true
			c.Concurrency, c.RequestCount, c.TurnDelayRatio = "3", 9, 0.001
			c.AllowWrap = tc.kind == "weka" // 3 lanes over its 2 traces
			res, err = runConfig(context.Background(), c, io.Discard, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if n, bad := res.Summary.Run["request_count"], res.Summary.Run["error_request_count"]; n != 9 || bad != 0 {
				t.Errorf("at concurrency 3: %v requests, %v errors", n, bad)
			}
			if isl := res.Summary.Metrics["input_sequence_length"]; isl.Avg < 20 {
				t.Errorf("ISL avg %v: trace prompts are longer", isl.Avg)
			}
		})
	}
}

// TestInputsJSONReplayEndToEnd: a multi-turn run's inputs.json, replayed
// with --custom-dataset-type inputs_json, sends the same bodies (the
// replay's own inputs.json holds them byte for byte); raw_payload sends a
// file's bodies as they are.
func TestInputsJSONReplayEndToEnd(t *testing.T) {
	t.Parallel()
	first := t.TempDir()
	c := workloadConfig(first)
	c.Concurrency, c.RequestCount, c.TurnsMean, c.ISL, c.OSL = "2", 8, 2, 24, 3
	if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	sent := inputsPayloads(t, first)
	if len(sent) != 8 {
		t.Fatalf("%d bodies in the first inputs.json, want 8", len(sent))
	}
	second := t.TempDir()
	c = workloadConfig(second)
	c.InputFile, c.Concurrency, c.RequestCount = filepath.Join(first, FileInputs), "2", 8
	c.ExtraInputs = nil // the bodies are sent as recorded
	var log bytes.Buffer
	res, err := runConfig(context.Background(), c, io.Discard, &log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "inputs_json") || res.Summary.Run["error_request_count"] != 0 {
		t.Errorf("replay: %s", log.String())
	}
	if again := inputsPayloads(t, second); !slices.Equal(sent, again) {
		t.Errorf("the replay sent other bodies:\nfirst  %q\nreplay %q", sent, again)
	}

	raw := filepath.Join(t.TempDir(), "bodies.jsonl")
	body := `{"model": "mock", "messages": [{"role": "user", "content": "sent as it is"}], "stream": true,  "max_completion_tokens": 2}`
	if err := os.WriteFile(raw, []byte(body+"\n"+body+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	third := t.TempDir()
	c = workloadConfig(third)
	c.InputFile, c.CustomDatasetType, c.RequestCount, c.ExtraInputs = raw, "raw_payload", 2, nil
	if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := inputsPayloads(t, third); !slices.Equal(got, []string{body, body}) {
		t.Errorf("raw payloads sent as %q", got)
	}
}

// TestShareGPTDownloadEndToEnd: --public-dataset sharegpt with no file
// downloads once from the Hub HF_ENDPOINT names (HF_TOKEN sent), into the
// cache under HF_HOME, with a progress line, then runs every pair as a
// turn; the second run reads the cache.
func TestShareGPTDownloadEndToEnd(t *testing.T) {
	body := `[
 {"id": "one", "conversations": [{"from": "human", "value": "Tell me about the sea please"}, {"from": "gpt", "value": "The sea is large and deep and blue."},
  {"from": "human", "value": "And the tides, how do they work?"}, {"from": "gpt", "value": "The moon pulls the water, twice a day."}]},
 {"id": "two", "conversations": [{"from": "human", "value": "What is a good name for a cat?"}, {"from": "gpt", "value": "Try Pepper, Miso or Captain Whiskers."}]}
]`
	var hits atomic.Int64
	var auth atomic.Value
	hubSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		auth.Store(r.Header.Get("Authorization"))
		if r.URL.Path != "/datasets/anon8231489123/ShareGPT_Vicuna_unfiltered/resolve/main/ShareGPT_V3_unfiltered_cleaned_split.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", "1")
		w.Header().Del("Content-Length")
		_, _ = w.Write([]byte(body))
	}))
	defer hubSrv.Close()
	home := t.TempDir()
	t.Setenv("HF_ENDPOINT", hubSrv.URL)
	t.Setenv("HF_HOME", home)
	t.Setenv("HF_HUB_CACHE", "")
	t.Setenv("HF_TOKEN", "hf_e2e_token")
	t.Setenv("HF_HUB_OFFLINE", "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	run := func() string {
		c := workloadConfig(t.TempDir())
		c.PublicDataset, c.Concurrency, c.RequestCount = "sharegpt", "1", 3
		var log bytes.Buffer
		res, err := runConfig(context.Background(), c, io.Discard, &log)
		if err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		if res.Summary.Run["request_count"] != 3 || res.Summary.Run["error_request_count"] != 0 {
			t.Fatalf("%v requests, %v errors", res.Summary.Run["request_count"], res.Summary.Run["error_request_count"])
		}
		return log.String()
	}
	log := run()
	if !strings.Contains(log, "downloading the public dataset") || !strings.Contains(log, "kept 2 of 2, 3 turns") || auth.Load() != "Bearer hf_e2e_token" {
		t.Errorf("first run: auth %v, log:\n%s", auth.Load(), log)
	}
	if _, err := os.Stat(filepath.Join(home, "hub", "datasets--anon8231489123--ShareGPT_Vicuna_unfiltered")); err != nil {
		t.Errorf("no cache under HF_HOME: %v", err)
	}
	n := hits.Load()
	if log = run(); strings.Contains(log, "downloading") || hits.Load() != n {
		t.Errorf("second run downloaded again (%d requests):\n%s", hits.Load()-n, log)
	}
	// Offline and not cached: exit 2 with what to do.
	t.Setenv("HF_HOME", t.TempDir())
	t.Setenv("HF_HUB_OFFLINE", "1")
	c := workloadConfig(t.TempDir())
	c.PublicDataset, c.RequestCount = "sharegpt", 1
	_, err := runConfig(context.Background(), c, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--public-dataset sharegpt") || !strings.Contains(err.Error(), "--input-file") && !strings.Contains(err.Error(), "input file") {
		t.Errorf("offline: %v", err)
	}
}

// TestLengthFlagsEndToEnd: --random-range-ratio, --seq-dist and
// --prompt-corpus reach the prompts the mock receives.
func TestLengthFlagsEndToEnd(t *testing.T) {
	t.Parallel()
	records := func(c cmdline.Config) []map[string]any {
		t.Helper()
		if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		return apptest.RecordLines(t, c.ArtifactDir)
	}
	isl := func(l map[string]any) float64 {
		return l["metrics"].(map[string]any)["input_sequence_length"].(map[string]any)["value"].(float64)
	}

	c := workloadConfig(t.TempDir())
	c.ISL, c.RangeRatio, c.Concurrency, c.RequestCount = 100, 0.5, "4", 40
	distinct := map[float64]bool{}
	for _, l := range records(c) {
		v := isl(l)
		distinct[v] = true
		if v < 50 || v > 150 {
			t.Errorf("ISL %v outside [50, 150]", v)
		}
	}
	if len(distinct) < 10 {
		t.Errorf("only %d distinct ISLs: not drawn from the range", len(distinct))
	}

	c = workloadConfig(t.TempDir())
	c.SeqDist, c.Concurrency, c.RequestCount = "[(40,3):50,(90,3):50]", "4", 20
	seen := map[float64]bool{}
	for _, l := range records(c) {
		seen[isl(l)] = true
	}
	if len(seen) != 2 || !seen[40] || !seen[90] {
		t.Errorf("--seq-dist ISLs %v, want 40 and 90", seen)
	}

	c = workloadConfig(t.TempDir())
	c.PromptCorpus, c.ISL, c.RequestCount = "coding", 200, 2
	records(c)
	if all := strings.Join(inputsPayloads(t, c.ArtifactDir), ""); !strings.Contains(all, "(") {
		t.Errorf("--prompt-corpus coding: prompts %.300s", all)
	}

	c = workloadConfig(t.TempDir())
	c.SeqDist = "40,3:50"
	if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "--seq-dist") || !strings.Contains(err.Error(), "sum to 50") {
		t.Errorf("bad --seq-dist: %v", err)
	}
	c = workloadConfig(t.TempDir())
	c.RangeRatio = 1.5
	if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "--random-range-ratio") {
		t.Errorf("bad --random-range-ratio: %v", err)
	}
}
