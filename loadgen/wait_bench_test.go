//go:build unix

package loadgen

import (
	"context"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/surgebench/surge/metrics"
)

// wokeSleeper notes when each sleep ended, so the benchmark can tell the
// spin that follows it.
type wokeSleeper struct {
	sleeper
	now  func() int64
	woke int64
}

func (s *wokeSleeper) sleep(d time.Duration) bool {
	ok := s.sleeper.sleep(d)
	s.woke = s.now()
	return ok
}

// BenchmarkWaitUntil is the dispatcher's wait for each send time at
// 1,000 req/s (sends 1 ms apart, nothing else running): the CPU each wait
// costs, the time it spends yielding after its sleep (spin-µs/wait), and
// how late it returns (p50, p99). The lateness is what the scheduler lag
// figures start from; the CPU is what the wait costs a run (on a VM, the
// sleep's wake-up alone can cost tens of microseconds).
func BenchmarkWaitUntil(b *testing.B) {
	col := metrics.NewCollector(metrics.WithShards(1))
	defer col.Close()
	g, err := New("127.0.0.1:1", chat(true), testDataset(b, 1), col)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	wake := &wokeSleeper{sleeper: newSleeper(ctx), now: g.now}
	defer wake.close()
	var late []float64
	var spin int64
	cpu0 := processCPU()
	next := g.now()
	for b.Loop() {
		next += int64(time.Millisecond)
		wake.woke = 0
		if !g.waitUntil(ctx, wake, next) {
			b.Fatal("wait cancelled")
		}
		now := g.now()
		late = append(late, float64(now-next)/1e3)
		if wake.woke > 0 {
			spin += now - wake.woke
		}
	}
	cpu := processCPU() - cpu0
	slices.Sort(late)
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/wait")
	b.ReportMetric(float64(spin)/1e3/float64(b.N), "spin-µs/wait")
	b.ReportMetric(late[len(late)/2], "late-p50-µs")
	b.ReportMetric(late[len(late)*99/100], "late-p99-µs")
}

// processCPU is the process's CPU time (user + system) so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
