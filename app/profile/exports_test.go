package profile

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/app/spec"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestExportFlags: --profile-export-prefix names every export as AIPerf
// does, --slice-duration adds the timeslice files, --export-level summary
// leaves out the per-request JSONL.
func TestExportFlags(t *testing.T) {
	t.Parallel()
	srv := &apptest.Server{Tokens: 4, ITL: 5 * time.Millisecond}
	ts := httptest.NewServer(srv)
	defer ts.Close()

	dir := t.TempDir()
	c := apptest.RunConfig(ts.URL, dir)
	c.ExportPrefix, c.SliceDuration = "nightly.json", "25ms"
	var out, log bytes.Buffer
	if _, err := runConfig(context.Background(), c, &out, &log); err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		entries, _ := os.ReadDir(dir)
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	for _, f := range []string{"nightly.json", "nightly.csv", "nightly.jsonl", "nightly_timeslices.json", "nightly_timeslices.csv", FileInputs} {
		if !slices.Contains(names(), f) {
			t.Errorf("%s not written (folder: %v)", f, names())
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "nightly_timeslices.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Timeslices  []map[string]any `json:"timeslices"`
		InputConfig map[string]any   `json:"input_config"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	// 12 requests of ≥ 20 ms (4 tokens 5 ms apart) at concurrency 4: sent in
	// three rounds, at 0 and after ≥ 20 and ≥ 40 ms, so windows of 25 ms by send
	// time are several however fast the machine, every request in exactly one.
	var total float64
	for i, s := range doc.Timeslices {
		if s["timeslice_index"].(float64) < float64(i) {
			t.Errorf("timeslice %d has index %v", i, s["timeslice_index"])
		}
		total += s["request_count"].(map[string]any)["avg"].(float64)
	}
	slice, _ := cmdline.PathValue(doc.InputConfig, "output.slice_duration")
	if len(doc.Timeslices) < 2 || total != 12 || slice != "25ms" {
		t.Errorf("%d timeslices holding %v requests, input_config output.slice_duration %v; want several, 12, 25ms",
			len(doc.Timeslices), total, slice)
	}
	f, err := os.Open(filepath.Join(dir, "nightly_timeslices.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 10 || !slices.Equal(rows[0], []string{"Timeslice", "Metric", "Unit", "Stat", "Value"}) {
		t.Errorf("timeslice CSV: %d rows, header %v, %v", len(rows), rows[0], err)
	}

	dir2 := t.TempDir()
	c = apptest.RunConfig(ts.URL, dir2)
	c.ExportLevel = "summary"
	if _, err := runConfig(context.Background(), c, &out, &log); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir2, spec.FileJSONL)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--export-level summary wrote %s (%v)", spec.FileJSONL, err)
	}
	if _, err := os.Stat(filepath.Join(dir2, spec.FileJSON)); err != nil {
		t.Errorf("--export-level summary: %v", err)
	}
}
