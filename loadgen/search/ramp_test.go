package search

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"
)

// fakeClock advances by one window each probe.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// capacityProber passes a window at or under capacity, with the p95
// TTFT a queue model gives: 50 ms under the capacity, growing above it;
// each window takes a minute of the fake clock. flaky fails the listed
// windows (by index) whatever the value.
type capacityProber struct {
	capacity float64
	clock    *fakeClock
	flaky    map[int]bool
	n        int
}

func (p *capacityProber) Probe(_ context.Context, v float64) (Probe, error) {
	p.clock.t = p.clock.t.Add(time.Minute)
	ttft := 50 + 10*v/p.capacity
	if v > p.capacity {
		ttft = 200 * v / p.capacity
	}
	verdict := Pass
	if v > p.capacity || p.flaky[p.n] {
		verdict = Fail
	}
	p.n++
	return Probe{Value: v, Judgement: Judgement{Verdict: verdict, Observed: map[string]float64{"p95(time_to_first_token)": ttft},
		Limiting: "p95(time_to_first_token)"}}, nil
}

func TestRampFindsTheBoundaryAndSustains(t *testing.T) {
	t.Parallel()
	ttft := []Objective{{Tag: "time_to_first_token", Percentile: 95, Limit: 100}}
	for _, tc := range []struct {
		name        string
		cfg         RampConfig
		capacity    float64
		flaky       map[int]bool
		status      string
		reason      string
		boundary    float64
		firstFail   float64
		values      []float64
		sustainPass int
	}{
		{name: "percent steps to the boundary, then holds it",
			cfg:      RampConfig{Objectives: ttft, Min: 1, Max: 100, Integer: true, Policy: StepPercent, Percent: 50, Sustain: 3 * time.Minute},
			capacity: 10, status: RampCompleted, reason: "sustain_duration_completed", boundary: 8, firstFail: 12,
			values: []float64{1, 2, 3, 5, 8, 12}, sustainPass: 3},
		{name: "margin steps are bigger far from the limit",
			cfg:      RampConfig{Objectives: ttft, Min: 1, Max: 1000, Integer: true, BaseStep: 2, MaxMultiplier: 4, Sustain: time.Minute},
			capacity: 20, status: RampCompleted, reason: "sustain_duration_completed", boundary: 19, firstFail: 21,
			// margins 0.4 → ×1 … steps of 2 while TTFT ≈ 50–60 ms of 100.
			values: []float64{1, 3, 5, 7, 9, 11, 13, 15, 17, 19}, sustainPass: 1},
		{name: "no value passes",
			cfg:      RampConfig{Objectives: ttft, Min: 5, Max: 50, Integer: true, Sustain: time.Minute},
			capacity: 2, status: RampFailed, reason: "no_sustainable_concurrency_found", boundary: math.NaN(), firstFail: 5},
		{name: "the maximum passes: incomplete",
			cfg:      RampConfig{Objectives: ttft, Min: 1, Max: 4, Integer: true, Policy: StepPercent, Percent: 100, Sustain: time.Minute},
			capacity: 100, status: RampIncomplete, reason: "max_control_value_reached_without_saturation", boundary: math.NaN(), firstFail: math.NaN(),
			values: []float64{1, 2, 4}},
		{name: "one failed sustain window steps down, a second fails the ramp",
			cfg:      RampConfig{Objectives: ttft, Min: 1, Max: 100, Integer: true, Policy: StepPercent, Percent: 100, BaseStep: 1, Sustain: time.Hour},
			capacity: 6, flaky: map[int]bool{4: true, 5: true}, status: RampFailed, reason: "sustain_failed_after_recovery", boundary: 4, firstFail: 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{t: time.Unix(0, 0)}
			p := &capacityProber{capacity: tc.capacity, clock: clock, flaky: tc.flaky}
			var events []string
			res, err := Ramp(context.Background(), tc.cfg, p, clock.now, func(e RampEvent) { events = append(events, e.Event) })
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.status || res.Reason != tc.reason {
				t.Errorf("status %s (%s), want %s (%s)", res.Status, res.Reason, tc.status, tc.reason)
			}
			if !same(res.Boundary, tc.boundary) || !same(res.FirstFail, tc.firstFail) {
				t.Errorf("boundary %v first fail %v, want %v and %v", res.Boundary, res.FirstFail, tc.boundary, tc.firstFail)
			}
			if tc.values != nil {
				var got []float64
				for _, w := range res.Windows[:min(len(tc.values), len(res.Windows))] {
					got = append(got, w.Value)
				}
				if !slices.Equal(got, tc.values) {
					t.Errorf("windows at %v, want %v", got, tc.values)
				}
			}
			if tc.sustainPass > 0 && res.SustainPassed != tc.sustainPass {
				t.Errorf("%d sustain windows passed, want %d", res.SustainPassed, tc.sustainPass)
			}
			if events[0] != "adaptive_phase_started" || !slices.Contains([]string{"adaptive_complete", "adaptive_failed", "adaptive_incomplete"}, events[len(events)-1]) {
				t.Errorf("events %v", events)
			}
			if !math.IsNaN(tc.boundary) && (!slices.Contains(events, "sustain_started") || !slices.Contains(events, "boundary_discovered")) {
				t.Errorf("no sustain events: %v", events)
			}
		})
	}
}

func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

func TestRampRefusesBadBounds(t *testing.T) {
	t.Parallel()
	for _, cfg := range []RampConfig{{Min: 0, Max: 2, Sustain: time.Second}, {Min: 2, Max: 2, Sustain: time.Second}, {Min: 1, Max: 2}, {Min: 1, Max: 2, Sustain: time.Second, Policy: "x"}} {
		if _, err := Ramp(context.Background(), cfg, ProberFunc(func(context.Context, float64) (Probe, error) { return Probe{}, nil }), time.Now, nil); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}
