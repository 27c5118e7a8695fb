package profile

import (
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/loadgen/schedule"
)

// firstGaps is the gaps between a schedule's first n+1 sends.
func firstGaps(s schedule.Schedule, n int) []time.Duration {
	var out []time.Duration
	prev, _ := s.Next()
	for range n {
		at, _ := s.Next()
		out = append(out, at-prev)
		prev = at
	}
	return out
}

// TestWarmupShapePlan: AIPerf's warmup flags shape the warmup stage: its
// sessions, its arrival pattern (under its own rate or the profile's),
// its ramps and its drain.
func TestWarmupShapePlan(t *testing.T) {
	t.Parallel()
	ds := &datasets.Dataset{Name: "synthetic", Conversations: []datasets.Conversation{{ID: "a", Turns: []datasets.Turn{{Text: "x"}}}}}
	plan := func(mod func(c *cmdline.Config)) *plan {
		t.Helper()
		c := cmdline.Config{Model: "m", ISL: 8, Timeout: time.Second, ArrivalPattern: "poisson", Smoothness: 1}
		mod(&c)
		p, err := planOf(&c, ds)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	w := plan(func(c *cmdline.Config) { c.WarmupSessions, c.Concurrency = 4, "2" }).stages[0]
	if w.SessionCount != 4 || w.Count != 0 {
		t.Errorf("--num-warmup-sessions 4: sessions %d, count %d", w.SessionCount, w.Count)
	}
	w = plan(func(c *cmdline.Config) {
		c.WarmupCount, c.Concurrency, c.WarmupConcurrencyRamp = 9, "8", 2*time.Second
	}).stages[0]
	if w.Limit(0) != 1 || w.Limit(2*time.Second) != 8 {
		t.Errorf("--warmup-concurrency-ramp-duration 2: limit %d at the start, %d after 2 s; want 1 and 8", w.Limit(0), w.Limit(2*time.Second))
	}
	w = plan(func(c *cmdline.Config) { c.WarmupCount, c.WarmupRate, c.WarmupPattern = 9, 20, "constant" }).stages[0]
	for _, g := range firstGaps(w.Schedule, 5) {
		if g != 50*time.Millisecond {
			t.Errorf("--warmup-arrival-pattern constant at 20/s: gaps %v, want 50 ms each", firstGaps(w.Schedule, 5))
			break
		}
	}
	// A rate profile's warmup with a pattern of its own runs open loop at
	// the profile's rate.
	w = plan(func(c *cmdline.Config) { c.WarmupCount, c.RequestRate, c.WarmupPattern = 9, "10", "constant" }).stages[0]
	if w.Schedule == nil || firstGaps(w.Schedule, 1)[0] != 100*time.Millisecond {
		t.Errorf("--warmup-arrival-pattern under --request-rate 10: schedule %v", w.Schedule)
	}
	ramped := plan(func(c *cmdline.Config) {
		c.WarmupCount, c.WarmupRate, c.WarmupPattern, c.WarmupRateRamp = 9, 20, "constant", 2*time.Second
	}).stages[0]
	if g := firstGaps(ramped.Schedule, 1)[0]; g <= 50*time.Millisecond {
		t.Errorf("--warmup-request-rate-ramp-duration 2: first gap %v, want longer than the target's 50 ms", g)
	}
	w = plan(func(c *cmdline.Config) { c.WarmupCount, c.Concurrency, c.WarmupGrace = 3, "2", "0.5" }).stages[0]
	if !w.Drain || w.DrainGrace != 500*time.Millisecond {
		t.Errorf("--warmup-grace-period 0.5: drain %v within %s", w.Drain, w.DrainGrace)
	}
	w = plan(func(c *cmdline.Config) { c.WarmupCount, c.Concurrency, c.WarmupGrace = 3, "2", "inf" }).stages[0]
	if !w.Drain || w.DrainGrace != time.Duration(math.MaxInt64) {
		t.Errorf("--warmup-grace-period inf: drain %v within %s", w.Drain, w.DrainGrace)
	}
}

// TestWarmupShapeRefused: each shape flag without a warmup, or without
// the load it shapes, is refused naming it.
func TestWarmupShapeRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--warmup-grace-period", "1"}, "--warmup-grace-period shapes the warmup"},
		{[]string{"--num-warmup-sessions", "-1"}, "--num-warmup-sessions must be ≥ 1"},
		{[]string{"--warmup-request-count", "3", "--warmup-arrival-pattern", "constant"}, "--warmup-arrival-pattern shapes a warmup under a rate"},
		{[]string{"--warmup-request-count", "3", "--warmup-request-rate", "5", "--warmup-arrival-pattern", "wavy"}, "want constant, poisson or gamma"},
		{[]string{"--warmup-request-count", "3", "--warmup-request-rate-ramp-duration", "2"}, "ramps a warmup under a rate"},
		{[]string{"--warmup-request-count", "3", "--warmup-concurrency-ramp-duration", "2"}, "give --warmup-concurrency or --concurrency"},
		{[]string{"--warmup-request-count", "3", "--warmup-prefill-concurrency-ramp-duration", "2"}, "give --warmup-prefill-concurrency or --prefill-concurrency"},
		{[]string{"--warmup-duration", "1", "--concurrency", "2", "--warmup-concurrency-ramp-duration", "3"}, "longer than the run's duration"},
		{[]string{"--warmup-request-count", "3", "--warmup-grace-period", "-1"}, "--warmup-grace-period \"-1\""},
	} {
		err := refusal(append(tc.args, "--ui", "none"), func(c cmdline.Config) error {
			_, err := prepareConfig(c, io.Discard)
			return err
		})
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error saying %q", tc.args, err, tc.want)
		}
	}
}

// TestWarmupGraceEndToEnd: with --warmup-grace-period the profile waits
// for the warmup to drain, and a warmup request still running the grace
// after the warmup stops issuing is cancelled: the profile's requests
// reach a server answering in 500 ms long before the warmup's would have
// finished. With --num-warmup-sessions the warmup sends whole sessions.
func TestWarmupGraceEndToEnd(t *testing.T) {
	t.Parallel()
	s := traceRun(t, 500*time.Millisecond, "--concurrency", "2", "--request-count", "2", "--warmup-request-count", "2", "--warmup-grace-period", "0.05", "--isl", "8", "--osl", "2")
	if at := s.arrivals(); len(at) != 4 || at[2] > 300*time.Millisecond {
		t.Errorf("arrivals %v: want the profile's first well before the warmup's 500 ms replies", at)
	}
	s = traceRun(t, 0, "--concurrency", "1", "--request-count", "1", "--num-warmup-sessions", "3", "--conversation-turn-mean", "2", "--isl", "8", "--osl", "2")
	if n := len(s.arrivals()); n != 3*2+1 {
		t.Errorf("%d requests, want 3 warmup sessions of 2 turns and 1 profile request", n)
	}
}
