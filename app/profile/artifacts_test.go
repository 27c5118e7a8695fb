package profile

import (
	"bytes"
	"encoding/json"
	"github.com/surgebench/surge/app/spec"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/metrics/artifact"
	"github.com/surgebench/surge/metrics/export"
)

// TestArtifactNames: the default folder is named as AIPerf names it.
func TestArtifactNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		model string
		kind  endpoint.Kind
		plan  plan
		want  string
	}{
		{"Qwen/Qwen3-0.6B", endpoint.Chat, plan{mode: ModeConcurrency, values: []float64{8}}, "Qwen_Qwen3-0.6B-openai-chat-concurrency8"},
		{"m", endpoint.Chat, plan{mode: ModeConcurrency, values: []float64{1, 2, 4}}, "m-openai-chat-concurrency_sweep_1_2_4"},
		{"m", endpoint.Completions, plan{mode: ModeRequestRate, values: []float64{10}}, "m-openai-completions-request_rate10.0"},
		{"m", endpoint.Chat, plan{mode: ModeRequestRate, values: []float64{2.5}, rateCap: 4}, "m-openai-chat-concurrency4-request_rate2.5"},
		{"m", endpoint.Chat, plan{mode: ModeRequestRate, values: []float64{5, 10}}, "m-openai-chat-request_rate_sweep_5.0_10.0"},
		{"m", endpoint.Embeddings, plan{mode: ModeFixedSchedule, values: []float64{100}}, "m-openai-embeddings-fixed_schedule"},
		{"m", endpoint.Chat, plan{mode: ModeUserCentric, values: []float64{2}, users: 8}, "m-openai-chat-user_centric-users8-qps2.0"},
		{"a/b,c", endpoint.Chat, plan{mode: ModeConcurrency, values: []float64{1}}, "a_b_multi-openai-chat-concurrency1"},
	} {
		s := specFor(t, cmdline.Config{Model: tc.model, Models: strings.Split(tc.model, ","), EndpointType: string(tc.kind)})
		p := &prepared{s: s, plan: &tc.plan}
		if got := p.artifactName(); got != tc.want {
			t.Errorf("%s %s %+v: %q, want %q", tc.model, tc.kind, tc.plan, got, tc.want)
		}
	}
	p := plan{mode: ModeRequestRate, values: []float64{5, 7.5}}
	if a, b := p.stageFolder(0), p.stageFolder(1); a != "request_rate_5.0" || b != "request_rate_7.5" {
		t.Errorf("rate sweep folders %s %s", a, b)
	}
}

func TestCLICommandRedacted(t *testing.T) {
	t.Parallel()
	got := cliCommand([]string{"surge", "profile", "--api-key", "sk-secret", "-H", "X-Token: abc123", "--extra-inputs", "a b"}, []string{"sk-secret", "abc123"})
	want := "surge profile --api-key '<redacted>' -H 'X-Token: <redacted>' --extra-inputs 'a b'"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Secrets outside headers: the URL's user information and query, and
	// credential --extra-inputs.
	args := []string{"surge", "profile", "--url", "http://u:pw-SECRET@h:8000/v1?api_key=q-SECRET", "--extra-inputs", "password:x-SECRET", "max_tokens:8"}
	c := cmdline.Config{URLs: []string{args[3]}, ExtraInputs: args[5:]}
	got = cliCommand(args, c.SecretValues(http.Header{}))
	if strings.Contains(got, "SECRET") || !strings.Contains(got, "max_tokens:8") {
		t.Errorf("cli_command %s", got)
	}
}

// TestSweepRunFolders: a sweep writes one run folder per value (AIPerf's
// concurrency_N/, each a run of its own: summary, CSV, records, raw dump,
// inputs),
// sweep_aggregate/, the pooled summary with its stages at the top, and the
// console ends with the stage table; surge report reads it back whole.
func TestSweepRunFolders(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&apptest.Server{Tokens: 3})
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "sweep")
	c := apptest.RunConfig(srv.URL, dir)
	c.Concurrency, c.RequestCount, c.WarmupCount = "1,2,4", 6, 2
	c.ExportLevel = spec.LevelRaw
	var out bytes.Buffer
	if _, err := runConfig(t.Context(), c, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	subs := []string{"concurrency_1", "concurrency_2", "concurrency_4"}
	var benchIDs []string
	for i, sub := range subs {
		d := filepath.Join(dir, sub)
		for _, f := range []string{spec.FileJSON, spec.FileCSV, spec.FileJSONL, FileInputs, FileState, spec.FileRaw} {
			if _, err := os.Stat(filepath.Join(d, f)); err != nil {
				t.Errorf("%s: %v", sub, err)
			}
		}
		m := apptest.ReadExport(t, d)
		if got := apptest.RunAvg(t, m, "request_count"); got != 6 {
			t.Errorf("%s: request_count %v, want the stage's 6", sub, got)
		}
		ri := m["run_info"].(map[string]any)
		if ri["run_label"] != sub || ri["variation_index"] != float64(i) || ri["sweep_id"] != apptest.ReadExport(t, dir)["benchmark_id"] {
			t.Errorf("%s: run_info %v", sub, ri)
		}
		benchIDs = append(benchIDs, m["benchmark_id"].(string))
		_, hasWarmup := m["warmup_metrics"]
		if hasWarmup != (i == 0) {
			t.Errorf("%s: warmup_metrics present %v, want only with the first stage", sub, hasWarmup)
		}
		lines := apptest.RecordLines(t, d)
		want := 6
		if i == 0 {
			want += 2
		}
		if len(lines) != want {
			t.Errorf("%s: %d records, want %d", sub, len(lines), want)
		}
		for _, l := range lines {
			if md := l["surge"].(map[string]any); md["stage"] != float64(i) {
				t.Errorf("%s holds a record of stage %v", sub, md["stage"])
				break
			}
		}
		raw := apptest.JSONLines(t, filepath.Join(d, spec.FileRaw))
		if len(raw) != want {
			t.Errorf("%s: %d raw records, want %d", sub, len(raw), want)
		}
		for _, l := range raw {
			if md := l["surge"].(map[string]any); md["stage"] != float64(i) || l["payload"] == nil {
				t.Errorf("%s's raw dump holds a record of stage %v (payload %v)", sub, md["stage"], l["payload"])
				break
			}
		}
	}
	slices.Sort(benchIDs)
	if len(slices.Compact(benchIDs)) != 3 {
		t.Errorf("stage benchmark ids %v, want one each", benchIDs)
	}
	for _, f := range []string{export.SweepJSONFile, export.SweepCSVFile} {
		if _, err := os.Stat(filepath.Join(dir, FolderSweepAggregate, f)); err != nil {
			t.Error(err)
		}
	}
	top := apptest.ReadExport(t, dir)
	if st, _ := top["stages"].([]any); len(st) != 3 {
		t.Errorf("the sweep's summary lists %d stages, want 3", len(st))
	}
	for _, f := range []string{spec.FileJSONL, spec.FileRaw} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s is also at the top of the sweep (want it in the run folders only)", f)
		}
	}
	if !strings.Contains(strings.Join(strings.Fields(out.String()), " "), "Stages (latencies in ms) concurrency") || !strings.Contains(out.String(), filepath.Join(dir, "concurrency_4")+string(filepath.Separator)) {
		t.Errorf("console lacks the stage table or the run folders:\n%s", out.String())
	}
	run, err := artifact.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Records) != 20 || len(run.Summary.Stages) != 3 {
		t.Errorf("read back %d records and %d stages, want 20 and 3", len(run.Records), len(run.Summary.Stages))
	}
	var agg map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, FolderSweepAggregate, export.SweepJSONFile))
	if err := json.Unmarshal(b, &agg); err != nil || agg["num_successful_runs"] != 3.0 {
		t.Errorf("sweep aggregate %v: %v", agg["num_successful_runs"], err)
	}
}
