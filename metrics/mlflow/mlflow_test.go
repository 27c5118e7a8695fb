package mlflow_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/surgebench/surge/metrics/mlflow"
	"github.com/surgebench/surge/metrics/mlflow/mlflowtest"
)

func folder(t *testing.T) string {
	dir := t.TempDir()
	for name, body := range map[string]string{"profile_export_aiperf.json": `{"a":1}`, "profile_export.jsonl": "{}\n", "plots/ttft.png": "png"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLogCreatesARunWithParamsMetricsAndArtifacts(t *testing.T) {
	t.Parallel()
	srv := mlflowtest.New(t)
	base, err := mlflow.TrackingURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]string{"endpoint.model_names": "qwen"}
	metrics := map[string]float64{"time_to_first_token_p99": 191}
	for i := range 1200 { // over log-batch's limits: several batches
		params[fmt.Sprintf("p%04d", i)] = "v"
		metrics[fmt.Sprintf("m%04d", i)] = float64(i)
	}
	start := time.UnixMilli(1700000000000)
	r := mlflow.Run{Experiment: "surge", Name: "qwen-chat-concurrency1", ParentID: "parent-9", Tags: map[string]string{"team": "perf"},
		Params: params, Metrics: metrics, Dir: folder(t), Start: start, End: start.Add(time.Minute), Status: mlflow.Finished}
	res, err := mlflow.Log(context.Background(), base, r, mlflow.WithCredentials(mlflow.Credentials{Token: "tok-1"}))
	if err != nil {
		t.Fatal(err)
	}
	calls, runs := srv.Snapshot()
	run := runs[res.RunID]
	if res.ExperimentID != "1" || res.Artifacts != 3 || run.Status != mlflow.Finished || run.Name != r.Name ||
		run.StartTime != start.UnixMilli() || run.EndTime != start.Add(time.Minute).UnixMilli() {
		t.Errorf("result %+v, run %+v", res, run)
	}
	if diff := cmp.Diff(params, run.Params); diff != "" {
		t.Errorf("params (-sent +held):\n%s", diff)
	}
	if diff := cmp.Diff(metrics, run.Metrics); diff != "" {
		t.Errorf("metrics (-sent +held):\n%s", diff)
	}
	if run.Tags["team"] != "perf" || run.Tags["mlflow.parentRunId"] != "parent-9" {
		t.Errorf("tags %v", run.Tags)
	}
	var names []string
	for k := range run.Artifacts {
		names = append(names, k)
	}
	slices.Sort(names)
	if want := []string{"plots/ttft.png", "profile_export.jsonl", "profile_export_aiperf.json"}; !slices.Equal(names, want) {
		t.Errorf("artifacts %v, want %v", names, want)
	}
	if string(run.Artifacts["profile_export_aiperf.json"]) != `{"a":1}` {
		t.Errorf("artifact body %q", run.Artifacts["profile_export_aiperf.json"])
	}
	want := []string{"GET /api/2.0/mlflow/experiments/get-by-name", "POST /api/2.0/mlflow/experiments/create", "POST /api/2.0/mlflow/runs/create"}
	for i, c := range calls {
		if got := c.Header.Get("Authorization"); got != "Bearer tok-1" {
			t.Errorf("%s %s: Authorization %q", c.Method, c.Path, got)
		}
		if i < len(want) && c.Method+" "+c.Path != want[i] {
			t.Errorf("call %d: %s %s, want %s", i, c.Method, c.Path, want[i])
		}
	}
	if last := calls[len(calls)-1]; last.Path != "/api/2.0/mlflow/runs/update" {
		t.Errorf("last call %s, want the run's end", last.Path)
	}
}

func TestLogUsesAnExistingExperimentAndPicksArtifactsByGlob(t *testing.T) {
	t.Parallel()
	srv := mlflowtest.New(t, "bench")
	base, _ := mlflow.TrackingURL(srv.URL)
	res, err := mlflow.Log(context.Background(), base, mlflow.Run{Experiment: "bench", Dir: folder(t), Globs: []string{"*.json"},
		Start: time.Now(), End: time.Now(), Status: mlflow.Killed}, mlflow.WithCredentials(mlflow.Credentials{Username: "u", Password: "pw"}))
	if err != nil {
		t.Fatal(err)
	}
	calls, runs := srv.Snapshot()
	if res.ExperimentID != "1" || res.Artifacts != 1 || runs[res.RunID].Status != mlflow.Killed {
		t.Errorf("result %+v, run %+v", res, runs[res.RunID])
	}
	for _, c := range calls {
		if c.Path == "/api/2.0/mlflow/experiments/create" {
			t.Error("created an experiment that exists")
		}
		if u, p, ok := (&http.Request{Header: c.Header}).BasicAuth(); !ok || u != "u" || p != "pw" {
			t.Errorf("%s: no basic auth", c.Path)
		}
	}
}

// A server that keeps artifacts where surge cannot write them ends the
// run FAILED, saying why.
func TestLogRefusesAnArtifactStoreItCannotReach(t *testing.T) {
	t.Parallel()
	srv := mlflowtest.New(t)
	srv.ArtifactURI = "s3://bucket/runs"
	base, _ := mlflow.TrackingURL(srv.URL)
	res, err := mlflow.Log(context.Background(), base, mlflow.Run{Experiment: "x", Dir: folder(t), Start: time.Now(), End: time.Now(), Status: mlflow.Finished})
	var ae *mlflow.ArtifactError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "--serve-artifacts") {
		t.Fatalf("err %v, want an ArtifactError", err)
	}
	if _, runs := srv.Snapshot(); runs[res.RunID].Status != mlflow.Failed {
		t.Errorf("run %+v, want it ended FAILED", runs[res.RunID])
	}
}

func TestLogSaysWhenTheServerIsNotMLflow(t *testing.T) {
	t.Parallel()
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>\x1b[31mlogin</html>"))
	}))
	defer html.Close()
	base, _ := mlflow.TrackingURL(html.URL)
	_, err := mlflow.Log(context.Background(), base, mlflow.Run{Experiment: "x", Start: time.Now(), End: time.Now()})
	if err == nil || !strings.Contains(err.Error(), "not JSON") || strings.ContainsRune(err.Error(), 0x1b) {
		t.Fatalf("err %v", err)
	}
}

func TestTrackingURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want, err string }{
		{in: "localhost:5000", want: "http://localhost:5000"},
		{in: "https://mlflow.example.com/prefix/", want: "https://mlflow.example.com/prefix"},
		{in: "file:///tmp/mlruns", err: "not a file store"},
		{in: "http://u:pw@h:5000", err: "MLFLOW_TRACKING_USERNAME"},
		{in: "", err: "empty"},
	} {
		u, err := mlflow.TrackingURL(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("TrackingURL(%q): %v, want an error saying %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || u.String() != c.want {
			t.Errorf("TrackingURL(%q) = %v, %v; want %s", c.in, u, err, c.want)
		}
	}
}

func TestFilesSkipsLinksAndPicksByGlob(t *testing.T) {
	t.Parallel()
	dir := folder(t)
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.json")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		globs []string
		want  []string
	}{
		{nil, []string{"plots/ttft.png", "profile_export.jsonl", "profile_export_aiperf.json"}},
		{[]string{"*.png"}, []string{"plots/ttft.png"}},
		{[]string{"plots/*", "*.jsonl"}, []string{"plots/ttft.png", "profile_export.jsonl"}},
	} {
		got, err := mlflow.Files(dir, c.globs)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Files(%v) = %v, %v; want %v", c.globs, got, err, c.want)
		}
	}
}

func FuzzTrackingURL(f *testing.F) {
	for _, s := range []string{"localhost:5000", "https://m/prefix/", "file:///x", "http://u:p@h", "", "databricks"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := mlflow.TrackingURL(s)
		if err != nil {
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.User != nil || strings.HasSuffix(u.Path, "/") {
			t.Fatalf("TrackingURL(%q) = %v", s, u)
		}
	})
}
