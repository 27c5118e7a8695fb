package profile

import (
	"bytes"
	"context"
	"github.com/surgebench/surge/app/spec"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/metrics/artifact"
)

// fingerprintOf runs c and returns its export's fingerprint object.
func fingerprintOf(t *testing.T, c cmdline.Config) map[string]any {
	t.Helper()
	var out, log bytes.Buffer
	if _, err := runConfig(context.Background(), c, &out, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	fp, ok := apptest.ReadExport(t, c.ArtifactDir)["fingerprint"].(map[string]any)
	if !ok {
		t.Fatalf("%s has no fingerprint object", spec.FileJSON)
	}
	for _, k := range []string{"workload", "config", "dataset", "tokenizer"} {
		if s, _ := fp[k].(string); !strings.HasPrefix(s, "sha256:") {
			t.Errorf("fingerprint.%s = %v, want a sha256: hash", k, fp[k])
		}
	}
	if fp["surge_version"] != c.Version {
		t.Errorf("fingerprint.surge_version = %v, want %q", fp["surge_version"], c.Version)
	}
	return fp
}

// TestFingerprintSameWorkload: the same workload against two servers (and
// with different keys, UIs and folders) hashes alike; a changed prompt
// length changes the workload, the config and the dataset hashes, not the
// tokenizer's.
func TestFingerprintSameWorkload(t *testing.T) {
	t.Parallel()
	srv1, srv2 := httptest.NewServer(&apptest.Server{Tokens: 3}), httptest.NewServer(&apptest.Server{Tokens: 3})
	defer srv1.Close()
	defer srv2.Close()
	a := apptest.RunConfig(srv1.URL, t.TempDir())
	b := apptest.RunConfig(srv2.URL, t.TempDir())
	b.APIKey, b.Headers = "sk-other", []string{"X-Api-Key: other"}
	c := apptest.RunConfig(srv1.URL, t.TempDir())
	c.ISL = 48
	fa, fb, fc := fingerprintOf(t, a), fingerprintOf(t, b), fingerprintOf(t, c)
	for _, k := range []string{"workload", "config", "dataset", "tokenizer"} {
		if fa[k] != fb[k] {
			t.Errorf("%s: %v and %v for one workload on two servers", k, fa[k], fb[k])
		}
	}
	for _, k := range []string{"workload", "config", "dataset"} {
		if fa[k] == fc[k] {
			t.Errorf("%s: --isl 32 and 48 hash alike (%v)", k, fa[k])
		}
	}
	if fa["tokenizer"] != fc["tokenizer"] {
		t.Errorf("tokenizer hash changed with --isl")
	}
	// The test server answers neither /v1/models nor /metrics.
	if _, ok := fa["server_info"]; ok || fa["server"] != "" {
		t.Errorf("server %v, server_info %v: want none for a server that says nothing", fa["server"], fa["server_info"])
	}
}

// TestProfileReportAndServerFingerprint: against the embedded mock the
// fingerprint names the model it serves, --report leaves a report.html
// that surge report's reader accepts, fingerprint included, and
// --auto-plot the same charts as PNG files in plots/.
func TestProfileReportAndServerFingerprint(t *testing.T) {
	t.Parallel()
	c := apptest.RunConfig("", t.TempDir())
	c.Model, c.Report, c.AutoPlot = "mock-model", true, true
	fp := fingerprintOf(t, c)
	info, _ := fp["server_info"].(map[string]any)
	if models, _ := info["models"].([]any); len(models) != 1 || models[0] != "mock-model" {
		t.Errorf("server_info = %v, want the mock's model", fp["server_info"])
	}
	if s, _ := fp["server"].(string); !strings.HasPrefix(s, "sha256:") {
		t.Errorf("server hash = %v", fp["server"])
	}
	page, err := os.ReadFile(filepath.Join(c.ArtifactDir, "report.html"))
	if err != nil {
		t.Fatalf("--report: %v", err)
	}
	if !strings.Contains(string(page), fp["workload"].(string)) {
		t.Errorf("report.html does not show the workload hash %v", fp["workload"])
	}
	pngs, _ := filepath.Glob(filepath.Join(c.ArtifactDir, spec.DirPlots, "*.png"))
	if len(pngs) < 2 {
		t.Fatalf("--auto-plot drew %d charts into %s, want the report's", len(pngs), spec.DirPlots)
	}
	for _, p := range pngs {
		if b, err := os.ReadFile(p); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n")) {
			t.Errorf("%s is no PNG (%v)", p, err)
		}
	}
	run, err := artifact.Load(c.ArtifactDir)
	if err != nil {
		t.Fatal(err)
	}
	if run.Summary.Fingerprint["workload"] != fp["workload"] {
		t.Errorf("artifact reads workload %v, export has %v", run.Summary.Fingerprint["workload"], fp["workload"])
	}
}
