package profile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/controlport"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/loadgen/search"
	"github.com/surgebench/surge/loadgen/stop"
	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/export"
	"github.com/surgebench/surge/telemetry"
	"github.com/surgebench/surge/tui"
)

// ErrStopCondition reports a run ended by --stop-on.
var ErrStopCondition = errors.New("stop condition met")

// liveSession is what a run needs beyond the plan when it is steered live
// (dashboard keys, the control port, a search) or watched by --stop-on.
type liveSession struct {
	ctl    *loadgen.Controller // nil: the run follows its plan
	live   loadgen.Live
	warmup []loadgen.Stage
	port   *controlport.Server

	conds []stop.Condition
	watch struct {
		sync.Mutex
		w *stop.Watch
	}
	tripped *stop.Trip

	// precision watches --precision's targets: the newest judgement (for
	// the dashboard), and each profile stage's once reached or at its end.
	precision struct {
		sync.Mutex
		checker *metrics.Checker
		latest  *metrics.PrecisionStatus
		stages  map[int]stageReach
		last    int // the last stage whose targets were reached (−1: none)
		// next is the run clock's time of the next live check (nextCheck;
		// the watch loop's alone).
		next int64
	}

	objectives []search.Objective
	search     *spec.Search
	prober     *search.Live
	scfg       search.Config
	status     struct {
		sync.Mutex
		s       search.Status
		running *search.Probe
	}
	result *search.Result
	pilot  *pilot // picks the start (nil: the start was given)
	// adaptive is AIPerf's adaptive scale (nil: not one).
	adaptive *adaptiveRun
	// dir is the run's export folder.
	dir string
}

// liveEligible says whether the plan can be steered: one profile stage of
// a constant concurrency or a request rate.
func (p *prepared) liveEligible() bool {
	l := &p.s.Load
	return len(p.plan.values) == 1 && l.ConcurrencyRamp == 0 && l.RateRamp == 0 &&
		(p.plan.mode == ModeConcurrency || p.plan.mode == ModeRequestRate)
}

// prepareLive returns the session, nil when the run is neither live nor
// watched. The spec checked the live flags; a trace whose timestamps made
// the plan a fixed schedule is refused here.
func (p *prepared) prepareLive() (*liveSession, error) {
	s := p.s
	lv := &s.Live
	ls := &liveSession{}
	if lv.StopOn != nil || lv.Precision != nil {
		ls.conds = lv.StopOn
		ls.watch.w = stop.NewWatch(lv.StopOn)
	}
	if lv.Precision != nil {
		ls.precision.checker = metrics.NewChecker(lv.Precision)
		ls.precision.stages, ls.precision.last = map[int]stageReach{}, -1
	}
	// A shard's dashboard only watches: its keys would steer one host.
	wantLive := lv.Search != nil || lv.Adaptive != nil || lv.ControlAddr != "" || s.UI == tui.ModeDashboard && s.Shard.Whole()
	if wantLive && !p.liveEligible() {
		switch {
		case lv.Adaptive != nil:
			return nil, cmdline.Usagef("--adaptive-scale steers one --concurrency or --request-rate: not a trace replayed on its own clock")
		case lv.Search != nil:
			return nil, cmdline.Usagef("surge search probes one --concurrency or --request-rate start value: no stage lists, ramps, traces or user-centric mode")
		case lv.ControlAddr != "":
			return nil, cmdline.Usagef("--control-addr steers one --concurrency or --request-rate: not a sweep, ramp, trace replay or user-centric run")
		}
		wantLive = false // the dashboard just shows a plan it cannot steer
	}
	if !wantLive {
		if ls.watch.w == nil {
			return nil, nil
		}
		return ls, nil
	}
	mode, value := loadgen.ControlConcurrency, p.plan.values[0]
	if p.plan.mode == ModeRequestRate {
		mode = loadgen.ControlRequestRate
	}
	sr := lv.Search
	if sr != nil {
		value = sr.Start
	}
	if ad := lv.Adaptive; ad != nil {
		value = ad.Min
	}
	ctl, err := loadgen.NewController(mode, value)
	if err != nil {
		return nil, &cmdline.UsageError{Err: err}
	}
	ls.ctl = ctl
	ls.live = loadgen.Live{Control: ctl, Duration: s.Load.Duration, Count: p.plan.total}
	if mode == loadgen.ControlRequestRate {
		if len(s.Load.Concs) > 0 {
			ls.live.Cap = s.Load.Concs[0]
		}
		pattern, smooth, seed := s.Load.Pattern, s.Load.Smoothness, s.ValueSeed
		ls.live.Arrival = func(rate float64, stage int) (schedule.Schedule, error) {
			return schedule.Arrival(pattern, rate, smooth, seed(stage))
		}
	}
	for _, st := range p.plan.stages {
		if st.Phase == metrics.Warmup {
			ls.warmup = append(ls.warmup, st)
		}
	}
	if sr != nil {
		ls.search = sr
		ls.objectives = sr.Objectives
		ls.live.Count, ls.live.Duration = 0, 0 // the search decides when it is done
		ls.scfg = search.Config{Start: value, Min: max(sr.Lowest, sr.Min), Max: sr.Max, Resolution: sr.Resolution, Integer: mode == loadgen.ControlConcurrency, MaxProbes: sr.MaxProbes}
		if sr.AutoStart {
			ls.pilot = &pilot{}
		}
	}
	if ad := lv.Adaptive; ad != nil {
		// The ramp ends the run, or --benchmark-duration does (AIPerf's
		// phase duration): no request count bounds it.
		ls.adaptive = &adaptiveRun{a: ad}
		ls.objectives = ad.Objectives
		ls.live.Count = 0
	}
	return ls, nil
}

// openFiles opens adaptive scale's events in the export folder dir (a
// run that is not one has none).
func (ls *liveSession) openFiles(dir string) error {
	if ls == nil {
		return nil
	}
	ls.dir = dir
	if ls.adaptive == nil {
		return nil
	}
	return ls.adaptive.open(dir)
}

// start opens the control port (when asked for) and gives the prober its
// view of the requests in flight.
// Every request to the port must carry token ("": a random one, printed
// here).
func (ls *liveSession) start(ctx context.Context, addr, token string, inFlight func() int64, logw io.Writer) error {
	if ls == nil || ls.ctl == nil || ls.adaptive != nil {
		return nil // adaptive scale steers itself: no control port, no drain between windows
	}
	if ls.prober != nil {
		ls.prober.InFlight = inFlight
	}
	if addr == "" {
		return nil
	}
	var status func() any
	if ls.objectives != nil {
		status = func() any {
			ls.status.Lock()
			defer ls.status.Unlock()
			// Status marshals itself, so it is a field here, not embedded.
			return map[string]any{"search": ls.status.s, "running": ls.status.running}
		}
	}
	shown := "from --control-token"
	if token == "" {
		token = controlport.NewToken()
		shown = token
	}
	port, err := controlport.Listen(ctx, addr, ls.ctl, status, controlport.WithToken(token))
	if err != nil {
		return &cmdline.UsageError{Err: err}
	}
	ls.port = port
	fmt.Fprintf(logw, "live control on %s/control (GET state; POST set, step, double, halve, pause, resume), token %s: send it as Authorization: Bearer <token>, %s or ?token=\n",
		port.URL(), shown, controlport.TokenHeader)
	if controlport.Exposed(addr) {
		fmt.Fprint(logw, export.FormatWarning(fmt.Sprintf("--control-addr %s accepts connections from other machines: anyone who can reach it and has the token steers the run", addr), false, 0))
	}
	return nil
}

// sinks are the collector sinks the session needs (the search's prober,
// the stop watch).
func (ls *liveSession) sinks(clock func() int64) []metrics.Option {
	if ls == nil {
		return nil
	}
	var out []metrics.Option
	if ad := ls.adaptive; ad != nil {
		j := search.Judging{Objectives: ls.objectives, MinDuration: ad.a.Period, MaxDuration: ad.a.MaxWindow, MinRequests: ad.a.MinCompleted, Decisive: true}
		ls.prober = search.NewLive(ls.ctl, j, clock)
		ls.prober.NoKeepUp = true
		ls.prober.OnUpdate = ad.onUpdate
		ls.live.OnStage = ls.prober.OnStage
		out = append(out, metrics.WithSink(ls.prober))
	} else if ls.objectives != nil {
		s := ls.search
		ls.prober = search.NewLive(ls.ctl, search.Judging{Objectives: ls.objectives, MinDuration: s.MinProbe, MaxDuration: s.MaxProbe, Settle: s.Settle}, clock)
		ls.prober.OnUpdate = func(pr search.Probe) {
			ls.status.Lock()
			ls.status.running = &pr
			ls.status.Unlock()
		}
		ls.live.OnStage = ls.prober.OnStage
		out = append(out, metrics.WithSink(ls.prober))
		if ls.pilot != nil {
			out = append(out, metrics.WithSink(ls.pilot))
		}
	}
	if ls.watch.w != nil {
		out = append(out, metrics.WithSink(watchSink{ls}))
	}
	return out
}

// watchSink feeds records to the stop watch.
type watchSink struct{ ls *liveSession }

func (w watchSink) WriteRecord(r *metrics.Record, v *metrics.Values, _ bool) {
	w.ls.watch.Lock()
	defer w.ls.watch.Unlock()
	w.ls.watch.w.Record(r, v)
}

// control is the dashboard's Control (nil when the run is not live).
func (ls *liveSession) control() tui.Control {
	if ls == nil || ls.ctl == nil || ls.objectives != nil {
		return nil // a search steers itself
	}
	return func(a tui.Action) (tui.LiveState, error) {
		var err error
		switch a {
		case tui.StepUp:
			_, err = ls.ctl.Step(1)
		case tui.StepDown:
			_, err = ls.ctl.Step(-1)
		case tui.Double:
			_, err = ls.ctl.Double()
		case tui.Halve:
			_, err = ls.ctl.Halve()
		case tui.Pause:
			_, err = ls.ctl.Pause()
		case tui.Resume:
			_, err = ls.ctl.Resume()
		}
		return ls.liveState(), err
	}
}

// liveState is the setting and search progress as the UI shows them.
func (ls *liveSession) liveState() tui.LiveState {
	st := ls.ctl.State()
	return tui.LiveState{Mode: st.Mode, Value: st.Value, Paused: st.Paused, Search: ls.searchLine()}
}

// frame adds the live state and the precision targets' to a UI frame.
func (ls *liveSession) frame(f tui.Frame) tui.Frame {
	if ls != nil && ls.ctl != nil {
		l := ls.liveState()
		f.Live = &l
	}
	if ls != nil && ls.precision.checker != nil {
		ls.precision.Lock()
		f.Precision = ls.precision.latest
		ls.precision.Unlock()
	}
	return f
}

// searchLine is the search's progress in one line: the phase, the
// bracket, and the probe in progress with its verdict so far.
func (ls *liveSession) searchLine() string {
	if ls.adaptive != nil {
		return ls.adaptive.line()
	}
	if ls.objectives == nil {
		return ""
	}
	ls.status.Lock()
	defer ls.status.Unlock()
	s := ls.status.s
	line := string(s.Phase) + " [" + bound(s.Lo) + ", " + bound(s.Hi) + ")"
	if r := ls.status.running; r != nil && s.Probing != 0 {
		line += fmt.Sprintf(" probe %s: %s", num(r.Value), r.Verdict)
		if r.Verdict == search.Undecided {
			line += fmt.Sprintf(" %d req %.0fs", r.Requests, r.DurationSec)
		}
	}
	if l := s.Last; l != nil {
		line += fmt.Sprintf("  last %s %s", num(l.Value), l.Verdict)
		if l.Limiting != "" && l.Verdict == search.Fail {
			line += " (" + l.Limiting + ")"
		}
	}
	return line
}

// writeColumns prints rows in columns, two spaces apart, indented by two:
// the first two and the last left-aligned, the numbers between right.
func writeColumns(out io.Writer, rows [][]string) {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			switch {
			case i == len(r)-1:
				b.WriteString("  " + c)
			case i < 3:
				b.WriteString("  " + c + pad)
			default:
				b.WriteString("  " + pad + c)
			}
		}
		fmt.Fprintln(out, b.String())
	}
}

func bound(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "?"
	}
	return num(v)
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 5, 64) }

// run drives the session's load with gen until it ends; stopIssuing ends
// issuing early (a stop condition).
func (ls *liveSession) run(ctx context.Context, gen *loadgen.Generator, col *metrics.Collector, stages []loadgen.Stage, stopIssuing func(), logw io.Writer, server func() []telemetry.ServerSample) error {
	if ls == nil {
		return gen.Run(ctx, stages)
	}
	if ls.watch.w != nil {
		watchCtx, endWatch := context.WithCancel(ctx)
		defer endWatch()
		profiles := 0
		for _, st := range stages {
			if st.Phase == metrics.Profile {
				profiles++
			}
		}
		go ls.watchLoop(watchCtx, watched{now: gen.Now, col: col, profiles: profiles, endStage: gen.EndStage, stopIssuing: stopIssuing, server: server}, logw)
	}
	if ls.ctl == nil {
		return gen.Run(ctx, stages)
	}
	if ls.port != nil {
		defer ls.port.Close()
	}
	if len(ls.warmup) > 0 {
		if err := gen.Run(ctx, ls.warmup); err != nil || ctx.Err() != nil {
			return err
		}
	}
	if ls.objectives == nil {
		return gen.RunLive(ctx, ls.live)
	}
	if ls.adaptive != nil {
		return ls.adaptive.run(ctx, ls, gen, logw)
	}
	if ls.pilot != nil {
		start, err := ls.pilot.run(ctx, gen, ls.scfg.Min, logw)
		if err != nil || ctx.Err() != nil {
			return err
		}
		if ls.scfg.Max > 0 && start > ls.scfg.Max {
			start = ls.scfg.Max // --search-max below one stream's rate
			ls.scfg.Min = min(ls.scfg.Min, start)
		}
		if _, err := ls.ctl.Set(start); err != nil {
			return err
		}
		ls.scfg.Start = start
	}
	if ls.scfg.Max == 0 {
		ls.scfg.Max = ls.scfg.Start * 1024
	}
	ls.scfg.Max = min(ls.scfg.Max, controlMax) // the controller's bound: a probe past it could not be set
	done := make(chan error, 1)
	go func() { done <- gen.RunLive(ctx, ls.live) }()
	res, err := search.Run(ctx, ls.scfg, ls.prober, func(s search.Status) {
		ls.status.Lock()
		ls.status.s = s
		ls.status.running = nil
		ls.status.Unlock()
		if s.Last != nil && s.Probing != 0 {
			fmt.Fprintf(logw, "search: probe %s %s: %s; next %s (bracket [%s, %s))\n",
				num(s.Last.Value), s.Last.Verdict, s.Last.Reason, num(s.Probing), bound(s.Lo), bound(s.Hi))
		}
	})
	ls.result = &res
	ls.ctl.Finish()
	runErr := <-done
	if err != nil && ctx.Err() == nil {
		return err
	}
	return runErr
}

// watched is what the watch loop reads and steers: the run clock, the
// collector, how many profile stages there are, and how to end one or
// the whole run.
type watched struct {
	now         func() int64
	col         *metrics.Collector
	profiles    int
	endStage    func()
	stopIssuing func()
	server      func() []telemetry.ServerSample
}

// stageReach is where a stage's precision targets stood when it ended or
// reached them.
type stageReach struct {
	status  metrics.PrecisionStatus
	reached bool
}

// watchLoop checks the stop conditions and the precision targets every
// second: a condition that holds stops issuing (exit code 1); the
// targets reached end the stage, the next one starting, or after the last
// the run (exit code 0).
func (ls *liveSession) watchLoop(ctx context.Context, w watched, logw io.Writer) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		stage, judged := ls.judgePrecision(w)
		ls.watch.Lock()
		for _, s := range w.server() {
			ls.watch.w.Server(s)
		}
		if judged != nil {
			ls.watch.w.Precision(*judged)
		}
		trip := ls.watch.w.Check(w.now())
		if trip != nil && trip.Precision != nil && stage+1 < w.profiles {
			// This stage is done: on to the next, judged afresh.
			ls.watch.w.Precision(metrics.PrecisionStatus{})
			ls.watch.Unlock()
			ls.reach(stage, *trip.Precision, true)
			fmt.Fprintf(logw, "stage %d: %s; next stage\n", stage+1, trip.Reason())
			w.endStage()
			continue
		}
		if trip != nil {
			ls.tripped = trip
			if trip.Precision != nil {
				ls.reach(stage, *trip.Precision, true)
			}
		}
		ls.watch.Unlock()
		if trip != nil {
			fmt.Fprintf(logw, "stopping: %s\n", trip.Reason())
			w.stopIssuing()
			return
		}
	}
}

// judgePrecision judges the precision targets on the profile stage under
// way (nil: no targets, the warmup, or a stage already done).
func (ls *liveSession) judgePrecision(w watched) (int, *metrics.PrecisionStatus) {
	k := ls.precision.checker
	stage := w.col.Stage()
	ls.precision.Lock()
	done := stage <= ls.precision.last
	ls.precision.Unlock()
	if k == nil || done || w.col.Phase() != metrics.Profile {
		return stage, nil
	}
	if w.now() < ls.precision.next {
		return stage, nil
	}
	start := w.now()
	st := k.Check(w.col.Sample(stage))
	ls.precision.next = nextCheck(start, w.now())
	ls.precision.Lock()
	ls.precision.latest = &st
	ls.precision.Unlock()
	return stage, &st
}

// checkShare is the most of one core the live precision check may take,
// as a fraction: 1/checkShare. Its cost grows with the run (it sorts every
// request's values so far, ≈ 20 ms at 100,000 requests), and it shares the
// client's cores with the streams it times; it runs at every tick of the
// watch loop (a second) while that is cheap, then as often as the share
// allows.
const checkShare = 50

// nextCheck is the earliest time of the check after one that ran from
// start to end: checks take at most 1/checkShare of the time.
func nextCheck(start, end int64) int64 { return start + checkShare*(end-start) }

// reach records stage's precision: reached, or where it stood at its end.
func (ls *liveSession) reach(stage int, st metrics.PrecisionStatus, reached bool) {
	ls.precision.Lock()
	defer ls.precision.Unlock()
	ls.precision.stages[stage] = stageReach{status: st, reached: reached}
	if reached {
		ls.precision.last = max(ls.precision.last, stage)
	}
}

// finishPrecision judges every profile stage that did not reach its
// targets on all its requests, once the run is over and before the
// collector closes: the console then says what precision each reached.
func (ls *liveSession) finishPrecision(col *metrics.Collector, profiles int) {
	if ls == nil || ls.precision.checker == nil {
		return
	}
	for i := range profiles {
		ls.precision.Lock()
		_, done := ls.precision.stages[i]
		ls.precision.Unlock()
		if !done {
			ls.reach(i, ls.precision.checker.Check(col.Sample(i)), false)
		}
	}
}

// trip returns the stop condition that ended the run, if one did.
func (ls *liveSession) trip() *stop.Trip {
	if ls == nil || ls.watch.w == nil {
		return nil
	}
	ls.watch.Lock()
	defer ls.watch.Unlock()
	return ls.tripped
}

// annotate adds the session to the summary and run_info: the stop
// condition that ended the run, the live changes, the search's result.
func (ls *liveSession) annotate(s *metrics.Summary, info map[string]any) {
	if ls == nil {
		return
	}
	switch t := ls.trip(); {
	case t != nil && t.Precision != nil:
		info["stopped_by"] = "precision"
	case t != nil:
		s.Warnings = append(s.Warnings, "stopped early: "+t.Reason())
		info["stopped_by"] = t.Condition.Raw
	}
	if ls.precision.checker != nil {
		info["precision_targets"] = ls.precisionInfo()
	}
	if ls.ctl != nil {
		st := ls.ctl.State()
		info["live_control"] = map[string]any{"mode": st.Mode, "final_value": st.Value, "changes": st.Changes}
	}
	if ls.adaptive != nil {
		if a := ls.adaptive.info(); a != nil {
			info["adaptive_scale"] = a
		}
	}
	if r := ls.result; r != nil {
		objs := make([]string, len(ls.objectives))
		for i, o := range ls.objectives {
			objs[i] = o.String()
		}
		info["search"] = *r
		info["search_slo"] = objs
	}
}

// conclude prints the search's result under the summary s and returns
// the stop condition's error (exit code 1) if one ended the run. Its
// probes count requests as the stage table does (each stage's finished
// and failed ones), beside those the verdict judged: the ones sent after
// the probe's first second.
func (ls *liveSession) conclude(out io.Writer, s *metrics.Summary) error {
	if ls == nil {
		return nil
	}
	if ls.adaptive != nil {
		ls.adaptive.conclude(out)
	}
	if r := ls.result; r != nil {
		mode := ls.ctl.State().Mode
		slo := joinObjectives(ls.objectives)
		if len(ls.search.SLAs) > 0 {
			slo = slaKeys(ls.search.SLAs)
		}
		fmt.Fprintf(out, "\nCapacity search (%s, SLO %s):\n", mode, slo)
		var t [][]string
		t = append(t, []string{"stage", mode, "verdict", "reqs", "err", "judged", "time", "why"})
		for _, pr := range r.Probes {
			reqs, errs := "-", "-"
			for _, st := range s.Stages {
				if st.Index == pr.Stage {
					reqs, errs = strconv.FormatInt(st.RequestCount, 10), strconv.FormatInt(st.ErrorRequestCount, 10)
				}
			}
			if len(s.Stages) == 0 { // one probe: the run's summary is its stage's
				reqs, errs = strconv.FormatFloat(s.Run[metrics.RequestCount], 'f', 0, 64), strconv.FormatFloat(s.Run[metrics.ErrorRequestCount], 'f', 0, 64)
			}
			t = append(t, []string{strconv.Itoa(pr.Stage), num(pr.Value), pr.Verdict.String(), reqs, errs, strconv.Itoa(pr.Requests),
				strconv.FormatFloat(pr.DurationSec, 'f', 1, 64) + "s", pr.Reason})
		}
		writeColumns(out, t)
		switch {
		case r.Inconclusive:
			fmt.Fprintf(out, "capacity: %s\n", r.Note)
		case r.Found:
			fmt.Fprintf(out, "capacity: %s %s (passes; %s fails: within +%s), limited by %s\n",
				num(r.Capacity), unitOf(mode), num(r.Upper), num(r.Uncertainty()), r.Limiting)
		case r.Capacity == 0 && len(r.Probes) > 0:
			lowest := r.Probes[0].Value
			for _, pr := range r.Probes {
				lowest = min(lowest, pr.Value)
			}
			fmt.Fprintf(out, "capacity: no %s met the SLOs; lowest tried %s %s (limited by %s)\n", strings.ReplaceAll(mode, "_", " "), num(lowest), unitOf(mode), r.Limiting)
		default:
			fmt.Fprintf(out, "capacity: %s\n", r.Note)
		}
		if sr := ls.search; sr.Recipe != "" {
			if err := writeSearchHistory(out, ls.dir, sr, r, s.Stages); err != nil {
				return err
			}
		}
	}
	ls.concludePrecision(out)
	if t := ls.trip(); t != nil && t.Precision == nil {
		// The summary's warnings already said so; the error sets exit 1.
		return fmt.Errorf("%w: %s", ErrStopCondition, t.Reason())
	}
	return nil
}

// precisionInfo is run_info.precision_targets: each stage's targets, and
// whether it reached them or its bound ended it first.
func (ls *liveSession) precisionInfo() []map[string]any {
	ls.precision.Lock()
	defer ls.precision.Unlock()
	var out []map[string]any
	for i := range len(ls.precision.stages) {
		r := ls.precision.stages[i]
		targets := make([]map[string]any, len(r.status.Targets))
		for j, t := range r.status.Targets {
			targets[j] = map[string]any{"target": t.Target.String(), "value": finite(t.Value), "lo": finite(t.Lo), "hi": finite(t.Hi),
				"half_width_pct": finite(100 * t.HalfWidth), "met": t.Met}
		}
		out = append(out, map[string]any{"stage": i, "reached": r.reached, "requests": r.status.Requests, "targets": targets})
	}
	return out
}

// finite is v for JSON: nil for an unbounded or unknown value.
func finite(v float64) any {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return v
}

// concludePrecision says under the summary what precision each stage
// reached: the targets met and ending it, or what its bound left them at.
func (ls *liveSession) concludePrecision(out io.Writer) {
	if ls.precision.checker == nil {
		return
	}
	ls.precision.Lock()
	defer ls.precision.Unlock()
	n := len(ls.precision.stages)
	for i := range n {
		r := ls.precision.stages[i]
		label := "precision"
		if n > 1 {
			label = fmt.Sprintf("stage %d precision", i+1)
		}
		if r.reached {
			fmt.Fprintf(out, "%s reached: %s\n", label, r.status)
		} else {
			fmt.Fprintf(out, "%s not reached before the run's bound (--request-count or --benchmark-duration): %s\n", label, r.status)
		}
	}
}

func unitOf(mode string) string {
	if mode == loadgen.ControlRequestRate {
		return "requests/s"
	}
	return "concurrent requests"
}

func joinObjectives(objs []search.Objective) string {
	s := ""
	for i, o := range objs {
		if i > 0 {
			s += " "
		}
		s += o.String()
	}
	return s
}

// controlMax is the largest value the live controller takes (either mode).
const controlMax = 1e6

// pilot is the short probe that picks a request-rate search's start when
// none was given: a few requests one at a time (warmup records in the
// exports) give the latency of one request, and so the rate one stream
// sustains, which the search doubles from.
type pilot struct {
	on     atomic.Bool
	mu     sync.Mutex
	lat    []float64 // ms, the pilot's successful requests
	failed int
}

// Pilot requests, and the longest the pilot issues them for.
const (
	pilotRequests = 4
	pilotTime     = 15 * time.Second
)

// WriteRecord keeps the pilot's records (a metrics.RecordSink).
func (p *pilot) WriteRecord(r *metrics.Record, v *metrics.Values, _ bool) {
	if !p.on.Load() || r.Phase != metrics.Warmup {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if r.Failed() {
		p.failed++
		return
	}
	p.lat = append(p.lat, v.Get(metrics.RequestLatency))
}

func (p *pilot) seen() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.lat) + p.failed
}

// run sends the pilot and returns the start rate: one stream's rate, at
// least lowest (the lowest rate a probe can judge).
func (p *pilot) run(ctx context.Context, gen *loadgen.Generator, lowest float64, logw io.Writer) (float64, error) {
	p.on.Store(true)
	err := gen.Run(ctx, []loadgen.Stage{{Phase: metrics.Warmup, Limit: schedule.Constant(1), Count: pilotRequests, Duration: pilotTime}})
	if err != nil || ctx.Err() != nil {
		return 0, err
	}
	// The collector hands records on after the requests end: wait for the
	// pilot's (briefly; the stage's time limit may have sent fewer).
	for wait := time.Now().Add(2 * time.Second); time.Now().Before(wait) && p.seen() < pilotRequests; {
		if !loadgen.Sleep(ctx, 10*time.Millisecond) {
			return 0, ctx.Err()
		}
	}
	p.on.Store(false)
	p.mu.Lock()
	defer p.mu.Unlock()
	start, ok := pilotStart(p.lat, lowest)
	if !ok {
		return 0, fmt.Errorf("search: none of the %d pilot requests (one at a time) succeeded: the error summary says why; a server that fails them has no capacity to find", p.failed)
	}
	mean := 0.0
	for _, l := range p.lat {
		mean += l / float64(len(p.lat))
	}
	fmt.Fprintf(logw, "search: pilot of %d requests one at a time: latency %.0f ms (%.3g req/s for one stream); no start given, so the rate search starts at %s req/s\n",
		len(p.lat), mean, 1000/mean, num(start))
	return start, nil
}

// pilotStart is the start rate from the pilot's latencies (ms): the rate
// of one stream, 1000/mean, at least lowest and rounded to 3 significant
// digits; ok is false without a latency.
func pilotStart(lat []float64, lowest float64) (start float64, ok bool) {
	if len(lat) == 0 {
		return 0, false
	}
	mean := 0.0
	for _, l := range lat {
		mean += l / float64(len(lat))
	}
	start = lowest
	if mean > 0 {
		start = max(1000/mean, lowest)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(start, 'g', 3, 64), 64)
	return min(max(r, lowest), controlMax), true
}
