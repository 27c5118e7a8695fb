package profile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/search"
)

// AIPerf's adaptive scale artifacts.
const (
	AdaptiveEventsFile  = "adaptive_scale_events.jsonl"
	AdaptiveSummaryFile = "adaptive_scale_summary.json"
	// adaptiveSchema is their schema_version.
	adaptiveSchema = 2
)

// adaptiveRun is an adaptive scale under way: the ramp's events written
// as they happen, its progress for the dashboard, its result for the
// summary.
type adaptiveRun struct {
	a   *spec.Adaptive
	dir string // where the artifacts go

	mu      sync.Mutex
	events  *os.File
	err     error // the first write that failed
	last    *search.RampEvent
	running *search.Probe
	res     *search.RampResult
}

// open creates the events file in dir (the export folder unless
// --adaptive-artifact-dir named another).
func (r *adaptiveRun) open(exportDir string) error {
	r.dir = exportDir
	if r.a.Dir != "" {
		r.dir = r.a.Dir
		if err := os.MkdirAll(r.dir, 0o755); err != nil {
			return fmt.Errorf("--adaptive-artifact-dir: %w", err)
		}
	}
	f, err := os.Create(filepath.Join(r.dir, AdaptiveEventsFile))
	if err != nil {
		return fmt.Errorf("--adaptive-artifact-dir: %w", err)
	}
	r.events = f
	return nil
}

// run drives the live session with the ramp until it ends, the run's
// duration ends (AIPerf's phase_stopped) or ctx does (phase_cancelled),
// then writes the summary.
func (r *adaptiveRun) run(ctx context.Context, ls *liveSession, gen *loadgen.Generator, logw io.Writer) error {
	a := r.a
	cfg := search.RampConfig{Objectives: a.Objectives, Min: a.Min, Max: a.Max, Integer: a.Variable == loadgen.ControlConcurrency,
		Policy: a.Policy, BaseStep: float64(a.BaseStep), MaxMultiplier: a.MaxMultiplier, Percent: a.Percent, Sustain: a.Sustain,
		Stopped: func() (string, string) {
			if ctx.Err() != nil {
				return "phase_cancelled", "adaptive_failed"
			}
			return "phase_stopped", "adaptive_complete"
		}}
	rampCtx, stopRamp := context.WithCancel(ctx)
	defer stopRamp()
	var runErr error
	liveDone := make(chan struct{})
	go func() {
		defer close(liveDone)
		runErr = gen.RunLive(ctx, ls.live)
		stopRamp() // the run's duration ended: so does the ramp
	}()
	fmt.Fprintf(logw, "%s\n", a.AdaptiveLabel())
	res, err := search.Ramp(rampCtx, cfg, ls.prober, time.Now, func(e search.RampEvent) { r.event(e, logw) })
	ls.ctl.Finish()
	<-liveDone
	r.mu.Lock()
	r.res = &res
	r.mu.Unlock()
	if werr := r.writeSummary(); werr != nil {
		fmt.Fprintf(logw, "adaptive scale: %v\n", werr)
	}
	if err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
		return err
	}
	return runErr
}

// event writes one event line and keeps it for the dashboard.
func (r *adaptiveRun) event(e search.RampEvent, logw io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last, r.running = &e, nil
	switch e.Event {
	case "adaptive_window":
		w := e.Window
		fmt.Fprintf(logw, "adaptive scale: %s window at %s: %s (%s)\n", e.Phase, num(e.After), w.Verdict, w.Reason)
	case "boundary_discovered", "adaptive_complete", "adaptive_failed", "adaptive_incomplete":
		fmt.Fprintf(logw, "adaptive scale: %s: %s\n", e.Event, e.Reason)
	}
	if r.events == nil || r.err != nil {
		return
	}
	b, err := json.Marshal(r.eventPayload(e))
	if err == nil {
		_, err = r.events.Write(append(b, '\n'))
	}
	if err != nil {
		r.err = fmt.Errorf("writing %s: %w", AdaptiveEventsFile, err)
	}
}

// onUpdate keeps the window in progress for the dashboard.
func (r *adaptiveRun) onUpdate(p search.Probe) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.running = &p
}

// nullable is v for JSON: null for NaN or an infinity.
func nullable(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

// slaValues are a window's observed values keyed as AIPerf keys them
// (metric:stat:op:threshold), in AIPerf's units (an error rate in
// percent), and the binding one: the smallest margin to its limit.
func (r *adaptiveRun) slaValues(w *search.Probe) (values map[string]any, binding any) {
	values = map[string]any{}
	if w == nil {
		return values, nil
	}
	best := math.Inf(1)
	for i, o := range r.a.Objectives {
		v, ok := w.Observed[o.Name()]
		if !ok {
			continue
		}
		key := r.a.SLAs[i].Key()
		if o.Tag == search.RequestErrorRate {
			v *= 100
		}
		values[key] = v
		t := r.a.SLAs[i].Threshold
		if t == 0 {
			continue
		}
		m := (t - v) / math.Abs(t)
		if o.HigherIsBetter {
			m = (v - t) / math.Abs(t)
		}
		if m < best {
			best, binding = m, key
		}
	}
	return values, binding
}

// eventPayload is one line of adaptive_scale_events.jsonl in AIPerf's
// schema 2, with surge's window judgement beside it.
func (r *adaptiveRun) eventPayload(e search.RampEvent) map[string]any {
	now := time.Now()
	primary := r.a.SLAs[0]
	values, binding := r.slaValues(e.Window)
	var slaValue, passed any
	samples, errs, cancelled, throughput := 0, 0, 0, 0.0
	if w := e.Window; w != nil {
		slaValue = values[primary.Key()]
		passed = w.Verdict == search.Pass
		st := w.Stats
		samples, errs, cancelled = st.Requests-st.Errors-st.Cancelled, st.Errors, st.Cancelled
		if !math.IsNaN(st.Throughput) {
			throughput = st.Throughput
		}
	}
	var step any
	if e.Step != 0 {
		step = e.Step
	}
	control := map[string]any{"target_value": e.After, "actual_value": e.After}
	out := map[string]any{
		"schema_version": adaptiveSchema, "timestamp": now.UnixNano(), "timestamp_ns": now.UnixNano(),
		"timestamp_utc": now.UTC().Format("2006-01-02T15:04:05.000000Z"),
		"event":         e.Event, "phase": e.Phase, "control_variable": r.a.Variable,
		"control_value_before": e.Before, "control_value_after": e.After, "control_value": e.After, "control": control,
		"boundary_value": nullable(e.Boundary), "last_passing_value": nullable(e.LastPass), "first_failing_value": nullable(e.FirstFail),
		"sla_metric": primary.Metric, "sla_stat": primary.Stat, "sla_op": primary.Op, "sla_value": slaValue, "sla_bound": primary.Threshold,
		"sla_values": values, "binding_sla": binding, "throughput": throughput, "sample_count": samples, "completed": samples,
		"sent": samples + errs + cancelled, "in_flight": nil, "cancelled": cancelled, "errored": errs, "error_count": errs,
		"sla_passed": passed, "strategy_type": "ramp_until_fail", "step_policy": r.a.Policy, "step_size": step, "reason": e.Reason,
		"run_id": nil, "phase_id": "profiling", "phase_name": nil, "phase_start_ts": nil, "phase_end_ts": nil,
		"adaptive_iteration": e.Iteration, "candidate_value": e.Before, "accepted_value": e.After, "fault_window_id": nil,
	}
	if w := e.Window; w != nil {
		// surge's own: how the window was judged (its 95% intervals).
		out["surge"] = map[string]any{"stage": w.Stage, "window_seconds": w.DurationSec, "settled": w.Stable, "judgement": w.Reason}
	}
	return out
}

// candidate is one window as adaptive_scale_summary.json lists it.
func (r *adaptiveRun) candidate(i int, w *search.Probe) map[string]any {
	st := w.Stats
	ms := func(v float64) float64 {
		if math.IsNaN(v) {
			return 0
		}
		return v
	}
	success := st.Requests - st.Errors - st.Cancelled
	rate := 0.0
	if st.Requests > 0 {
		rate = float64(success) / float64(st.Requests)
	}
	var reason any
	if w.Verdict != search.Pass {
		reason = "sla_miss"
	}
	return map[string]any{
		"adaptive_iteration": i, "candidate_value": w.Value, "control_value": w.Value, "duration_s": w.DurationSec,
		"request_count": st.Requests, "error_count": st.Errors, "cancelled": st.Cancelled, "success_count": success, "success_rate": rate,
		"throughput_rps": ms(st.Throughput),
		"latency_p50_ms": ms(st.Latency[0]), "latency_p95_ms": ms(st.Latency[1]), "latency_p99_ms": ms(st.Latency[2]),
		"ttft_p50_ms": ms(st.TTFT[0]), "ttft_p95_ms": ms(st.TTFT[1]), "ttft_p99_ms": ms(st.TTFT[2]),
		"itl_p50_ms": ms(st.ITL[0]), "itl_p95_ms": ms(st.ITL[1]), "itl_p99_ms": ms(st.ITL[2]),
		"accepted": w.Verdict == search.Pass, "rejection_reason": reason, "latency_avg_ms": ms(st.LatencyAvg),
		"settled": w.Stable, "judgement": w.Reason,
	}
}

// summaryPayload is adaptive_scale_summary.json in AIPerf's schema 2,
// with the result in surge's capacity terms beside it.
func (r *adaptiveRun) summaryPayload() map[string]any {
	res, a := r.res, r.a
	primary := a.SLAs[0]
	candidates := make([]map[string]any, len(res.Windows))
	sent, completed, errored, cancelled := 0, 0, 0, 0
	for i := range res.Windows {
		w := &res.Windows[i]
		candidates[i] = r.candidate(i, w)
		st := w.Stats
		sent += st.Requests
		completed += st.Requests - st.Errors - st.Cancelled
		errored += st.Errors
		cancelled += st.Cancelled
	}
	throughput := 0.0
	if n := len(res.Windows); n > 0 && !math.IsNaN(res.Windows[n-1].Stats.Throughput) {
		throughput = res.Windows[n-1].Stats.Throughput
	}
	var sustainAt any
	if !res.SustainStart.IsZero() {
		sustainAt = res.SustainStart.UnixNano()
	}
	return map[string]any{
		"schema_version": adaptiveSchema, "status": res.Status, "control_variable": a.Variable, "control_value": res.Final,
		"control":        map[string]any{"target_value": res.Final, "actual_value": res.Final},
		"boundary_value": nullable(res.Boundary), "last_passing_value": nullable(res.LastPass), "first_failing_value": nullable(res.FirstFail),
		"result":             map[string]any{"last_passing_value": nullable(res.LastPass), "first_failing_value": nullable(res.FirstFail), "boundary_value": nullable(res.Boundary)},
		"sustain_started_at": sustainAt, "sustain_duration_seconds": a.Sustain.Seconds(), "completed_reason": res.Reason,
		"sla_passed_during_sustain": res.SustainWindows > 0 && res.SustainPassed == res.SustainWindows,
		"sustain_windows":           res.SustainWindows, "sustain_passed_windows": res.SustainPassed,
		"sla_metric": primary.Metric, "sla_stat": primary.Stat, "sla_op": primary.Op, "sla_bound": primary.Threshold,
		"sla":        map[string]any{"metric": primary.Metric, "stat": primary.Stat, "op": primary.Op, "bound": primary.Threshold},
		"totals":     map[string]any{"sent": sent, "completed": completed, "errored": errored, "cancelled": cancelled},
		"throughput": throughput, "candidates": candidates, "strategy_type": "ramp_until_fail", "step_policy": a.Policy,
		"base_step": a.BaseStep, "max_step_multiplier": a.MaxMultiplier, "step_percent": a.Percent,
		"phase_index": nil, "profiling_index": nil, "phase_name": nil, "phase_kind": "profiling",
		"capacity": r.capacity(),
	}
}

// capacity is the result in surge's own terms, as surge search reports a
// capacity: the highest value that held every SLA and the lowest above it
// that did not, in discovery or in sustain (AIPerf's first_failing_value
// is discovery's alone: a sustain that failed at the boundary and held
// the value below leaves it one step too high).
func (r *adaptiveRun) capacity() map[string]any {
	res := r.res
	unit := "concurrent requests"
	if r.a.Variable == loadgen.ControlRequestRate {
		unit = "requests/s"
	}
	upper, limiting := math.NaN(), ""
	for _, w := range res.Windows {
		if w.Verdict == search.Fail && (math.IsNaN(res.LastPass) || w.Value > res.LastPass) && (math.IsNaN(upper) || w.Value < upper) {
			upper, limiting = w.Value, w.Limiting
		}
	}
	return map[string]any{"value": nullable(res.LastPass), "unit": unit, "upper": nullable(upper),
		"found": !math.IsNaN(res.LastPass) && !math.IsNaN(upper), "limiting": limiting, "windows": len(res.Windows)}
}

// writeSummary writes adaptive_scale_summary.json and closes the events.
func (r *adaptiveRun) writeSummary() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.events != nil {
		if err := r.events.Close(); err != nil && r.err == nil {
			r.err = fmt.Errorf("writing %s: %w", AdaptiveEventsFile, err)
		}
		r.events = nil
	}
	if r.res == nil {
		return r.err
	}
	err := WriteFile(filepath.Join(r.dir, AdaptiveSummaryFile), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r.summaryPayload())
	})
	if err != nil {
		return err
	}
	return r.err
}

// line is the ramp's progress in one line, for the dashboard and --ui
// simple: the phase, the value in force, the window in progress, the
// boundary so far.
func (r *adaptiveRun) line() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	phase, value := search.PhaseDiscover, r.a.Min
	lastPass, firstFail := math.NaN(), math.NaN()
	if e := r.last; e != nil {
		phase, value, lastPass, firstFail = e.Phase, e.After, e.LastPass, e.FirstFail
	}
	line := fmt.Sprintf("adaptive %s %s %s", phase, r.a.Variable, num(value))
	if w := r.running; w != nil {
		line += fmt.Sprintf(" window: %d req %.0fs", w.Requests, w.DurationSec)
	}
	line += "  pass " + bound(lastPass) + " fail " + bound(firstFail)
	if e := r.last; e != nil && e.Window != nil {
		line += fmt.Sprintf("  last %s %s", num(e.Window.Value), e.Window.Verdict)
		if e.Window.Verdict == search.Fail && e.Window.Limiting != "" {
			line += " (" + e.Window.Limiting + ")"
		}
	}
	return line
}

// conclude prints the ramp's windows and its result under the summary.
func (r *adaptiveRun) conclude(out io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := r.res
	if res == nil {
		return
	}
	fmt.Fprintf(out, "\nAdaptive scale (%s, SLA %s):\n", r.a.Variable, slaKeys(r.a.SLAs))
	rows := [][]string{{"window", "phase", r.a.Variable, "verdict", "judged", "time", "why"}}
	for i, w := range res.Windows {
		phase := search.PhaseDiscover
		if !res.SustainStart.IsZero() && i >= len(res.Windows)-res.SustainWindows {
			phase = search.PhaseSustain
		}
		rows = append(rows, []string{strconv.Itoa(i), phase, num(w.Value), w.Verdict.String(), strconv.Itoa(w.Requests),
			strconv.FormatFloat(w.DurationSec, 'f', 1, 64) + "s", w.Reason})
	}
	writeColumns(out, rows)
	c := r.capacity()
	switch {
	case c["found"] == true:
		fmt.Fprintf(out, "capacity: %s %s (held every SLA; %s failed), limited by %s; sustained %d of %d windows; %s (%s)\n",
			num(res.LastPass), c["unit"], num(c["upper"].(float64)), c["limiting"], res.SustainPassed, res.SustainWindows, res.Status, res.Reason)
	case !math.IsNaN(res.LastPass):
		fmt.Fprintf(out, "capacity: at least %s %s (no window failed up to there); %s (%s)\n", num(res.LastPass), c["unit"], res.Status, res.Reason)
	default:
		fmt.Fprintf(out, "capacity: none found; %s (%s)\n", res.Status, res.Reason)
	}
	fmt.Fprintf(out, "adaptive scale files: %s\n", filepath.Join(r.dir, AdaptiveSummaryFile))
}

// info is run_info.adaptive_scale: the result and where its files are.
func (r *adaptiveRun) info() map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.res == nil {
		return nil
	}
	return map[string]any{"status": r.res.Status, "completed_reason": r.res.Reason, "capacity": r.capacity(),
		"events_file": filepath.Join(r.dir, AdaptiveEventsFile), "summary_file": filepath.Join(r.dir, AdaptiveSummaryFile)}
}

func slaKeys(slas []search.SLA) string {
	s := ""
	for i, x := range slas {
		if i > 0 {
			s += " "
		}
		s += x.Key()
	}
	return s
}
