package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/surgebench/surge/metrics/stats"
)

// Stream constants keep the RNG streams of different consumers of one
// --random-seed apart, so changing one (say, think times) never shifts another
// (arrival gaps).
const (
	streamArrival = 0x9e3779b97f4a7c15
	streamThink   = 0xd1b54a32d192ed03
)

// maxSeconds is the largest offset a time.Duration holds; a schedule whose
// next offset lies beyond it is exhausted rather than wrapping negative.
const maxSeconds = float64(math.MaxInt64) / 1e9

// Arrival patterns accepted by --arrival-pattern.
const (
	PatternConstant = "constant"
	PatternPoisson  = "poisson"
	PatternGamma    = "gamma"
)

type pattern uint8

const (
	constant pattern = iota
	poisson
	gamma
)

// arrival is a renewal process with unit mean gap, mapped onto time by the
// inverse of the integrated rate Λ(t) (a plain division by the rate when
// there is no ramp). Offsets are computed from the float64 cumulative sum on
// every call, never by adding converted durations, so nothing drifts.
type arrival struct {
	kind  pattern
	rate  float64 // target rate, requests/s
	shape float64 // gamma shape k
	rng   *rand.Rand
	n     uint64  // requests yielded so far
	e     float64 // cumulative unit-rate arrival time

	// Rate ramp: r(t) = r0 + a·t for t < d, then rate.
	ramp        bool
	rampFrom    float64
	rampFromSet bool
	d, r0, a    float64
	lamD        float64 // Λ(d)
	err         error   // option error, reported by Arrival
	// series, when set, replaces the rate and the ramp (Series).
	series *rateSeries
}

// Option configures an arrival schedule built by Arrival.
type Option func(*arrival)

// RampUp makes the rate rise linearly from the ramp's start rate (see
// RampFrom) to the target over d, then hold at the target
// (--request-rate-ramp-duration). Arrival times come from time-rescaling the
// same seeded process through the inverse of the integrated rate Λ(t), so a
// ramped Poisson process is a non-homogeneous Poisson process with that rate.
// d ≤ 0 disables the ramp.
func RampUp(d time.Duration) Option {
	return func(a *arrival) {
		if d > 0 {
			a.ramp = true
			a.d = d.Seconds()
		}
	}
}

// RampFrom sets the rate (requests/s) a RampUp starts from. The default is
// 1 request/s, or the target when the target is lower (like the concurrency
// ramp, which starts at one request in flight). It must be ≥ 0; 0 starts the
// ramp from silence.
func RampFrom(rate float64) Option {
	return func(a *arrival) {
		if !(rate >= 0) || math.IsInf(rate, 0) {
			a.err = fmt.Errorf("schedule: ramp start rate must be a finite number ≥ 0, got %v", rate)
			return
		}
		a.rampFrom = rate
		a.rampFromSet = true
	}
}

// Arrival builds the schedule of an arrival pattern (constant, poisson or
// gamma; empty means poisson, AIPerf's default; case-insensitive) at rate
// requests/s. smoothness is the gamma shape k: mean gap 1/rate, coefficient
// of variation 1/√k, so k < 1 is burstier than Poisson and k = 1 is Poisson;
// it is ignored by the other patterns. Equal seeds give equal schedules.
// The first request is intended at offset 0. Bad input is a *FieldError
// naming "rate", "smoothness" or "pattern".
func Arrival(patternName string, rate, smoothness float64, seed uint64, opts ...Option) (Schedule, error) {
	if err := ValidateRate("rate", rate); err != nil {
		return nil, err
	}
	var kind pattern
	switch strings.ToLower(strings.TrimSpace(patternName)) {
	case PatternConstant:
		kind = constant
	case PatternPoisson, "":
		kind = poisson
	case PatternGamma:
		kind = gamma
		if !(smoothness > 0) || math.IsInf(smoothness, 0) {
			return nil, fieldErrorf("smoothness", "must be > 0, got %v", smoothness)
		}
	default:
		return nil, fieldErrorf("pattern", "must be constant, poisson or gamma, got %q", patternName)
	}
	a := newArrival(kind, rate, smoothness, seed)
	for _, o := range opts {
		o(a)
	}
	if a.err != nil {
		return nil, a.err
	}
	a.setupRamp()
	return a, nil
}

// ValidateRate checks a rate (requests/s): it must be a finite number > 0.
// The error is a *FieldError naming field, e.g. "rate must be > 0, got 0".
func ValidateRate(field string, rate float64) error {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return fieldErrorf(field, "must be > 0, got %v", rate)
	}
	return nil
}

// ConstantRate returns a schedule with gaps of exactly 1/rate seconds:
// request n is intended at n/rate. A rate ≤ 0 yields nothing; use Arrival to
// validate flags. (Constant is the constant concurrency Limit.)
func ConstantRate(rate float64) Schedule { return newArrival(constant, rate, 1, 0) }

// Poisson returns a seeded Poisson process of rate requests/s: exponential
// gaps with mean 1/rate (coefficient of variation 1). A rate ≤ 0 yields
// nothing.
func Poisson(rate float64, seed uint64) Schedule { return newArrival(poisson, rate, 1, seed) }

// Gamma returns a seeded renewal process with gamma-distributed gaps of shape
// k and mean 1/rate (coefficient of variation 1/√k). A rate ≤ 0 or k ≤ 0
// yields nothing.
func Gamma(rate, k float64, seed uint64) Schedule { return newArrival(gamma, rate, k, seed) }

func newArrival(kind pattern, rate, shape float64, seed uint64) *arrival {
	a := &arrival{kind: kind, rate: rate, shape: shape}
	if kind != constant {
		a.rng = rand.New(rand.NewPCG(seed, streamArrival))
	}
	if !(rate > 0) || math.IsInf(rate, 0) || (kind == gamma && !(shape > 0)) {
		a.rate = 0 // exhausted from the start
	}
	return a
}

func (a *arrival) setupRamp() {
	if !a.ramp {
		return
	}
	r0 := math.Min(1, a.rate)
	if a.rampFromSet {
		r0 = a.rampFrom
	}
	a.r0 = r0
	a.a = (a.rate - r0) / a.d
	a.lamD = (r0 + a.rate) * a.d / 2
}

// Next implements Schedule. It does not allocate.
func (a *arrival) Next() (time.Duration, bool) {
	if a.rate == 0 {
		return 0, false
	}
	if a.n > 0 {
		switch a.kind {
		case constant:
			a.e = float64(a.n)
		case poisson:
			a.e += a.rng.ExpFloat64()
		case gamma:
			a.e += stats.Gamma(a.rng, a.shape) / a.shape
		}
	}
	a.n++
	var t float64
	switch {
	case a.series != nil:
		var ok bool
		if t, ok = a.series.inv(a.e); !ok {
			a.rate = 0
			return 0, false
		}
	case a.ramp:
		t = a.invLambda(a.e)
	default:
		t = a.e / a.rate
	}
	if !(t < maxSeconds) {
		a.rate = 0
		return 0, false
	}
	return time.Duration(t * 1e9), true
}

// invLambda returns the t with Λ(t) = l for the ramped rate.
func (a *arrival) invLambda(l float64) float64 {
	if l >= a.lamD {
		return a.d + (l-a.lamD)/a.rate
	}
	// Root of a/2·t² + r0·t − l = 0, in the form that stays exact when a → 0
	// and when r0 = 0.
	den := a.r0 + math.Sqrt(a.r0*a.r0+2*a.a*l)
	if den == 0 {
		return 0
	}
	return 2 * l / den
}

// take stops a schedule after n offsets.
type take struct {
	s    Schedule
	left int
}

// Take returns s cut off after n offsets (--request-count). n == 0 yields
// nothing; n < 0 returns s unchanged.
func Take(s Schedule, n int) Schedule {
	if n < 0 {
		return s
	}
	return &take{s: s, left: n}
}

// Next implements Schedule.
func (t *take) Next() (time.Duration, bool) {
	if t.left <= 0 {
		return 0, false
	}
	at, ok := t.s.Next()
	if !ok {
		t.left = 0
		return 0, false
	}
	t.left--
	return at, true
}

// until stops a schedule at an offset.
type until struct {
	s    Schedule
	end  time.Duration
	done bool
}

// Until returns s cut off at the first offset after end
// (--benchmark-duration): offsets equal to end are still yielded. end ≤ 0
// returns s unchanged.
func Until(s Schedule, end time.Duration) Schedule {
	if end <= 0 {
		return s
	}
	return &until{s: s, end: end}
}

// Next implements Schedule.
func (u *until) Next() (time.Duration, bool) {
	if u.done {
		return 0, false
	}
	at, ok := u.s.Next()
	if !ok || at > u.end {
		u.done = true
		return 0, false
	}
	return at, true
}
