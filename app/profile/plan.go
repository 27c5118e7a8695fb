package profile

import (
	"fmt"
	"strconv"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// Load modes, as exports and the dashboard name them.
const (
	ModeConcurrency   = spec.ModeConcurrency
	ModeRequestRate   = spec.ModeRequestRate
	ModeFixedSchedule = spec.ModeFixedSchedule
	ModeUserCentric   = spec.ModeUserCentric
)

// plan is the load a run will apply: its stages and how to describe them.
type plan struct {
	stages []loadgen.Stage
	// mode and values describe the profile stages (values has one entry
	// per stage; a sweep has several).
	mode   string
	values []float64
	// target is the request rate the schedule aims at (0: closed loop), for
	// the achieved-rate warning.
	target float64
	// total is the number of profile requests planned (0: bounded by time).
	total int
	// rateCap is the concurrency cap under a request rate (0: none), and
	// users the user-centric users: both name the artifact folder.
	rateCap, users int
	// sweep, when set, is a sweep over list flags: each profile stage is
	// one of its points, mode its parameter's name ("isl") or "variation",
	// and values the points' values (their indexes for several
	// parameters); loadMode and loadStimulus are the load the first point
	// applies.
	sweep                  *spec.Sweep
	loadMode, loadStimulus string
	// replay is agentic replay's lanes (nil: another mode).
	replay *loadgen.Replay
}

// defaultRequestCount is AIPerf's least default request count: a stage
// no count, duration or session count bounds sends defaultCount requests.
const defaultRequestCount = 10

// defaultCount is AIPerf's request count for such a stage: max(10, 2 ×
// concurrency) when the concurrency drives it (0: a rate drives it, 10).
func defaultCount(conc int) int { return max(defaultRequestCount, 2*conc) }

// defaultStageCount is the default request count of stage i of l.
func defaultStageCount(l *spec.Load, i int) int {
	switch {
	case len(l.Rates) > 0 || len(l.Concs) == 0:
		return defaultCount(0)
	case i < len(l.Concs):
		return defaultCount(l.Concs[i])
	}
	return defaultCount(l.Concs[0])
}

// buildPlan builds the stages of s's load. ds is needed for fixed
// schedules (trace timestamps) and to size warmups; the spec checked every
// flag, so its errors are about the dataset.
func buildPlan(s *spec.Spec, ds *datasets.Dataset) (*plan, error) {
	l := &s.Load
	concs, rates := l.Concs, l.Rates
	count := l.RequestCount
	if count == 0 && l.Duration == 0 && l.ConversationNum == 0 {
		count = defaultRequestCount
	}
	p := &plan{total: count}
	capAt := func(i int) int {
		switch {
		case len(concs) == 0:
			return 0
		case i < len(concs):
			return concs[i]
		}
		return concs[0]
	}
	profile := func(limit schedule.Limit, sched schedule.Schedule) loadgen.Stage {
		return loadgen.Stage{Phase: metrics.Profile, Limit: limit, Schedule: sched, Count: count, SessionCount: l.ConversationNum, Duration: l.Duration}
	}

	switch {
	case s.Agentic.Replay != nil:
		if err := replayPlan(p, s, ds, profile(nil, nil), max(capAt(0), 1)); err != nil {
			return nil, err
		}

	case s.Agentic.SessionArrival != nil:
		if err := sessionArrivalPlan(p, s, profile(nil, nil), capAt(0)); err != nil {
			return nil, err
		}

	case l.UserCentricRate > 0 || l.NumUsers > 0:
		users, err := schedule.Users(l.UserCentricRate, max(l.NumUsers, 0), s.Seed(),
			l.TurnDelay.Scaled(l.TurnDelay.Mean), l.TurnDelay.Scaled(l.TurnDelay.Stddev))
		if err != nil {
			return nil, &cmdline.UsageError{Err: err} // the spec checked it
		}
		p.mode, p.values, p.target, p.users = ModeUserCentric, []float64{l.UserCentricRate}, 0, users.N()
		st := profile(nil, nil)
		st.Users = users
		p.stages = append(p.stages, st)

	case l.Fixed.On || (ds.HasTimestamps() && len(rates) == 0 && !l.Fixed.Off):
		if s.Dataset.Sampling != "" {
			return nil, cmdline.Usagef("--dataset-sampling-strategy does not apply to a fixed schedule: the trace's rows are replayed in timestamp order")
		}
		offsets, err := schedule.TraceOffsets(ds.Len(), ds.Timestamp)
		if err != nil {
			return nil, &cmdline.UsageError{Err: fmt.Errorf("%s: %w", ds.Name, cmdline.ForFlags(err, spec.FixedFlags()))}
		}
		var opts []schedule.FixedOption
		if l.Fixed.AutoOffset {
			opts = append(opts, schedule.AutoOffset())
		}
		if l.Fixed.Start > 0 {
			opts = append(opts, schedule.StartOffset(l.Fixed.Start))
		}
		if l.Fixed.End > 0 {
			opts = append(opts, schedule.EndOffset(l.Fixed.End))
		}
		replay, err := schedule.Fixed(offsets, opts...)
		if err != nil {
			return nil, &cmdline.UsageError{Err: cmdline.ForFlags(err, spec.FixedFlags())}
		}
		st := profile(schedule.Constant(capAt(0)), replay)
		// The trace's rows are the sessions, in timestamp order; a session
		// of several turns (Bailian, WEKA, Mooncake session_id) sends them
		// all, so the request count is their turns'.
		st.Count = 0
		for _, r := range replay.Rows() {
			st.Count += ds.Turns(r)
		}
		if l.RequestCount > 0 {
			st.Count = min(st.Count, l.RequestCount)
		}
		st.Conversation, st.Replay = replay.Row, true
		p.mode, p.values, p.total = ModeFixedSchedule, []float64{float64(replay.Len())}, st.Count
		p.stages = append(p.stages, st)

	case len(l.RateSeries) > 0:
		sched, err := schedule.Series(l.Pattern, l.RateSeries, l.Smoothness, s.ValueSeed(0))
		if err != nil {
			return nil, &cmdline.UsageError{Err: err} // the spec checked it
		}
		peak := 0.0
		for _, pt := range l.RateSeries {
			peak = max(peak, pt.QPS)
		}
		p.mode, p.values, p.target, p.rateCap = ModeRequestRate, []float64{peak}, max(l.RateSeries[0].QPS, 1), capAt(0)
		p.stages = append(p.stages, profile(schedule.Constant(capAt(0)), sched))

	case len(rates) > 0:
		p.mode, p.values, p.target, p.rateCap = ModeRequestRate, rates, rates[0], capAt(0)
		for i, r := range rates {
			var opts []schedule.Option
			if l.RateRamp > 0 {
				opts = append(opts, schedule.RampUp(l.RateRamp))
			}
			sched, err := schedule.Arrival(l.Pattern, r, l.Smoothness, s.ValueSeed(i), opts...)
			if err != nil {
				return nil, &cmdline.UsageError{Err: err} // the spec checked it
			}
			p.stages = append(p.stages, profile(schedule.Constant(capAt(0)), sched))
		}

	default:
		if len(concs) == 0 {
			concs = []int{1}
		}
		p.mode = ModeConcurrency
		for _, n := range concs {
			limit := schedule.Constant(n)
			if l.ConcurrencyRamp > 0 {
				limit = schedule.ConcurrencyRamp(n, l.ConcurrencyRamp)
			}
			p.values = append(p.values, float64(n))
			st := profile(limit, nil)
			if l.RequestCount == 0 && st.Count > 0 {
				st.Count = defaultCount(n)
			}
			p.stages = append(p.stages, st)
		}
	}
	if err := checkWrap(s, ds, p); err != nil {
		return nil, err
	}
	if p.total > 0 {
		// Bounded by counts: the stages' counts summed.
		p.total = 0
		for _, st := range p.stages {
			p.total += st.Count
		}
	}
	if l.Warmup.Enabled() {
		warm, err := warmupStage(s, p.stages[0], p.target)
		if err != nil {
			return nil, err
		}
		p.stages = append([]loadgen.Stage{warm}, p.stages...)
	}
	// A dataset without end (a new conversation per session) is taken in
	// order: there is nothing to shuffle.
	if p.mode != ModeFixedSchedule && ds.Len() < datasets.OnDemandLen {
		strategy := s.Dataset.Sampling
		if strategy == "" {
			strategy = datasets.DefaultSampling(ds.Type)
		}
		if strategy != datasets.SampleSequential {
			pick := datasets.NewSampler(strategy, ds.Len(), s.Seed()).Pick
			for i := range p.stages {
				p.stages[i].Pick = pick
			}
		}
	}
	if l.ConversationNum > 0 && l.RequestCount == 0 && l.Duration == 0 {
		p.total = loadgen.PlannedRequests(p.stages, ds, loadgen.Shard{})
	}
	return p, nil
}

// dirMode names the artifact folder's mode part: concurrency8,
// request_rate10, concurrency1-2-4 for a sweep.
func (p *plan) dirMode() string {
	s := p.mode
	for i, v := range p.values {
		if i > 0 {
			s += "-"
		}
		s += strconv.FormatFloat(v, 'f', -1, 64)
	}
	return s
}

// checkWrap refuses, as AIPerf does, a WEKA replay whose --concurrency
// lanes outnumber its traces when the plan would send more sessions than
// it has: the lanes would replay the same traces, byte for byte, into the
// server's prefix cache. --allow-dataset-wrap allows it, and so does
// --cache-bust unless --no-allow-dataset-wrap says otherwise.
func checkWrap(s *spec.Spec, ds *datasets.Dataset, p *plan) error {
	if ds.Type != datasets.TypeWeka || p.mode != ModeConcurrency || s.Dataset.Wrap == spec.WrapAllowed {
		return nil
	}
	if s.Dataset.Wrap == spec.WrapUnset && s.Dataset.CacheBust != "" {
		return nil
	}
	traces := datasets.WekaTraces(ds)
	if s.Load.MaxConcurrency() <= traces || (s.Load.ConversationNum > 0 && s.Load.ConversationNum <= traces) {
		return nil
	}
	hint := " or --cache-bust first_turn_prefix (a marker a session keeps the reused prompts distinct)"
	if s.Dataset.Wrap == spec.WrapRefused {
		hint = " (--no-allow-dataset-wrap refuses it even with --cache-bust)"
	}
	return cmdline.Usagef("--concurrency %d over %d WEKA traces: dataset wrapping is disabled, so the lanes would need more traces than there are; give --allow-dataset-wrap%s, a lower --concurrency, or --conversation-num ≤ %d",
		s.Load.MaxConcurrency(), traces, hint, traces)
}
