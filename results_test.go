package main

import (
	"bytes"
	"encoding/json"
	"errors"
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
	pngs := filepath.Join(t.TempDir(), "charts")
	if code := run([]string{"surge", "report", "--format", "png", "-o", pngs, "metrics/report/testdata/sweep"}); code != exitOK {
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
		if got := run(append([]string{"surge"}, args...)); got != exitUsage {
			t.Errorf("surge %v exited %d, want %d", args, got, exitUsage)
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
		{[]string{cmpSlow, cmpFast}, exitOK},
		{[]string{"--fail-on", "time_to_first_token.p99>+5%", cmpSlow, cmpFast}, exitOK},
		{[]string{"--fail-on", "time_to_first_token.p99>+5%", cmpFast, cmpSlow}, exitFailed},
		{[]string{"--fail-on", "output_token_throughput<-5%", "--fail-on", "inter_token_latency.p50>+50%", cmpFast, cmpSlow}, exitFailed},
		{[]string{cmpSlow, cmpOther}, exitUsage},
		{[]string{"--force", cmpSlow, cmpOther}, exitOK},
		{[]string{cmpSlow}, exitUsage},
		{[]string{"--fail-on", "time_to_first_token.p99>>5%", cmpSlow, cmpFast}, exitUsage},
		{[]string{"--fail-on", "nope.p99>5%", cmpSlow, cmpFast}, exitUsage},
		{[]string{"--confidence", "95", cmpSlow, cmpFast}, exitUsage},
		{[]string{cmpSlow, filepath.Join(t.TempDir(), "none")}, exitUsage},
	} {
		if got := run(append([]string{"surge", "compare"}, tc.args...)); got != tc.want {
			t.Errorf("surge compare %v exited %d, want %d", tc.args, got, tc.want)
		}
	}
}

// TestCompareJSON: --json writes the whole comparison for CI, the failed
// rules included; a refusal still writes the check that refused.
func TestCompareJSON(t *testing.T) {
	var buf bytes.Buffer
	c := compareConfig{JSON: true, Seed: 1, Samples: 500, Confidence: 0.95, FailOn: []string{"time_to_first_token.p50>+5%"}}
	err := compareRuns(&buf, []string{cmpFast, cmpSlow}, c)
	if !errors.Is(err, errRegression) || !strings.Contains(err.Error(), "slow time_to_first_token.p50 +2") {
		t.Errorf("err = %v, want the regression named", err)
	}
	var got struct {
		Baseline    string `json:"baseline"`
		Comparisons []struct {
			Metrics []struct {
				Metric string `json:"metric"`
				Stats  []struct {
					Stat        string   `json:"stat"`
					Rel         *float64 `json:"rel"`
					Significant bool     `json:"significant"`
				} `json:"stats"`
			} `json:"metrics"`
		} `json:"comparisons"`
		FailOn []struct {
			Failed bool `json:"failed"`
		} `json:"fail_on"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("--json output: %v\n%s", err, buf.String())
	}
	if got.Baseline != "fast" || len(got.Comparisons) != 1 || len(got.FailOn) != 1 || !got.FailOn[0].Failed {
		t.Errorf("json: %+v", got)
	}
	m := got.Comparisons[0].Metrics[0]
	if m.Metric != "time_to_first_token" || m.Stats[0].Rel == nil || *m.Stats[0].Rel < 0.15 || !m.Stats[0].Significant {
		t.Errorf("first metric %+v, want TTFT about 23%% higher", m)
	}

	buf.Reset()
	err = compareRuns(&buf, []string{cmpSlow, cmpOther}, compareConfig{JSON: true, Seed: 1, Samples: 500, Confidence: 0.95})
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "isl: 16 vs 24") || !strings.Contains(err.Error(), "--force") {
		t.Errorf("err = %v, want a usage error naming the setting and --force", err)
	}
	var refusal struct {
		Check struct {
			Comparable bool     `json:"comparable"`
			Reasons    []string `json:"reasons"`
		} `json:"check"`
	}
	if err := json.Unmarshal(buf.Bytes(), &refusal); err != nil || refusal.Check.Comparable || len(refusal.Check.Reasons) != 1 {
		t.Errorf("refusal JSON %s (%v)", buf.String(), err)
	}
}
