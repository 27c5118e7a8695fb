package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/surgebench/surge/app/cmdline"
	"strings"
	"testing"
)

// The compare test runs (metrics/compare/testdata): the same workload on
// a mock with TTFT 20 ms (slow) and 16 ms (fast), and one with --isl 24.
const (
	slowRun     = "../../metrics/compare/testdata/slow"
	fastRun     = "../../metrics/compare/testdata/fast"
	otherISLRun = "../../metrics/compare/testdata/other-isl"
)

// TestCompareJSON: --json writes the whole comparison for CI, the failed
// rules included; a refusal still writes the check that refused.
func TestCompareJSON(t *testing.T) {
	var buf bytes.Buffer
	c := compareConfig{JSON: true, Seed: 1, Samples: 500, Confidence: 0.95, FailOn: []string{"time_to_first_token.p50>+5%"}}
	err := compareRuns(&buf, []string{fastRun, slowRun}, c)
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
	err = compareRuns(&buf, []string{slowRun, otherISLRun}, compareConfig{JSON: true, Seed: 1, Samples: 500, Confidence: 0.95})
	var ue *cmdline.UsageError
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
