package results

import (
	"bytes"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/app/profile"
	"github.com/surgebench/surge/metrics/artifact"
)

// TestReportRepeatedSweep: `surge report` on the folder of a repeated
// sweep (profile_runs/run_NNNN/ each a sweep, aggregate/) writes the page
// --report wrote, byte for byte: the runs' sweeps side by side and their
// spread at the aggregate's level; compare's loading reads the folder as
// its runs.
func TestReportRepeatedSweep(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&apptest.Server{Tokens: 3})
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "repeats")
	c := apptest.RunConfig(srv.URL, dir)
	c.Concurrency, c.RequestCount, c.Seed = "1,2", 4, 3
	c.NumProfileRuns, c.ConfidenceLevel, c.Report = 2, 0.9, true
	if _, err := profile.Run(t.Context(), apptest.Spec(t, c), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report.html")
	app := &cli.App{Name: "surge", Commands: []*cli.Command{ReportCommand()}}
	if err := app.Run([]string{"surge", "report", "-o", out, dir}); err != nil {
		t.Fatalf("surge report %s: %v", dir, err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"runs: TTFT p99 per concurrency (mean and 90% CI)", "sweep: output throughput vs TTFT p95", `"name":"run_0002"`} {
		if !bytes.Contains(got, []byte(s)) {
			t.Errorf("surge report's page lacks %q", s)
		}
	}
	if !bytes.Equal(got, want) {
		t.Errorf("surge report's page (%d bytes) differs from --report's (%d bytes)", len(got), len(want))
	}

	runs, err := artifact.LoadAll([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range runs {
		names = append(names, r.Name)
	}
	if got := strings.Join(names, ", "); got != "repeats/run_0001, repeats/run_0002" || len(runs[1].Summary.Stages) != 2 {
		t.Errorf("LoadAll of the folder: runs %s, want repeats/run_0001 and repeats/run_0002, sweeps of 2 values", got)
	}
}
