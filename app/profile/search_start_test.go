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
)

// searchConfig is a short rate search against a mock (50 ms TTFT, 10 ms
// ITL, 8 tokens: 120 ms a request), probes of 1 s at least and at most
// 4 s, so the lowest rate a probe can judge is 40 / 4 = 10 req/s.
func searchConfig(t *testing.T, slo string) (cmdline.Config, string) {
	dir := t.TempDir()
	c := apptest.RunConfig(startMock(t, 0), dir)
	c.Concurrency, c.RequestRate, c.ArrivalPattern, c.RequestCount = "", "1", "constant", 2000
	c.Search = &cmdline.SearchConfig{SLO: slo, MinProbe: time.Second, MaxProbe: 4 * time.Second, MaxProbes: 3, AutoStart: true}
	return c, dir
}

// searchProbes are the probed values of run_info.search.
func searchProbes(t *testing.T, dir string) []float64 {
	t.Helper()
	s := apptest.ReadExport(t, dir)["run_info"].(map[string]any)["search"].(map[string]any)
	var out []float64
	for _, p := range s["probes"].([]any) {
		out = append(out, p.(map[string]any)["value"].(float64))
	}
	return out
}

// With no start given, a pilot of requests one at a time picks it: one
// stream's rate (≈ 8 req/s at 120 ms a request), raised to the lowest rate
// a probe can judge (10 req/s here).
func TestSearchPicksItsStart(t *testing.T) {
	if testing.Short() {
		t.Skip("a search of three probes takes seconds")
	}
	t.Parallel()
	c, dir := searchConfig(t, "time_to_first_token:p95:2000")
	var out, log bytes.Buffer
	if _, err := runConfig(context.Background(), c, &out, &log); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out.String(), log.String())
	}
	if !strings.Contains(log.String(), "search: pilot of 4 requests one at a time") {
		t.Errorf("log does not report the pilot:\n%s", log.String())
	}
	probes := searchProbes(t, dir)
	if len(probes) == 0 || probes[0] < 10 || probes[0] > 40 {
		t.Fatalf("probes %v: want the first at one stream's rate, at least 10 req/s", probes)
	}
	if want := "request_rate from " + num(probes[0]) + " (the pilot's pick)"; !strings.Contains(strings.Join(strings.Fields(out.String()), " "), want) {
		t.Errorf("title does not say %q:\n%s", want, out.String())
	}
	m := apptest.ReadExport(t, dir)
	if n := apptest.RunAvg(t, m, "request_count"); n < 40 {
		t.Errorf("request_count %v: the probes' requests, not the pilot's", n)
	}
}

// A search whose every probe fails ends at the lowest rate it can judge
// with a verdict, not at the controller's bound with an error; a start
// below that rate starts there.
func TestSearchEndsWithAVerdict(t *testing.T) {
	if testing.Short() {
		t.Skip("a search of failing probes takes seconds")
	}
	t.Parallel()
	c, dir := searchConfig(t, "time_to_first_token:p95:1")
	c.RequestRate, c.Search.AutoStart, c.Search.MaxProbes = "0.01", false, 6
	var out, log bytes.Buffer
	if _, err := runConfig(context.Background(), c, &out, &log); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out.String(), log.String())
	}
	if !strings.Contains(log.String(), "--request-rate 0.01 is below 10/s") {
		t.Errorf("log does not say the start was raised:\n%s", log.String())
	}
	probes := searchProbes(t, dir)
	if len(probes) != 1 || probes[0] != 10 {
		t.Errorf("probes %v, want one at 10 req/s (the lowest a probe judges)", probes)
	}
	if want := "capacity: no request rate met the SLOs; lowest tried 10 requests/s (limited by p95(time_to_first_token))"; !strings.Contains(out.String(), want) {
		t.Errorf("console does not say %q:\n%s", want, out.String())
	}
}

// An objective on token timing without --streaming (or on a type that
// does not stream) is a usage error before anything is sent.
func TestSearchNeedsStreamingOnlyForTokenTiming(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		slo, kind string
		streaming bool
		says      string // "": accepted
	}{
		{"time_to_first_token:p95:200", "chat", false, "--slo time_to_first_token needs --streaming"},
		{"inter_token_latency:p99:30 error_rate:0.01", "completions", false, "--slo inter_token_latency needs --streaming"},
		{"time_to_first_token:200", "embeddings", true, "endpoint type embeddings does not stream"},
		{"request_latency:p95:2000 error_rate:0.01", "chat", false, ""},
	} {
		c := apptest.RunConfig("127.0.0.1:1", t.TempDir())
		c.EndpointType, c.Streaming, c.Concurrency = tc.kind, tc.streaming, "1"
		c.Search = &cmdline.SearchConfig{SLO: tc.slo}
		_, err := prepareConfig(c, io.Discard)
		var ue *cmdline.UsageError
		switch {
		case tc.says == "" && err != nil:
			t.Errorf("%s %s: %v", tc.kind, tc.slo, err)
		case tc.says != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), tc.says)):
			t.Errorf("%s %s streaming=%v: %v, want a usage error saying %q", tc.kind, tc.slo, tc.streaming, err, tc.says)
		}
	}
}

// A --search-max under the lowest rate a probe can judge could only end
// in failures for want of samples: refused.
func TestSearchMaxBelowTheLowestJudgedRate(t *testing.T) {
	t.Parallel()
	c := apptest.RunConfig("127.0.0.1:1", t.TempDir())
	c.Concurrency, c.RequestRate = "", "1"
	c.Search = &cmdline.SearchConfig{SLO: "error_rate:0.01", MinProbe: time.Second, Max: 5, AutoStart: true}
	_, err := prepareConfig(c, io.Discard)
	var ue *cmdline.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--search-max 5 is below 10/s") {
		t.Errorf("%v, want a usage error naming --search-max and 10/s", err)
	}
}

func TestPilotStart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lat    []float64
		lowest float64
		want   float64
		ok     bool
	}{
		{nil, 2, 0, false},
		{[]float64{100, 100}, 2, 10, true},       // one stream: 10 req/s
		{[]float64{3000, 5000}, 2, 2, true},      // 0.25 req/s: raised to the lowest judged
		{[]float64{30}, 2, 33.3, true},           // 3 significant digits
		{[]float64{0.0001}, 2, controlMax, true}, // bounded by the controller
	} {
		got, ok := pilotStart(tc.lat, tc.lowest)
		if got != tc.want || ok != tc.ok {
			t.Errorf("pilotStart(%v, %v) = %v, %v; want %v, %v", tc.lat, tc.lowest, got, ok, tc.want, tc.ok)
		}
	}
}
