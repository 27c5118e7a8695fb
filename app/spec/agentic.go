package spec

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/schedule"
)

// Agentic is the agent workload: the client's tool loop, sessions that
// arrive on their own clock, agentic replay (AIPerf's trajectory
// sampling, phase starts, agentic warmup and idle-gap cap) and its named
// scenario, and the embedded mock's agent behaviour.
type Agentic struct {
	// ToolLoop answers tool calls (nil: off).
	ToolLoop *ToolLoop
	// SessionArrival starts sessions on its own clock (nil: off).
	SessionArrival *SessionArrival
	// Replay runs lanes of agentic replay (nil: off).
	Replay *Replay
	// Scenario is --scenario ("": none); UnsafeOverride turned its lock
	// errors into Locks, warnings the run repeats (submission_valid:
	// false in run_info).
	Scenario       string
	UnsafeOverride bool
	Locks          []string
	// IdleGapCap caps every turn's think time of a trace (the scenario's
	// trace_idle_gap_cap_seconds; 0: none).
	TraceIdleGapCap time.Duration
	// Mock is the embedded mock's agent behaviour.
	Mock MockAgent
	// Limits bound what one session may grow to (every session's, tool
	// loop or not).
	Limits SessionLimits
}

// SessionLimits are --tool-max-argument-bytes, --tool-max-calls-per-reply,
// --session-max-context-tokens and --session-max-context-bytes
// (ContextBytes 0: not given, derived from the memory budget).
type SessionLimits struct {
	ToolArgumentBytes, ContextBytes int64
	ToolCalls                       int
	ContextTokens                   int64
}

// Bounds on the session limits' byte sizes.
const (
	minSessionBytes = 1 << 10
	maxSessionBytes = 1 << 40
)

// ToolLoop is --tool-loop's settings.
type ToolLoop struct {
	MaxRounds, ResultTokens int
	Delay                   time.Duration
}

// SessionArrival is --session-arrival-rate's clock.
type SessionArrival struct {
	Rate       float64
	Pattern    string
	Smoothness float64
}

// Replay is agentic replay's settings.
type Replay struct {
	// MinRatio and MaxRatio bound where each lane's first trace starts
	// (both 0: from its first turn).
	MinRatio, MaxRatio float64
	Burst              bool
	// CacheWarmup is --agentic-cache-warmup-duration, Grace the priming's
	// --agentic-warmup-grace-period (0: wait), IdleGapCap
	// --system-idle-gap-cap-seconds (0: none).
	CacheWarmup, Grace, IdleGapCap time.Duration
}

// MockAgent is the embedded mock's agent behaviour (--mock-*).
type MockAgent struct {
	ToolCallRate, BadToolArgs float64
	PrefixCache               bool
	MaxModelLen               int
}

// The scenario surge knows: SemiAnalysis AgentX's, as AIPerf locks it.
const (
	ScenarioAgentX = "inferencex-agentx-mvp"
	// agentxMinDuration, agentxIdleGap are its locked minimum profile
	// duration and trace idle-gap cap.
	agentxMinDuration = 900 * time.Second
	agentxIdleGap     = 60 * time.Second
)

// Trajectory ratios once agentic replay samples starts: AIPerf's CLI
// reference defaults.
const (
	defaultTrajectoryMin = 0.25
	defaultTrajectoryMax = 0.75
)

// parseAgentic checks the agent flags against the rest of the run.
func parseAgentic(s *Spec, c *cmdline.Config) error {
	a := &s.Agentic
	ac := &c.AgenticConfig
	a.Mock = MockAgent{ToolCallRate: ac.MockToolCallRate, BadToolArgs: ac.MockBadToolArgs, PrefixCache: ac.MockPrefixCache, MaxModelLen: ac.MockMaxModelLen}
	switch {
	case !(ac.MockToolCallRate >= 0 && ac.MockToolCallRate <= 1):
		return cmdline.Usagef("--mock-tool-call-rate is a fraction between 0 and 1, got %g", ac.MockToolCallRate)
	case !(ac.MockBadToolArgs >= 0 && ac.MockBadToolArgs <= 1):
		return cmdline.Usagef("--mock-bad-tool-args-rate is a fraction between 0 and 1, got %g", ac.MockBadToolArgs)
	case ac.MockMaxModelLen < 0:
		return cmdline.Usagef("--mock-max-model-len must be ≥ 0, got %d", ac.MockMaxModelLen)
	}
	if err := parseToolLoop(s, ac); err != nil {
		return err
	}
	if err := parseSessionLimits(s, ac); err != nil {
		return err
	}
	if err := parseScenario(s, c); err != nil {
		return err
	}
	if err := parseSessionArrival(s, c); err != nil {
		return err
	}
	return parseReplay(s, c)
}

func parseToolLoop(s *Spec, ac *cmdline.AgenticConfig) error {
	if !ac.ToolLoop {
		for _, f := range []struct {
			name  string
			given bool
		}{{"--tool-delay", ac.ToolDelay != 0}, {"--tool-result-tokens", ac.ToolResultTokens != 0 && ac.ToolResultTokens != 256},
			{"--tool-loop-max-rounds", ac.ToolLoopRounds != 0 && ac.ToolLoopRounds != 8}} {
			if f.given {
				return cmdline.Usagef("%s shapes the client's tool loop: give --tool-loop", f.name)
			}
		}
		return nil
	}
	switch k := s.Endpoint.Kind; {
	case k != endpoint.Chat && k != endpoint.Responses && k != endpoint.Messages:
		return cmdline.Usagef("--tool-loop answers tool calls of the chat, responses and messages endpoint types, not %s", k)
	case ac.ToolLoopRounds < 1:
		return cmdline.Usagef("--tool-loop-max-rounds must be ≥ 1, got %d", ac.ToolLoopRounds)
	case ac.ToolResultTokens < 1 || ac.ToolResultTokens > datasets.MaxRequestTokens:
		return cmdline.Usagef("--tool-result-tokens must be between 1 and %d, got %d", datasets.MaxRequestTokens, ac.ToolResultTokens)
	case ac.ToolDelay < 0:
		return cmdline.Usagef("--tool-delay must be ≥ 0 ms, got %g", float64(ac.ToolDelay)/1e6)
	}
	s.Agentic.ToolLoop = &ToolLoop{MaxRounds: ac.ToolLoopRounds, ResultTokens: ac.ToolResultTokens, Delay: ac.ToolDelay}
	return nil
}

// parseSessionLimits reads the session limits (cmdline checked the
// counts' ranges).
func parseSessionLimits(s *Spec, ac *cmdline.AgenticConfig) (err error) {
	l := &s.Agentic.Limits
	l.ToolCalls, l.ContextTokens = ac.ToolMaxCalls, int64(ac.SessionMaxContextTokens)
	if l.ToolArgumentBytes, err = parseSize(ac.ToolMaxArgumentBytes, minSessionBytes, maxSessionBytes); err != nil {
		return cmdline.Usagef("--tool-max-argument-bytes %q: %v", ac.ToolMaxArgumentBytes, err)
	}
	if l.ContextBytes, err = parseSize(ac.SessionMaxContextBytes, minSessionBytes, maxSessionBytes); err != nil {
		return cmdline.Usagef("--session-max-context-bytes %q: %v", ac.SessionMaxContextBytes, err)
	}
	return nil
}

// loadConflicts names the load flags a mode with a pacing of its own
// refuses, given in c ("" when none is).
func loadConflicts(s *Spec, c *cmdline.Config) string {
	switch {
	case len(s.Load.Rates) > 0:
		return "--request-rate"
	case c.UserCentricRate > 0 || c.NumUsers > 0:
		return "--user-centric-rate"
	case c.FixedSchedule:
		return "--fixed-schedule"
	case len(s.Load.Concs) > 1:
		return "a --concurrency list"
	case s.Load.Sweep != nil:
		return "a sweep"
	case c.ConcurrencyRamp > 0:
		return "--concurrency-ramp-duration"
	}
	return ""
}

func parseSessionArrival(s *Spec, c *cmdline.Config) error {
	ac := &c.AgenticConfig
	pattern := strings.ToLower(strings.TrimSpace(ac.SessionArrivalPattern))
	if ac.SessionArrivalRate == 0 {
		switch {
		case ac.SessionSmoothnessSet || ac.SessionArrivalSmoothness != 0:
			return cmdline.Usagef("--session-arrival-smoothness shapes --session-arrival-rate's arrivals: give the rate")
		case pattern != "" && pattern != schedule.PatternPoisson:
			return cmdline.Usagef("--session-arrival-pattern shapes --session-arrival-rate's arrivals: give the rate")
		}
		return nil
	}
	if pattern == "" {
		pattern = schedule.PatternPoisson
	}
	switch {
	case !(ac.SessionArrivalRate > 0) || math.IsInf(ac.SessionArrivalRate, 0):
		return cmdline.Usagef("--session-arrival-rate must be > 0 sessions per second, got %g", ac.SessionArrivalRate)
	case ac.SessionArrivalRate > MaxRate:
		return cmdline.Usagef("--session-arrival-rate %g is more than one client can start (at most %d a second)", ac.SessionArrivalRate, MaxRate)
	case pattern == "concurrency_burst":
		return cmdline.Usagef("--session-arrival-pattern concurrency_burst: surge's session arrivals are poisson, constant or gamma")
	case pattern != schedule.PatternPoisson && pattern != schedule.PatternConstant && pattern != schedule.PatternGamma:
		return cmdline.Usagef("--session-arrival-pattern %q: want poisson, constant or gamma", ac.SessionArrivalPattern)
	case (ac.SessionSmoothnessSet || ac.SessionArrivalSmoothness != 0) && pattern != schedule.PatternGamma:
		return cmdline.Usagef("--session-arrival-smoothness is the gamma shape: give --session-arrival-pattern gamma")
	case (ac.SessionSmoothnessSet || ac.SessionArrivalSmoothness != 0) && !(ac.SessionArrivalSmoothness > 0):
		return cmdline.Usagef("--session-arrival-smoothness must be > 0, got %g", ac.SessionArrivalSmoothness)
	case s.Agentic.Scenario != "":
		return cmdline.Usagef("--session-arrival-rate and --scenario %s: the scenario replays closed-loop lanes", s.Agentic.Scenario)
	}
	if f := loadConflicts(s, c); f != "" {
		return cmdline.Usagef("--session-arrival-rate starts sessions on its own clock: it excludes %s (--concurrency is its admission ceiling)", f)
	}
	smooth := ac.SessionArrivalSmoothness
	if smooth == 0 {
		smooth = 1
	}
	if _, err := schedule.Arrival(pattern, ac.SessionArrivalRate, smooth, c.Seed); err != nil {
		return cmdline.Usagef("--session-arrival-rate: %w", err)
	}
	s.Agentic.SessionArrival = &SessionArrival{Rate: ac.SessionArrivalRate, Pattern: pattern, Smoothness: smooth}
	cacheBustSessions(s)
	return nil
}

func parseReplay(s *Spec, c *cmdline.Config) error {
	ac := &c.AgenticConfig
	minGiven := ac.TrajectoryMinSet || ac.TrajectoryMin != 0
	maxGiven := ac.TrajectoryMaxSet || ac.TrajectoryMax != 0
	flags := []struct {
		name  string
		given bool
	}{
		{"--trajectory-start-min-ratio", minGiven}, {"--trajectory-start-max-ratio", maxGiven},
		{"--burst-phase-starts", ac.BurstPhaseStarts}, {"--agentic-cache-warmup-duration", ac.AgenticCacheWarmup != 0},
		{"--agentic-warmup-grace-period", ac.AgenticGraceSet || ac.AgenticWarmupGrace != 0},
		{"--system-idle-gap-cap-seconds", ac.IdleGapCapSet || ac.SystemIdleGapCap != 0},
	}
	first := ""
	for _, f := range flags {
		if f.given && first == "" {
			first = f.name
		}
	}
	if s.Agentic.Scenario != "" && first == "" {
		first = "--scenario"
	}
	if first == "" {
		return nil
	}
	if s.Agentic.SessionArrival != nil {
		return cmdline.Usagef("%s is agentic replay's (closed-loop lanes): it excludes --session-arrival-rate", first)
	}
	if f := loadConflicts(s, c); f != "" {
		return cmdline.Usagef("%s replays lanes at --concurrency (one trace each, with its recorded think times): it excludes %s", first, f)
	}
	if c.WarmupCount > 0 || c.WarmupDuration > 0 || c.WarmupConcurrency > 0 || c.WarmupRate > 0 {
		return cmdline.Usagef("%s: agentic replay's warmup primes its lanes (--trajectory-start-*) and warms the cache (--agentic-cache-warmup-duration); --warmup-* do not apply", first)
	}
	r := &Replay{MinRatio: ac.TrajectoryMin, MaxRatio: ac.TrajectoryMax, Burst: ac.BurstPhaseStarts,
		CacheWarmup: ac.AgenticCacheWarmup, Grace: ac.AgenticWarmupGrace, IdleGapCap: ac.SystemIdleGapCap}
	// The window opens when asked (a ratio, or the scenario); a bound not
	// given takes AIPerf's default.
	if minGiven || maxGiven || s.Agentic.Scenario != "" {
		if !minGiven {
			r.MinRatio = min(defaultTrajectoryMin, r.MaxRatio)
			if !maxGiven {
				r.MinRatio = defaultTrajectoryMin
			}
		}
		if !maxGiven {
			r.MaxRatio = max(defaultTrajectoryMax, r.MinRatio)
		}
	}
	switch {
	case !(r.MinRatio >= 0 && r.MinRatio <= 1):
		return cmdline.Usagef("--trajectory-start-min-ratio is a fraction of a trace's turns between 0 and 1, got %g", r.MinRatio)
	case !(r.MaxRatio >= 0 && r.MaxRatio <= 1):
		return cmdline.Usagef("--trajectory-start-max-ratio is a fraction of a trace's turns between 0 and 1, got %g", r.MaxRatio)
	case r.MinRatio > r.MaxRatio:
		return cmdline.Usagef("--trajectory-start-min-ratio %g is above --trajectory-start-max-ratio %g", r.MinRatio, r.MaxRatio)
	case r.CacheWarmup < 0:
		return cmdline.Usagef("--agentic-cache-warmup-duration must be > 0 seconds, got %g", r.CacheWarmup.Seconds())
	case r.Grace < 0:
		return cmdline.Usagef("--agentic-warmup-grace-period must be ≥ 0 seconds, got %g", r.Grace.Seconds())
	case r.IdleGapCap < 0:
		return cmdline.Usagef("--system-idle-gap-cap-seconds must be ≥ 0, got %g", r.IdleGapCap.Seconds())
	case (ac.AgenticGraceSet || r.Grace > 0) && r.MaxRatio == 0:
		return cmdline.Usagef("--agentic-warmup-grace-period bounds the priming of lanes that start part-way: give --trajectory-start-max-ratio")
	}
	s.Agentic.Replay = r
	return nil
}

// parseScenario applies --scenario's locks: AIPerf's inferencex-agentx-mvp
// replays WEKA (AgentX) traces in agentic replay for at least 900 s, with
// ignore_eos, a first-turn cache bust and the traces' idle gaps capped at
// 60 s. A setting that breaks a lock is refused, or with
// --unsafe-override kept and the run marked submission_valid: false.
func parseScenario(s *Spec, c *cmdline.Config) error {
	ac := &c.AgenticConfig
	name := strings.TrimSpace(ac.Scenario)
	if name == "" {
		if ac.UnsafeOverride {
			return cmdline.Usagef("--unsafe-override turns --scenario's lock errors into warnings: give --scenario")
		}
		return nil
	}
	if name != ScenarioAgentX {
		return cmdline.Usagef("--scenario %q: surge knows %s", name, ScenarioAgentX)
	}
	a := &s.Agentic
	a.Scenario, a.UnsafeOverride = name, ac.UnsafeOverride
	weka := strings.EqualFold(c.CustomDatasetType, datasets.TypeWeka) || strings.Contains(strings.ToLower(c.PublicDataset), "weka")
	var locks []string
	if !weka {
		locks = append(locks, "it replays WEKA (AgentX) traces: give --custom-dataset-type weka with --input-file, or --public-dataset semianalysis_cc_traces_weka")
	}
	if c.Duration < agentxMinDuration {
		locks = append(locks, fmt.Sprintf("it profiles for at least %g s: give --benchmark-duration %g or more", agentxMinDuration.Seconds(), agentxMinDuration.Seconds()))
	}
	if v, ok := s.Request.Extra["ignore_eos"]; ok && v != true {
		locks = append(locks, "it sends ignore_eos: true: --extra-inputs sets ignore_eos otherwise")
	}
	if len(locks) > 0 && !a.UnsafeOverride {
		return cmdline.Usagef("--scenario %s: %s (--unsafe-override runs it anyway, marked submission_valid: false)", name, strings.Join(locks, "; "))
	}
	a.Locks = locks
	if _, ok := s.Request.Extra["ignore_eos"]; !ok {
		if s.Request.Extra == nil {
			s.Request.Extra = map[string]any{}
		}
		s.Request.Extra["ignore_eos"] = true
		s.Endpoint.Extra = s.Request.Extra
	}
	cacheBustSessions(s)
	a.TraceIdleGapCap = agentxIdleGap
	return nil
}

// ScenarioWarnings are the scenario's lock errors --unsafe-override let
// through, as the run's warnings.
func (a *Agentic) ScenarioWarnings() []string {
	out := make([]string, len(a.Locks))
	for i, l := range a.Locks {
		out[i] = fmt.Sprintf("--scenario %s lock broken under --unsafe-override: %s; the run is not a valid submission", a.Scenario, l)
	}
	return out
}

// cacheBustSessions gives each session a marker of its own at the start
// of its first turn unless --cache-bust placed it elsewhere, so a
// conversation replayed again is not served from the prefix cache its
// earlier replay filled (AIPerf's first_turn_prefix for session arrivals
// and the scenario).
func cacheBustSessions(s *Spec) {
	if s.Dataset.CacheBust == "" {
		s.Dataset.CacheBust = datasets.CacheBustFirstTurnPrefix
	}
}
