package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// Prober runs one probe: load at value (requests/s or a concurrency) until
// the judge decides, and reports it. Probe is called from one goroutine,
// probe after probe.
type Prober interface {
	Probe(ctx context.Context, value float64) (Probe, error)
}

// ProberFunc adapts a function to Prober.
type ProberFunc func(ctx context.Context, value float64) (Probe, error)

// Probe calls f.
func (f ProberFunc) Probe(ctx context.Context, value float64) (Probe, error) { return f(ctx, value) }

// Probe is one probe's outcome; each is a stage of the run.
type Probe struct {
	// Stage is the probe's stage index in the export.
	Stage int     `json:"stage"`
	Value float64 `json:"value"`
	Judgement
	// Requests is how many finished requests the judge read, over Duration.
	Requests int           `json:"requests"`
	Duration time.Duration `json:"-"`
	// DurationSec is Duration in seconds, for the export.
	DurationSec float64 `json:"duration_sec"`
	// Stats are the judged requests' counts and headline latencies, as
	// adaptive scale's windows report them.
	Stats WindowStats `json:"-"`
}

// WindowStats are a probe's judged requests as AIPerf's adaptive scale
// reports a window: counts, the finishing rate, latency percentiles.
type WindowStats struct {
	// Requests counts them all; Errors the failed ones that were not
	// cancelled; Cancelled the ones the client cut off.
	Requests, Errors, Cancelled int
	// Throughput is the requests a second they finished at (NaN: fewer
	// than two).
	Throughput float64
	// Latency, TTFT and ITL are p50, p95 and p99 in ms of the successful
	// ones (NaN: none); LatencyAvg their mean latency.
	Latency, TTFT, ITL [3]float64
	LatencyAvg         float64
}

// Config bounds a search. Zero fields take their defaults.
type Config struct {
	// Start is the first probe's value (required, > 0).
	Start float64
	// Min and Max bound the values probed (defaults: 1 for an integer
	// search, Start/1024 otherwise; 1024 × Start).
	Min, Max float64
	// Factor multiplies (or divides) the value while bracketing (2).
	Factor float64
	// Resolution ends bisection once the bracket's upper end is within this
	// fraction above its lower end (0.05).
	Resolution float64
	// Integer searches whole numbers (concurrency); bisection also ends
	// when the bracket is one apart.
	Integer bool
	// MaxProbes bounds the number of probes (24).
	MaxProbes int
}

func (c Config) withDefaults() (Config, error) {
	if !(c.Start > 0) || math.IsInf(c.Start, 0) {
		return c, fmt.Errorf("search: the start value must be > 0, got %v", c.Start)
	}
	if c.Integer {
		c.Start = math.Max(1, math.Round(c.Start))
	}
	if !(c.Factor > 1) {
		c.Factor = 2
	}
	if !(c.Resolution > 0) {
		c.Resolution = 0.05
	}
	if c.MaxProbes <= 0 {
		c.MaxProbes = 24
	}
	if !(c.Min > 0) {
		c.Min = c.Start / 1024
		if c.Integer {
			c.Min = 1
		}
	}
	if !(c.Max > 0) {
		c.Max = c.Start * 1024
	}
	if c.Max < c.Start || c.Min > c.Start {
		return c, fmt.Errorf("search: start %v must lie between the bounds %v and %v", c.Start, c.Min, c.Max)
	}
	return c, nil
}

// Phase is where a search stands.
type Phase string

// Search phases.
const (
	Bracketing Phase = "bracketing"
	Bisecting  Phase = "bisecting"
	Done       Phase = "done"
)

// Status is the search's progress, for the dashboard, `--ui simple` lines
// and the control port.
type Status struct {
	Phase Phase `json:"phase"`
	// Lo is the highest value that passed and Hi the lowest that failed
	// (NaN: none yet; JSON null).
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// Probing is the value being probed now (0 when none).
	Probing float64 `json:"probing"`
	// Last is the latest finished probe.
	Last *Probe `json:"last,omitempty"`
	// Probes counts the finished probes.
	Probes int `json:"probes"`
}

// Result is a finished search.
type Result struct {
	// Capacity is the highest value that passed (0 when none did).
	Capacity float64 `json:"capacity"`
	// Upper is the lowest value that failed (+Inf when none did: the
	// capacity is at least Capacity, the search's maximum).
	Upper float64 `json:"upper"`
	// Found is set when the capacity is bracketed: Capacity passed and
	// Upper failed, and Upper is within the resolution (or one apart).
	Found bool `json:"found"`
	// Limiting is the objective that failed at Upper.
	Limiting string `json:"limiting,omitempty"`
	// Inconclusive is set when the search stopped at a probe too few of
	// whose requests finished to judge it (its last).
	Inconclusive bool `json:"inconclusive,omitempty"`
	// Probes lists every probe in order.
	Probes []Probe `json:"probes"`
	// Note says in words what the result means.
	Note string `json:"note"`
}

// Uncertainty is the width of the bracket: the true capacity lies in
// [Capacity, Upper).
func (r Result) Uncertainty() float64 { return r.Upper - r.Capacity }

// Run searches for the highest value whose probe passes: it steps up by
// Factor from Start until a probe fails (or steps down until one passes),
// then bisects the bracket until it is within Resolution. report, when
// set, sees the status before and after every probe. The probes made so
// far are returned with an error when ctx ends or a probe fails to run.
func Run(ctx context.Context, cfg Config, p Prober, report func(Status)) (Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Result{}, err
	}
	st := Status{Phase: Bracketing, Lo: math.NaN(), Hi: math.NaN()}
	var res Result
	tell := func() {
		if report != nil {
			report(st)
		}
	}
	narrow := func() bool {
		if math.IsNaN(st.Lo) || math.IsNaN(st.Hi) {
			return false
		}
		return st.Hi/st.Lo-1 <= cfg.Resolution || (cfg.Integer && st.Hi-st.Lo <= 1)
	}
	v := cfg.Start
	for len(res.Probes) < cfg.MaxProbes {
		st.Probing = v
		tell()
		pr, err := p.Probe(ctx, v)
		if err != nil {
			return finish(res, st, cfg), err
		}
		if pr.Verdict == Undecided {
			return finish(res, st, cfg), errors.New("search: the prober returned an undecided probe")
		}
		pr.Value = v
		res.Probes = append(res.Probes, pr)
		st.Last = &res.Probes[len(res.Probes)-1]
		st.Probes = len(res.Probes)
		if pr.Verdict == Inconclusive {
			// No probe can tell more at this load; one further would be
			// guessing.
			res.Inconclusive = true
			st.Probing = 0
			return finish(res, st, cfg), nil
		}
		if pr.Verdict == Pass {
			st.Lo = v
		} else {
			st.Hi = v
			res.Limiting = pr.Limiting
		}
		if narrow() {
			break
		}
		switch {
		case math.IsNaN(st.Hi): // every probe passed: step up
			if v >= cfg.Max {
				st.Probing = 0
				return finish(res, st, cfg), nil
			}
			v = math.Min(v*cfg.Factor, cfg.Max)
		case math.IsNaN(st.Lo): // every probe failed: step down
			if v <= cfg.Min {
				st.Probing = 0
				return finish(res, st, cfg), nil
			}
			v = math.Max(v/cfg.Factor, cfg.Min)
		default:
			st.Phase = Bisecting
			v = (st.Lo + st.Hi) / 2
		}
		if cfg.Integer {
			v = math.Floor(v) // bisection of a bracket ≥ 2 apart stays strictly inside it
		}
	}
	st.Probing = 0
	return finish(res, st, cfg), nil
}

func finish(res Result, st Status, cfg Config) Result {
	res.Capacity, res.Upper = st.Lo, st.Hi
	if math.IsNaN(res.Capacity) {
		res.Capacity = 0
	}
	if math.IsNaN(res.Upper) {
		res.Upper = math.Inf(1)
	}
	switch {
	case len(res.Probes) == 0:
		res.Note = "no probe finished"
	case res.Inconclusive:
		last := res.Probes[len(res.Probes)-1]
		res.Note = fmt.Sprintf("the probe at %g was %s", last.Value, last.Reason)
		switch {
		case res.Capacity > 0 && !math.IsInf(res.Upper, 1):
			res.Note += fmt.Sprintf(": the capacity lies between %g (passed) and %g (failed)", res.Capacity, res.Upper)
		case res.Capacity > 0:
			res.Note += fmt.Sprintf(": the capacity is at least %g (passed)", res.Capacity)
		case !math.IsInf(res.Upper, 1):
			res.Note += fmt.Sprintf(": the capacity is below %g (failed)", res.Upper)
		default:
			res.Note += ": no probe was judged"
		}
	case math.IsInf(res.Upper, 1):
		res.Note = fmt.Sprintf("every probe passed: the capacity is at least %g (the search's maximum reached or probes ran out)", res.Capacity)
	case res.Capacity == 0:
		res.Note = fmt.Sprintf("every probe failed, down to %g: the capacity is below it", res.Upper)
	default:
		res.Found = res.Upper/res.Capacity-1 <= cfg.Resolution || (cfg.Integer && res.Upper-res.Capacity <= 1)
		res.Note = fmt.Sprintf("capacity %g: %g passed, %g failed (limited by %s)", res.Capacity, res.Capacity, res.Upper, res.Limiting)
		if !res.Found {
			res.Note += "; probes ran out before the bracket narrowed to the resolution"
		}
	}
	return res
}

// nullable is v for JSON, null when it is NaN or infinite (JSON has
// neither).
func nullable(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// MarshalJSON writes an unknown end of the bracket as null.
func (s Status) MarshalJSON() ([]byte, error) {
	type plain Status
	return json.Marshal(struct {
		plain
		Lo *float64 `json:"lo"`
		Hi *float64 `json:"hi"`
	}{plain(s), nullable(s.Lo), nullable(s.Hi)})
}

// MarshalJSON writes an unbounded Upper as null.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	return json.Marshal(struct {
		plain
		Upper *float64 `json:"upper"`
	}{plain(r), nullable(r.Upper)})
}
