package profile

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/metrics/mlflow/mlflowtest"
	"github.com/surgebench/surge/metrics/otlp/otlptest"
)

// A run with --otel-url delivers its metrics and spans to the collector,
// with the GenAI semantic conventions' names, and says so in run_info.
// Its metrics are collected every 10 ms: one collection may meet the
// collector's close (a snapshot of a closed collector would panic).
func TestRunSendsMetricsAndSpansToOTLP(t *testing.T) {
	t.Parallel()
	rcv := otlptest.New(t)
	dir := filepath.Join(t.TempDir(), "out")
	c := apptest.RunConfig(apptest.MockForTest(t), dir)
	c.ExportConfig = cmdline.ExportConfig{OTelURL: rcv.URL, OTelInterval: 10 * time.Millisecond, OTelSpans: 1,
		OTelResource: []string{"team=perf,env=ci"}, MLflowExperiment: "surge"}
	c.RequestCount = 40
	var log bytes.Buffer
	if _, err := runConfig(context.Background(), c, io.Discard, &log); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(log.String(), "warning:") {
		t.Errorf("warnings with a healthy collector:\n%s", log.String())
	}
	names := map[string]bool{}
	for _, m := range rcv.Metrics() {
		names[m.GetName()] = true
		if m.Resource["team"] != "perf" || m.Resource["service.name"] != "surge" {
			t.Fatalf("%s: resource %v", m.GetName(), m.Resource)
		}
	}
	for _, n := range []string{"gen_ai.client.operation.duration", "gen_ai.client.token.usage", "gen_ai.client.operation.time_to_first_chunk",
		"surge.time_to_first_token", "surge.request_throughput", "surge.requests.finished"} {
		if !names[n] {
			t.Errorf("the collector got no %s (got %v)", n, names)
		}
	}
	spans := rcv.Spans()
	if len(spans) != 40 {
		t.Fatalf("%d spans, want one per request (40)", len(spans))
	}
	exp := apptest.ReadExport(t, dir)
	runID := exp["benchmark_id"]
	for _, s := range spans {
		a := s.Attrs()
		for _, k := range []string{"gen_ai.request.model", "gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.usage.input_tokens",
			"gen_ai.usage.output_tokens", "gen_ai.response.time_to_first_chunk", "surge.stage", "surge.run.id"} {
			if _, ok := a[k]; !ok {
				t.Errorf("span %q lacks %s: %v", s.GetName(), k, a)
			}
		}
		if a["gen_ai.request.model"] != "e2e-model" || a["surge.run.id"] != runID || s.GetName() != "chat e2e-model" {
			t.Errorf("span %q: %v (run %v)", s.GetName(), a, runID)
		}
	}
	info, _ := exp["run_info"].(map[string]any)["otel"].(map[string]any)
	if info["spans"] != 40.0 || info["records_dropped"] != 0.0 || info["metric_export_failures"] != 0.0 {
		t.Errorf("run_info.otel = %v", info)
	}
}

// A run with --mlflow-tracking-uri creates a run with the spec's params,
// the summary's metrics and the artifact folder, ended FINISHED.
func TestRunLogsToMLflow(t *testing.T) {
	srv := mlflowtest.New(t)
	t.Setenv("MLFLOW_TRACKING_TOKEN", "mlflow-secret")
	dir := filepath.Join(t.TempDir(), "out")
	c := apptest.RunConfig(apptest.MockForTest(t), dir)
	c.ExportConfig = cmdline.ExportConfig{MLflowURI: srv.URL, MLflowExperiment: "bench", MLflowTags: []string{"team:perf"},
		OTelInterval: 10 * time.Second}
	var log bytes.Buffer
	if _, err := runConfig(context.Background(), c, io.Discard, &log); err != nil {
		t.Fatal(err)
	}
	calls, runs := srv.Snapshot()
	if len(runs) != 1 {
		t.Fatalf("%d runs logged, want 1\n%s", len(runs), log.String())
	}
	for _, r := range runs {
		if r.Status != "FINISHED" || r.Name != "out" || r.Tags["team"] != "perf" {
			t.Errorf("run %s: status %s, name %q, tags %v", r.ID, r.Status, r.Name, r.Tags)
		}
		if r.Params["endpoint.model_names"] != `["e2e-model"]` || r.Params["loadgen.request_count"] != "12" {
			t.Errorf("params: model %q, request count %q", r.Params["endpoint.model_names"], r.Params["loadgen.request_count"])
		}
		if r.Metrics["request_count"] != 12 || r.Metrics["time_to_first_token_p99"] <= 0 || r.Metrics["output_token_throughput"] <= 0 {
			t.Errorf("metrics: %v", r.Metrics)
		}
		if _, ok := r.Artifacts["profile_export_aiperf.json"]; !ok {
			t.Errorf("artifacts %d, none the summary", len(r.Artifacts))
		}
		for name, b := range r.Artifacts {
			if bytes.Contains(b, []byte("mlflow-secret")) {
				t.Errorf("artifact %s holds the token", name)
			}
		}
	}
	for _, c := range calls {
		if c.Header.Get("Authorization") != "Bearer mlflow-secret" {
			t.Errorf("%s %s without the token", c.Method, c.Path)
		}
	}
}
