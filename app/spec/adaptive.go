package spec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/search"
)

// Adaptive is AIPerf's adaptive scale: one run whose control value starts
// at Min and steps up window by window while every SLA holds, then holds
// the last passing value (the boundary) for Sustain.
type Adaptive struct {
	// Variable is what is steered: loadgen.ControlConcurrency or
	// loadgen.ControlRequestRate (AIPerf's names).
	Variable string
	Min, Max float64
	// Period is a window's length; a window whose intervals straddle an
	// SLA is extended up to MaxWindow.
	Period, MaxWindow time.Duration
	Sustain           time.Duration
	// MinCompleted is the least number of finished requests a window is
	// judged on.
	MinCompleted int
	// SLAs are the filters as AIPerf writes them, Objectives how surge
	// judges each (same order).
	SLAs       []search.SLA
	Objectives []search.Objective
	// Policy is the step policy with its BaseStep, MaxMultiplier and
	// Percent.
	Policy        string
	BaseStep      int
	MaxMultiplier int
	Percent       float64
	// Dir is where the two artifacts go ("": the export folder).
	Dir string
}

// surgeMinWindow is the fewest finished requests surge judges a window on
// (its judge splits a window in four to see its spread).
const surgeMinWindow = 8

// parseAdaptive reads --adaptive-*: the control, the windows, the SLAs and
// the step policy, as AIPerf checks them.
func parseAdaptive(s *Spec, c *cmdline.Config) error {
	a := c.AdaptiveConfig
	if !a.Adaptive {
		if given := adaptiveGiven(c); given != "" {
			return cmdline.Usagef("%s shapes adaptive scale: give --adaptive-scale too", given)
		}
		return nil
	}
	switch {
	case c.Search != nil:
		return cmdline.Usagef("--adaptive-scale is a run of its own: not with surge search")
	case s.Load.Duration <= 0:
		return cmdline.Usagef("--adaptive-scale requires --benchmark-duration (the whole run's bound, as AIPerf requires)")
	case a.AdaptiveSustain <= 0:
		return cmdline.Usagef("--adaptive-scale requires --adaptive-sustain-duration (seconds to hold the boundary)")
	case a.AdaptiveStrategy != "" && a.AdaptiveStrategy != "ramp_until_fail":
		return cmdline.Usagef("--adaptive-scale-strategy-type %q: AIPerf's only strategy is ramp_until_fail", a.AdaptiveStrategy)
	case a.AdaptivePeriod != 0 && a.AdaptivePeriod < time.Second:
		return cmdline.Usagef("--adaptive-assessment-period must be at least 1 second, got %s", a.AdaptivePeriod)
	case c.ControlAddr != "":
		return cmdline.Usagef("--adaptive-scale steers the load itself: not with --control-addr")
	case !s.Steerable():
		return cmdline.Usagef("--adaptive-scale steers one --concurrency or --request-rate: no stage lists, ramps, traces or user-centric mode")
	case len(s.Live.Precision) > 0:
		return cmdline.Usagef("--precision ends a planned run's stages: not with --adaptive-scale")
	}
	ad := &Adaptive{Period: a.AdaptivePeriod, Sustain: a.AdaptiveSustain, Policy: a.AdaptiveStepPolicy,
		BaseStep: a.AdaptiveBaseStep, MaxMultiplier: a.AdaptiveMaxMultiplier, Percent: a.AdaptiveStepPercent, Dir: a.AdaptiveArtifactDir}
	if ad.Period == 0 {
		ad.Period = 30 * time.Second
	}
	ad.MaxWindow = 3 * ad.Period
	ad.MinCompleted = max(a.AdaptiveMinCompleted, surgeMinWindow)
	switch ad.Policy {
	case "", search.StepSLAMargin:
		ad.Policy = search.StepSLAMargin
	case search.StepPercent:
	default:
		return cmdline.Usagef("--adaptive-step-policy %q: want sla_margin or fixed_percent_step", ad.Policy)
	}
	if ad.BaseStep < 1 || ad.MaxMultiplier < 1 || !(ad.Percent > 0) {
		return cmdline.Usagef("--adaptive-base-step and --adaptive-max-step-multiplier must be ≥ 1, --adaptive-step-percent > 0")
	}
	if err := adaptiveControl(ad, c, &s.Load); err != nil {
		return err
	}
	for _, raw := range a.AdaptiveSLA {
		sla, o, err := search.ParseSLA(search.AdaptiveFlag, raw)
		if err != nil {
			return &cmdline.UsageError{Err: err}
		}
		ad.SLAs, ad.Objectives = append(ad.SLAs, sla), append(ad.Objectives, o)
	}
	if err := search.CheckSLAs("--adaptive-scale-sla", ad.Objectives); err != nil {
		return &cmdline.UsageError{Err: err}
	}
	for _, o := range ad.Objectives {
		if o.Window() {
			continue
		}
		if err := needsStreaming(o.Tag+":1", c.Streaming && s.Endpoint.Info().Streams, s.Endpoint.Kind); err != nil {
			return cmdline.Usagef("--adaptive-scale-sla %s", strings.TrimPrefix(err.Error(), "--slo "))
		}
	}
	s.Live.Adaptive = ad
	return nil
}

// adaptiveControl reads what is steered and its bounds: the compact
// --adaptive-scale-control or the expanded --adaptive-control-* (not
// both), the maximum inferred from --concurrency or --request-rate.
func adaptiveControl(ad *Adaptive, c *cmdline.Config, l *Load) error {
	a := c.AdaptiveConfig
	variable, lo, hi := a.AdaptiveVariable, a.AdaptiveMin, a.AdaptiveMax
	if a.AdaptiveControl != "" {
		if variable != "" || lo != 0 || hi != 0 {
			return cmdline.Usagef("--adaptive-scale-control is the compact form of --adaptive-control-variable, -min and -max: give one or the other, as AIPerf asks")
		}
		var err error
		if variable, lo, hi, err = parseCompactControl(a.AdaptiveControl); err != nil {
			return err
		}
	}
	if variable == "" {
		variable = loadgen.ControlConcurrency
	}
	rate := len(l.Rates) > 0
	switch variable {
	case loadgen.ControlConcurrency:
		if rate {
			return cmdline.Usagef("--adaptive-control-variable concurrency steers a closed loop: drop --request-rate, or steer request_rate")
		}
		if hi == 0 && strings.TrimSpace(c.Concurrency) != "" && len(l.Concs) > 0 {
			hi = float64(l.Concs[0])
		}
	case loadgen.ControlRequestRate:
		if !rate {
			return cmdline.Usagef("--adaptive-control-variable request_rate needs a rate-controlled run: give --request-rate (its value is the ramp's maximum)")
		}
		if hi == 0 {
			hi = l.Rates[0]
		}
	case "prefill_concurrency", "users":
		return cmdline.Usagef("--adaptive-control-variable %s: surge steers a live run's concurrency or request rate only (a prefill cap or a user count is fixed for the run): use concurrency or request_rate", variable)
	default:
		return cmdline.Usagef("--adaptive-control-variable %q: want concurrency or request_rate", variable)
	}
	if lo == 0 {
		lo = 1
	}
	switch {
	case hi == 0:
		return cmdline.Usagef("--adaptive-scale: the ramp's maximum could not be inferred: give --concurrency (or --adaptive-control-max)")
	case !(lo > 0) || !(hi > lo):
		return cmdline.Usagef("--adaptive-scale: the control's maximum %g must be above its minimum %g (> 0)", hi, lo)
	case variable == loadgen.ControlConcurrency && (lo != math.Trunc(lo) || hi != math.Trunc(hi)):
		return cmdline.Usagef("--adaptive-scale: a concurrency's bounds are whole numbers, got %g and %g", lo, hi)
	}
	ad.Variable, ad.Min, ad.Max = variable, lo, hi
	return nil
}

// parseCompactControl reads VARIABLE:MIN,MAX[:int|float].
func parseCompactControl(s string) (variable string, lo, hi float64, err error) {
	bad := cmdline.Usagef("--adaptive-scale-control %q: want VARIABLE:MIN,MAX[:int|float], e.g. concurrency:1,64:int", s)
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return "", 0, 0, bad
	}
	bounds := strings.Split(parts[1], ",")
	if len(bounds) != 2 {
		return "", 0, 0, bad
	}
	if lo, err = strconv.ParseFloat(strings.TrimSpace(bounds[0]), 64); err != nil {
		return "", 0, 0, bad
	}
	if hi, err = strconv.ParseFloat(strings.TrimSpace(bounds[1]), 64); err != nil {
		return "", 0, 0, bad
	}
	variable = strings.TrimSpace(parts[0])
	if len(parts) == 3 {
		want := "int"
		if variable == loadgen.ControlRequestRate {
			want = "float"
		}
		if typ := strings.TrimSpace(parts[2]); typ != want {
			return "", 0, 0, cmdline.Usagef("--adaptive-scale-control %q: %s is %s, not %s", s, variable, want, typ)
		}
	}
	return variable, lo, hi, nil
}

// adaptiveGiven names an --adaptive-* flag given without --adaptive-scale
// ("" for none): it would change nothing.
func adaptiveGiven(c *cmdline.Config) string {
	a := c.AdaptiveConfig
	switch {
	case a.AdaptiveControl != "":
		return "--adaptive-scale-control"
	case a.AdaptiveVariable != "":
		return "--adaptive-control-variable"
	case a.AdaptiveSustain != 0:
		return "--adaptive-sustain-duration"
	case len(a.AdaptiveSLA) > 0:
		return "--adaptive-scale-sla"
	case a.AdaptiveArtifactDir != "":
		return "--adaptive-artifact-dir"
	}
	return ""
}

// AdaptiveLabel is the ramp's setting in one line, for the run's header.
func (a *Adaptive) AdaptiveLabel() string {
	keys := make([]string, len(a.SLAs))
	for i, s := range a.SLAs {
		keys[i] = s.Key()
	}
	return fmt.Sprintf("adaptive scale: %s from %g to at most %g, windows of %s, sustain %s, SLA %s",
		a.Variable, a.Min, a.Max, a.Period, a.Sustain, strings.Join(keys, " "))
}
