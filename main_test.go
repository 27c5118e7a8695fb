package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surgebench/surge/app/cmdline"
)

func TestExitCodesForBadUsage(t *testing.T) {
	cases := [][]string{
		{"profile", "--endpoint-type", "embeddingz"},
		{"profile", "--request-count", "abc"},
		{"profile", "--nosuchflag"},
		{"profile", "--concurrency", "1,x"},
		{"profile", "--goodput", "ttft:1"},
		{"profile", "--ui", "fancy"},
		{"profile", "--ui", "none", "stray", "--concurrency", "4"}, // flags after a word would go unread
		{"mock-server", "--error-rate", "2"},
		// Refused AIPerf flag: the run does not start, whatever else was given.
		{"profile", "--video-width", "64", "--request-count", "1", "--ui", "none"},
		// A stray argument is exit 2, not a run of the rest.
		{"profile", "--request-count", "1", "oops", "--ui", "none"},
	}
	for _, args := range cases {
		if got := run(append([]string{"surge"}, args...)); got != cmdline.ExitUsage {
			t.Errorf("surge %v exited %d, want %d", args, got, cmdline.ExitUsage)
		}
	}
}

func TestBadFlagValueIsAUsageError(t *testing.T) {
	for _, args := range [][]string{{"profile", "--benchmark-duration", "soon"}, {"profile", "--isl"}, {"mock-server", "--ttft", "x"}} {
		if got := run(append([]string{"surge"}, args...)); got != cmdline.ExitUsage {
			t.Errorf("surge %v exited %d, want %d", args, got, cmdline.ExitUsage)
		}
	}
}

// Not parallel: urfave/cli shares its help flag between apps, so run() is
// not safe to call from two goroutines.
func TestReportCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.html")
	if code := run([]string{"surge", "report", "-o", out, "metrics/report/testdata/run-a", "metrics/report/testdata/sweep"}); code != cmdline.ExitOK {
		t.Fatalf("surge report exited %d", code)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `id="surge-data"`) {
		t.Errorf("%s has no embedded data", out)
	}
	pngs := filepath.Join(t.TempDir(), "charts")
	if code := run([]string{"surge", "report", "--format", "png", "-o", pngs, "metrics/report/testdata/sweep"}); code != cmdline.ExitOK {
		t.Fatalf("surge report --format png exited %d", code)
	}
	for _, name := range []string{"cdf-time_to_first_token.png", "sweep-ttft.png", "throughput.png"} {
		if st, err := os.Stat(filepath.Join(pngs, name)); err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", name, err)
		}
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
		if got := run(append([]string{"surge"}, args...)); got != cmdline.ExitUsage {
			t.Errorf("surge %v exited %d, want %d", args, got, cmdline.ExitUsage)
		}
	}
}

// The compare test runs (metrics/compare/testdata): the same workload on
// a mock with TTFT 20 ms (slow) and 16 ms (fast), and one with --isl 24.
const (
	cmpSlow  = "metrics/compare/testdata/slow"
	cmpFast  = "metrics/compare/testdata/fast"
	cmpOther = "metrics/compare/testdata/other-isl"
)

// TestCompareExitCodes: 0 compared, 1 a --fail-on rule failed, 2 bad
// usage or runs of different workloads (unless --force).
func TestCompareExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{cmpSlow, cmpFast}, cmdline.ExitOK},
		{[]string{"--fail-on", "time_to_first_token.p99>+5%", cmpSlow, cmpFast}, cmdline.ExitOK},
		{[]string{"--fail-on", "time_to_first_token.p99>+5%", cmpFast, cmpSlow}, cmdline.ExitFailed},
		{[]string{"--fail-on", "output_token_throughput<-5%", "--fail-on", "inter_token_latency.p50>+50%", cmpFast, cmpSlow}, cmdline.ExitFailed},
		{[]string{cmpSlow, cmpOther}, cmdline.ExitUsage},
		{[]string{"--force", cmpSlow, cmpOther}, cmdline.ExitOK},
		{[]string{cmpSlow}, cmdline.ExitUsage},
		{[]string{"--fail-on", "time_to_first_token.p99>>5%", cmpSlow, cmpFast}, cmdline.ExitUsage},
		{[]string{"--fail-on", "nope.p99>5%", cmpSlow, cmpFast}, cmdline.ExitUsage},
		{[]string{"--confidence", "95", cmpSlow, cmpFast}, cmdline.ExitUsage},
		{[]string{cmpSlow, filepath.Join(t.TempDir(), "none")}, cmdline.ExitUsage},
	} {
		if got := run(append([]string{"surge", "compare"}, tc.args...)); got != tc.want {
			t.Errorf("surge compare %v exited %d, want %d", tc.args, got, tc.want)
		}
	}
}
