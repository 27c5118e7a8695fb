package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// Ramp phases, as AIPerf's adaptive scale names them.
const (
	PhaseDiscover = "discover"
	PhaseSustain  = "sustain"
	PhaseComplete = "complete"
)

// Step policies of a ramp (AIPerf's adaptive_scale step_policy).
const (
	// StepSLAMargin steps by BaseStep times a multiplier that grows with
	// the smallest margin to a limit: far from every limit, a bigger step.
	StepSLAMargin = "sla_margin"
	// StepPercent steps by Percent of the value in force.
	StepPercent = "fixed_percent_step"
)

// RampConfig is a ramp: AIPerf's adaptive scale (ramp_until_fail) in one
// run. Zero fields take their defaults.
type RampConfig struct {
	// Objectives are the SLAs each window is judged on (the prober's);
	// the step policy reads their margins.
	Objectives []Objective
	// Min and Max bound the control value; the ramp starts at Min.
	Min, Max float64
	// Integer steps whole numbers (a concurrency).
	Integer bool
	// Policy is StepSLAMargin (default) or StepPercent; BaseStep (10) and
	// MaxMultiplier (4) shape the first, Percent (25) the second.
	Policy        string
	BaseStep      float64
	MaxMultiplier int
	Percent       float64
	// Sustain is how long the ramp holds the boundary once it found it.
	Sustain time.Duration
	// MaxWindows bounds the windows in all (1000).
	MaxWindows int
	// Stopped names the end when the prober stops (its context ended):
	// AIPerf's reason and terminal event (default phase_stopped,
	// adaptive_complete).
	Stopped func() (reason, event string)
}

func (c RampConfig) withDefaults() (RampConfig, error) {
	if c.Policy == "" {
		c.Policy = StepSLAMargin
	}
	if !(c.BaseStep > 0) {
		c.BaseStep = 10
	}
	if c.MaxMultiplier <= 0 {
		c.MaxMultiplier = 4
	}
	if !(c.Percent > 0) {
		c.Percent = 25
	}
	if c.MaxWindows <= 0 {
		c.MaxWindows = 1000
	}
	switch {
	case c.Policy != StepSLAMargin && c.Policy != StepPercent:
		return c, fmt.Errorf("ramp: step policy %q: want %s or %s", c.Policy, StepSLAMargin, StepPercent)
	case !(c.Min > 0) || !(c.Max > c.Min) || math.IsInf(c.Max, 0):
		return c, fmt.Errorf("ramp: bounds [%v, %v] must satisfy 0 < min < max", c.Min, c.Max)
	case c.Sustain <= 0:
		return c, errors.New("ramp: the sustain duration must be > 0")
	}
	return c, nil
}

// RampEvent is one step of a ramp, as AIPerf's adaptive_scale_events.jsonl
// records it: a window judged, a decision, the boundary found, the
// sustain started, the end.
type RampEvent struct {
	// Event is AIPerf's name: adaptive_phase_started, adaptive_window,
	// adaptive_decision, boundary_discovered, sustain_started,
	// adaptive_complete, adaptive_incomplete or adaptive_failed.
	Event string
	// Phase is PhaseDiscover, PhaseSustain or PhaseComplete.
	Phase string
	// Before and After are the control value before and after the event;
	// Step the change a decision made (0: none).
	Before, After, Step float64
	// Boundary, LastPass and FirstFail are the ramp's knowledge so far
	// (NaN: none yet).
	Boundary, LastPass, FirstFail float64
	// Window is the window the event judged or decided on (nil: none).
	Window *Probe
	// Iteration numbers the windows (AIPerf's adaptive_iteration).
	Iteration int
	// Reason says why, in words.
	Reason string
}

// RampResult is a finished ramp.
type RampResult struct {
	// Status is AIPerf's: completed, incomplete or failed; Reason its
	// completed_reason (sustain_duration_completed,
	// max_control_value_reached_without_saturation,
	// no_sustainable_concurrency_found, sustain_failed_after_recovery,
	// sustain_failed_sla_unrecoverable, phase_stopped).
	Status, Reason string
	// Boundary is the value held in sustain, LastPass the highest that
	// passed, FirstFail the first that failed in discovery (NaN: none).
	Boundary, LastPass, FirstFail float64
	// Final is the control value at the end.
	Final float64
	// SustainStart is when the sustain began (zero: it did not);
	// SustainWindows and SustainPassed count its windows.
	SustainStart                  time.Time
	SustainWindows, SustainPassed int
	// Windows are every window judged, in order.
	Windows []Probe
}

// Ramp statuses.
const (
	RampCompleted  = "completed"
	RampIncomplete = "incomplete"
	RampFailed     = "failed"
)

// Ramp runs AIPerf's adaptive scale with the prober's windows: from Min,
// each window that passes every objective steps the value up (by the step
// policy) until one fails or Max passes; then it holds the last passing
// value (the boundary) for Sustain, window after window, stepping down
// once if a window fails there. A window passes or fails only when the
// prober's judge says so (Decisive judging extends a window while an
// interval straddles its limit). emit, when set, sees each event as it
// happens; now is the wall clock. The windows run so far are returned
// with an error when ctx ends or a window fails to run.
func Ramp(ctx context.Context, cfg RampConfig, p Prober, now func() time.Time, emit func(RampEvent)) (RampResult, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return RampResult{}, err
	}
	r := &ramp{cfg: cfg, p: p, now: now, emit: emit, value: cfg.Min, phase: PhaseDiscover,
		res: RampResult{Boundary: math.NaN(), LastPass: math.NaN(), FirstFail: math.NaN()}}
	r.event(RampEvent{Event: "adaptive_phase_started", Reason: "adaptive scale discover phase started"})
	for len(r.res.Windows) < cfg.MaxWindows {
		w, err := p.Probe(ctx, r.value)
		if err != nil {
			reason, event := "phase_stopped", "adaptive_complete"
			if cfg.Stopped != nil {
				reason, event = cfg.Stopped()
			}
			r.finish(reason, event, nil)
			return r.res, err
		}
		w.Value = r.value
		r.res.Windows = append(r.res.Windows, w)
		win := &r.res.Windows[len(r.res.Windows)-1]
		r.event(RampEvent{Event: "adaptive_window", Window: win, Reason: w.Reason})
		if done := r.decide(win); done {
			return r.res, nil
		}
		r.iteration++
	}
	r.finish("max_windows_reached", "adaptive_incomplete", nil)
	return r.res, nil
}

// ramp is a ramp under way.
type ramp struct {
	cfg       RampConfig
	p         Prober
	now       func() time.Time
	emit      func(RampEvent)
	value     float64
	phase     string
	iteration int
	recovered bool // the sustain stepped down once already
	res       RampResult
}

// decide acts on a judged window; it reports whether the ramp is over.
func (r *ramp) decide(w *Probe) bool {
	pass := w.Verdict == Pass
	if r.phase == PhaseDiscover {
		if !pass {
			r.res.FirstFail = r.value
			if math.IsNaN(r.res.LastPass) {
				r.finish("no_sustainable_concurrency_found", "adaptive_failed", w)
				return true
			}
			r.sustain(w, fmt.Sprintf("%s breaches its limit at %s", orNone(w.Limiting), num(r.value)))
			return false
		}
		r.res.LastPass = r.value
		if r.value >= r.cfg.Max {
			r.finish("max_control_value_reached_without_saturation", "adaptive_incomplete", w)
			return true
		}
		before := r.value
		r.value = min(r.cfg.Max, r.value+r.step(r.value, w))
		r.event(RampEvent{Event: "adaptive_decision", Before: before, Step: r.value - before, Window: w,
			Reason: fmt.Sprintf("every SLA met at %s: up to %s", num(before), num(r.value))})
		return false
	}
	// Sustain.
	r.res.SustainWindows++
	if pass {
		r.res.SustainPassed++
		r.res.LastPass = r.value
		r.recovered = false
		r.event(RampEvent{Event: "adaptive_decision", Before: r.value, Window: w, Reason: "every SLA met during sustain"})
		if r.now().Sub(r.res.SustainStart) >= r.cfg.Sustain {
			r.finish("sustain_duration_completed", "adaptive_complete", w)
			return true
		}
		return false
	}
	if r.recovered {
		r.finish("sustain_failed_after_recovery", "adaptive_failed", w)
		return true
	}
	r.recovered = true
	before := r.value
	target := max(r.cfg.Min, r.res.LastPass)
	if math.IsNaN(target) || target >= before {
		target = max(r.cfg.Min, before-r.step(before, w))
	}
	if target == before && before == r.cfg.Min {
		r.finish("sustain_failed_sla_unrecoverable", "adaptive_failed", w)
		return true
	}
	r.value = target
	r.event(RampEvent{Event: "adaptive_decision", Before: before, Step: before - target, Window: w,
		Reason: fmt.Sprintf("%s breaches its limit during sustain: down to %s", orNone(w.Limiting), num(target))})
	return false
}

// sustain holds the boundary: the last passing value.
func (r *ramp) sustain(w *Probe, reason string) {
	before := r.value
	r.res.Boundary = max(r.cfg.Min, r.res.LastPass)
	r.value, r.phase = r.res.Boundary, PhaseSustain
	r.res.SustainStart = r.now()
	r.event(RampEvent{Event: "sustain_started", Phase: PhaseSustain, Before: before, Window: w,
		Reason: "holding boundary_value=" + num(r.res.Boundary)})
	r.event(RampEvent{Event: "boundary_discovered", Phase: PhaseSustain, Before: r.res.Boundary, Window: w, Reason: reason})
}

// step is the next step up from current: SLA margin or percent.
func (r *ramp) step(current float64, w *Probe) float64 {
	var s float64
	if r.cfg.Policy == StepPercent {
		s = math.Max(1, math.Ceil(current*r.cfg.Percent/100))
	} else {
		mult := 1
		if m, ok := r.margin(w); ok {
			mult = max(1, min(r.cfg.MaxMultiplier, int(max(m, 0)*float64(r.cfg.MaxMultiplier))))
		}
		s = r.cfg.BaseStep * float64(mult)
	}
	if r.cfg.Integer {
		s = math.Max(1, math.Round(s))
	}
	return s
}

// margin is the smallest normalised distance of the window's values from
// their limits (positive: met); ok is false when none can be had.
func (r *ramp) margin(w *Probe) (float64, bool) {
	best, ok := math.Inf(1), false
	for _, o := range r.cfg.Objectives {
		v, seen := w.Observed[o.Name()]
		if !seen || o.Limit == 0 {
			continue
		}
		m := (o.Limit - v) / math.Abs(o.Limit)
		if o.HigherIsBetter {
			m = (v - o.Limit) / math.Abs(o.Limit)
		}
		best, ok = min(best, m), true
	}
	return best, ok
}

// finish ends the ramp with reason and its terminal event.
func (r *ramp) finish(reason, event string, w *Probe) {
	r.phase = PhaseComplete
	r.res.Reason = reason
	// AIPerf's status follows the reason: a cancelled phase is completed.
	switch reason {
	case "max_control_value_reached_without_saturation", "max_windows_reached":
		r.res.Status = RampIncomplete
	case "no_sustainable_concurrency_found", "sustain_failed_sla_unrecoverable", "sustain_failed_after_recovery":
		r.res.Status = RampFailed
	default:
		r.res.Status = RampCompleted
	}
	r.res.Final = r.value
	r.event(RampEvent{Event: event, Phase: PhaseComplete, Window: w, Reason: reason})
}

// event fills in the ramp's state and hands the event on.
func (r *ramp) event(e RampEvent) {
	if r.emit == nil {
		return
	}
	if e.Phase == "" {
		e.Phase = r.phase
	}
	if e.Before == 0 {
		e.Before = r.value
	}
	e.After = r.value
	e.Boundary, e.LastPass, e.FirstFail = r.res.Boundary, r.res.LastPass, r.res.FirstFail
	e.Iteration = r.iteration
	r.emit(e)
}

func orNone(s string) string {
	if s == "" {
		return "an SLA"
	}
	return s
}

func num(v float64) string { return fmt.Sprintf("%g", v) }
