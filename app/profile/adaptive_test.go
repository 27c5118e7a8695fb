package profile

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/search"
)

// TestAdaptiveScaleFindsMaxRunning: against a mock serving 4 requests at
// a time (each 10 + 15 × 50 = 760 ms), a ramp of one slot a window from 2
// under an SLA of 110 ms on the mean TTFT passes 2 to 4 (TTFT 10 ms) and
// fails at 5, holds the boundary and writes AIPerf's two files. At 5 one
// request in five waits for a slot, and by Little's law the waits average
// a quarter of a service: the mean TTFT is about 170 ms, however busy the
// machine (a slower mock serves, and makes them wait, longer). The mean
// rather than a p95: a busy machine's stalls (a p95 of 160 ms at 3 has
// been seen) move a mean of a dozen requests by a fraction of theirs, and
// its interval settles a passing window after its first 8 requests where
// a p95's needs 72, so no window runs to its cap. A go test of every
// package has still raised the mean to 67 ms at 3 (a 60 ms limit with
// 490 ms services failed 3): the limit sits as far above that as below
// the queue's 170. One busier still fails 4: the boundary is then 3.
func TestAdaptiveScaleFindsMaxRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("an adaptive scale takes about fifteen seconds")
	}
	t.Parallel()
	dir := t.TempDir()
	// The mock in a process of its own: in this one, the package's other
	// tests' goroutines and collections delayed its answers (a mean TTFT
	// of 143 ms at 3 in a go test of every package).
	url := startMockProcess(t, "--ttft", "10ms", "--itl", "50ms", "--prefill-per-token", "0", "--max-running", "4")
	c := apptest.RunConfig(url, dir)
	c.Concurrency, c.OSL, c.RequestCount = "8", 16, 0
	c.Duration = 90 * time.Second
	c.Adaptive, c.AdaptiveSustain, c.AdaptivePeriod = true, 2*time.Second, time.Second
	c.AdaptiveMin = 2
	c.AdaptiveSLA = []string{"time_to_first_token:avg:le:110"}
	c.AdaptiveStepPolicy, c.AdaptiveBaseStep, c.AdaptiveMaxMultiplier, c.AdaptiveStepPercent = "sla_margin", 1, 1, 25
	var out, log bytes.Buffer
	if _, err := runConfig(context.Background(), c, &out, &log); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out.String(), log.String())
	}
	info := apptest.ReadExport(t, dir)["run_info"].(map[string]any)["adaptive_scale"].(map[string]any)
	capacity := info["capacity"].(map[string]any)
	value, upper := capacity["value"].(float64), capacity["upper"].(float64)
	if value < 3 || value > 4 || upper != value+1 || capacity["found"] != true || info["status"] != "completed" {
		t.Errorf("capacity %v, upper %v, status %v: want 4 (or 3 on a busy machine) and the next value failing\n%s", value, upper, info["status"], out.String())
	}
	if !strings.Contains(out.String(), "capacity: "+num(value)+" concurrent requests (held every SLA; "+num(upper)+" failed)") {
		t.Errorf("console does not give the capacity:\n%s", out.String())
	}
	var events []string
	for _, e := range apptest.JSONLines(t, filepath.Join(dir, AdaptiveEventsFile)) {
		events = append(events, e["event"].(string))
		if e["schema_version"] != float64(2) || e["control_variable"] != "concurrency" {
			t.Errorf("event %v", e)
		}
	}
	for _, want := range []string{"adaptive_phase_started", "adaptive_window", "adaptive_decision", "boundary_discovered", "sustain_started", "adaptive_complete"} {
		if !slices.Contains(events, want) {
			t.Errorf("no %s event in %v", want, events)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, AdaptiveSummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var sum map[string]any
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	// AIPerf's boundary and first failing value are discovery's: on a
	// machine busy enough to fail 4 in sustain, the ramp held 3, and
	// they stay 4 and 5.
	recovered := value == 3 && sum["boundary_value"] == 4.0 && sum["first_failing_value"] == 5.0
	if !recovered && (sum["boundary_value"] != value || sum["first_failing_value"] != upper) || sum["completed_reason"] != "sustain_duration_completed" ||
		sum["sustain_passed_windows"].(float64) < 1 || len(sum["candidates"].([]any)) < 5 {
		t.Errorf("summary %v", sum)
	}
}

// TestRecipeSearchFindsMaxRunning: AIPerf's max-concurrency-under-sla
// with --ttft-sla-ms runs as surge's capacity search against the same
// mock and writes AIPerf's search_history.json with its boundary.
func TestRecipeSearchFindsMaxRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("a capacity search takes about ten seconds")
	}
	t.Parallel()
	dir := t.TempDir()
	c := apptest.RunConfig(startMock(t, 4), dir)
	c.Concurrency, c.OSL, c.RequestCount = "", 16, 0
	// From 4, the capacity: each probe lasts 5 to 8 s (the 40 requests a
	// verdict needs), so the search probes 4 and then 5, which fails.
	c.SearchRecipe, c.SearchStyle, c.TTFTSLA, c.ConcurrencyMin, c.ConcurrencyMax = "max-concurrency-under-sla", "monotonic", "90", "4", "16"
	var out, log bytes.Buffer
	if _, err := runConfig(context.Background(), c, &out, &log); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out.String(), log.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, SearchHistoryFile))
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	var h struct {
		Recipe   string `json:"recipe"`
		Boundary struct {
			FeasibleMax   struct{ Value float64 } `json:"feasible_max"`
			InfeasibleMin struct {
				Value       float64
				FirstBreach struct {
					Metric string `json:"metric_tag"`
				} `json:"first_breach"`
			} `json:"infeasible_min"`
		} `json:"boundary_summary"`
		Iterations []map[string]any `json:"iterations"`
	}
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	// As in TestSearchCommandFindsMaxRunning, TTFT is 50 ms up to the 4
	// slots and ≥ 100 ms at 5: a machine busy enough to add 40 ms to the
	// client's reading fails 4 or lower. So the boundary is 4 or below it
	// (the monotonic planner probes each value once, from the lower
	// bound, 4, up to the first that fails; none is feasible if 4
	// fails); loadgen/search's tests, on the server's clock, find the
	// exact one.
	fm, im := h.Boundary.FeasibleMax.Value, h.Boundary.InfeasibleMin.Value
	if h.Recipe != "max-concurrency-under-sla" || fm > 4 || im != max(fm+1, 4) || h.Boundary.InfeasibleMin.FirstBreach.Metric != "time_to_first_token" || len(h.Iterations) < int(im)-3 {
		t.Errorf("search_history %s\n%s", b, out.String())
	}
	if !strings.Contains(out.String(), "Capacity search (concurrency, SLO time_to_first_token:p95:lt:90)") {
		t.Errorf("console:\n%s", out.String())
	}
}

// TestCapacityAfterARecovery: a ramp that passed 2 to 4 in discovery,
// failed 5, then failed 4 in sustain and held 3 has a capacity of 3 and
// an upper bound of 4, the lowest value above it that failed, though
// AIPerf's first_failing_value (discovery's) stays 5.
func TestCapacityAfterARecovery(t *testing.T) {
	t.Parallel()
	window := func(value float64, v search.Verdict, limiting string) search.Probe {
		return search.Probe{Value: value, Judgement: search.Judgement{Verdict: v, Limiting: limiting}}
	}
	res := &search.RampResult{Status: "adaptive_complete", Reason: "sustain_duration_completed", Boundary: 4, LastPass: 3, FirstFail: 5,
		SustainWindows: 2, SustainPassed: 1, Windows: []search.Probe{
			window(2, search.Pass, ""), window(3, search.Pass, ""), window(4, search.Pass, ""),
			window(5, search.Fail, "p95(time_to_first_token)"), window(4, search.Fail, "avg(time_to_first_token)"), window(3, search.Pass, ""),
		}}
	r := &adaptiveRun{a: &spec.Adaptive{Variable: loadgen.ControlConcurrency}, res: res}
	c := r.capacity()
	if c["value"] != 3.0 || c["upper"] != 4.0 || c["found"] != true || c["limiting"] != "avg(time_to_first_token)" {
		t.Errorf("capacity %v, want 3 with 4 failing (avg(time_to_first_token))", c)
	}
	var out strings.Builder
	r.conclude(&out)
	if !strings.Contains(out.String(), "capacity: 3 concurrent requests (held every SLA; 4 failed), limited by avg(time_to_first_token)") {
		t.Errorf("console:\n%s", out.String())
	}
	// With no failure above the last pass, no upper bound.
	res.Windows = res.Windows[:3]
	res.LastPass, res.FirstFail = 4, math.NaN()
	if c := r.capacity(); c["found"] != false || c["upper"] != nil {
		t.Errorf("capacity %v, want no upper bound", c)
	}
}
