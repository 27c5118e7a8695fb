package main

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRequestPath is the client's CPU per request of a whole `surge
// profile` run (issue 13, item 6): Poisson arrivals at 800 req/s, answers
// of 8 tokens (the mock's default 20 ms TTFT and 5 ms ITL), the exports
// written. The mock runs in a child process, so this process's CPU time
// (getrusage) is the client's alone, and `-cpuprofile` profiles only the
// client. Start-up (flags, dataset, exports) is paid once per run, not per
// request: cpu-µs/req = (CPU of an n-request run − CPU of a one-request
// run) / (n − 1). startup-cpu-ms and startup-wall-ms are those of a
// one-request run in a fresh process, as a user starts one.
//
//	go test -run '^$' -bench RequestPath -benchtime 3x -cpuprofile cpu.out .
func BenchmarkRequestPath(b *testing.B) {
	url := startMockProcess(b, "--ttft", "20ms", "--itl", "5ms")
	run := func(n int) (cpu, wall time.Duration) {
		cfg := Config{
			Model: "mock", URL: url, EndpointType: "chat", Streaming: true,
			RequestRate: "800", ArrivalPattern: "poisson", RequestCount: n,
			Grace: 10 * time.Second, Timeout: 30 * time.Second, ISL: 128, OSL: 8,
			UI: "none", ArtifactDir: b.TempDir(), Version: "bench", Timestamps: "kernel",
			NoGPUTelemetry: true, NoServerMetrics: true,
		}
		c0, t0 := cpuTime(), time.Now()
		res, err := Run(context.Background(), cfg, io.Discard, io.Discard)
		cpu, wall = cpuTime()-c0, time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		if res.AllFailed() {
			b.Fatal("every request failed")
		}
		return cpu, wall
	}
	const n = 2400 // 3 s at 800 req/s
	// What a run shares with the next (anything parsed once per process)
	// is paid before the timed runs.
	run(1)
	var base, total time.Duration
	for b.Loop() {
		c, _ := run(1)
		base += c
		c, _ = run(n)
		total += c
	}
	b.ReportMetric(float64((total-base).Microseconds())/float64(b.N)/(n-1), "cpu-µs/req")
	cpu, wall := startup(b, url)
	b.ReportMetric(float64(cpu.Microseconds())/1000, "startup-cpu-ms")
	b.ReportMetric(float64(wall.Microseconds())/1000, "startup-wall-ms")
}

// startup runs a one-request `surge profile` in a fresh process and
// returns its CPU and wall time: what every run pays before its first
// request (and after its last), the mock's 55 ms answer included in the
// wall time.
func startup(b *testing.B, url string) (cpu, wall time.Duration) {
	cmd := exec.Command(surgeBinary(b), "profile", "--url", url, "--model", "mock", "--streaming",
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
	cmd := exec.Command(surgeBinary(tb), append([]string{"mock-server", "--port", "0"}, args...)...)
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
