package stats

import "math"

// Spread is a metric's statistics over repeated runs, as AIPerf's
// confidence aggregate reports them: the mean, the sample standard
// deviation (n−1), the range, the coefficient of variation, the standard
// error and the two-sided Student-t confidence interval of the mean.
type Spread struct {
	N         int
	Mean, Std float64
	Min, Max  float64
	// CV is Std/|Mean| (+Inf for a zero mean with spread, 0 without).
	CV float64
	// SE is Std/√N.
	SE float64
	// Lo and Hi bound the interval Mean ± TCritical·SE; TCritical is the
	// t quantile at (1+level)/2 with N−1 degrees of freedom (0 and the
	// interval collapsed to the mean for N < 2).
	Lo, Hi, TCritical float64
}

// Describe returns xs's Spread with a confidence interval at level (0.95
// for 95%). An empty xs gives a zero Spread.
func Describe(xs []float64, level float64) Spread {
	n := len(xs)
	if n == 0 {
		return Spread{}
	}
	mean, variance := MeanVar(xs)
	s := Spread{N: n, Mean: mean, Std: math.Sqrt(variance), Min: xs[0], Max: xs[0], Lo: mean, Hi: mean}
	for _, x := range xs {
		s.Min, s.Max = min(s.Min, x), max(s.Max, x)
	}
	switch {
	case mean != 0:
		s.CV = s.Std / math.Abs(mean)
	case s.Std > 0:
		s.CV = math.Inf(1)
	}
	if n < 2 {
		return s
	}
	s.SE = s.Std / math.Sqrt(float64(n))
	s.TCritical = TQuantile((1+level)/2, float64(n-1))
	s.Lo, s.Hi = mean-s.TCritical*s.SE, mean+s.TCritical*s.SE
	return s
}

// TQuantile is the inverse CDF of Student's t distribution with df degrees
// of freedom at p in (0, 1), found by bisection on TCDF (to 1e-12).
func TQuantile(p, df float64) float64 {
	switch {
	case p <= 0:
		return math.Inf(-1)
	case p >= 1:
		return math.Inf(1)
	case p == 0.5:
		return 0
	case p < 0.5:
		return -TQuantile(1-p, df)
	}
	lo, hi := 0.0, 1.0
	for TCDF(hi, df) < p {
		lo, hi = hi, hi*2
		if hi > 1e12 {
			return hi
		}
	}
	for range 200 {
		mid := (lo + hi) / 2
		if TCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-12*max(1, hi) {
			break
		}
	}
	return (lo + hi) / 2
}

// TCDF is the CDF of Student's t distribution with df degrees of freedom:
// for t ≥ 0, 1 − I_x(df/2, 1/2)/2 with x = df/(df+t²).
func TCDF(t, df float64) float64 {
	x := df / (df + t*t)
	tail := 0.5 * regIncBeta(df/2, 0.5, x)
	if t >= 0 {
		return 1 - tail
	}
	return tail
}

// regIncBeta is the regularized incomplete beta function I_x(a, b),
// evaluated by its continued fraction (modified Lentz), on the side where
// it converges quickly.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	lga, _ := math.Lgamma(a)
	lgb, _ := math.Lgamma(b)
	lgab, _ := math.Lgamma(a + b)
	front := math.Exp(lgab - lga - lgb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

// betaCF is the continued fraction of the incomplete beta function.
func betaCF(a, b, x float64) float64 {
	const tiny, eps = 1e-300, 1e-15
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}
