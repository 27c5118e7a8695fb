package cmdline

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/urfave/cli/v2"
)

// Bounds past any run one client can make: a value beyond them is a typo
// or a unit mistake, refused before it can hang or exhaust the client.
const (
	// MaxConcurrency bounds requests in flight (and users): each holds a
	// socket, and a process may open about a million files.
	MaxConcurrency = 1_000_000
	// MaxRate bounds requests a second: a microsecond apart.
	MaxRate = 1_000_000
	// MinRate is the slowest rate of requests or sessions: one in about
	// 11.6 days. A slower rate is a unit mistake, and one whose arrivals
	// pass what the run's clock holds (292 years) would end the run after
	// its first request, its plan unsent.
	MinRate = 1e-6
	// MaxRequestCount bounds a stage's requests: at MaxRate, 35 years.
	MaxRequestCount = 1 << 50
	// maxInt bounds an integer flag that names no bound of its own.
	maxInt = math.MaxInt32
)

// Limits are a numeric flag's values, in the flag's own unit: the one
// place its range is written. CheckNumbers applies them to every value a
// command line (or a config file) gives, each value of a sweep list
// included, before anything runs; a duration past what a time.Duration
// holds is refused as it is parsed (DurationValue). 0 is a value only
// where it lies in the range, or where Zero says what it means (and the
// flag's help says so too): a count ≥ 1 given as 0 is refused, never
// read as "unset".
type Limits struct {
	Lo, Hi float64
	// LoOpen and HiOpen exclude the bound itself (> Lo, < Hi).
	LoOpen, HiOpen bool
	// Zero accepts 0 below Lo: the flag's help says what 0 means.
	Zero bool
	// Inf accepts "inf" (a duration: no bound).
	Inf bool
	// Range says both ends in a refusal ("between 0 and 1"): a range a
	// value is chosen from, where the others say the end passed.
	Range bool
}

// atLeast is [lo, maxInt]; above is (lo, +∞); within is [lo, hi].
func atLeast(lo float64) Limits         { return Limits{Lo: lo, Hi: maxInt} }
func above(lo float64) Limits           { return Limits{Lo: lo, LoOpen: true, Hi: math.Inf(1)} }
func within(lo, hi float64) Limits      { return Limits{Lo: lo, Hi: hi, Range: true} }
func (l Limits) upTo(hi float64) Limits { l.Hi = hi; return l }
func (l Limits) below(hi float64) Limits {
	l.Hi, l.HiOpen, l.Range = hi, true, true
	return l
}
func (l Limits) orInf() Limits { l.Inf = true; return l }

// durations is a duration flag's bound: no more than a time.Duration
// holds (DurationValue refuses more as it parses).
var durations = math.Inf(1)

// numberLimits are the Limits of every numeric flag of surge profile and
// surge search (TestEveryNumberHasLimits holds every row to one).
var numberLimits = map[string]Limits{
	// Target
	"wait-for-model-timeout":  atLeast(0).upTo(durations),
	"wait-for-model-interval": above(0),
	// Load
	"arrival-smoothness":                above(0).upTo(1e6),
	"concurrency-ramp-duration":         atLeast(0).upTo(durations),
	"request-rate-ramp-duration":        atLeast(0).upTo(durations),
	"knee-factor":                       above(1).upTo(1e6),
	"fixed-schedule-start-offset":       atLeast(0).upTo(durations),
	"fixed-schedule-end-offset":         above(0),
	"user-centric-rate":                 atLeast(MinRate).upTo(MaxRate),
	"num-users":                         atLeast(1).upTo(MaxConcurrency),
	"conversation-turn-delay-mean":      atLeast(0).upTo(durations),
	"conversation-turn-delay-stddev":    atLeast(0).upTo(durations),
	"conversation-turn-delay-ratio":     atLeast(0).upTo(1e6),
	"conversation-num":                  atLeast(1).upTo(MaxRequestCount),
	"request-count":                     atLeast(1).upTo(MaxRequestCount),
	"benchmark-duration":                above(0),
	"benchmark-grace-period":            atLeast(0).upTo(durations).orInf(),
	"warmup-request-count":              atLeast(0).upTo(MaxRequestCount),
	"warmup-duration":                   atLeast(0).upTo(durations),
	"warmup-concurrency":                atLeast(1).upTo(MaxConcurrency),
	"warmup-request-rate":               atLeast(MinRate).upTo(MaxRate),
	"request-cancellation-rate":         within(0, 100),
	"request-cancellation-delay":        atLeast(0).upTo(durations),
	"prefill-concurrency":               atLeast(1).upTo(MaxConcurrency),
	"warmup-prefill-concurrency":        atLeast(1).upTo(MaxConcurrency),
	"prefill-concurrency-ramp-duration": atLeast(0).upTo(durations),
	"failed-request-threshold":          within(0, 1),
	"num-profile-runs":                  within(1, 10),
	"profile-run-cooldown-seconds":      atLeast(0).upTo(durations),
	"confidence-level":                  above(0).below(1),
	"parameter-sweep-cooldown-seconds":  atLeast(0).upTo(durations),
	// Warmup
	"num-warmup-sessions":                      atLeast(1).upTo(MaxRequestCount),
	"warmup-concurrency-ramp-duration":         atLeast(0).upTo(durations),
	"warmup-request-rate-ramp-duration":        atLeast(0).upTo(durations),
	"warmup-prefill-concurrency-ramp-duration": atLeast(0).upTo(durations),
	// Dataset
	"isl":                                   atLeast(0).upTo(datasets.MaxRequestTokens),
	"osl":                                   atLeast(0).upTo(datasets.MaxRequestTokens),
	"isl-block-size":                        atLeast(1).upTo(datasets.MaxRequestTokens),
	"isl-stddev":                            atLeast(0).upTo(datasets.MaxRequestTokens),
	"osl-stddev":                            atLeast(0).upTo(datasets.MaxRequestTokens),
	"random-range-ratio":                    atLeast(0).below(1),
	"prompt-prefix-pool-size":               atLeast(1).upTo(MaxConcurrency),
	"prompt-prefix-length":                  atLeast(1).upTo(datasets.MaxRequestTokens),
	"shared-system-prompt-length":           atLeast(1).upTo(datasets.MaxRequestTokens),
	"user-context-prompt-length":            atLeast(1).upTo(datasets.MaxRequestTokens),
	"conversation-turn-mean":                atLeast(1).upTo(MaxConcurrency),
	"conversation-turn-stddev":              atLeast(0).upTo(MaxConcurrency),
	"num-dataset-entries":                   atLeast(0).upTo(MaxRequestCount),
	"batch-size-text":                       atLeast(1).upTo(MaxConcurrency),
	"rankings-passages-mean":                atLeast(1).upTo(MaxConcurrency),
	"rankings-passages-stddev":              atLeast(0).upTo(MaxConcurrency),
	"rankings-passages-prompt-token-mean":   atLeast(1).upTo(datasets.MaxRequestTokens),
	"rankings-passages-prompt-token-stddev": atLeast(0).upTo(datasets.MaxRequestTokens),
	"rankings-query-prompt-token-mean":      atLeast(1).upTo(datasets.MaxRequestTokens),
	"rankings-query-prompt-token-stddev":    atLeast(0).upTo(datasets.MaxRequestTokens),
	"max-context-length":                    atLeast(1).upTo(1 << 40),
	"synthesis-prefix-root-multiplier":      atLeast(1).upTo(MaxConcurrency),
	"synthesis-max-isl":                     atLeast(1).upTo(datasets.MaxRequestTokens),
	"synthesis-max-osl":                     atLeast(1).upTo(datasets.MaxRequestTokens),
	"random-seed":                           within(0, math.MaxUint64),
	// Images and audio
	"image-width-mean":              above(0).upTo(1 << 16),
	"image-height-mean":             above(0).upTo(1 << 16),
	"image-width-stddev":            atLeast(0).upTo(1 << 16),
	"image-height-stddev":           atLeast(0).upTo(1 << 16),
	"image-batch-size":              atLeast(1).upTo(1 << 10),
	"audio-length-mean":             above(0).upTo(24 * 3600),
	"audio-length-stddev":           atLeast(0).upTo(24 * 3600),
	"audio-num-channels":            within(1, 2),
	"audio-batch-size":              atLeast(1).upTo(1 << 10),
	"mock-prefill-per-image":        atLeast(0).upTo(durations),
	"mock-prefill-per-audio-second": atLeast(0).upTo(durations),
	// Request, telemetry, output
	"max-response-mib":                atLeast(1).upTo(16 << 10),
	"request-timeout-seconds":         above(0),
	"gpu-telemetry-interval":          above(0),
	"server-metrics-interval":         above(0),
	"server-metrics-timeout":          above(0),
	"reset-kv-cache-timeout-seconds":  above(0),
	"server-profiler-timeout-seconds": above(0),
	"auth-timeout-seconds":            above(0),
	"network-latency-ping-interval":   above(0),
	"shards":                          atLeast(1).upTo(MaxConcurrency),
	"cost-per-hour":                   above(0).upTo(1e9),
	"otel-interval":                   above(0).upTo(3600),
	"otel-span-sample-ratio":          within(0, 1),
	"otlp-wait":                       atLeast(0).upTo(600),
	// Agents
	"tool-result-tokens":            within(1, datasets.MaxRequestTokens),
	"tool-delay":                    atLeast(0).upTo(durations),
	"tool-loop-max-rounds":          atLeast(1).upTo(MaxToolRounds),
	"tool-max-calls-per-reply":      atLeast(1).upTo(MaxToolCalls),
	"session-max-context-tokens":    atLeast(1).upTo(1 << 40),
	"session-arrival-rate":          atLeast(MinRate).upTo(MaxRate),
	"session-arrival-smoothness":    above(0).upTo(1e6),
	"trajectory-start-min-ratio":    within(0, 1),
	"trajectory-start-max-ratio":    within(0, 1),
	"agentic-cache-warmup-duration": above(0),
	"agentic-warmup-grace-period":   atLeast(0).upTo(durations).orInf(),
	"system-idle-gap-cap-seconds":   atLeast(0).upTo(durations),
	"mock-tool-call-rate":           within(0, 1),
	"mock-bad-tool-args-rate":       within(0, 1),
	"mock-max-model-len":            atLeast(0).upTo(1 << 40),
	// Adaptive scale, search recipes, the mock's draft model (AIPerf's)
	"adaptive-control-min":            above(0).upTo(MaxConcurrency),
	"adaptive-control-max":            above(0).upTo(MaxConcurrency),
	"adaptive-assessment-period":      atLeast(1).upTo(durations),
	"adaptive-sustain-duration":       above(0),
	"adaptive-min-completed-requests": atLeast(1).upTo(MaxRequestCount),
	"adaptive-base-step":              atLeast(1).upTo(MaxConcurrency),
	"adaptive-max-step-multiplier":    atLeast(1).upTo(1000),
	"adaptive-step-percent":           above(0).upTo(1000),
	"search-max-iterations":           atLeast(1).upTo(1000),
	"cells":                           atLeast(1).upTo(1 << 16),
	"mock-spec-acceptance":            within(0, 1),
	"mock-spec-tokens":                atLeast(1).upTo(11), // mockserver.MaxSpecTokens
	// surge search
	"search-max":         above(0).upTo(MaxRate),
	"search-resolution":  above(0).below(1),
	"probe-duration":     above(0),
	"probe-max-duration": above(0),
	"max-probes":         atLeast(1).upTo(1000),
}

// CheckNumbers checks every numeric flag cc was given (on the command
// line, in the environment or a config file) against its Limits in
// table: a usage error naming the flag and its bound, in the flag's own
// unit. A flag absent from table is not checked here.
func CheckNumbers(cc *cli.Context, table map[string]Limits) error {
	for _, f := range cc.Command.Flags {
		name := f.Names()[0]
		lim, ok := table[name]
		if !ok || !cc.IsSet(name) {
			continue
		}
		vals, unit, ok := numbersOf(cc, f)
		if !ok {
			continue
		}
		for _, v := range vals {
			if err := lim.check(name, v, unit); err != nil {
				return err
			}
		}
	}
	return nil
}

// value is a flag's number, and its text as given where a float64 would
// round it (an integer past 2^53).
type value struct {
	x    float64
	text string
}

// numbersOf is the values flag f holds, in its unit, and the unit's name
// for messages ("s", "ms"; "" for a plain number).
func numbersOf(cc *cli.Context, f cli.Flag) (vals []value, unit string, ok bool) {
	name := f.Names()[0]
	switch f := f.(type) {
	case *intFlag, *cli.IntFlag:
		n := cc.Int(name)
		return []value{{float64(n), strconv.Itoa(n)}}, "", true
	case *float64Flag, *cli.Float64Flag:
		return []value{{x: cc.Float64(name)}}, "", true
	case *uint64Flag, *cli.Uint64Flag:
		n := cc.Uint64(name)
		return []value{{float64(n), strconv.FormatUint(n, 10)}}, "", true
	case *ValueFlag:
		switch v := f.Value.(type) {
		case *DurationValue:
			return []value{{x: v.number()}}, unitName(v.unit), true
		case *sweepValue:
			if d, ok := v.s.first.(duration); ok {
				unit = unitName(d.unit)
			}
			list, ok := (*v.s.lists)[v.s.name]
			if !ok {
				list = []float64{v.s.get()}
			}
			for i, x := range list {
				vals = append(vals, value{x: x})
				if len(v.texts) == len(list) {
					vals[i].text = v.texts[i]
				}
			}
			return vals, unit, true
		}
	}
	return nil, "", false
}

// number is the duration in its unit (+Inf for Forever).
func (v *DurationValue) number() float64 {
	if *v.d == Forever {
		return math.Inf(1)
	}
	return float64(*v.d) / float64(v.unit)
}

func unitName(u time.Duration) string {
	if u == time.Millisecond {
		return "ms"
	}
	return "s"
}

// check refuses value for flag name, saying the bound in the flag's unit.
func (l Limits) check(name string, val value, unit string) error {
	v := val.x
	with := func(x float64) string {
		s := num(x)
		if x == v && val.text != "" {
			s = val.text
		}
		if unit != "" {
			s += " " + unit
		}
		return s
	}
	lo := l.LoOpen && v == l.Lo || v < l.Lo
	hi := l.HiOpen && v == l.Hi || v > l.Hi
	switch {
	case math.IsNaN(v) || math.IsInf(v, -1) || math.IsInf(v, 1) && !l.Inf:
		return Usagef("--%s must be a finite number, got %g", name, v)
	case math.IsInf(v, 1):
		return nil
	case v == 0 && l.Zero:
		return nil
	case v == 0 && lo:
		return Usagef("--%s must be %s, got 0 (leave the flag out rather than give 0)", name, l.text(with, true))
	case lo || hi:
		return Usagef("--%s must be %s, got %s", name, l.text(with, lo), with(v))
	}
	return nil
}

// text says l's range: both ends of a Range ("between 0 and 1", "> 0
// and < 1"), else the end that was passed.
func (l Limits) text(with func(float64) string, low bool) string {
	switch {
	case l.Range && !l.LoOpen && !l.HiOpen:
		return fmt.Sprintf("between %s and %s", with(l.Lo), with(l.Hi))
	case l.Range:
		return fmt.Sprintf("%s %s and %s %s", l.loOp(), with(l.Lo), l.hiOp(), with(l.Hi))
	case low:
		return l.loOp() + " " + with(l.Lo)
	}
	return l.hiOp() + " " + with(l.Hi)
}

func (l Limits) loOp() string {
	if l.LoOpen {
		return ">"
	}
	return "≥"
}

func (l Limits) hiOp() string {
	if l.HiOpen {
		return "<"
	}
	return "≤"
}

// num writes x plainly: whole numbers in full (1125899906842624, not
// 1.1e+15), the rest as %g.
func num(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e21 {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// durationOverflow is the error for a duration flag's value past what a
// time.Duration holds (292 years), in the flag's unit.
func durationOverflow(unit time.Duration) error {
	return fmt.Errorf("at most %s %s (292 years)", strconv.FormatFloat(math.Floor(float64(math.MaxInt64)/float64(unit)), 'f', -1, 64), unitName(unit))
}

// NumberLimits returns the Limits of profile's or search's numeric flag
// name, and whether it has any.
func NumberLimits(name string) (Limits, bool) {
	l, ok := numberLimits[name]
	return l, ok
}
