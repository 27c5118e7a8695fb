package mockserver

import (
	"context"
	"flag"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

var openStreams = flag.Int("open-streams", 1000, "streams TestManyOpenStreams holds open (try 10000 with ulimit -n ≥ 25000)")

// TestManyOpenStreams holds many idle streams open (ITL one hour) and
// checks they cost the server a goroutine and a timer each, not CPU:
// the process stays nearly idle while they are open.
func TestManyOpenStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("opens many sockets")
	}
	n := *openStreams
	// Client and server share this process: two descriptors a stream.
	if lim := fdLimit(); lim > 0 && 2*n > lim-256 {
		n = (lim - 256) / 2
		t.Logf("open-file limit %d: holding %d streams", lim, n)
	}
	s, ts := newTestServer(t, Config{ITL: time.Hour})
	tr := &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: n, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()

	var wg sync.WaitGroup
	opened := make(chan error, n)
	for range n {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/v1/completions",
				strings.NewReader(`{"prompt":"x","stream":true,"max_tokens":2}`))
			resp, err := client.Do(req)
			if err != nil {
				opened <- err
				return
			}
			defer resp.Body.Close()
			_, err = resp.Body.Read(make([]byte, 512)) // the first token
			opened <- err
			<-ctx.Done()
		})
	}
	for range n {
		if err := <-opened; err != nil {
			cancel()
			wg.Wait()
			t.Fatalf("opening stream: %v", err)
		}
	}
	if st := s.Stats(); st.Running != int64(n) {
		t.Errorf("running = %d, want %d", st.Running, n)
	}

	// Idle check: over 200 ms the whole process (client side included)
	// should burn far less than one core.
	cpu0 := processCPU()
	time.Sleep(200 * time.Millisecond)
	busy := processCPU() - cpu0
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	perStream := (int64(after.HeapInuse+after.StackInuse) - int64(before.HeapInuse+before.StackInuse)) / int64(n)
	t.Logf("%d open streams: %d goroutines (client and server), %d B heap+stack per stream (both sides), %v CPU in 200ms idle",
		n, runtime.NumGoroutine()-g0, perStream, busy)
	if busy > 100*time.Millisecond {
		t.Errorf("idle open streams used %v CPU in 200ms", busy)
	}
	cancel()
	wg.Wait()
}
