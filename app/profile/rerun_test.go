package profile

import (
	"bytes"
	"context"
	"github.com/surgebench/surge/app/spec"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surgebench/surge/app/internal/apptest"
)

// A rerun into the folder of an earlier run moves that run aside (dir-1,
// then dir-2) and says so; its files, a report.html included, go with it,
// so none of them is left beside the new run.
func TestRerunMovesTheEarlierRunAside(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	c := apptest.RunConfig("mock", dir)
	c.RequestCount = 4
	run := func() string {
		t.Helper()
		var out, log bytes.Buffer
		if _, err := runConfig(context.Background(), c, &out, &log); err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		return log.String()
	}
	if log := run(); strings.Contains(log, "earlier run") {
		t.Errorf("a first run into a new folder moved something:\n%s", log)
	}
	stale := filepath.Join(dir, "report.html")
	if err := os.WriteFile(stale, []byte("<p>the first run</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	for n, want := range []string{dir + "-1", dir + "-2"} {
		if log := run(); !strings.Contains(log, dir+" held an earlier run: moved it to "+want) {
			t.Errorf("rerun %d: log does not say it moved the earlier run to %s:\n%s", n+1, want, log)
		}
		if _, err := os.Stat(filepath.Join(want, spec.FileJSON)); err != nil {
			t.Errorf("rerun %d: the earlier run is not in %s: %v", n+1, want, err)
		}
		if _, err := os.Stat(filepath.Join(dir, spec.FileJSON)); err != nil {
			t.Errorf("rerun %d: the new run is not in %s: %v", n+1, dir, err)
		}
		if _, err := os.Stat(stale); err == nil {
			t.Errorf("rerun %d: a stale report.html survived in %s", n+1, dir)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir+"-1", "report.html")); err != nil || string(b) != "<p>the first run</p>" {
		t.Errorf("the first run's report did not move with it: %q, %v", b, err)
	}
}

func TestMoveAside(t *testing.T) {
	t.Parallel()
	files := spec.Files{JSON: spec.FileJSON, CSV: spec.FileCSV, JSONL: spec.FileJSONL}
	for _, tc := range []struct {
		name  string
		files []string // in the folder before the run
		moved bool
	}{
		{"new", nil, false},
		{"empty", []string{}, false},
		{"not a run", []string{"notes.txt"}, false},
		{"a run", []string{spec.FileJSON, spec.FileCSV}, true},
		{"a killed run", []string{FileInputs + ".partial"}, true},
		{"a report alone", []string{"report.html"}, true},
		{"plots alone", []string{spec.DirPlots + "/ttft.png"}, true},
		{"a sweep", []string{"concurrency_1/" + spec.FileJSON}, true},
	} {
		dir := filepath.Join(t.TempDir(), "run")
		if tc.files != nil {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range tc.files {
			p := filepath.Join(dir, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		to, err := MoveAside(dir, "--output-artifact-dir", files)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if (to != "") != tc.moved || tc.moved && to != dir+"-1" {
			t.Errorf("%s: moved to %q, want moved %v", tc.name, to, tc.moved)
		}
	}
	// A run folder that cannot be renamed (the working directory itself)
	// is refused with a message naming the flag, not written into.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, spec.FileJSON), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(dir), 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Dir(dir), 0o755)
	if _, err := MoveAside(dir, "--output-artifact-dir", files); (err == nil || !strings.Contains(err.Error(), "--output-artifact-dir")) && os.Getuid() != 0 {
		t.Errorf("an unmovable run folder: %v, want an error naming --output-artifact-dir", err)
	}
}
