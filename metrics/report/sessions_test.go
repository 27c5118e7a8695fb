package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surgebench/surge/metrics/artifact"
)

// sessionsSummary is a summary export with a sessions section, as surge
// writes it.
const sessionsSummary = `{"schema_version":"1.5","surge_version":"test",
"time_to_first_token":{"unit":"ms","avg":20,"min":10,"max":40,"p50":20,"p90":30,"p99":40,"count":4},
"sessions":{"count":2,"completed":1,"rejected_starts":0,
 "duration":{"unit":"ms","avg":160,"p50":160,"p90":230,"max":240,"count":2},
 "requests_per_session":{"unit":"requests","avg":2.5,"max":3,"count":2},
 "context_tokens":{"unit":"tokens","avg":157,"p50":145,"max":230,"count":4},
 "ttft_by_turn_kind":{"first":{"unit":"ms","p50":42.5,"p90":44.5,"count":2},"tool_result":{"unit":"ms","p50":12,"p90":12,"count":1}},
 "ttft_by_context":[{"context_from":91,"context_to":128,"count":2,"context_avg":115,"ttft_p50_ms":42.5,"ttft_p90_ms":44.5},
  {"context_from":128,"context_to":182,"count":1,"context_avg":170,"ttft_p50_ms":12,"ttft_p90_ms":null}],
 "cached_token_fraction":0.46,"cached_token_fraction_by_turn_kind":{"first":0,"tool_result":0.7},
 "tool_calls":2,"tool_call_argument_errors":1,"tool_result_requests":1,"unknown_tool_results":1,"context_overflows":1,
 "tool_time_ms":100,"server_time_ms":180}}`

// TestSessionsReport: a run's sessions are a table of its own and a chart
// of TTFT against the context length.
func TestSessionsReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, artifact.SummaryFile), []byte(sessionsSummary), 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := artifact.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := Build([]*artifact.Run{run})
	rows := map[string]string{}
	for _, kv := range d.Runs[0].Sessions {
		rows[kv.Key] = kv.Value
	}
	for k, want := range map[string]string{
		"sessions":                                "2 (1 completed, 0 starts rejected)",
		"TTFT after tool results":                 "p50 12 ms, p90 12 ms (1 requests)",
		"cached prompt tokens":                    "46.0%",
		"cached prompt tokens after tool results": "70.0%",
		"tool calls":                              "2 (arguments parsed: 50.0%)",
		"context overflows":                       "1",
	} {
		if rows[k] != want {
			t.Errorf("row %q = %q, want %q", k, rows[k], want)
		}
	}
	var chart *Chart
	for i := range d.Charts {
		if d.Charts[i].ID == "ttft-context" {
			chart = &d.Charts[i]
		}
	}
	if chart == nil || len(chart.Series) != 2 || len(chart.Series[0].X) != 2 || chart.Series[0].Y[1] != 12 || !chart.LogX {
		t.Fatalf("TTFT by context chart %+v", chart)
	}
	var page strings.Builder
	if err := WriteHTML(&page, d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "<summary>sessions</summary>") {
		t.Error("the page has no sessions table")
	}
	pngs, err := WritePNGs(t.TempDir(), d)
	if err != nil {
		t.Fatal(err)
	}
	drawn := false
	for _, f := range pngs {
		drawn = drawn || strings.Contains(f, "ttft-context")
	}
	if !drawn {
		t.Errorf("no PNG of the TTFT by context chart in %v", pngs)
	}
}
