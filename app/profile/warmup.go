package profile

import (
	"math"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// warmupSeed offsets the run's seed for the warmup's arrivals, so they are
// not the first profile stage's.
const warmupSeed = 0x5741524d // "WARM"

// warmupStage is the stage before the first profile stage, first: by
// count, by time, or both (whichever ends first, as AIPerf's). Its load is
// --warmup-request-rate (open loop, capped by --warmup-concurrency or the
// --concurrency given), else --warmup-concurrency (closed loop), else the
// first stage's: its concurrency, or for an open-loop stage a closed loop
// with about one second of the target rate in flight.
func warmupStage(s *spec.Spec, first loadgen.Stage, target float64) (loadgen.Stage, error) {
	w, l := s.Load.Warmup, &s.Load
	capFirst := 0
	if len(l.Concs) > 0 {
		capFirst = l.Concs[0]
	}
	warm := loadgen.Stage{Phase: metrics.Warmup, Limit: first.Limit, Users: first.Users, Count: w.Count, Duration: w.Duration,
		SessionCount: w.Sessions, Drain: w.Drain, DrainGrace: w.Grace}
	rate := w.Rate
	if rate == 0 && w.Concurrency == 0 && first.Schedule != nil && (w.Pattern != "" || w.RateRamp > 0) {
		// Its own pattern or ramp: open loop at the first stage's rate,
		// as AIPerf's warmup takes the profile's.
		rate = target
	}
	switch {
	case rate > 0:
		pattern := l.Pattern
		if w.Pattern != "" {
			pattern = w.Pattern
		}
		var opts []schedule.Option
		if w.RateRamp > 0 {
			opts = append(opts, schedule.RampUp(w.RateRamp))
		}
		sched, err := schedule.Arrival(pattern, rate, l.Smoothness, s.Seed()+warmupSeed, opts...)
		if err != nil {
			return warm, &cmdline.UsageError{Err: err} // the spec checked it
		}
		warm.Users, warm.Schedule, warm.Limit = nil, sched, schedule.Constant(capFirst)
		if w.Concurrency > 0 {
			warm.Limit = schedule.Constant(w.Concurrency)
		}
	case w.Concurrency > 0:
		warm.Users, warm.Limit = nil, schedule.Constant(w.Concurrency)
	case first.Schedule != nil && capFirst == 0:
		warm.Limit = schedule.Constant(int(math.Max(1, math.Min(32, target))))
	}
	if w.ConcurrencyRamp > 0 {
		n := w.Concurrency
		if n == 0 {
			n = capFirst
		}
		warm.Users, warm.Limit = nil, schedule.ConcurrencyRamp(n, w.ConcurrencyRamp)
	}
	return warm, nil
}

// warmupConversations is how many conversations the warmup takes: its
// count, or for a warmup bounded by time alone a guess from its rate (a
// closed loop's: 100 a second); past the guess they cycle.
func warmupConversations(w spec.Warmup) int {
	if w.Sessions > 0 && (w.Count == 0 || w.Sessions < w.Count) {
		return w.Sessions
	}
	if w.Count > 0 || w.Duration == 0 {
		return w.Count
	}
	rate := w.Rate
	if rate == 0 {
		rate = 100
	}
	return int(min(rate*w.Duration.Seconds()*1.1+1, maxPrompts))
}
