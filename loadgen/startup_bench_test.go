package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// BenchmarkStartup is what a plan's size costs before and while it runs:
// from nothing to the first request sent (the dataset loaded, the
// generator made, the plan started), and the process's peak RSS until
// 2,000 requests went out, for request counts of 10³ to 10¹¹ and traces
// of 10² to 10⁶ rows. Requests go to an in-memory server (cannedStream),
// so what is measured is the client's. docs/datasets-limits.md has the
// table; both columns must stay flat in the count. Each case runs once a
// loop; -benchtime 1x is enough.
func BenchmarkStartup(b *testing.B) {
	held := func() *datasets.Dataset { return testDataset(b, 1000) }
	onDemand := func() *datasets.Dataset {
		d, _, err := datasets.Load(datasets.Options{OnDemand: true, Seed: 1,
			Synthetic: datasets.SyntheticOptions{ISL: 512, OSL: 8, Turns: 2, TurnsStddev: 1}})
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	for _, count := range []int{1e3, 1e5, 1e7, 1e9, 1e11} {
		for _, ds := range []struct {
			name string
			make func() *datasets.Dataset
		}{{"held", held}, {"on demand, sampled", onDemand}} {
			b.Run(fmt.Sprintf("count=%.0e/%s", float64(count), ds.name), func(b *testing.B) {
				startup(b, func() (*datasets.Dataset, []Stage) {
					d := ds.make()
					st := Stage{Phase: metrics.Profile, Limit: schedule.Constant(2), Count: count}
					if d.Source != nil {
						st.Pick = datasets.NewSampler(datasets.SampleShuffle, d.Len(), 1).Pick
					}
					return d, []Stage{st}
				})
			})
		}
	}
	dir := b.TempDir()
	for _, rows := range []int{1e2, 1e4, 1e6} {
		file := filepath.Join(dir, fmt.Sprintf("trace%d.jsonl", rows))
		writeTrace(b, file, rows)
		for _, onDemand := range []bool{false, true} {
			b.Run(fmt.Sprintf("trace=%.0e rows/on demand=%v", float64(rows), onDemand), func(b *testing.B) {
				startup(b, func() (*datasets.Dataset, []Stage) {
					return traceRun(b, file, onDemand)
				})
			})
		}
	}
}

// traceRun loads a trace and plans its replay on a fixed schedule.
func traceRun(b *testing.B, file string, onDemand bool) (*datasets.Dataset, []Stage) {
	d, _, err := datasets.Load(datasets.Options{InputFile: file, CustomDatasetType: datasets.TypeMooncake, OnDemand: onDemand})
	if err != nil {
		b.Fatal(err)
	}
	offsets, err := schedule.TraceOffsets(d.Len(), d.Timestamp)
	if err != nil {
		b.Fatal(err)
	}
	replay, err := schedule.Fixed(offsets)
	if err != nil {
		b.Fatal(err)
	}
	return d, []Stage{{Phase: metrics.Profile, Schedule: replay, Conversation: replay.Row, Count: replay.Len()}}
}

// writeTrace writes a Mooncake trace of rows rows, all due at once, of
// prompts of two shared and one own hash id.
func writeTrace(b *testing.B, file string, rows int) {
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range rows {
		fmt.Fprintf(w, `{"timestamp": 0, "input_length": 1400, "output_length": 8, "hash_ids": [%d, %d, %d]}`+"\n", i%7, 7+i%100, 107+i)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// startup times plan() (which loads the dataset) and a generator until its
// first request, then lets 2,000 go out, and reports both with the peak
// RSS.
func startup(b *testing.B, plan func() (*datasets.Dataset, []Stage)) {
	var first, peak float64
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		debug.FreeOSMemory()
		resetPeakRSS(b)
		b.StartTimer()
		start := time.Now()
		d, stages := plan()
		g, err := New("http://127.0.0.1:1", chat(true), d, discard{}, WithTransport(cannedStream{}))
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- g.Run(ctx, stages) }()
		for g.nextIndex.Load() == 0 {
			time.Sleep(50 * time.Microsecond)
		}
		first += time.Since(start).Seconds() * 1000
		ended := false
		for !ended && g.nextIndex.Load() < 2000 {
			select {
			case err := <-done: // a plan of fewer requests
				if err != nil {
					b.Fatal(err)
				}
				ended = true
			case <-time.After(time.Millisecond):
			}
		}
		cancel()
		if !ended {
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		}
		peak += float64(peakRSS(b)) / (1 << 20)
	}
	b.ReportMetric(first/float64(b.N), "ms-to-first-request")
	b.ReportMetric(peak/float64(b.N), "peak-RSS-MiB")
}

// resetPeakRSS starts the kernel's peak RSS (VmHWM) over from now.
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("cannot reset the peak RSS: %v", err)
	}
}

// peakRSS is the process's peak RSS since resetPeakRSS, in bytes.
func peakRSS(b *testing.B) int64 {
	s, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skipf("no peak RSS: %v", err)
	}
	for _, line := range strings.Split(string(s), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	b.Skip("no VmHWM")
	return 0
}
