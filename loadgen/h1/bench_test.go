//go:build unix

package h1

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain serves the benchmark's server when the test binary runs as its
// child (H1_BENCH_SERVER set), so the benchmark's process CPU is the
// client's alone.
func TestMain(m *testing.M) {
	if os.Getenv("H1_BENCH_SERVER") != "" {
		benchServer()
		return
	}
	os.Exit(m.Run())
}

// benchServer answers every request with 8 SSE events 200 µs apart (each
// arrives in a read of its own, as tokens do from a busy server), prints
// its address and serves until its stdin closes.
func benchServer() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for range 8 {
			time.Sleep(200 * time.Microsecond)
			io.WriteString(w, `data: {"choices":[{"delta":{"content":"tok"}}]}`+"\n\n")
			w.(http.Flusher).Flush()
		}
	}))
}

// BenchmarkRoundTrip is the client's CPU for one streamed exchange on a
// pooled connection (cpu-µs/op, this process's CPU time: the server is a
// child process), on this transport and on net/http's: 8 events, one per
// read. The difference is net/http's hand-offs between its connection
// goroutines and the caller. ns/op is mostly the server's pacing.
//
//	go test -run '^$' -bench RoundTrip -benchmem ./loadgen/h1
func BenchmarkRoundTrip(b *testing.B) {
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), "H1_BENCH_SERVER=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	url := "http://" + strings.TrimSpace(addr) + "/"
	body := strings.Repeat("x", 1024)
	for _, tc := range []struct {
		name string
		rt   http.RoundTripper
	}{
		{"h1", &Transport{}},
		{"net-http", &http.Transport{DisableCompression: true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			client := &http.Client{Transport: tc.rt}
			buf := make([]byte, 4096)
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				for {
					if _, err := resp.Body.Read(buf); err != nil {
						break
					}
				}
				resp.Body.Close()
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
		})
	}
}

// cpuTime is this process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
