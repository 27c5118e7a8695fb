//go:build unix

package profile

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"regexp"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/metrics"
)

// BenchmarkRequestPath is the client's CPU per request of a whole `surge
// profile` run (issue 13, item 6): Poisson arrivals at 800 req/s, answers
// of 8 tokens (the mock's default 20 ms TTFT and 5 ms ITL), the exports
// written. The mock runs in a child process, so this process's CPU time
// (getrusage) is the client's alone, and `-cpuprofile` profiles only the
// client. Start-up (flags, dataset, exports) is paid once per run, not per
// request: cpu-µs/req = (CPU of an n-request run − CPU of a one-request
// run) / (n − 1). startup-cpu-ms and startup-wall-ms are those of a
// one-request run in a fresh process, as a user starts one; allocs/req
// counts the heap allocations of the whole process the same way.
//
//	go test -run '^$' -bench RequestPath -benchtime 3x -cpuprofile cpu.out .
func BenchmarkRequestPath(b *testing.B) {
	url := startMockProcess(b, "--ttft", "20ms", "--itl", "5ms")
	perRun(b, 2400, func(n int) cmdline.Config { // 3 s at 800 req/s
		return cmdline.Config{
			Model: "mock", URL: url, EndpointType: "chat", Streaming: true,
			RequestRate: "800", ArrivalPattern: "poisson", RequestCount: n,
			Grace: 10 * time.Second, Timeout: 30 * time.Second, ISL: 128, OSL: 8,
			UI: "none", ArtifactDir: b.TempDir(), Version: "bench",
			NoGPUTelemetry: true, NoServerMetrics: true,
		}
	}, "req")
	cpu, wall := startup(b, url)
	b.ReportMetric(float64(cpu.Microseconds())/1000, "startup-cpu-ms")
	b.ReportMetric(float64(wall.Microseconds())/1000, "startup-wall-ms")
}

// BenchmarkTokenPath is the client's CPU per streamed token when each
// token arrives in its own read (issue 13, items 5 and 7): 64 streams of
// 64 tokens 2 ms apart, identical lengths, so that every step of the mock
// sends one token to each stream in the same millisecond (the burst of a
// continuous-batching server). It counts everything the client does per
// token: the socket read and the netpoller's wake-up, SSE parsing, chunk
// decoding, timestamps, and the records' share. cpu-µs/token = (CPU of
// an n-request run − CPU of a one-request run) / (64 (n − 1)).
func BenchmarkTokenPath(b *testing.B) {
	url := startMockProcess(b, "--ttft", "20ms", "--itl", "2ms")
	perRun(b, 640, func(n int) cmdline.Config {
		return cmdline.Config{
			Model: "mock", URL: url, EndpointType: "chat", Streaming: true,
			Concurrency: "64", RequestCount: n,
			Grace: 10 * time.Second, Timeout: 30 * time.Second, ISL: 128, OSL: 64,
			UI: "none", ArtifactDir: b.TempDir(), Version: "bench",
			NoGPUTelemetry: true, NoServerMetrics: true,
		}
	}, "token")
}

// perRun reports the client's CPU per request ("req") or per output token
// ("token") of runs of n requests, a one-request run's CPU subtracted.
func perRun(b *testing.B, n int, cfg func(n int) cmdline.Config, unit string) {
	var allocs uint64
	run := func(n int) (cpu time.Duration, tokens float64) {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		c0 := cpuTime()
		res, err := runConfig(context.Background(), cfg(n), io.Discard, io.Discard)
		cpu = cpuTime() - c0
		runtime.ReadMemStats(&m1)
		if n > 1 {
			allocs += m1.Mallocs - m0.Mallocs
		} else {
			allocs -= m1.Mallocs - m0.Mallocs
		}
		if err != nil {
			b.Fatal(err)
		}
		if res.AllFailed() {
			b.Fatal("every request failed")
		}
		return cpu, res.Summary.Run[metrics.TotalOutputTokens]
	}
	// What a run shares with the next (anything parsed once per process)
	// is paid before the timed runs.
	run(1)
	allocs = 0
	var cpu time.Duration
	var count float64
	for b.Loop() {
		c1, t1 := run(1)
		cn, tn := run(n)
		cpu += cn - c1
		if unit == "token" {
			count += tn - t1
		} else {
			count += float64(n - 1)
		}
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/1000/count, "cpu-µs/"+unit)
	b.ReportMetric(float64(allocs)/count, "allocs/"+unit)
}

// startup runs a one-request `surge profile` in a fresh process and
// returns its CPU and wall time: what every run pays before its first
// request (and after its last), the mock's 55 ms answer included in the
// wall time. Counting with the server's usage, the run needs none of the
// tokenizer's tables (a run that counts with them parses them, ≈ 0.5 s).
func startup(b *testing.B, url string) (cpu, wall time.Duration) {
	cmd := exec.Command(apptest.SurgeBinary(b), "profile", "--url", url, "--model", "mock", "--streaming",
		"--use-server-token-count",
		"--request-count", "1", "--isl", "128", "--osl", "8", "--ui", "none",
		"--no-gpu-telemetry", "--no-server-metrics", "--output-artifact-dir", b.TempDir())
	t0 := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("surge profile: %v\n%s", err, out)
	}
	wall = time.Since(t0)
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), wall
}

// cpuTime is this process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var mockURL = regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+`)

// startMockProcess runs `surge mock-server` on a free loopback port in a
// child process (stopped when the benchmark ends) and returns its URL.
func startMockProcess(tb testing.TB, args ...string) string {
	tb.Helper()
	cmd := exec.Command(apptest.SurgeBinary(tb), append([]string{"mock-server", "--port", "0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if u := mockURL.FindString(sc.Text()); u != "" {
				found <- u
			}
		}
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(10 * time.Second):
		tb.Fatal("the mock server did not start within 10 s")
		return ""
	}
}
