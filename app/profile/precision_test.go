package profile

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/examples/mockserver"
)

// TestPrecisionEndsEachStage: --precision keeps a stage's load going
// until its targets are reached, then ends it (the next stage starting),
// well before the cap; the console and run_info say what each reached.
// A cap that comes first ends the run and says how far it got.
func TestPrecisionEndsEachStage(t *testing.T) {
	t.Parallel()
	// A server's TTFT of 20 ms, against which the client's own jitter on a
	// busy machine (a millisecond or two) is small: the target is reached
	// in a few hundred requests however loaded the machine is. ±10%, not
	// ±5%: a quarter of the requests (±5% took 26 s of a loaded go test).
	srv := agentMock(t, mockserver.Config{TTFT: 20 * time.Millisecond, ITL: time.Millisecond}).URL()
	dir := t.TempDir()
	c := parseArgs(t, "--url", srv, "-m", "mock", "--skip-preflight", "--streaming", "--ui", "none", "--output-artifact-dir", dir,
		"--no-gpu-telemetry", "--no-server-metrics", "--tokenizer", "builtin", "--osl", "4", "--isl", "16",
		"--concurrency", "2,4", "--request-count", "5000", "--precision", "time_to_first_token:p50:±10%")
	var out, log bytes.Buffer
	if _, err := runConfig(context.Background(), c, &out, &log); err != nil {
		t.Fatal(err)
	}
	m := apptest.ReadExport(t, dir)
	info := m["run_info"].(map[string]any)
	stages, _ := info["precision_targets"].([]any)
	if len(stages) != 2 || info["stopped_by"] != "precision" {
		t.Fatalf("run_info precision_targets %v, stopped_by %v; want two stages, stopped by precision", info["precision_targets"], info["stopped_by"])
	}
	for i, st := range stages {
		s := st.(map[string]any)
		if s["reached"] != true || s["requests"].(float64) >= 5000 {
			t.Errorf("stage %d: %v, want reached well before the cap", i+1, s)
		}
	}
	if n := apptest.RunAvg(t, m, "request_count"); n >= 10000 {
		t.Errorf("%v requests: the cap, not the precision, ended the stages", n)
	}
	if !strings.Contains(out.String(), "stage 2 precision reached: time_to_first_token:p50") || !strings.Contains(log.String(), "stage 1: --precision: every target reached") {
		t.Errorf("console/log do not say what was reached:\n%s\n%s", out.String(), log.String())
	}

	// A cap that comes first: the run ends at it and says so, exit 0.
	dir = t.TempDir()
	c = parseArgs(t, "--url", srv, "-m", "mock", "--skip-preflight", "--streaming", "--ui", "none", "--output-artifact-dir", dir,
		"--no-gpu-telemetry", "--no-server-metrics", "--tokenizer", "builtin", "--osl", "4", "--isl", "16",
		"--request-count", "20", "--precision", "time_to_first_token:p99:±1%")
	out.Reset()
	if _, err := runConfig(context.Background(), c, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "precision not reached before the run's bound") {
		t.Errorf("a capped run does not say the precision it reached:\n%s", out.String())
	}
}

// TestPrecisionAndTrimFlags: bad targets and values are usage errors
// naming the flag; a target no non-streamed run measures is refused.
func TestPrecisionAndTrimFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--precision", "time_to_first_token:p99:5"}, "--precision"},
		{[]string{"--precision", "nope:p99:±5%"}, "--precision"},
		{[]string{"--precision", "time_to_first_token:p99:±5%"}, "needs --streaming"},
		{[]string{"--trim", "sometimes"}, "--trim"},
	} {
		c := parseArgs(t, append([]string{"--ui", "none"}, tc.args...)...)
		var ue *cmdline.UsageError
		if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error naming %s", tc.args, err, tc.want)
		}
	}
}

// TestPrecisionCheckCadence: the live check runs at every tick while it is
// cheap, and once it is not (its cost grows with the run: it sorts every
// request so far), only as often as keeps it under 1/checkShare of the
// time, so it cannot crowd out the streams it times.
func TestPrecisionCheckCadence(t *testing.T) {
	t.Parallel()
	sec := int64(time.Second)
	for _, c := range []struct {
		took, atLeast, atMost int64
	}{
		{took: sec / 1000, atLeast: 0, atMost: sec},                  // 1 ms: every tick
		{took: sec / 10, atLeast: checkShare * sec / 10, atMost: -1}, // 100 ms: once in 5 s
		{took: sec, atLeast: checkShare * sec, atMost: -1},
	} {
		start := 7 * sec
		gap := nextCheck(start, start+c.took) - start
		if gap < c.atLeast || (c.atMost >= 0 && gap > c.atMost) {
			t.Errorf("a check of %v: next after %v, want [%v, %v]", time.Duration(c.took), time.Duration(gap), time.Duration(c.atLeast), time.Duration(c.atMost))
		}
	}
}
