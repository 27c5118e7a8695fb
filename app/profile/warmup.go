package profile

import (
	"math"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// warmupSeed offsets the run's seed for the warmup's arrivals, so they are
// not the first profile stage's.
const warmupSeed = 0x5741524d // "WARM"

// validateWarmup checks the warmup flags. As AIPerf's, a warmup needs a
// bound (a count or a duration); its load alone starts none.
func (c *config) validateWarmup() error {
	switch {
	case c.WarmupDuration < 0:
		return cmdline.Usagef("--warmup-duration must be ≥ 0, got %g", c.WarmupDuration.Seconds())
	case c.WarmupDuration == cmdline.Forever:
		return cmdline.Usagef("--warmup-duration must be finite (the warmup must end)")
	case c.WarmupConcurrency < 0:
		return cmdline.Usagef("--warmup-concurrency must be ≥ 1, got %d", c.WarmupConcurrency)
	case c.WarmupRate < 0 || math.IsNaN(c.WarmupRate) || math.IsInf(c.WarmupRate, 0):
		return cmdline.Usagef("--warmup-request-rate must be > 0, got %g", c.WarmupRate)
	case (c.WarmupConcurrency > 0 || c.WarmupRate > 0) && c.WarmupCount == 0 && c.WarmupDuration == 0:
		flag := "--warmup-concurrency"
		if c.WarmupRate > 0 {
			flag = "--warmup-request-rate"
		}
		return cmdline.Usagef("%s sets the warmup's load: bound the warmup with --warmup-request-count or --warmup-duration", flag)
	}
	return nil
}

// warmupStage is the stage before the first profile stage, first: by
// count, by time, or both (whichever ends first, as AIPerf's). Its load is
// --warmup-request-rate (open loop, capped by --warmup-concurrency or the
// --concurrency given), else --warmup-concurrency (closed loop), else the
// first stage's: its concurrency, or for an open-loop stage a closed loop
// with about one second of the target rate in flight. concs is
// --concurrency as given (none: no cap).
func (c *config) warmupStage(first loadgen.Stage, target float64, concs []int) (loadgen.Stage, error) {
	capFirst := 0
	if len(concs) > 0 {
		capFirst = concs[0]
	}
	warm := loadgen.Stage{Phase: metrics.Warmup, Limit: first.Limit, Users: first.Users, Count: c.WarmupCount, Duration: c.WarmupDuration}
	switch {
	case c.WarmupRate > 0:
		sched, err := schedule.Arrival(c.ArrivalPattern, c.WarmupRate, c.Smoothness, c.Seed+warmupSeed)
		if err != nil {
			return warm, &cmdline.UsageError{Err: cmdline.ForFlags(err, map[string]string{"rate": "--warmup-request-rate", "smoothness": "--arrival-smoothness", "pattern": "--arrival-pattern"})}
		}
		warm.Users, warm.Schedule, warm.Limit = nil, sched, schedule.Constant(capFirst)
		if c.WarmupConcurrency > 0 {
			warm.Limit = schedule.Constant(c.WarmupConcurrency)
		}
	case c.WarmupConcurrency > 0:
		warm.Users, warm.Limit = nil, schedule.Constant(c.WarmupConcurrency)
	case first.Schedule != nil && capFirst == 0:
		warm.Limit = schedule.Constant(int(math.Max(1, math.Min(32, target))))
	}
	return warm, nil
}

// warmupConversations is how many conversations the warmup takes: its
// count, or for a warmup bounded by time alone a guess from its rate (a
// closed loop's: 100 a second); past the guess they cycle.
func (c *config) warmupConversations() int {
	if c.WarmupCount > 0 || c.WarmupDuration == 0 {
		return c.WarmupCount
	}
	rate := c.WarmupRate
	if rate == 0 {
		rate = 100
	}
	return int(min(rate*c.WarmupDuration.Seconds()*1.1+1, maxPrompts))
}
