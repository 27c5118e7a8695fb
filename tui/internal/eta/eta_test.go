package eta

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// stageRun is one simulated stage: when each of its requests completes,
// in seconds from the stage's start, and when the stage ends.
type stageRun struct {
	completions []float64
	end         float64
}

// closedLoop simulates n requests at concurrency c against a server whose
// latency at concurrency c is lat(c), ±20% per request.
func closedLoop(rng *rand.Rand, n, c int, lat func(float64) float64) stageRun {
	slots := make([]float64, c) // when each slot is next free
	var done []float64
	for range n {
		sort.Float64s(slots)
		end := slots[0] + lat(float64(c))*(0.8+0.4*rng.Float64())
		slots[0] = end
		done = append(done, end)
	}
	sort.Float64s(done)
	return stageRun{done, done[len(done)-1]}
}

// openLoop simulates n requests sent at rate r/s to a server that
// completes at most capacity/s, each after a latency of lat seconds.
func openLoop(n int, r, capacity, lat float64) stageRun {
	var done []float64
	free := 0.0
	for i := range n {
		send := float64(i) / r
		start := max(send, free)
		free = start + 1/capacity
		done = append(done, free+lat)
	}
	return stageRun{done, done[len(done)-1]}
}

// timed simulates a stage bounded by d seconds at concurrency c.
func timed(d float64, c int, lat float64) stageRun {
	var done []float64
	for t := lat; t <= d; t += lat {
		for range c {
			done = append(done, t)
		}
	}
	return stageRun{done, d}
}

// TestLeftWithinAQuarter drives the tracker with synthetic progress for
// sweeps whose stages run at very different speeds, and checks that from
// the first 10% of the run on, the time left is within 25% of the truth
// (plus one second, for the last seconds of a run). Each run is many
// request latencies long: in its first latency nothing has finished, so
// a run only ten latencies long has nothing to go on at 10%.
func TestLeftWithinAQuarter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sat := func(a, b float64) func(float64) float64 { return func(c float64) float64 { return a + b*c } }
	tests := []struct {
		name   string
		mode   string
		plan   []Stage
		stages []stageRun
	}{
		{"concurrency 1,2,4,8 x40, flat latency", Concurrency,
			[]Stage{{1, 40, 0}, {2, 40, 0}, {4, 40, 0}, {8, 40, 0}},
			[]stageRun{closedLoop(rng, 40, 1, sat(0.5, 0)), closedLoop(rng, 40, 2, sat(0.5, 0)), closedLoop(rng, 40, 4, sat(0.5, 0)), closedLoop(rng, 40, 8, sat(0.5, 0))}},
		{"concurrency 1,2,4,8 x40, saturating", Concurrency,
			[]Stage{{1, 40, 0}, {2, 40, 0}, {4, 40, 0}, {8, 40, 0}},
			[]stageRun{closedLoop(rng, 40, 1, sat(0.5, 0.04)), closedLoop(rng, 40, 2, sat(0.5, 0.04)), closedLoop(rng, 40, 4, sat(0.5, 0.04)), closedLoop(rng, 40, 8, sat(0.5, 0.04))}},
		{"concurrency 1,4,16,64 default counts", Concurrency,
			[]Stage{{1, 10, 0}, {4, 10, 0}, {16, 32, 0}, {64, 128, 0}},
			[]stageRun{closedLoop(rng, 10, 1, sat(0.2, 0.002)), closedLoop(rng, 10, 4, sat(0.2, 0.002)), closedLoop(rng, 32, 16, sat(0.2, 0.002)), closedLoop(rng, 128, 64, sat(0.2, 0.002))}},
		{"request rate 2,4,8 past capacity 6", RequestRate,
			[]Stage{{2, 40, 0}, {4, 40, 0}, {8, 40, 0}},
			[]stageRun{openLoop(40, 2, 6, 0.3), openLoop(40, 4, 6, 0.3), openLoop(40, 8, 6, 0.3)}},
		{"concurrency 1,2,4 for 20 s each", Concurrency,
			[]Stage{{1, 0, 20 * time.Second}, {2, 0, 20 * time.Second}, {4, 0, 20 * time.Second}},
			[]stageRun{timed(20, 1, 0.4), timed(20, 2, 0.45), timed(20, 4, 0.5)}},
		{"one stage of 200", Concurrency, []Stage{{8, 200, 0}}, []stageRun{closedLoop(rng, 200, 8, sat(0.4, 0.01))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var total float64
			for _, s := range tt.stages {
				total += s.end
			}
			tr := New(tt.mode, tt.plan)
			var done []Done
			var base float64 // the current stage's start, in run seconds
			var finished int64
			worst, checks := 0.0, 0
			const tick = 0.1 // the dashboard gets a snapshot every 100 ms
			for i, s := range tt.stages {
				k := 0
				for at := 0.0; at < s.end; at += tick {
					for k < len(s.completions) && s.completions[k] <= at {
						k++
					}
					p := Progress{Elapsed: secs(base + at), Finished: finished + int64(k), Stage: i, Profile: true}
					tr = tr.Observe(p)
					now := base + at
					if now < 0.1*total {
						continue
					}
					left, ok := tr.Left(p, done)
					truth := total - now
					if !ok {
						t.Fatalf("at %.1fs of %.1fs: no estimate", now, total)
					}
					err := math.Abs(left.Seconds() - truth)
					if truth > 5 {
						worst = max(worst, err/truth)
					}
					checks++
					if err > 0.25*truth+1 {
						t.Errorf("at %.1fs of %.1fs (stage %d): ETA %.1fs, truth %.1fs", now, total, i+1, left.Seconds(), truth)
					}
				}
				finished += int64(len(s.completions))
				done = append(done, Done{Requests: int64(len(s.completions)), Seconds: s.end})
				base += s.end
			}
			t.Logf("run %.1fs, %d checks, worst relative error %.0f%% (while over 5 s were left)", total, checks, 100*worst)
		})
	}
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func TestStartsAndWarmup(t *testing.T) {
	tr := New(Concurrency, []Stage{{1, 10, 0}, {2, 10, 0}})
	if _, ok := tr.Left(Progress{Elapsed: time.Second, Profile: false}, nil); ok {
		t.Errorf("an estimate during warm-up")
	}
	tr = tr.Observe(Progress{Elapsed: 3 * time.Second, Profile: false})
	tr = tr.Observe(Progress{Elapsed: 4 * time.Second, Profile: true})
	tr = tr.Observe(Progress{Elapsed: 5 * time.Second, Profile: true})
	tr = tr.Observe(Progress{Elapsed: 9 * time.Second, Finished: 10, Stage: 1, Profile: true})
	got := tr.Starts()
	if got[0] != 4*time.Second || got[1] != 9*time.Second {
		t.Errorf("Starts = %v, want [4s 9s]", got)
	}
	if _, ok := tr.Left(Progress{Elapsed: 4 * time.Second, Profile: true}, nil); ok {
		t.Errorf("an estimate before any request finished")
	}
	// 5 of the first 10 in 5 s: 1/s; the second stage at concurrency 2
	// should run at 2/s: 5 s + 5 s left.
	left, ok := tr.Left(Progress{Elapsed: 9 * time.Second, Finished: 5, Profile: true}, nil)
	if !ok || left != 10*time.Second {
		t.Errorf("Left = %v %v, want 10s", left, ok)
	}
}
