package profile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/examples/mockserver"
)

// startMock serves the mock with --max-running k: k requests at once, each
// for TTFT + 15·ITL = 200 ms, so its capacity is a concurrency of k.
func startMock(t *testing.T, k int) string {
	t.Helper()
	m, err := mockserver.Start(context.Background(), "127.0.0.1:0", mockserver.Config{TTFT: 50 * time.Millisecond, ITL: 10 * time.Millisecond, MaxRunning: k})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m.URL()
}

func TestSearchCommandFindsMaxRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("a capacity search takes about fifteen seconds")
	}
	t.Parallel()
	dir := t.TempDir()
	// Each request holds one of 4 slots for 50 + 15 × 10 = 200 ms. At
	// concurrency 5 every request waits a quarter of that for a slot, so
	// TTFT ≥ 100 ms, past the limit whatever else happens; at 4 it is
	// 50 ms plus what a busy machine adds to the client's reading (+50 ms
	// at p95 under -race with every core taken), which may fail it. So the
	// capacity found is 4 or, on such a machine, less: this test checks
	// the command's wiring; loadgen/search's tests, judged on the
	// server's clock, check that a search finds the exact capacity.
	c := apptest.RunConfig(startMock(t, 4), dir)
	c.Concurrency, c.OSL, c.RequestCount = "1", 16, 500
	c.Search = &cmdline.SearchConfig{SLO: "time_to_first_token:p95:90", MinProbe: 2 * time.Second, MaxProbe: 6 * time.Second}
	var out strings.Builder
	res, err := runConfig(context.Background(), c, &out, io.Discard)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if res.Cancelled || res.Aborted {
		t.Fatalf("result %+v", res)
	}
	m := apptest.ReadExport(t, dir)
	info := m["run_info"].(map[string]any)
	s := info["search"].(map[string]any)
	capacity, _ := s["capacity"].(float64)
	found := s["found"] == true
	if capacity > 4 || s["upper"] != capacity+1 || (found && s["limiting"] != "p95(time_to_first_token)") {
		t.Errorf("run_info.search %v, want a capacity of at most the server's 4 slots", s)
	}
	want := fmt.Sprintf("capacity: %v concurrent requests (passes; %v fails", capacity, capacity+1)
	switch {
	case !found && capacity == 0:
		// Every probe failed, down to the first: the console names the
		// lowest concurrency tried.
		want = "capacity: no concurrency met the SLOs; lowest tried 1 concurrent requests"
	case !found:
		want = fmt.Sprintf("capacity: %v", s["note"])
	}
	if !strings.Contains(out.String(), want) {
		t.Errorf("console does not say %q:\n%s", want, out.String())
	}
	// A search's stages are probes: no knee is judged. Its table counts
	// each probe's requests as the stage table counts its stage's.
	if strings.Contains(out.String(), "nee") {
		t.Errorf("a search judged a knee:\n%s", out.String())
	}
	probes := s["probes"].([]any)
	stages, _ := m["stages"].([]any)
	_, capTable, _ := strings.Cut(out.String(), "Capacity search")
	capRows := strings.Split(capTable, "\n")
	if len(capRows) < 2+len(probes) {
		t.Fatalf("the capacity table has %d lines for %d probes:\n%s", len(capRows), len(probes), out.String())
	}
	capRows = capRows[2 : 2+len(probes)]
	if len(probes) == 1 {
		// A one-stage run has no stages: its summary is the probe's.
		if pr := strings.Fields(capRows[0]); len(pr) < 5 || pr[3] != fmt.Sprint(apptest.RunAvg(t, m, "request_count")) {
			t.Errorf("the probe's row %v does not count the run's %v requests", pr, apptest.RunAvg(t, m, "request_count"))
		}
		return
	}
	_, stageTable, _ := strings.Cut(out.String(), "Stages (latencies in ms)\n")
	stageRows := strings.Split(stageTable, "\n")
	if len(stageRows) < 2+len(probes) {
		t.Fatalf("the stage table has %d lines for %d probes:\n%s", len(stageRows), len(probes), out.String())
	}
	for i, row := range stageRows[2 : 2+len(probes)] {
		st, pr := strings.Fields(row), strings.Fields(capRows[i])
		if len(st) > 0 && (st[0] == "●" || st[0] == "▲") { // the operating point's or the knee's mark
			st = st[1:]
		}
		if len(st) < 3 || len(pr) < 5 || st[1] != pr[3] || st[2] != pr[4] {
			t.Errorf("stage %d: the stage table's row %v, the search's %v: want the same requests and errors:\n%s", i, st, pr, out.String())
		}
	}
	if len(stages) != len(probes) {
		t.Fatalf("%d stages for %d probes", len(stages), len(probes))
	}
	for i, p := range probes {
		pv, st := p.(map[string]any), stages[i].(map[string]any)
		if pv["value"] != st["value"] || st["mode"] != "concurrency" {
			t.Errorf("probe %d %v is stage %v", i, pv["value"], st)
		}
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestControlPortSteersAProfile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := apptest.RunConfig(startMock(t, 0), dir)
	c.Concurrency, c.RequestCount, c.Duration, c.OSL = "2", 0, 3*time.Second, 16
	c.ControlAddr = freePort(t)
	c.ControlToken = "test-token-0123456789"
	done := make(chan error, 1)
	go func() {
		_, err := runConfig(context.Background(), c, io.Discard, io.Discard)
		done <- err
	}()
	var st struct {
		Value   float64
		Changes int
	}
	// Without the token the port refuses, once it is up.
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Post("http://"+c.ControlAddr+"/control/double", "application/json", nil)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("a change without the token: %d, want 401", resp.StatusCode)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("control port never answered: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+c.ControlAddr+"/control/double", nil)
	req.Header.Set("Authorization", "Bearer "+c.ControlToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	decErr := json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if decErr != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("with the token: %d, %v", resp.StatusCode, decErr)
	}
	if st.Value != 4 || st.Changes != 1 {
		t.Errorf("after double: %+v", st)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	m := apptest.ReadExport(t, dir)
	stages, _ := m["stages"].([]any)
	if len(stages) != 2 || stages[0].(map[string]any)["value"] != 2.0 || stages[1].(map[string]any)["value"] != 4.0 {
		t.Errorf("stages %v, want concurrency 2 then 4", stages)
	}
	if m["was_cancelled"] != false {
		t.Error("a live run that ran its course is marked cancelled")
	}
}

func TestStopOnEndsTheRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := apptest.RunConfig(startMock(t, 2), dir)
	// Concurrency 6 against 2 slots: TTFT ≥ 250 ms for most requests.
	c.Concurrency, c.RequestCount, c.Duration, c.OSL = "6", 0, 60*time.Second, 16
	c.StopOn = "time_to_first_token:p50:100@2s"
	began := time.Now()
	res, err := runConfig(context.Background(), c, io.Discard, io.Discard)
	if !errors.Is(err, ErrStopCondition) {
		t.Fatalf("err %v, want ErrStopCondition", err)
	}
	if res == nil || res.Cancelled {
		t.Fatalf("result %+v: a stop condition is not an interrupt", res)
	}
	if d := time.Since(began); d > 40*time.Second {
		t.Errorf("the run went on for %s", d)
	}
	m := apptest.ReadExport(t, dir)
	if m["run_info"].(map[string]any)["stopped_by"] != c.StopOn {
		t.Errorf("run_info.stopped_by %v", m["run_info"].(map[string]any)["stopped_by"])
	}
}

func TestLiveFlagsRejected(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		edit func(c *cmdline.Config)
		says string
	}{
		{func(c *cmdline.Config) { c.Concurrency = "1,2"; c.ControlAddr = "127.0.0.1:0" }, "--control-addr"},
		{func(c *cmdline.Config) { c.ControlAddr = "nohost" }, "--control-addr"},
		{func(c *cmdline.Config) { c.StopOn = "gpu_temp>90" }, "--stop-on"},
		{func(c *cmdline.Config) {
			c.Concurrency = "1,2"
			c.Search = &cmdline.SearchConfig{SLO: "error_rate:0.1"}
		}, "surge search"},
		{func(c *cmdline.Config) { c.Search = &cmdline.SearchConfig{SLO: "ttft:100"} }, "--slo"},
		{func(c *cmdline.Config) { c.Search = &cmdline.SearchConfig{SLO: "error_rate:0.1", Max: 0.5} }, "--search-max"},
	} {
		c := apptest.RunConfig("127.0.0.1:1", t.TempDir())
		tc.edit(&c)
		_, err := runConfig(context.Background(), c, io.Discard, io.Discard)
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%+v: %v, want a usage error naming %s", c.LiveConfig, err, tc.says)
		}
	}
}
