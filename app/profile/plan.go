package profile

import (
	"fmt"
	"strconv"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// Load modes, as exports and the dashboard name them.
const (
	ModeConcurrency   = "concurrency"
	ModeRequestRate   = "request_rate"
	ModeFixedSchedule = "fixed_schedule"
	ModeUserCentric   = "user_centric"
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
	// sweep, when set, is a sweep over list flags (sweep.go): each profile
	// stage is one of its points, mode its parameter's name ("isl") or
	// "variation", and values the points' values (their indexes for
	// several parameters); loadMode and loadStimulus are the load the
	// first point applies.
	sweep                  *sweep
	loadMode, loadStimulus string
}

// defaultRequestCount is AIPerf's least default request count: a stage
// no count, duration or session count bounds sends defaultCount requests.
const defaultRequestCount = 10

// defaultCount is AIPerf's request count for such a stage: max(10, 2 ×
// concurrency) when the concurrency drives it (0: a rate drives it, 10).
func defaultCount(conc int) int { return max(defaultRequestCount, 2*conc) }

// defaultCount is the default request count of stage i of l.
func (l load) defaultCount(i int) int {
	switch {
	case len(l.rates) > 0 || len(l.concs) == 0:
		return defaultCount(0)
	case i < len(l.concs):
		return defaultCount(l.concs[i])
	}
	return defaultCount(l.concs[0])
}

// load is --concurrency and --request-rate parsed: each a value or a stage
// list.
type load struct {
	concs []int
	rates []float64
}

// parseLoad reads --concurrency and --request-rate, each a value or a list.
func (c *config) parseLoad() (l load, err error) {
	if c.Concurrency != "" {
		if l.concs, err = schedule.ParseIntStages("--concurrency", c.Concurrency); err != nil {
			return load{}, &cmdline.UsageError{Err: err}
		}
	}
	if c.RequestRate != "" {
		if l.rates, err = schedule.ParseStages("--request-rate", c.RequestRate); err != nil {
			return load{}, &cmdline.UsageError{Err: err}
		}
	}
	// A fixed cap under a rate sweep, or a fixed rate under a concurrency
	// sweep, are both fine; two sweeps are not.
	if len(l.concs) > 1 && len(l.rates) > 1 {
		return load{}, cmdline.Usagef("--concurrency and --request-rate cannot both list stages: sweep one of them")
	}
	return l, nil
}

// fixedFlags names the flags behind schedule.Fixed's parameters.
var fixedFlags = map[string]string{
	"trace": "--fixed-schedule", "start offset": "--fixed-schedule-start-offset", "end offset": "--fixed-schedule-end-offset",
	"window": "--fixed-schedule-start-offset/--fixed-schedule-end-offset",
}

// plan builds the stages of l. ds is needed for fixed schedules (trace
// timestamps) and to size warmups.
func (c *config) plan(ds *datasets.Dataset, l load) (*plan, error) {
	concs, rates := l.concs, l.rates
	if c.SmoothnessSet && c.Smoothness <= 0 {
		return nil, cmdline.Usagef("--arrival-smoothness must be > 0, got %g", c.Smoothness)
	}
	for _, r := range []struct {
		flag string
		d    time.Duration
	}{{"--concurrency-ramp-duration", c.ConcurrencyRamp}, {"--request-rate-ramp-duration", c.RateRamp}} {
		if err := schedule.ValidateRamp(r.flag, r.d, c.Duration); err != nil {
			return nil, &cmdline.UsageError{Err: err}
		}
	}
	count := c.RequestCount
	if count == 0 && c.Duration == 0 && c.ConversationNum == 0 {
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
		return loadgen.Stage{Phase: metrics.Profile, Limit: limit, Schedule: sched, Count: count, SessionCount: c.ConversationNum, Duration: c.Duration}
	}
	ratio := c.TurnDelayRatio
	if ratio == 0 && !c.NoTurnDelays {
		ratio = 1 // a Config built without the command line
	}

	switch {
	case c.UserCentricRate > 0 || c.NumUsers > 0:
		if len(rates) > 0 || c.FixedSchedule {
			return nil, cmdline.Usagef("--user-centric-rate cannot be combined with --request-rate or --fixed-schedule")
		}
		if c.ConversationNum > 0 {
			return nil, cmdline.Usagef("--conversation-num does not bound user-centric runs: give --request-count or --benchmark-duration")
		}
		users, err := schedule.Users(c.UserCentricRate, max(c.NumUsers, 0), c.Seed,
			time.Duration(float64(c.TurnDelayMean)*ratio), time.Duration(float64(c.TurnDelayStd)*ratio))
		if err != nil {
			return nil, &cmdline.UsageError{Err: cmdline.ForFlags(err, map[string]string{"rate": "--user-centric-rate", "users": "--num-users",
				"think mean": "--conversation-turn-delay-mean", "think stddev": "--conversation-turn-delay-stddev"})}
		}
		p.mode, p.values, p.target, p.users = ModeUserCentric, []float64{c.UserCentricRate}, 0, users.N()
		st := profile(nil, nil)
		st.Users = users
		p.stages = append(p.stages, st)

	case c.FixedSchedule || (ds.HasTimestamps() && len(rates) == 0 && !c.NoFixedSchedule):
		if len(rates) > 0 {
			return nil, cmdline.Usagef("--fixed-schedule replays the trace's timestamps: drop --request-rate")
		}
		if c.SamplingStrategy != "" {
			return nil, cmdline.Usagef("--dataset-sampling-strategy does not apply to a fixed schedule: the trace's rows are replayed in timestamp order")
		}
		offsets, err := schedule.TraceOffsets(len(ds.Conversations), func(i int) (time.Duration, bool) {
			t := ds.Conversations[i].Turns[0]
			return t.Timestamp, t.HasTimestamp
		})
		if err != nil {
			return nil, &cmdline.UsageError{Err: fmt.Errorf("%s: %w", ds.Name, cmdline.ForFlags(err, fixedFlags))}
		}
		var opts []schedule.FixedOption
		if c.AutoOffset {
			opts = append(opts, schedule.AutoOffset())
		}
		if c.StartOffset > 0 {
			opts = append(opts, schedule.StartOffset(c.StartOffset))
		}
		if c.EndOffset > 0 {
			opts = append(opts, schedule.EndOffset(c.EndOffset))
		}
		replay, err := schedule.Fixed(offsets, opts...)
		if err != nil {
			return nil, &cmdline.UsageError{Err: cmdline.ForFlags(err, fixedFlags)}
		}
		st := profile(schedule.Constant(capAt(0)), replay)
		// The trace's rows are the sessions, in timestamp order; a session
		// of several turns (Bailian, WEKA, Mooncake session_id) sends them
		// all, so the request count is their turns'.
		st.Count = 0
		for _, r := range replay.Rows() {
			st.Count += len(ds.Conversations[r].Turns)
		}
		if c.RequestCount > 0 {
			st.Count = min(st.Count, c.RequestCount)
		}
		st.Conversation = replay.Row
		p.mode, p.values, p.total = ModeFixedSchedule, []float64{float64(replay.Len())}, st.Count
		p.stages = append(p.stages, st)

	case len(rates) > 0:
		if len(rates) > 1 && c.RateRamp > 0 {
			return nil, cmdline.Usagef("--request-rate-ramp-duration applies to one rate, not a stage list")
		}
		p.mode, p.values, p.target, p.rateCap = ModeRequestRate, rates, rates[0], capAt(0)
		for i, r := range rates {
			var opts []schedule.Option
			if c.RateRamp > 0 {
				opts = append(opts, schedule.RampUp(c.RateRamp))
			}
			sched, err := schedule.Arrival(c.ArrivalPattern, r, c.Smoothness, c.ValueSeed(i), opts...)
			if err != nil {
				return nil, &cmdline.UsageError{Err: cmdline.ForFlags(err, map[string]string{"rate": "--request-rate", "smoothness": "--arrival-smoothness", "pattern": "--arrival-pattern"})}
			}
			p.stages = append(p.stages, profile(schedule.Constant(capAt(0)), sched))
		}

	default:
		if len(concs) == 0 {
			concs = []int{1}
		}
		if len(concs) > 1 && c.ConcurrencyRamp > 0 {
			return nil, cmdline.Usagef("--concurrency-ramp-duration applies to one concurrency, not a stage list")
		}
		p.mode = ModeConcurrency
		for _, n := range concs {
			limit := schedule.Constant(n)
			if c.ConcurrencyRamp > 0 {
				limit = schedule.ConcurrencyRamp(n, c.ConcurrencyRamp)
			}
			p.values = append(p.values, float64(n))
			st := profile(limit, nil)
			if c.RequestCount == 0 && st.Count > 0 {
				st.Count = defaultCount(n)
			}
			p.stages = append(p.stages, st)
		}
	}
	if p.total > 0 {
		// Bounded by counts: the stages' counts summed.
		p.total = 0
		for _, st := range p.stages {
			p.total += st.Count
		}
	}
	if c.WarmupCount > 0 || c.WarmupDuration > 0 {
		warm, err := c.warmupStage(p.stages[0], p.target, l.concs)
		if err != nil {
			return nil, err
		}
		p.stages = append([]loadgen.Stage{warm}, p.stages...)
	}
	if p.mode != ModeFixedSchedule {
		strategy := c.SamplingStrategy
		if strategy == "" {
			strategy = datasets.DefaultSampling(ds.Type)
		}
		if strategy != datasets.SampleSequential {
			pick := datasets.NewSampler(strategy, len(ds.Conversations), c.Seed).Pick
			for i := range p.stages {
				p.stages[i].Pick = pick
			}
		}
	}
	if c.ConversationNum > 0 && c.RequestCount == 0 && c.Duration == 0 {
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
