package schedule

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/surgebench/surge/metrics/stats"
)

const draws = 100_000

// gapStats draws n+1 offsets from s and returns the mean gap (seconds) and
// the gaps' coefficient of variation. It fails the test if s is exhausted or
// an offset goes backwards.
func gapStats(t *testing.T, s Schedule, n int) (mean, cv float64) {
	t.Helper()
	prev, ok := s.Next()
	if !ok {
		t.Fatal("schedule exhausted at once")
	}
	if prev != 0 {
		t.Fatalf("first offset = %v, want 0", prev)
	}
	var sum, sum2 float64
	for i := range n {
		at, ok := s.Next()
		if !ok {
			t.Fatalf("schedule exhausted after %d offsets", i+1)
		}
		if at < prev {
			t.Fatalf("offset %d = %v before previous %v", i+1, at, prev)
		}
		g := (at - prev).Seconds()
		sum += g
		sum2 += g * g
		prev = at
	}
	mean = sum / float64(n)
	variance := sum2/float64(n) - mean*mean
	return mean, math.Sqrt(max(variance, 0)) / mean
}

func TestArrivalGapDistributions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern    string
		rate       float64
		smoothness float64
		wantCV     float64
	}{
		{"constant", 50, 1, 0},
		{"poisson", 50, 1, 1},
		{"poisson", 3.7, 1, 1},
		{"gamma", 50, 0.25, 2},
		{"gamma", 50, 0.5, 1 / math.Sqrt(0.5)},
		{"gamma", 50, 1, 1},
		{"gamma", 50, 2, 1 / math.Sqrt(2)},
		{"gamma", 1000, 4, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+"/"+ftoa(tt.rate)+"/"+ftoa(tt.smoothness), func(t *testing.T) {
			t.Parallel()
			s, err := Arrival(tt.pattern, tt.rate, tt.smoothness, 42)
			if err != nil {
				t.Fatal(err)
			}
			mean, cv := gapStats(t, s, draws)
			t.Logf("mean gap %.6gs (want %.6gs), CV %.4f (want %.4f)", mean, 1/tt.rate, cv, tt.wantCV)
			want := 1 / tt.rate
			if math.Abs(mean-want)/want > 0.02 {
				t.Errorf("mean gap = %.6gs, want %.6gs ±2%%", mean, want)
			}
			if tt.wantCV == 0 {
				// Constant gaps differ only by nanosecond truncation.
				if cv > 1e-6 {
					t.Errorf("CV = %g, want 0", cv)
				}
			} else if math.Abs(cv-tt.wantCV)/tt.wantCV > 0.05 {
				t.Errorf("CV = %.4f, want %.4f ±5%%", cv, tt.wantCV)
			}
		})
	}
}

func ftoa(f float64) string {
	return strconv.FormatFloat(f, 'g', 4, 64)
}

func TestConstantRateIsExact(t *testing.T) {
	t.Parallel()
	// 1/3 s has no exact float or nanosecond form; offsets must still be
	// n/3 s to the nanosecond after a million requests (no drift).
	s := ConstantRate(3)
	var at time.Duration
	for range 1_000_001 {
		at, _ = s.Next()
	}
	n := 1e6
	if want := time.Duration(n / 3 * 1e9); at != want {
		t.Errorf("offset 1e6 = %v, want %v", at, want)
	}
}

func TestArrivalDeterministicBySeed(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"poisson", "gamma"} {
		a, _ := Arrival(p, 10, 0.5, 7)
		b, _ := Arrival(p, 10, 0.5, 7)
		c, _ := Arrival(p, 10, 0.5, 8)
		got, again, other := take100(a), take100(b), take100(c)
		if diff := cmp.Diff(got, again); diff != "" {
			t.Errorf("%s: same seed differs (-first +second):\n%s", p, diff)
		}
		if cmp.Equal(got, other) {
			t.Errorf("%s: seeds 7 and 8 gave the same schedule", p)
		}
	}
}

func take100(s Schedule) []time.Duration {
	var out []time.Duration
	for range 100 {
		at, _ := s.Next()
		out = append(out, at)
	}
	return out
}

func TestArrivalErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern string
		rate, k float64
		opts    []Option
		want    string
	}{
		{"poisson", 0, 1, nil, "rate must be > 0, got 0"},
		{"constant", -2, 1, nil, "rate must be > 0, got -2"},
		{"poisson", math.NaN(), 1, nil, "rate must be > 0, got NaN"},
		{"poisson", math.Inf(1), 1, nil, "rate must be > 0, got +Inf"},
		{"gamma", 10, 0, nil, "smoothness must be > 0, got 0"},
		{"gamma", 10, -1, nil, "smoothness must be > 0, got -1"},
		{"burst", 10, 1, nil, `pattern must be constant, poisson or gamma, got "burst"`},
		{"poisson", 10, 1, []Option{RampUp(time.Second), RampFrom(-1)}, "ramp start rate must be a finite number ≥ 0, got -1"},
	}
	for _, tt := range tests {
		_, err := Arrival(tt.pattern, tt.rate, tt.k, 1, tt.opts...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Arrival(%q, %v, %v) error = %v, want %q", tt.pattern, tt.rate, tt.k, err, tt.want)
		}
	}
	// Smoothness only matters to gamma; other patterns ignore it.
	for _, p := range []string{"constant", "poisson", "", "Poisson"} {
		if _, err := Arrival(p, 10, 0, 1); err != nil {
			t.Errorf("Arrival(%q, smoothness 0) = %v, want nil", p, err)
		}
	}
}

func TestInvalidDirectConstructorsYieldNothing(t *testing.T) {
	t.Parallel()
	for name, s := range map[string]Schedule{
		"ConstantRate(0)": ConstantRate(0),
		"Poisson(-1)":     Poisson(-1, 1),
		"Gamma(1, 0)":     Gamma(1, 0, 1),
		"Gamma(NaN, 1)":   Gamma(math.NaN(), 1, 1),
	} {
		if _, ok := s.Next(); ok {
			t.Errorf("%s yielded an offset", name)
		}
	}
}

func TestTakeAndUntil(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    Schedule
		want []time.Duration
	}{
		{"take 3", Take(ConstantRate(10), 3), []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond}},
		{"take 0", Take(ConstantRate(10), 0), nil},
		{"take more than there is", Take(Take(ConstantRate(10), 2), 5), []time.Duration{0, 100 * time.Millisecond}},
		{"until inclusive", Until(ConstantRate(4), 500*time.Millisecond), []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond}},
	}
	for _, tt := range tests {
		var got []time.Duration
		for range 10 {
			at, ok := tt.s.Next()
			if !ok {
				break
			}
			got = append(got, at)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
		if _, ok := tt.s.Next(); ok {
			t.Errorf("%s: yielded again after exhaustion", tt.name)
		}
	}
	if s := ConstantRate(1); Take(s, -1) != s || Until(s, 0) != s {
		t.Error("Take(s, -1) / Until(s, 0) should return s unchanged")
	}
}

func TestRateRampCountsMatchIntegratedRate(t *testing.T) {
	t.Parallel()
	const (
		target = 200.0
		from   = 20.0
		ramp   = 10 * time.Second
		run    = 15
	)
	// Λ(t) for r(t) = from + (target−from)·t/D up to D, then target.
	lambda := func(t float64) float64 {
		d := ramp.Seconds()
		if t <= d {
			return from*t + (target-from)*t*t/(2*d)
		}
		return (from+target)*d/2 + target*(t-d)
	}
	for _, p := range []string{"constant", "poisson", "gamma"} {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			s, err := Arrival(p, target, 4, 3, RampUp(ramp), RampFrom(from))
			if err != nil {
				t.Fatal(err)
			}
			counts := make([]int, run)
			prev := time.Duration(-1)
			for {
				at, ok := s.Next()
				if !ok {
					t.Fatal("exhausted")
				}
				if at < prev {
					t.Fatalf("offset %v before %v", at, prev)
				}
				prev = at
				sec := int(at / time.Second)
				if sec >= run {
					break
				}
				counts[sec]++
			}
			for sec, got := range counts {
				want := lambda(float64(sec+1)) - lambda(float64(sec))
				tol := 1.5 // constant: boundary rounding only
				if p != "constant" {
					tol = 4 * math.Sqrt(want) // ≥ Poisson's 4σ; gamma k=4 is tighter
				}
				if math.Abs(float64(got)-want) > tol {
					t.Errorf("second %d: %d requests, want %.1f ± %.1f", sec, got, want, tol)
				}
			}
		})
	}
}

func TestRateRampDefaultStart(t *testing.T) {
	t.Parallel()
	// Default start 1 req/s: constant offsets solve Λ(t) = n with
	// Λ(t) = t + (R−1)t²/(2D).
	const rate, d = 11.0, 10.0
	s, err := Arrival("constant", rate, 1, 0, RampUp(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for n := range 200 {
		at, _ := s.Next()
		tt := at.Seconds()
		var l float64
		if tt <= d {
			l = tt + (rate-1)*tt*tt/(2*d)
		} else {
			l = (1+rate)*d/2 + rate*(tt-d)
		}
		if math.Abs(l-float64(n)) > 1e-6 {
			t.Fatalf("request %d at %v: Λ = %.9f, want %d", n, at, l, n)
		}
	}
	// A ramp from 0 still starts at offset 0 and never produces NaN.
	s, _ = Arrival("constant", 5, 1, 0, RampUp(time.Second), RampFrom(0))
	first, _ := s.Next()
	second, _ := s.Next()
	if first != 0 || second <= 0 || second > time.Second {
		t.Errorf("ramp from 0: offsets %v, %v", first, second)
	}
}

func TestGammaSampleShapes(t *testing.T) {
	t.Parallel()
	// Direct check of the sampler's mean and variance (both = k for
	// Gamma(k, 1)) including the k < 1 boost.
	for _, k := range []float64{0.1, 0.25, 0.9, 1, 3.5, 30} {
		s := newArrival(gamma, 1, k, 99)
		var sum, sum2 float64
		const n = 50_000
		for range n {
			x := stats.Gamma(s.rng, k)
			if x < 0 || math.IsNaN(x) {
				t.Fatalf("k=%v: sample %v", k, x)
			}
			sum += x
			sum2 += x * x
		}
		mean := sum / n
		variance := sum2/n - mean*mean
		if math.Abs(mean-k)/k > 0.03 || math.Abs(variance-k)/k > 0.1 {
			t.Errorf("k=%v: mean %.4f variance %.4f, want both %v", k, mean, variance, k)
		}
	}
}

func BenchmarkNext(b *testing.B) {
	for _, bc := range []struct {
		name string
		s    Schedule
	}{
		{"constant", ConstantRate(1000)},
		{"poisson", Poisson(1000, 1)},
		{"gamma0.5", Gamma(1000, 0.5, 1)},
		{"gamma4", Gamma(1000, 4, 1)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := bc.s.Next(); !ok {
					b.Fatal("exhausted")
				}
			}
		})
	}
	b.Run("poisson-ramp", func(b *testing.B) {
		s, _ := Arrival("poisson", 1000, 1, 1, RampUp(time.Hour))
		b.ReportAllocs()
		for b.Loop() {
			s.Next()
		}
	})
}

// TestFuncIsASchedule: a plain function adapts to Schedule (a caller's
// own arrival process), and Take bounds it like any other.
func TestFuncIsASchedule(t *testing.T) {
	t.Parallel()
	var i time.Duration
	f := Func(func() (time.Duration, bool) { i++; return i * time.Millisecond, true })
	s := Take(f, 3)
	var got []time.Duration
	for at, ok := s.Next(); ok; at, ok = s.Next() {
		got = append(got, at)
	}
	if want := []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
