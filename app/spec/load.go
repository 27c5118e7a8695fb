package spec

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/loadgen/schedule"
)

// Load is the load a run applies: its stages' load and bounds, the warmup
// before them, how requests are cancelled or held back, and how the plan
// is repeated or swept.
type Load struct {
	// Concs and Rates are --concurrency and --request-rate: a value or a
	// stage list each (at most one a list).
	Concs []int
	Rates []float64
	// RateSeries, when set, is the profile's rate over time
	// (--request-rate-series).
	RateSeries []schedule.RatePoint
	// Pattern, Smoothness (with SmoothnessSet when given) shape arrivals.
	Pattern       string
	Smoothness    float64
	SmoothnessSet bool
	// ConcurrencyRamp and RateRamp ramp a one-stage load up.
	ConcurrencyRamp, RateRamp time.Duration
	KneeFactor                float64
	Fixed                     Fixed
	// UserCentricRate and NumUsers are user-centric mode.
	UserCentricRate float64
	NumUsers        int
	TurnDelay       TurnDelay
	// A profile stage ends after RequestCount requests, ConversationNum
	// sessions or Duration (0: not by that); none given: AIPerf's default
	// count.
	RequestCount, ConversationNum int
	Duration                      time.Duration
	Warmup                        Warmup
	// FailedThreshold stops the run once this fraction failed (0: never).
	FailedThreshold float64
	// CancellationRate is the percentage of profile requests cancelled on
	// purpose CancellationDelay after their send.
	CancellationRate  float64
	CancellationDelay time.Duration
	// PrefillConcurrency caps requests not yet past their first token (0:
	// no cap), rising from 1 over PrefillRamp.
	PrefillConcurrency int
	PrefillRamp        time.Duration
	// Sweep is a sweep over list flags (nil: none beyond a --concurrency
	// or --request-rate list alone).
	Sweep   *Sweep
	Repeats Repeats
	// SweepCooldown waits between a sweep's stages.
	SweepCooldown time.Duration
}

// Fixed is the fixed schedule's flags: replay the dataset's timestamps.
type Fixed struct {
	On, Off    bool // --fixed-schedule, --no-fixed-schedule
	AutoOffset bool
	Start, End time.Duration // the window (0: unbounded)
}

// TurnDelay is the think time before later turns (synthetic
// conversations, user-centric users) and the ratio every turn delay is
// multiplied by.
type TurnDelay struct {
	Mean, Stddev time.Duration
	// Ratio multiplies every turn delay; None is set when the ratio 0 was
	// given (every delay removed, as AIPerf's ratio multiplies).
	Ratio float64
	None  bool
}

// Scaled is d multiplied by the ratio (a Config built without the command
// line leaves the ratio 0: unscaled).
func (t TurnDelay) Scaled(d time.Duration) time.Duration {
	if t.Ratio == 0 && !t.None {
		return d
	}
	return time.Duration(float64(d) * t.Ratio)
}

// Warmup is the stage before the first profile stage: by Count, by
// Duration or both (whichever ends first); its load Concurrency or Rate
// (0: the first stage's), its prefill cap PrefillConcurrency (0: the
// profile's).
type Warmup struct {
	Count              int
	Duration           time.Duration
	Concurrency        int
	Rate               float64
	PrefillConcurrency int
	// Sessions bounds it by sessions too (--num-warmup-sessions).
	Sessions int
	// Pattern is its arrivals under a rate ("": the profile's).
	Pattern string
	// ConcurrencyRamp, RateRamp and PrefillRamp ramp its load up (0:
	// none).
	ConcurrencyRamp, RateRamp, PrefillRamp time.Duration
	// Drain holds the profile back until the warmup's requests are done,
	// each given Grace after the warmup stops issuing
	// (--warmup-grace-period; without it the warmup flows into the
	// profile).
	Drain bool
	Grace time.Duration
}

// Enabled reports whether the run warms up.
func (w Warmup) Enabled() bool { return w.Count > 0 || w.Duration > 0 || w.Sessions > 0 }

// Repeats is --num-profile-runs: the whole plan N times (1: once),
// Cooldown apart, summarised with Level intervals.
type Repeats struct {
	N        int
	Cooldown time.Duration
	Level    float64
	// Converge, when set, stops the repeats early (--convergence-metric).
	Converge *Convergence
	// WarmupEveryRun warms up before every run, not the first only;
	// SeedPerRun draws each run's seed when none was given (instead of
	// seeding all 42); VarySeed derives each run's seed from the run's
	// and its number.
	WarmupEveryRun, SeedPerRun, VarySeed bool
}

// maxProfileRuns is AIPerf's bound on --num-profile-runs.
const maxProfileRuns = 10

// Bounds past any run one client can make (cmdline's, which checks the
// flags against them).
const (
	MaxConcurrency  = cmdline.MaxConcurrency
	MaxRate         = cmdline.MaxRate
	MaxRequestCount = cmdline.MaxRequestCount
)

// parseBounds checks the counts, lengths and durations that bound a run.
func parseBounds(s *Spec, c *cmdline.Config) (err error) {
	if err := checkBounds(c); err != nil {
		return err
	}
	l := &s.Load
	l.RequestCount, l.ConversationNum, l.Duration = c.RequestCount, c.ConversationNum, c.Duration
	l.FailedThreshold, l.KneeFactor = c.FailedThreshold, c.KneeFactor
	l.Warmup = Warmup{Count: c.WarmupCount, Duration: c.WarmupDuration, Concurrency: c.WarmupConcurrency,
		Rate: c.WarmupRate, PrefillConcurrency: c.WarmupPrefillConcurrency, Sessions: c.WarmupSessions,
		Pattern: c.WarmupPattern, ConcurrencyRamp: c.WarmupConcurrencyRamp, RateRamp: c.WarmupRateRamp, PrefillRamp: c.WarmupPrefillRamp}
	if c.WarmupGrace != "" {
		l.Warmup.Drain = true
		if l.Warmup.Grace, err = warmupGrace(c.WarmupGrace); err != nil {
			return err
		}
	}
	l.UserCentricRate, l.NumUsers = c.UserCentricRate, c.NumUsers
	l.TurnDelay = TurnDelay{Mean: c.TurnDelayMean, Stddev: c.TurnDelayStd, Ratio: c.TurnDelayRatio, None: c.NoTurnDelays}
	l.Pattern, l.Smoothness, l.SmoothnessSet = c.ArrivalPattern, c.Smoothness, c.SmoothnessSet
	l.ConcurrencyRamp, l.RateRamp = c.ConcurrencyRamp, c.RateRamp
	l.Fixed = Fixed{On: c.FixedSchedule, Off: c.NoFixedSchedule, AutoOffset: c.AutoOffset, Start: c.StartOffset, End: c.EndOffset}
	return nil
}

// checkBounds is parseBounds' checks, which every value of a sweep passes
// too.
func checkBounds(c *cmdline.Config) error {
	switch {
	case c.RequestCount < 0 || c.ZeroCount:
		return cmdline.Usagef("--request-count must be ≥ 1, got %d (leave it out for AIPerf's default: max(10, 2 × concurrency))", c.RequestCount)
	case c.RequestCount > MaxRequestCount:
		return cmdline.Usagef("--request-count %d is more than one client can send (at most %d)", c.RequestCount, MaxRequestCount)
	case c.ZeroDuration:
		return cmdline.Usagef("--benchmark-duration must be > 0, got 0 (leave it out to bound the run by its request count)")
	case c.ISL > datasets.MaxRequestTokens || c.OSL > datasets.MaxRequestTokens:
		return cmdline.Usagef("--isl %d and --osl %d: each at most %d tokens (docs/datasets-limits.md)", c.ISL, c.OSL, datasets.MaxRequestTokens)
	case c.NumUsers > MaxConcurrency || c.WarmupConcurrency > MaxConcurrency || c.PrefillConcurrency > MaxConcurrency:
		return cmdline.Usagef("--num-users, --warmup-concurrency and --prefill-concurrency: at most %d (each in-flight request holds a socket)", MaxConcurrency)
	case c.UserCentricRate > MaxRate || c.WarmupRate > MaxRate:
		return cmdline.Usagef("--user-centric-rate and --warmup-request-rate: at most %d requests a second", MaxRate)
	case c.WarmupCount < 0:
		return cmdline.Usagef("--warmup-request-count must be ≥ 0, got %d", c.WarmupCount)
	case c.Duration < 0:
		return cmdline.Usagef("--benchmark-duration must be > 0, got %s", c.Duration)
	case c.Grace < 0:
		return cmdline.Usagef("--benchmark-grace-period must be ≥ 0, got %s", c.Grace)
	case c.Timeout <= 0:
		return cmdline.Usagef("--request-timeout-seconds must be > 0")
	case c.ISL < 0 || c.ISL == 0 && !syntheticMedia(c):
		return cmdline.Usagef("--isl must be ≥ 1, got %d", c.ISL)
	case c.OSL < 0:
		return cmdline.Usagef("--osl must be ≥ 0, got %d", c.OSL)
	case c.ISLStddev < 0 || c.OSLStddev < 0:
		return cmdline.Usagef("--isl-stddev and --osl-stddev must be ≥ 0")
	case c.FailedThreshold < 0 || c.FailedThreshold > 1:
		return cmdline.Usagef("--failed-request-threshold must be between 0 and 1, got %g", c.FailedThreshold)
	case c.TurnsMean < 0:
		return cmdline.Usagef("--conversation-turn-mean must be ≥ 1, got %d", c.TurnsMean)
	case c.TurnsStddev < 0:
		return cmdline.Usagef("--conversation-turn-stddev must be ≥ 0, got %d", c.TurnsStddev)
	case c.TurnDelayMean < 0 || c.TurnDelayStd < 0:
		return cmdline.Usagef("--conversation-turn-delay-mean and -stddev must be ≥ 0")
	case c.TurnDelayRatio < 0:
		return cmdline.Usagef("--conversation-turn-delay-ratio must be ≥ 0, got %g", c.TurnDelayRatio)
	case c.ConversationNum < 0:
		return cmdline.Usagef("--conversation-num must be ≥ 1, got %d", c.ConversationNum)
	case c.NumDatasetEntries < 0:
		return cmdline.Usagef("--num-dataset-entries must be ≥ 1, got %d", c.NumDatasetEntries)
	case !validSampling(&c.SamplingStrategy):
		return cmdline.Usagef("--dataset-sampling-strategy %q: want sequential, random or shuffle", c.SamplingStrategy)
	case c.KneeFactor < 0:
		return cmdline.Usagef("--knee-factor must be > 1, got %g", c.KneeFactor)
	case c.NumUsers > 0 && c.UserCentricRate <= 0:
		return cmdline.Usagef("--num-users needs --user-centric-rate (the users' combined requests per second)")
	case c.GPUInterval < 0:
		return cmdline.Usagef("--gpu-telemetry-interval must be > 0")
	case c.ServerInterval < 0:
		return cmdline.Usagef("--server-metrics-interval must be > 0")
	case c.ServerTimeout < 0:
		return cmdline.Usagef("--server-metrics-timeout must be > 0")
	case c.RetokenizeOutput && c.UseServerTokenCount:
		return cmdline.Usagef("--retokenize-output and --use-server-token-count ask for opposite output counts: give one")
	}
	return checkWarmup(c)
}

// validSampling checks a --dataset-sampling-strategy value and normalises
// it in place.
func validSampling(s *string) bool {
	v, err := datasets.ParseSampling(*s)
	if err != nil {
		return false
	}
	*s = v
	return true
}

// checkWarmup checks the warmup flags. As AIPerf's, a warmup needs a bound
// (a count or a duration); its load alone starts none.
func checkWarmup(c *cmdline.Config) error {
	switch {
	case c.WarmupDuration < 0:
		return cmdline.Usagef("--warmup-duration must be ≥ 0, got %g", c.WarmupDuration.Seconds())
	case c.WarmupDuration == cmdline.Forever:
		return cmdline.Usagef("--warmup-duration must be finite (the warmup must end)")
	case c.WarmupConcurrency < 0:
		return cmdline.Usagef("--warmup-concurrency must be ≥ 1, got %d", c.WarmupConcurrency)
	case c.WarmupRate < 0 || math.IsNaN(c.WarmupRate) || math.IsInf(c.WarmupRate, 0):
		return cmdline.Usagef("--warmup-request-rate must be > 0, got %g", c.WarmupRate)
	case c.WarmupSessions < 0:
		return cmdline.Usagef("--num-warmup-sessions must be ≥ 1, got %d", c.WarmupSessions)
	case (c.WarmupConcurrency > 0 || c.WarmupRate > 0) && c.WarmupCount == 0 && c.WarmupDuration == 0 && c.WarmupSessions == 0:
		flag := "--warmup-concurrency"
		if c.WarmupRate > 0 {
			flag = "--warmup-request-rate"
		}
		return cmdline.Usagef("%s sets the warmup's load: bound the warmup with --warmup-request-count, --warmup-duration or --num-warmup-sessions", flag)
	}
	return checkWarmupShape(c)
}

// checkWarmupShape checks the warmup's own pattern, ramps and grace: each
// needs a warmup, and a load of the kind it shapes (a rate for the
// pattern and the rate ramp, a concurrency for the concurrency ramp, a
// prefill cap for its ramp), so none is accepted and left unused.
func checkWarmupShape(c *cmdline.Config) error {
	warm := c.WarmupCount > 0 || c.WarmupDuration > 0 || c.WarmupSessions > 0
	rate := c.WarmupRate > 0 || ((c.RequestRate != "" || c.RequestRateSeries != "") && c.WarmupConcurrency == 0)
	for _, f := range []struct {
		flag string
		set  bool
	}{{"--warmup-arrival-pattern", c.WarmupPattern != ""}, {"--warmup-concurrency-ramp-duration", c.WarmupConcurrencyRamp != 0},
		{"--warmup-request-rate-ramp-duration", c.WarmupRateRamp != 0}, {"--warmup-prefill-concurrency-ramp-duration", c.WarmupPrefillRamp != 0},
		{"--warmup-grace-period", c.WarmupGrace != ""}} {
		if f.set && !warm {
			return cmdline.Usagef("%s shapes the warmup: give one with --warmup-request-count, --warmup-duration or --num-warmup-sessions", f.flag)
		}
	}
	for _, r := range []struct {
		flag string
		d    time.Duration
	}{{"--warmup-concurrency-ramp-duration", c.WarmupConcurrencyRamp}, {"--warmup-request-rate-ramp-duration", c.WarmupRateRamp},
		{"--warmup-prefill-concurrency-ramp-duration", c.WarmupPrefillRamp}} {
		if err := schedule.ValidateRamp(r.flag, r.d, c.WarmupDuration); err != nil {
			return &cmdline.UsageError{Err: err}
		}
	}
	switch {
	case c.WarmupPattern != "" && !rate:
		return cmdline.Usagef("--warmup-arrival-pattern shapes a warmup under a rate: give --warmup-request-rate (or a --request-rate the warmup takes)")
	case c.WarmupRateRamp != 0 && !rate:
		return cmdline.Usagef("--warmup-request-rate-ramp-duration ramps a warmup under a rate: give --warmup-request-rate (or a --request-rate the warmup takes)")
	case c.WarmupConcurrencyRamp != 0 && c.WarmupRate > 0:
		return cmdline.Usagef("--warmup-concurrency-ramp-duration ramps a closed-loop warmup: not with --warmup-request-rate")
	case c.WarmupConcurrencyRamp != 0 && c.WarmupConcurrency == 0 && c.Concurrency == "":
		return cmdline.Usagef("--warmup-concurrency-ramp-duration ramps the warmup's concurrency: give --warmup-concurrency or --concurrency")
	case c.WarmupPrefillRamp != 0 && c.WarmupPrefillConcurrency == 0 && c.PrefillConcurrency == 0:
		return cmdline.Usagef("--warmup-prefill-concurrency-ramp-duration ramps the warmup's prefill cap: give --warmup-prefill-concurrency or --prefill-concurrency")
	}
	if c.WarmupPattern != "" {
		if _, err := schedule.Arrival(c.WarmupPattern, 1, max(c.Smoothness, 1), 0); err != nil {
			return cmdline.Usagef("--warmup-arrival-pattern %q: want constant, poisson or gamma", c.WarmupPattern)
		}
	}
	if c.WarmupGrace != "" {
		_, err := warmupGrace(c.WarmupGrace)
		return err
	}
	return nil
}

// warmupGrace reads --warmup-grace-period: seconds ≥ 0, or inf (every
// warmup request finishes).
func warmupGrace(v string) (time.Duration, error) {
	if strings.EqualFold(strings.TrimSpace(v), "inf") {
		return cmdline.Forever, nil
	}
	d, _, err := seconds("--warmup-grace-period", v, true)
	return d, err
}

// parseRepeats checks the repeated-run flags (and --sweep-mode, given
// without a list to combine).
func parseRepeats(s *Spec, c *cmdline.Config) error {
	switch {
	case c.NumProfileRuns < 0 || c.NumProfileRuns > maxProfileRuns:
		return cmdline.Usagef("--num-profile-runs must be between 1 and %d, got %d", maxProfileRuns, c.NumProfileRuns)
	case c.ProfileRunCooldown < 0:
		return cmdline.Usagef("--profile-run-cooldown-seconds must be ≥ 0, got %s", c.ProfileRunCooldown)
	case c.ConfidenceLevel != 0 && (c.ConfidenceLevel <= 0 || c.ConfidenceLevel >= 1):
		return cmdline.Usagef("--confidence-level must be between 0 and 1 (exclusive), got %g", c.ConfidenceLevel)
	case c.SweepMode != "" && c.SweepMode != cmdline.SweepGrid && c.SweepMode != cmdline.SweepZip:
		return cmdline.Usagef("--sweep-mode %q: want grid or zip", c.SweepMode)
	case c.NumProfileRuns > 1 && (c.Search != nil || c.ControlAddr != ""):
		return cmdline.Usagef("--num-profile-runs repeats a planned run: not with a live or search session")
	}
	for _, p := range []struct {
		on, off bool
		yes, no string
	}{{c.WarmupFirstOnly, c.WarmupEveryRun, "--profile-run-disable-warmup-after-first", "--no-profile-run-disable-warmup-after-first"},
		{c.ConsistentSeed, c.NoConsistentSeed, "--set-consistent-seed", "--no-set-consistent-seed"},
		{c.VarySeed, c.NoVarySeed, "--vary-seed-per-trial", "--no-vary-seed-per-trial"}} {
		if p.on && p.off {
			return cmdline.Usagef("%s and %s: give one", p.yes, p.no)
		}
	}
	cv, err := parseConvergence(c)
	if err != nil {
		return err
	}
	s.Load.Repeats = Repeats{N: max(c.NumProfileRuns, 1), Cooldown: c.ProfileRunCooldown, Level: c.ConfidenceLevel, Converge: cv,
		WarmupEveryRun: c.WarmupEveryRun, SeedPerRun: c.NoConsistentSeed, VarySeed: c.VarySeed}
	switch strings.ToLower(strings.TrimSpace(c.SweepOrder)) {
	case "", "repeated":
	case "independent":
		return cmdline.Usagef("--parameter-sweep-mode independent: surge repeats a sweep whole, run after run (AIPerf's repeated mode), and does not run every trial of one value before the next")
	default:
		return cmdline.Usagef("--parameter-sweep-mode %q: want repeated (or independent, which surge refuses)", c.SweepOrder)
	}
	if c.SweepCooldown < 0 {
		return cmdline.Usagef("--parameter-sweep-cooldown-seconds must be ≥ 0")
	}
	s.Load.SweepCooldown = c.SweepCooldown
	if s.Load.Repeats.Level == 0 {
		s.Load.Repeats.Level = 0.95
	}
	return nil
}

// parseLoad reads --concurrency and --request-rate, each a value or a
// list.
func parseLoad(s *Spec, c *cmdline.Config) (err error) {
	l := &s.Load
	if c.Concurrency != "" {
		if l.Concs, err = schedule.ParseIntStages("--concurrency", c.Concurrency); err != nil {
			return &cmdline.UsageError{Err: err}
		}
	}
	if c.RequestRate != "" {
		if l.Rates, err = schedule.ParseStages("--request-rate", c.RequestRate); err != nil {
			return &cmdline.UsageError{Err: err}
		}
	}
	// A fixed cap under a rate sweep, or a fixed rate under a concurrency
	// sweep, are both fine; two sweeps are not.
	if len(l.Concs) > 1 && len(l.Rates) > 1 {
		return cmdline.Usagef("--concurrency and --request-rate cannot both list stages: sweep one of them")
	}
	for _, n := range l.Concs {
		if n > MaxConcurrency {
			return cmdline.Usagef("--concurrency %d is more than one client can hold in flight (at most %d: each request holds a socket)", n, MaxConcurrency)
		}
	}
	for _, r := range l.Rates {
		switch {
		case r > MaxRate:
			return cmdline.Usagef("--request-rate %g is more than one client can send (at most %d requests a second)", r, MaxRate)
		case r < cmdline.MinRate:
			return cmdline.Usagef("--request-rate %g is slower than one request in 11.6 days (at least %g a second): a unit mistake?", r, cmdline.MinRate)
		}
	}
	return nil
}

// MaxConcurrency is the largest concurrency cap of any stage (0: none).
func (l *Load) MaxConcurrency() int {
	m := 0
	for _, x := range l.Concs {
		m = max(m, x)
	}
	return m
}

// parseLoadControl checks --request-cancellation-* and
// --prefill-concurrency and --warmup-prefill-concurrency against the run
// (AIPerf's bounds: a percentage, a delay ≥ 0; a prefill cap that streams
// and is at most the concurrency).
func parseLoadControl(s *Spec, c *cmdline.Config) error {
	concs := s.Load.Concs
	switch {
	case c.CancellationRate < 0 || c.CancellationRate > 100 || c.CancellationRate != c.CancellationRate:
		return cmdline.Usagef("--request-cancellation-rate is a percentage between 0 and 100, got %g", c.CancellationRate)
	case c.CancellationDelay < 0:
		return cmdline.Usagef("--request-cancellation-delay must be ≥ 0 seconds, got %g", c.CancellationDelay.Seconds())
	case c.PrefillConcurrency < 0:
		return cmdline.Usagef("--prefill-concurrency must be ≥ 1, got %d", c.PrefillConcurrency)
	case c.WarmupPrefillConcurrency < 0:
		return cmdline.Usagef("--warmup-prefill-concurrency must be ≥ 1, got %d", c.WarmupPrefillConcurrency)
	case c.WarmupPrefillConcurrency > 0 && c.WarmupCount == 0 && c.WarmupDuration == 0:
		return cmdline.Usagef("--warmup-prefill-concurrency caps the warmup's prefill: bound the warmup with --warmup-request-count or --warmup-duration")
	case c.WarmupPrefillConcurrency > 0 && c.WarmupConcurrency > 0 && c.WarmupPrefillConcurrency > c.WarmupConcurrency:
		return cmdline.Usagef("--warmup-prefill-concurrency %d is more than --warmup-concurrency %d: at most the requests in flight can be in prefill", c.WarmupPrefillConcurrency, c.WarmupConcurrency)
	case c.PrefillRamp != 0 && c.PrefillConcurrency == 0:
		return cmdline.Usagef("--prefill-concurrency-ramp-duration ramps --prefill-concurrency: give it")
	case c.PrefillConcurrency == 0 && c.WarmupPrefillConcurrency == 0:
	case !c.Streaming || !s.Endpoint.Info().Streams:
		flag := "--prefill-concurrency"
		if c.PrefillConcurrency == 0 {
			flag = "--warmup-prefill-concurrency"
		}
		return cmdline.Usagef("%s needs --streaming and an endpoint type that streams: a request's first token ends its prefill", flag)
	case c.PrefillConcurrency == 0:
	case len(concs) > 0 && c.PrefillConcurrency > slices.Min(concs):
		return cmdline.Usagef("--prefill-concurrency %d is more than --concurrency %d: at most the requests in flight can be in prefill", c.PrefillConcurrency, slices.Min(concs))
	default:
		if err := schedule.ValidateRamp("--prefill-concurrency-ramp-duration", c.PrefillRamp, c.Duration); err != nil {
			return &cmdline.UsageError{Err: err}
		}
	}
	l := &s.Load
	l.CancellationRate, l.CancellationDelay = c.CancellationRate, c.CancellationDelay
	l.PrefillConcurrency, l.PrefillRamp = c.PrefillConcurrency, c.PrefillRamp
	return nil
}

// fixedFlags names the flags behind schedule.Fixed's parameters.
var fixedFlags = map[string]string{
	"trace": "--fixed-schedule", "start offset": "--fixed-schedule-start-offset", "end offset": "--fixed-schedule-end-offset",
	"window": "--fixed-schedule-start-offset/--fixed-schedule-end-offset",
}

// FixedFlags names the flags behind schedule.Fixed's parameters, for
// errors about a trace's window.
func FixedFlags() map[string]string { return fixedFlags }

// parsePlan checks the load as the plan will build it: every value of a
// sweep has been checked the same way (parseSweep).
func parsePlan(s *Spec, c *cmdline.Config) error {
	return checkPlan(c, s.Load.Concs, s.Load.Rates)
}

// checkPlan checks c's load as the plan builds its stages from it: the
// arrivals, the ramps, user-centric mode and the warmup's own load.
func checkPlan(c *cmdline.Config, concs []int, rates []float64) error {
	if c.SmoothnessSet && c.Smoothness <= 0 {
		return cmdline.Usagef("--arrival-smoothness must be > 0, got %g", c.Smoothness)
	}
	for _, r := range []struct {
		flag string
		d    time.Duration
	}{{"--concurrency-ramp-duration", c.ConcurrencyRamp}, {"--request-rate-ramp-duration", c.RateRamp}} {
		if err := schedule.ValidateRamp(r.flag, r.d, c.Duration); err != nil {
			return &cmdline.UsageError{Err: err}
		}
	}
	arrival := map[string]string{"rate": "--request-rate", "smoothness": "--arrival-smoothness", "pattern": "--arrival-pattern"}
	switch {
	case c.UserCentricRate > 0 || c.NumUsers > 0:
		if len(rates) > 0 || c.FixedSchedule {
			return cmdline.Usagef("--user-centric-rate cannot be combined with --request-rate or --fixed-schedule")
		}
		if c.ConversationNum > 0 {
			return cmdline.Usagef("--conversation-num does not bound user-centric runs: give --request-count or --benchmark-duration")
		}
		td := TurnDelay{Ratio: c.TurnDelayRatio, None: c.NoTurnDelays}
		if _, err := schedule.Users(c.UserCentricRate, max(c.NumUsers, 0), c.Seed, td.Scaled(c.TurnDelayMean), td.Scaled(c.TurnDelayStd)); err != nil {
			return &cmdline.UsageError{Err: cmdline.ForFlags(err, map[string]string{"rate": "--user-centric-rate", "users": "--num-users",
				"think mean": "--conversation-turn-delay-mean", "think stddev": "--conversation-turn-delay-stddev"})}
		}
	case c.FixedSchedule && len(rates) > 0:
		return cmdline.Usagef("--fixed-schedule replays the trace's timestamps: drop --request-rate")
	case c.FixedSchedule && c.SamplingStrategy != "":
		return cmdline.Usagef("--dataset-sampling-strategy does not apply to a fixed schedule: the trace's rows are replayed in timestamp order")
	case c.FixedSchedule:
	case len(rates) > 0:
		if len(rates) > 1 && c.RateRamp > 0 {
			return cmdline.Usagef("--request-rate-ramp-duration applies to one rate, not a stage list")
		}
		for _, r := range rates {
			if _, err := schedule.Arrival(c.ArrivalPattern, r, c.Smoothness, c.Seed); err != nil {
				return &cmdline.UsageError{Err: cmdline.ForFlags(err, arrival)}
			}
		}
	default:
		if len(concs) > 1 && c.ConcurrencyRamp > 0 {
			return cmdline.Usagef("--concurrency-ramp-duration applies to one concurrency, not a stage list")
		}
	}
	if c.WarmupRate > 0 && (c.WarmupCount > 0 || c.WarmupDuration > 0) {
		if _, err := schedule.Arrival(c.ArrivalPattern, c.WarmupRate, c.Smoothness, c.Seed); err != nil {
			arrival["rate"] = "--warmup-request-rate"
			return &cmdline.UsageError{Err: cmdline.ForFlags(err, arrival)}
		}
	}
	return nil
}
