package telemetry

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// countingServer answers request n (from 1) with body(n).
func countingServer(t *testing.T, body func(n int) string) *httptest.Server {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", promType)
		_, _ = fmt.Fprint(w, body(int(n.Add(1))))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// logs collects Logf lines.
type logs struct {
	mu    sync.Mutex
	lines []string
}

func (l *logs) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

// jsonLines decodes every line of b into T, failing on a malformed one.
func jsonLines[T any](t *testing.T, b []byte) []T {
	t.Helper()
	var out []T
	sc := bufio.NewScanner(bytes.NewReader(b))
	for i := 1; sc.Scan(); i++ {
		var v T
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("line %d %q: %v", i, sc.Text(), err)
		}
		var raw map[string]any
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if ts, _ := raw["timestamp_ns"].(float64); ts < 1e18 {
			t.Fatalf("line %d: timestamp_ns %v is not wall-clock ns", i, raw["timestamp_ns"])
		}
		out = append(out, v)
	}
	return out
}

func TestCollectorRun(t *testing.T) {
	t.Parallel()
	dcgm := countingServer(t, func(n int) string {
		// Request n: n % utilisation, 100·n W, n kJ on the counter.
		return fmt.Sprintf(`# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %%).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="h"} %d
# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-1",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="h"} %d
# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-1",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="h"} %d
`, n, 100*n, n*1_000_000)
	})
	vllm := countingServer(t, func(n int) string {
		return fmt.Sprintf("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} %d\n"+
			"vllm:generation_tokens_total{model_name=\"m\"} %d\n", n, 10*n)
	})
	missing := httptest.NewServer(http.NotFoundHandler())
	defer missing.Close()
	html, err := os.ReadFile("testdata/not_metrics.html")
	if err != nil {
		t.Fatal(err)
	}
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(html)
	}))
	defer page.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()

	var gpuOut, srvOut bytes.Buffer
	var lg logs
	var rounds atomic.Int32
	start := time.Now()
	// A scrape timeout above the interval: on a loaded machine a healthy
	// source can take longer than 50 ms to answer, and the test is about
	// which sources fail, not how fast the good ones are.
	c := New(Interval(50*time.Millisecond), Timeout(5*time.Second), Start(start), Logf(lg.logf),
		GPU(DCGM(dcgm.URL+"/metrics", dcgm.Client()), DCGM(gone.URL+"/metrics", nil)),
		ServerMetrics(vllm.URL+"/metrics", missing.URL+"/metrics", page.URL+"/metrics"),
		GPUSink(&gpuOut), ServerSink(&srvOut),
		OnSample(func(g []GPUSample, s []ServerSample) { rounds.Add(1) }))
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}

	// The lines are AIPerf's records (TestAIPerfRecordShapes), surge's
	// sample beside under "surge".
	gpus := surgeOf(jsonLines[gpuRecord](t, gpuOut.Bytes()), func(r gpuRecord) GPUSample { return r.Surge })
	srvRecs := jsonLines[serverRecord](t, srvOut.Bytes())
	servers := surgeOf(srvRecs, func(r serverRecord) ServerSample { return r.Surge })
	if d := cmp.Diff(c.GPUSamples(), gpus, cmpopts.EquateNaNs()); d != "" {
		t.Errorf("GPU JSONL differs from samples (-kept +file):\n%s", d)
	}
	for _, s := range srvRecs {
		if len(s.Metrics) != 2 {
			t.Fatalf("JSONL line with %d families, want the server's 2", len(s.Metrics))
		}
	}
	// The kept samples drop their families; the file has them.
	if d := cmp.Diff(c.ServerSamples(), servers, cmpopts.EquateNaNs(), cmpopts.IgnoreFields(ServerSample{}, "Families")); d != "" {
		t.Errorf("server JSONL differs from samples (-kept +file):\n%s", d)
	}
	// 500 ms at 50 ms: ≈ 11 rounds, plus the GPU's closing read; a
	// loaded machine misses ticks (a round that overruns skips them).
	m, n := len(gpus), len(servers)
	if m < 3 || n < 2 || m > 13 || n > 12 {
		t.Fatalf("%d GPU and %d server samples from 500 ms at 50 ms", m, n)
	}
	// GPU readings and server scrapes run in loops of their own: their
	// counts need not match.
	if !slices.IsSortedFunc(gpus, func(a, b GPUSample) int { return int(a.At - b.At) }) || gpus[0].At < 0 || gpus[m-1].At > 3*time.Second {
		t.Errorf("At offsets out of order or range: first %v last %v", gpus[0].At, gpus[m-1].At)
	}
	// GPU rounds and server scrapes report apart.
	if got := int(rounds.Load()); got != m+n {
		t.Errorf("OnSample called %d times, want %d", got, m+n)
	}

	// Request k gave value k; a scrape cut off by the run's end may skip
	// one, so the expected statistics come from the values in the file.
	sum := c.Summary()
	util := make([]float64, m)
	for i, s := range gpus {
		util[i] = s.SMUtil
	}
	running := make([]float64, n)
	for i, s := range servers {
		running[i] = s.Running
	}
	if !slices.IsSorted(util) || util[0] != 1 || !slices.IsSorted(running) || running[0] != 1 {
		t.Fatalf("values not the servers' counts in order: %v %v", util, running)
	}
	mean := func(v []float64) float64 {
		t := 0.0
		for _, x := range v {
			t += x
		}
		return t / float64(len(v))
	}
	// p50 and p99 by linear interpolation between closest ranks.
	pct := func(v []float64, p float64) float64 {
		r := p / 100 * float64(len(v)-1)
		lo := int(r)
		if lo+1 >= len(v) {
			return v[lo]
		}
		return v[lo] + (v[lo+1]-v[lo])*(r-float64(lo))
	}
	// AIPerf's shape: endpoint (the exporter without scheme and /metrics)
	// → gpu_<index> → metric; the broken exporter answered nothing.
	if c, s := sum.Summary.Configured, sum.Summary.Successful; len(c) != 2 || len(s) != 1 || s[0] != EndpointName(dcgm.URL) {
		t.Errorf("endpoints configured %v, successful %v", c, s)
	}
	g := sum.Endpoints[EndpointName(dcgm.URL)].GPUs["gpu_0"]
	if g.UUID != "GPU-1" || g.Hostname == nil || *g.Hostname != "h" {
		t.Errorf("GPU %+v", g)
	}
	wantGPU := map[string]Stats{
		"nvidia_gpu_utilization": {Unit: "%", Avg: mean(util), Min: util[0], Max: util[m-1], P50: pct(util, 50), P99: pct(util, 99), Count: m},
		"nvidia_power_usage": {Unit: "W", Avg: 100 * mean(util), Min: 100 * util[0], Max: 100 * util[m-1],
			P50: 100 * pct(util, 50), P99: 100 * pct(util, 99), Count: m},
		"nvidia_energy_consumption": {Unit: "MJ", Avg: mean(util) / 1e3, Min: util[0] / 1e3, Max: util[m-1] / 1e3,
			P50: pct(util, 50) / 1e3, P99: pct(util, 99) / 1e3, Count: m},
	}
	if d := cmp.Diff(wantGPU, g.Metrics, cmpopts.EquateApprox(1e-9, 0),
		cmpopts.IgnoreFields(Stats{}, "P1", "P5", "P10", "P25", "P75", "P90", "P95", "Std")); d != "" {
		t.Errorf("GPU stats (-want +got):\n%s", d)
	}
	wantJ := (util[m-1] - util[0]) * 1000
	if g.EnergyJ == nil || math.Abs(*g.EnergyJ-wantJ) > 1e-6 || g.EnergySource != EnergyCounter {
		t.Errorf("GPU energy %v (%s), want %v J from the counter", g.EnergyJ, g.EnergySource, wantJ)
	}
	if e, ok := c.EnergyJoules(); !ok || math.Abs(e-wantJ) > 1e-6 {
		t.Errorf("EnergyJoules = %v, %v, want %v", e, ok, wantJ)
	}
	sv := sum.Servers[vllm.URL+"/metrics"]
	wantRunning := Stats{Unit: "requests", Avg: mean(running), Min: running[0], Max: running[n-1],
		P50: pct(running, 50), P99: pct(running, 99), Count: n}
	if d := cmp.Diff(wantRunning, sv.Metrics["num_requests_running"], cmpopts.EquateApprox(1e-9, 0),
		cmpopts.IgnoreFields(Stats{}, "P1", "P5", "P10", "P25", "P75", "P90", "P95", "Std")); d != "" {
		t.Errorf("running stats (-want +got):\n%s", d)
	}
	if want := 10 * (running[n-1] - running[0]); sv.GenerationTokens == nil || *sv.GenerationTokens != want {
		t.Errorf("generation tokens %v, want %v", sv.GenerationTokens, want)
	}
	if got := sv.Series[`vllm:generation_tokens_total{model_name="m"}`]; got.Type != "counter" || got.Delta == nil || float64(*got.Delta) != 10*(running[n-1]-running[0]) {
		t.Errorf("series summary %+v", sv.Series)
	}
	if len(sum.Servers) != 1 || len(sum.Endpoints) != 1 {
		t.Errorf("summary has %d servers and %d GPU endpoints, want 1 and 1", len(sum.Servers), len(sum.Endpoints))
	}

	// The three broken endpoints, once each.
	lg.mu.Lock()
	defer lg.mu.Unlock()
	want := []string{
		"GPU telemetry: " + gone.URL + "/metrics: ",
		"server metrics: " + missing.URL + "/metrics: HTTP 404 Not Found, skipped",
		"server metrics: " + page.URL + "/metrics: not Prometheus text (Content-Type text/html), skipped",
	}
	// A healthy source that answers slowly on a loaded machine logs a note
	// about its interval; that depends on the machine, not on the sources.
	lines := slices.DeleteFunc(slices.Clone(lg.lines), func(l string) bool { return strings.Contains(l, " longer than the ") })
	if len(lines) != len(want) {
		t.Fatalf("logged %d lines, want %d:\n%s", len(lines), len(want), strings.Join(lg.lines, "\n"))
	}
	// Each source reports from its own goroutine: in any order.
	for _, w := range want {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, w) && strings.HasSuffix(l, ", skipped") }) {
			t.Errorf("logs %q, want one %q…, skipped", lg.lines, w)
		}
	}
}

// TestCollectorBoundsSlowScrape: a scrape past the server timeout fails,
// and a source that never answered is skipped for the rest of the run.
func TestCollectorBoundsSlowScrape(t *testing.T) {
	t.Parallel()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	var lg logs
	c := New(Interval(50*time.Millisecond), ServerTimeout(80*time.Millisecond), Logf(lg.logf), ServerMetrics(slow.URL))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	begin := time.Now()
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > 3*time.Second { // the server holds 5 s
		t.Errorf("Run took %v with a 50 ms interval", d)
	}
	if len(lg.lines) != 1 || lg.lines[0] != "server metrics: "+slow.URL+": timed out, skipped" {
		t.Errorf("logs %q", lg.lines)
	}
}

func TestCollectorRetriesAfterSuccess(t *testing.T) {
	t.Parallel()
	// Answers, then fails twice, then answers again.
	srv := countingServer(t, func(n int) string {
		if n == 2 || n == 3 {
			return "<html>"
		}
		return "vllm:num_requests_running 1\n"
	})
	var lg logs
	var got []ServerSample
	src := Server(srv.URL, srv.Client())
	c := New(Interval(time.Hour), Logf(lg.logf), ServerSources(src))
	sst := []tracked{{name: srv.URL}}
	for range 5 {
		c.scrapeServer(context.Background(), time.Hour, &sst[0], src)
	}
	got = c.ServerSamples()
	if len(got) != 3 || sst[0].off {
		t.Errorf("%d samples (off=%v), want 3 kept scraping", len(got), sst[0].off)
	}
	if len(lg.lines) != 1 || !strings.Contains(lg.lines[0], "retrying") {
		t.Errorf("logs %q, want one retrying notice", lg.lines)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestCollectorSinkError(t *testing.T) {
	t.Parallel()
	srv := serveFile(t, "vllm.txt", promType)
	c := New(Interval(20*time.Millisecond), ServerMetrics(srv.URL), ServerSink(failingWriter{}))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Millisecond)
	defer cancel()
	err := c.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Run = %v, want the sink's error", err)
	}
	if len(c.ServerSamples()) == 0 {
		t.Error("samples not kept after the sink failed")
	}
}

func TestCollectorNoSources(t *testing.T) {
	t.Parallel()
	c := New()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if c.Summary() != nil {
		t.Error("summary without samples is not nil")
	}
	if _, ok := c.EnergyJoules(); ok {
		t.Error("energy known without samples")
	}
}

// roundTripCounter counts the requests a client sends.
type roundTripCounter struct{ n atomic.Int64 }

func (c *roundTripCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// TestCollectorSourcesAndClient: sources built from plain functions
// (GPUSourceFunc, ServerSourceFunc) are sampled each round next to URLs,
// which go through the HTTPClient given.
func TestCollectorSourcesAndClient(t *testing.T) {
	t.Parallel()
	vllm := countingServer(t, func(n int) string {
		return fmt.Sprintf("vllm:num_requests_running{model_name=\"m\"} %d\n", n)
	})
	var gpuCalls, srvCalls atomic.Int64
	gpu := GPUSourceFunc(func(context.Context) ([]GPUSample, error) {
		gpuCalls.Add(1)
		return []GPUSample{{Index: 0, UUID: "GPU-f", SMUtil: 50}}, nil
	})
	srv := ServerSourceFunc(func(context.Context) (ServerSample, error) {
		srvCalls.Add(1)
		return ServerSample{URL: "func://server", Running: 7}, nil
	})
	rt := &roundTripCounter{}
	c := New(Interval(20*time.Millisecond), Timeout(5*time.Second), GPU(gpu), ServerSources(srv),
		HTTPClient(&http.Client{Transport: rt}), ServerMetrics(vllm.URL+"/metrics"))
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if gpuCalls.Load() < 2 || srvCalls.Load() < 1 || rt.n.Load() < 1 {
		t.Fatalf("GPU func %d calls, server func %d, client %d requests; want each used", gpuCalls.Load(), srvCalls.Load(), rt.n.Load())
	}
	var funcSeen, urlSeen bool
	for _, s := range c.ServerSamples() {
		funcSeen = funcSeen || s.URL == "func://server" && s.Running == 7
		urlSeen = urlSeen || s.URL == vllm.URL+"/metrics"
	}
	if !funcSeen || !urlSeen || len(c.GPUSamples()) == 0 {
		t.Errorf("samples: server func %v, URL %v, %d GPU", funcSeen, urlSeen, len(c.GPUSamples()))
	}
}

// TestServerIntervalApartFromGPUs: --server-metrics-interval runs the
// scrapes on their own period, next to the GPUs' one.
func TestServerIntervalApartFromGPUs(t *testing.T) {
	t.Parallel()
	var gpuCalls, srvCalls atomic.Int64
	gpu := GPUSourceFunc(func(context.Context) ([]GPUSample, error) {
		gpuCalls.Add(1)
		return []GPUSample{{UUID: "GPU-1"}}, nil
	})
	srv := ServerSourceFunc(func(context.Context) (ServerSample, error) {
		srvCalls.Add(1)
		return ServerSample{URL: "func://s"}, nil
	})
	c := New(Interval(time.Hour), ServerInterval(20*time.Millisecond), GPU(gpu), ServerSources(srv))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	// GPUs: the first round and the closing read; servers: every 20 ms
	// (a loaded machine skips ticks, so only "several").
	if g, s := gpuCalls.Load(), srvCalls.Load(); g != 2 || s < 4 {
		t.Errorf("%d GPU reads and %d server scrapes in 300 ms, want 2 (hourly) and several (every 20 ms)", g, s)
	}
}

// TestCollectorKeepsLateScrapes: a server that answers /metrics in 150 ms,
// scraped every 20 ms (llama.cpp under load answers in seconds, scraped
// every second). Each answer is kept, stamped with when it came, and the
// ticks while a scrape is in flight start no other: the server never sees
// two scrapes at once.
func TestCollectorKeepsLateScrapes(t *testing.T) {
	t.Parallel()
	const delay = 150 * time.Millisecond
	var inFlight, most atomic.Int64
	var asked sync.Mutex
	var askedAt []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		asked.Lock()
		askedAt = append(askedAt, time.Now())
		asked.Unlock()
		time.Sleep(delay)
		fmt.Fprintln(w, "llamacpp:requests_processing 4\nllamacpp:requests_deferred 3")
	}))
	defer srv.Close()
	var lg logs
	start := time.Now()
	c := New(Interval(20*time.Millisecond), Start(start), Logf(lg.logf), ServerSources(Server(srv.URL, srv.Client())))
	ctx, cancel := context.WithTimeout(context.Background(), 800*time.Millisecond)
	defer cancel()
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	got := c.ServerSamples()
	if len(got) < 2 {
		t.Fatalf("%d samples in 800 ms of 150 ms scrapes, want several", len(got))
	}
	if most.Load() != 1 {
		t.Errorf("%d scrapes in flight at once, want 1 (skipped, not stacked)", most.Load())
	}
	asked.Lock()
	defer asked.Unlock()
	for i, s := range got {
		// Stamped at the answer: at least the server's delay after the
		// request it answered.
		if ask := askedAt[i].Sub(start); s.At < ask+delay || s.Took < delay {
			t.Errorf("sample %d at %v took %v; asked at %v: want the answer's time, ≥ %v later", i, s.At, s.Took, ask, delay)
		}
		if s.Running != 4 || s.Waiting != 3 {
			t.Errorf("sample %d: running %v waiting %v, want 4 and 3", i, s.Running, s.Waiting)
		}
	}
	if n := c.SkippedScrapes()[srv.URL]; n < 2 {
		t.Errorf("%d ticks skipped, want several (a 150 ms scrape spans 7 ticks of 20 ms)", n)
	}
	if len(lg.lines) != 1 || !strings.Contains(lg.lines[0], "longer than the 20ms interval") {
		t.Errorf("logs %q, want one notice of the slow answers", lg.lines)
	}
}

// surgeOf takes surge's samples out of AIPerf's records.
func surgeOf[R, S any](recs []R, f func(R) S) []S {
	out := make([]S, len(recs))
	for i, r := range recs {
		out[i] = f(r)
	}
	return out
}

// TestServerScrapedAtTheEnd: a run shorter than the scrape interval still
// gets its counters' increase: the server is scraped once more as the run
// ends (it was scraped only at the start before).
func TestServerScrapedAtTheEnd(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	srv := ServerSourceFunc(func(ctx context.Context) (ServerSample, error) {
		// An answer that takes a moment, as over HTTP: the scrape's
		// context must outlive it.
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return ServerSample{}, ctx.Err()
		}
		// 10 more tokens each scrape: 10 at the start, 20 at the end.
		v := float64(10 * n.Add(1))
		return ServerSample{URL: "func://s", Families: []Family{{Name: "vllm:generation_tokens_total", Type: TypeCounter,
			Samples: []Sample{{Value: v}}}}}, nil
	})
	c := New(ServerInterval(time.Hour), ServerSources(srv))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if k := len(c.ServerSamples()); k != 2 {
		t.Fatalf("%d scrapes, want the first and the closing one", k)
	}
	st := c.ServerExport().Metrics["vllm:generation_tokens_total"].Series[0].Stats
	if st.Total == nil || *st.Total != 10 {
		t.Errorf("counter total %v, want the 10 between the run's first and closing scrapes", st.Total)
	}
}

// TestInterruptedRunNotHeldByTheInterval: the closing GPU reading waits at
// most finalScrapeTimeout, whatever the interval: with a stalled source and
// an interval of an hour, an interrupted run ends within seconds.
func TestInterruptedRunNotHeldByTheInterval(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	gpu := GPUSourceFunc(func(ctx context.Context) ([]GPUSample, error) {
		calls.Add(1)
		<-ctx.Done() // a source that never answers
		return nil, ctx.Err()
	})
	c := New(Interval(time.Hour), GPU(gpu))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	for calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(finalScrapeTimeout + 20*time.Second): // margin for a loaded machine
		t.Fatal("Run still waiting on a stalled source after its context ended")
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d readings, want the first and the closing one", n)
	}
}
