package profile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen"
)

// startMockServer starts the mock for one test and keeps it, for its
// counters.
func startMockServer(t *testing.T, cfg mockserver.Config) *mockserver.Running {
	t.Helper()
	m, err := mockserver.Start(context.Background(), "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m
}

// runIn runs `surge profile` with args against url into dir and returns
// the console.
func runIn(t *testing.T, url, dir string, args ...string) string {
	t.Helper()
	// No preflight: the mock's counts are the run's requests alone.
	base := []string{"--url", url, "--model", "mock", "--streaming", "--ui", "none", "--output-artifact-dir", dir,
		"--no-gpu-telemetry", "--no-server-metrics", "--tokenizer", "builtin", "--skip-preflight"}
	var out bytes.Buffer
	if _, err := runConfig(context.Background(), parseArgs(t, append(base, args...)...), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// waitForAborts waits (up to 10 s) for the mock to have seen n clients
// leave: it notices a disconnect at its next write.
func waitForAborts(m *mockserver.Running, n uint64) mockserver.Stats {
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := m.Server().Stats()
		if st.Canceled >= n || time.Now().After(deadline) {
			return st
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRequestCancellationEndToEnd cancels 40% of 20 streamed requests
// 100 ms after their send, mid-answer (a 30 × 20 ms stream): the records,
// the summary (JSON, CSV, console) and the mock's own abort count agree,
// and a second run with the seed cancels the same requests.
func TestRequestCancellationEndToEnd(t *testing.T) {
	t.Parallel()
	chosenIn := func(dir string) (chosen []string, cancelled int) {
		for _, l := range apptest.RecordLines(t, dir) {
			md := l["metadata"].(map[string]any)
			sg := l["surge"].(map[string]any)
			if after, ok := sg["cancel_after_ns"]; ok {
				chosen = append(chosen, md["conversation_id"].(string))
				if after.(float64) != 1e8 {
					t.Errorf("cancel_after_ns %v, want 1e8", after)
				}
			}
			if md["was_cancelled"] != true {
				if l["error"] != nil {
					t.Errorf("a request not cancelled failed: %v", l["error"])
				}
				continue
			}
			cancelled++
			e, _ := l["error"].(map[string]any)
			if e == nil || e["code"] != float64(loadgen.CancelledCode) || e["type"] != loadgen.ErrRequestCancelled {
				t.Errorf("cancelled record's error %v, want 499 %s", e, loadgen.ErrRequestCancelled)
			}
			if at, sent := md["cancellation_time_ns"].(float64), sg["request_sent_ns"].(float64); at-sent < 1e8 {
				t.Errorf("cancelled %v ns after its send, want ≥ 100 ms", at-sent)
			}
		}
		slices.Sort(chosen)
		return chosen, cancelled
	}
	var first []string
	for run := range 2 {
		m := startMockServer(t, mockserver.Config{TTFT: 10 * time.Millisecond, ITL: 20 * time.Millisecond})
		dir := t.TempDir()
		out := runIn(t, m.URL(), dir, "--request-count", "20", "--concurrency", "4", "--osl", "30",
			"--request-cancellation-rate", "40", "--request-cancellation-delay", "0.1", "--random-seed", "7")
		chosen, cancelled := chosenIn(dir)
		if cancelled == 0 || cancelled != len(chosen) {
			t.Fatalf("run %d: %d cancelled of %d chosen (each chosen one outlives 100 ms)", run, cancelled, len(chosen))
		}
		exp := apptest.ReadExport(t, dir)
		if got := apptest.RunAvg(t, exp, "cancelled_request_count"); got != float64(cancelled) {
			t.Errorf("cancelled_request_count %v, want %d", got, cancelled)
		}
		if got := apptest.RunAvg(t, exp, "error_request_count"); got != float64(cancelled) {
			t.Errorf("error_request_count %v, want %d (AIPerf counts them as errors)", got, cancelled)
		}
		if got := apptest.RunAvg(t, exp, "request_count"); got != float64(20-cancelled) {
			t.Errorf("request_count %v, want %d", got, 20-cancelled)
		}
		csv, err := os.ReadFile(filepath.Join(dir, "profile_export_aiperf.csv"))
		if err != nil {
			t.Fatal(err)
		}
		for what, text := range map[string]string{"console": out, "CSV": string(csv)} {
			if !strings.Contains(text, "Cancelled Request Count") && !strings.Contains(text, fmt.Sprintf("%d of them cancelled", cancelled)) {
				t.Errorf("the %s does not count the cancelled requests:\n%s", what, text)
			}
		}
		lg := exp["input_config"].(map[string]any)["loadgen"].(map[string]any)
		if lg["request_cancellation_rate"] != 40.0 || lg["request_cancellation_delay"] != 0.1 {
			t.Errorf("input_config.loadgen: %v", lg)
		}
		// Each is cancelled mid-stream (90 ms into a 600 ms answer), or, when
		// a loaded machine held the mock's first token past the 100 ms, in
		// its prefill: the mock's own count of aborts is what it saw.
		if st := waitForAborts(m, uint64(cancelled)); st.AbortedStream+st.AbortedPrefill != uint64(cancelled) || st.Completed != uint64(20-cancelled) {
			t.Errorf("run %d: the mock saw %+v, want %d aborts", run, st, cancelled)
		} else if st.AbortedPrefill > 0 {
			t.Logf("run %d: %d of %d cancelled in prefill (the first token came past 100 ms)", run, st.AbortedPrefill, cancelled)
		}
		if run == 0 {
			first = chosen
		} else if !slices.Equal(first, chosen) {
			t.Errorf("the same seed chose %v, then %v", first, chosen)
		}
	}
}

// TestPrefillConcurrencyEndToEnd: 6 requests in flight against a mock
// whose prefill takes 200 ms, at most 2 of them in prefill, by the mock's
// own count.
func TestPrefillConcurrencyEndToEnd(t *testing.T) {
	t.Parallel()
	m := startMockServer(t, mockserver.Config{TTFT: 200 * time.Millisecond, ITL: 2 * time.Millisecond})
	dir := t.TempDir()
	runIn(t, m.URL(), dir, "--request-count", "12", "--concurrency", "6", "--osl", "4", "--prefill-concurrency", "2")
	if st := m.Server().Stats(); st.PrefillingPeak != 2 || st.Completed != 12 {
		t.Errorf("the mock saw up to %d requests in prefill (want 2) and %d completed", st.PrefillingPeak, st.Completed)
	}
	waited := 0
	for _, l := range apptest.RecordLines(t, dir) {
		if _, ok := l["surge"].(map[string]any)["prefill_wait_ns"]; ok {
			waited++
		}
	}
	if waited == 0 {
		t.Error("no record waited for a prefill slot")
	}
	exp := apptest.ReadExport(t, dir)
	if got := exp["input_config"].(map[string]any)["loadgen"].(map[string]any)["prefill_concurrency"]; got != 2.0 {
		t.Errorf("input_config.loadgen.prefill_concurrency %v, want 2", got)
	}
}

func TestLoadControlFlagsRejected(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--streaming", "--request-cancellation-rate", "150"}, "--request-cancellation-rate"},
		{[]string{"--streaming", "--request-cancellation-rate", "-1"}, "--request-cancellation-rate"},
		{[]string{"--streaming", "--request-cancellation-rate", "10", "--request-cancellation-delay", "-1"}, "--request-cancellation-delay"},
		{[]string{"--streaming", "--prefill-concurrency", "-1"}, "--prefill-concurrency"},
		{[]string{"--prefill-concurrency", "2"}, "--streaming"},
		{[]string{"--streaming", "--concurrency", "4,1", "--prefill-concurrency", "2"}, "more than --concurrency 1"},
		{[]string{"--streaming", "--warmup-prefill-concurrency", "2"}, "bound the warmup"},
		{[]string{"--streaming", "--warmup-request-count", "4", "--warmup-prefill-concurrency", "-2"}, "--warmup-prefill-concurrency must be ≥ 1"},
		{[]string{"--streaming", "--warmup-request-count", "4", "--warmup-concurrency", "2", "--warmup-prefill-concurrency", "3"}, "more than --warmup-concurrency 2"},
		{[]string{"--warmup-request-count", "4", "--warmup-prefill-concurrency", "1"}, "--warmup-prefill-concurrency needs --streaming"},
		{[]string{"--streaming", "--prefill-concurrency-ramp-duration", "2"}, "give it"},
		{[]string{"--streaming", "--prefill-concurrency", "2", "--prefill-concurrency-ramp-duration", "-1"}, "--prefill-concurrency-ramp-duration must be ≥ 0"},
		{[]string{"--streaming", "--prefill-concurrency", "2", "--benchmark-duration", "3", "--prefill-concurrency-ramp-duration", "5"}, "longer than the run's duration"},
	} {
		err := refusal(append([]string{"--url", "127.0.0.1:1", "--ui", "none", "--output-artifact-dir", t.TempDir(),
			"--no-gpu-telemetry", "--no-server-metrics"}, tc.args...), func(c cmdline.Config) error {
			_, err := runConfig(context.Background(), c, io.Discard, io.Discard)
			return err
		})
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%v: %v, want a usage error naming %s", tc.args, err, tc.says)
		}
	}
}

// TestEveryRequestCancelledIsNotAFailedRun: with every request cancelled
// on purpose the server failed none: not exit code 1.
func TestEveryRequestCancelledIsNotAFailedRun(t *testing.T) {
	t.Parallel()
	m := startMockServer(t, mockserver.Config{TTFT: 300 * time.Millisecond})
	dir := t.TempDir()
	c := parseArgs(t, "--url", m.URL(), "--model", "mock", "--streaming", "--ui", "none", "--output-artifact-dir", dir,
		"--no-gpu-telemetry", "--no-server-metrics", "--tokenizer", "builtin", "--request-count", "4", "--osl", "4",
		"--request-cancellation-rate", "100", "--request-cancellation-delay", "0")
	res, err := runConfig(context.Background(), c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Summary.Run["cancelled_request_count"]; got != 4 || res.AllFailed() {
		t.Errorf("cancelled %v of 4, AllFailed %v: want every one cancelled and not a failed run", got, res.AllFailed())
	}
	if st := waitForAborts(m, 4); st.AbortedPrefill != 4 {
		t.Errorf("the mock saw %+v, want 4 aborts before the first token", st)
	}
}
