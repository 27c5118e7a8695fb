package stats

import (
	"math"
	"testing"
)

// Critical values from tables of Student's t (scipy.stats.t.ppf).
func TestTQuantileKnownValues(t *testing.T) {
	for _, c := range []struct{ p, df, want float64 }{
		{0.975, 1, 12.706204736},
		{0.975, 2, 4.302652730},
		{0.975, 4, 2.776445105},
		{0.975, 9, 2.262157163},
		{0.995, 4, 4.604094871},
		{0.95, 10, 1.812461123},
		{0.975, 30, 2.042272456},
		{0.975, 1000, 1.962339336},
		{0.025, 4, -2.776445105},
		{0.5, 7, 0},
	} {
		if got := TQuantile(c.p, c.df); !near(got, c.want, 1e-6) {
			t.Errorf("TQuantile(%g, %g) = %.9f, want %.9f", c.p, c.df, got, c.want)
		}
	}
}

func TestTCDFSymmetricAndBounded(t *testing.T) {
	for _, df := range []float64{1, 3, 30} {
		for _, x := range []float64{0, 0.5, 2, 10} {
			lo, hi := TCDF(-x, df), TCDF(x, df)
			if !near(lo+hi, 1, 1e-12) || hi < 0.5 || hi > 1 {
				t.Errorf("df %g: TCDF(±%g) = %g, %g", df, x, lo, hi)
			}
		}
	}
	// df 1 is the Cauchy distribution: CDF(1) = 3/4.
	if got := TCDF(1, 1); !near(got, 0.75, 1e-12) {
		t.Errorf("TCDF(1, 1) = %g, want 0.75", got)
	}
}

// AIPerf's documented example: TTFT p99 over five runs.
func TestDescribe(t *testing.T) {
	s := Describe([]float64{150, 152, 148, 155, 151}, 0.95)
	checks := []struct {
		name      string
		got, want float64
	}{
		{"mean", s.Mean, 151.2}, {"std", s.Std, 2.588435821}, {"min", s.Min, 148}, {"max", s.Max, 155},
		{"cv", s.CV, 2.588435821 / 151.2}, {"se", s.SE, 2.588435821 / math.Sqrt(5)},
		{"t", s.TCritical, 2.776445105},
		{"lo", s.Lo, 151.2 - 2.776445105*2.588435821/math.Sqrt(5)},
		{"hi", s.Hi, 151.2 + 2.776445105*2.588435821/math.Sqrt(5)},
	}
	for _, c := range checks {
		if !near(c.got, c.want, 1e-6) {
			t.Errorf("%s = %.9f, want %.9f", c.name, c.got, c.want)
		}
	}
	if one := Describe([]float64{7}, 0.95); one.Lo != 7 || one.Hi != 7 || one.Std != 0 || one.N != 1 {
		t.Errorf("one run: %+v, want the interval collapsed to 7", one)
	}
	if z := Describe(nil, 0.95); z.N != 0 {
		t.Errorf("no runs: %+v", z)
	}
	if flat := Describe([]float64{0, 0}, 0.95); flat.CV != 0 {
		t.Errorf("zero mean, no spread: CV %g, want 0", flat.CV)
	}
}
