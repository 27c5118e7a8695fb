package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Not parallel: urfave/cli shares its help flag between apps, so run() is
// not safe to call from two goroutines.
func TestReportCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.html")
	if code := run([]string{"surge", "report", "-o", out, "metrics/report/testdata/run-a", "metrics/report/testdata/sweep"}); code != exitOK {
		t.Fatalf("surge report exited %d", code)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `id="surge-data"`) {
		t.Errorf("%s has no embedded data", out)
	}
}

func TestReportCommandBadUsage(t *testing.T) {
	cases := [][]string{
		{"report"},                         // no folder
		{"report", "--format", "svg", "x"}, // unknown format
		{"report", "metrics/report/testdata/run-a", "-o", "x"}, // flag after the folders
		{"report", filepath.Join(t.TempDir(), "none")},         // no such folder
	}
	for _, args := range cases {
		if got := run(append([]string{"surge"}, args...)); got != exitUsage {
			t.Errorf("surge %v exited %d, want %d", args, got, exitUsage)
		}
	}
}
