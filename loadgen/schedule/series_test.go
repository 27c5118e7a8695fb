package schedule

import (
	"math"
	"testing"
	"time"
)

// offsets is a schedule's offsets in seconds, at most n.
func offsets(s Schedule, n int) []float64 {
	var out []float64
	for range n {
		at, ok := s.Next()
		if !ok {
			break
		}
		out = append(out, at.Seconds())
	}
	return out
}

// TestSeries: a constant series sends at its rate; a linear rise from 0
// to 20/s over 10 s has Λ(t) = t², so the n-th constant arrival comes at
// √n, then at 20/s; a series ending at rate 0 stops where its integral
// runs out; a Poisson series sends about its integral's worth.
func TestSeries(t *testing.T) {
	t.Parallel()
	s, err := Series("constant", []RatePoint{{0, 2}, {10 * time.Second, 2}}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := offsets(s, 4); got[1] != 0.5 || got[3] != 1.5 {
		t.Errorf("constant 2/s: %v", got)
	}
	s, _ = Series("constant", []RatePoint{{0, 0}, {10 * time.Second, 20}}, 1, 0)
	got := offsets(s, 121)
	for n, want := range map[int]float64{4: 2, 25: 5, 100: 10, 120: 11} {
		if math.Abs(got[n]-want) > 1e-6 {
			t.Errorf("rise 0→20/s: arrival %d at %.6f s, want %g", n, got[n], want)
		}
	}
	s, _ = Series("constant", []RatePoint{{0, 2}, {5 * time.Second, 0}}, 1, 0)
	if got := offsets(s, 100); len(got) != 5 {
		t.Errorf("2/s falling to 0 over 5 s (an integral of 5): %d arrivals %v", len(got), got)
	}
	s, _ = Series("constant", []RatePoint{{2 * time.Second, 1}}, 1, 0)
	if got := offsets(s, 2); got[1] != 1 {
		t.Errorf("a first point after 0: its rate from 0: %v", got)
	}
	s, _ = Series("poisson", []RatePoint{{0, 10}, {20 * time.Second, 30}}, 1, 7)
	n := 0
	for _, x := range offsets(s, 5000) {
		if x < 20 {
			n++
		}
	}
	if n < 340 || n > 460 { // Λ(20) = 400, σ = 20
		t.Errorf("poisson 10→30/s over 20 s: %d arrivals, want about 400", n)
	}
	for _, bad := range [][]RatePoint{nil, {{0, 1}, {0, 2}}, {{-time.Second, 1}}, {{0, math.NaN()}}, {{0, 0}, {time.Second, 0}}} {
		if _, err := Series("constant", bad, 1, 0); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	if _, err := Series("wavy", []RatePoint{{0, 1}}, 1, 0); err == nil {
		t.Errorf("a bad pattern: no error")
	}
}
