package cmdline

import (
	"time"

	"github.com/urfave/cli/v2"
)

// AgenticConfig holds the agent workload's flags: the client's tool loop,
// session arrivals, agentic replay (AIPerf's trajectory sampling, phase
// starts, agentic warmup, idle-gap cap) and its named scenario, and the
// embedded mock's agent behaviour.
type AgenticConfig struct {
	// ToolLoop answers tool calls (--tool-loop): ToolLoopRounds rounds at
	// most after a turn, results of ToolResultTokens tokens, each round
	// after ToolDelay.
	ToolLoop         bool
	ToolLoopRounds   int
	ToolResultTokens int
	ToolDelay        time.Duration
	// ToolMaxArgumentBytes, ToolMaxCalls, SessionMaxContextTokens and
	// SessionMaxContextBytes are the session limits (--tool-max-*,
	// --session-max-context-*): sizes as --max-memory takes them.
	ToolMaxArgumentBytes    string
	ToolMaxCalls            int
	SessionMaxContextTokens int
	SessionMaxContextBytes  string
	// SessionArrivalRate starts sessions per second on their own clock
	// (--session-arrival-rate), by SessionArrivalPattern and
	// SessionArrivalSmoothness (SessionSmoothnessSet when given).
	SessionArrivalRate       float64
	SessionArrivalPattern    string
	SessionArrivalSmoothness float64
	SessionSmoothnessSet     bool
	// TrajectoryMin and TrajectoryMax are --trajectory-start-min-ratio and
	// -max-ratio (TrajectoryMinSet, TrajectoryMaxSet when given).
	TrajectoryMin, TrajectoryMax       float64
	TrajectoryMinSet, TrajectoryMaxSet bool
	// BurstPhaseStarts, AgenticCacheWarmup, AgenticWarmupGrace and
	// SystemIdleGapCap are AIPerf's agentic replay flags (the last two
	// with *Set when given: 0 is a value).
	BurstPhaseStarts                  bool
	AgenticCacheWarmup                time.Duration
	AgenticWarmupGrace                time.Duration
	AgenticGraceSet                   bool
	SystemIdleGapCap                  time.Duration
	IdleGapCapSet                     bool
	Scenario                          string
	UnsafeOverride                    bool
	MockToolCallRate, MockBadToolArgs float64
	MockPrefixCache                   bool
	MockMaxModelLen                   int
}

// Bounds of the tool loop's flags: past them a server's reply is not an
// agent's but a flood (see docs/agentic.md).
const (
	// MaxToolRounds bounds --tool-loop-max-rounds: each round is a request.
	MaxToolRounds = 10_000
	// MaxToolCalls bounds --tool-max-calls-per-reply.
	MaxToolCalls = 1 << 20
)

// catAgentic groups the agent workload's flags in --help.
const catAgentic = "Agents (tool calls, sessions; every option: docs/agentic.md)"

// agenticOptions are the agent workload's flags. The AIPerf flags that
// few runs need are hidden from --help (docs/agentic.md lists them).
var agenticOptions = []option{
	{flag: &cli.BoolFlag{Category: catAgentic, Name: "tool-loop", Usage: "answer replies' tool calls as an agent does: synthetic results after --tool-delay, until a reply calls none"}, path: "loadgen.tool_loop", field: func(c *Config) any { return &c.ToolLoop }},
	{flag: &cli.IntFlag{Category: catAgentic, Name: "tool-result-tokens", Value: 256, Usage: "--tool-loop: tokens in each synthetic tool result"}, path: "loadgen.tool_result_tokens", field: func(c *Config) any { return &c.ToolResultTokens }},
	{flag: &cli.Float64Flag{Category: catAgentic, Name: "tool-delay", Usage: "--tool-loop: milliseconds the tools of one round take before their results are sent"}, path: "loadgen.tool_delay_ms", field: func(c *Config) any { return ms(&c.ToolDelay) }},
	{flag: &cli.IntFlag{Category: catAgentic, Hidden: true, Name: "tool-loop-max-rounds", Value: 8, Usage: "--tool-loop: rounds of tool results after one turn, at most"}, path: "loadgen.tool_loop_max_rounds", field: func(c *Config) any { return &c.ToolLoopRounds }},
	{flag: &cli.StringFlag{Category: catAgentic, Hidden: true, Name: "tool-max-argument-bytes", Value: "4MiB", Usage: "a tool call's arguments, at most (e.g. 512KiB): a reply past it ends its session with a session_limit error"}, path: "loadgen.tool_max_argument_bytes", field: func(c *Config) any { return &c.ToolMaxArgumentBytes }},
	{flag: &cli.IntFlag{Category: catAgentic, Hidden: true, Name: "tool-max-calls-per-reply", Value: 128, Usage: "a reply's tool calls, at most: a reply past it ends its session with a session_limit error"}, path: "loadgen.tool_max_calls_per_reply", field: func(c *Config) any { return &c.ToolMaxCalls }},
	{flag: &cli.IntFlag{Category: catAgentic, Hidden: true, Name: "session-max-context-tokens", Value: 2 << 20, Usage: "the context a session's request resends, at most, in tokens: past it the session ends with a session_limit error"}, path: "loadgen.session_max_context_tokens", field: func(c *Config) any { return &c.SessionMaxContextTokens }},
	{flag: &cli.StringFlag{Category: catAgentic, Hidden: true, Name: "session-max-context-bytes", DefaultText: "32MiB, less if the sessions in flight would pass --max-memory", Usage: "the context a session's request resends, at most, in bytes (text, tool calls and results, media): past it the session ends with a session_limit error"}, path: "loadgen.session_max_context_bytes", field: func(c *Config) any { return &c.SessionMaxContextBytes }},
	{flag: &cli.Float64Flag{Category: catAgentic, Name: "session-arrival-rate", Usage: "start sessions at this rate per second; --concurrency is then a ceiling that turns starts away"}, path: "loadgen.session_arrival.rate", field: func(c *Config) any { return &c.SessionArrivalRate }},
	{flag: &cli.StringFlag{Category: catAgentic, Hidden: true, Name: "session-arrival-pattern", Value: "poisson", Usage: "--session-arrival-rate's gaps: poisson, constant or gamma"}, path: "loadgen.session_arrival.pattern", field: func(c *Config) any { return &c.SessionArrivalPattern }},
	{flag: &cli.Float64Flag{Category: catAgentic, Hidden: true, Name: "session-arrival-smoothness", Usage: "gamma shape of session arrivals: < 1 clusters them, 1 Poisson, > 1 more regular (needs --session-arrival-pattern gamma)"}, path: "loadgen.session_arrival.smoothness", field: func(c *Config) any { return &c.SessionArrivalSmoothness }},
	{flag: &cli.Float64Flag{Category: catAgentic, Hidden: true, Name: "trajectory-start-min-ratio", Usage: "agentic replay: each lane's first trace starts at a turn drawn from this fraction of its turns (default 0.25 once replay is on)"}, path: "loadgen.trajectory_start_min_ratio", field: func(c *Config) any { return &c.TrajectoryMin }},
	{flag: &cli.Float64Flag{Category: catAgentic, Hidden: true, Name: "trajectory-start-max-ratio", Usage: "agentic replay: … up to this fraction (at most its last but one turn; default 0.75 once replay is on); the warmup primes the turn before"}, path: "loadgen.trajectory_start_max_ratio", field: func(c *Config) any { return &c.TrajectoryMax }},
	{flag: &cli.BoolFlag{Category: catAgentic, Hidden: true, Name: "burst-phase-starts", Usage: "agentic replay: send each phase's first requests together instead of spreading them by their recorded offsets"}, path: "loadgen.burst_phase_starts", field: func(c *Config) any { return &c.BurstPhaseStarts }},
	{flag: &cli.Float64Flag{Category: catAgentic, Hidden: true, Name: "agentic-cache-warmup-duration", Usage: "agentic replay: after priming, replay on for this many seconds without think times and with one-token outputs, then resume the profile where each lane stands"}, path: "loadgen.agentic_cache_warmup_duration", field: func(c *Config) any { return Secs(&c.AgenticCacheWarmup) }},
	{flag: &cli.Float64Flag{Category: catAgentic, Hidden: true, Name: "agentic-warmup-grace-period", Usage: "agentic replay: seconds the priming waits for its requests once the last was sent, then cancels the rest (default: waits for every one)"}, path: "loadgen.agentic_warmup_grace_period", field: func(c *Config) any { return Secs(&c.AgenticWarmupGrace) }},
	{flag: &cli.Float64Flag{Category: catAgentic, Hidden: true, Name: "system-idle-gap-cap-seconds", Usage: "agentic replay: when nothing is in flight, move every pending wait earlier so the next request comes within this many seconds"}, path: "loadgen.system_idle_gap_cap_seconds", field: func(c *Config) any { return Secs(&c.SystemIdleGapCap) }},
	{flag: &cli.StringFlag{Category: catAgentic, Hidden: true, Name: "scenario", Usage: "inferencex-agentx-mvp: SemiAnalysis AgentX's locked settings (docs/agentic.md)"}, path: "scenario", field: func(c *Config) any { return &c.Scenario }},
	{flag: &cli.BoolFlag{Category: catAgentic, Hidden: true, Name: "unsafe-override", Usage: "--scenario: turn its lock errors into warnings (the run is marked submission_valid: false)"}, path: "unsafe_override", field: func(c *Config) any { return &c.UnsafeOverride }},
	{flag: &cli.Float64Flag{Category: catAgentic, Hidden: true, Name: "mock-tool-call-rate", Value: 0.5, Usage: "the embedded mock (no --url): fraction of answers to requests that offer tools that call one"}, path: "mock.tool_call_rate", field: func(c *Config) any { return &c.MockToolCallRate }},
	{flag: &cli.Float64Flag{Category: catAgentic, Hidden: true, Name: "mock-bad-tool-args-rate", Usage: "the embedded mock: fraction of its tool calls whose arguments are cut off (not JSON)"}, path: "mock.bad_tool_args_rate", field: func(c *Config) any { return &c.MockBadToolArgs }},
	{flag: &cli.BoolFlag{Category: catAgentic, Hidden: true, Name: "mock-prefix-cache", Usage: "the embedded mock: report the prompt tokens of leading messages it saw before as cached"}, path: "mock.prefix_cache", field: func(c *Config) any { return &c.MockPrefixCache }},
	{flag: &cli.IntFlag{Category: catAgentic, Hidden: true, Name: "mock-max-model-len", Usage: "the embedded mock: its window in tokens; a prompt and output cap past it is refused as vLLM refuses it (0: none)"}, path: "mock.max_model_len", field: func(c *Config) any { return &c.MockMaxModelLen }},
}

// The agent options join the table (flags.go) here, so the workload's
// flags stay together in one file.
func init() { options = append(options, agenticOptions...) }

// given records which of the agent flags whose zero is a value were
// given (isSet: the command line's, the config file's included).
func (c *AgenticConfig) given(isSet func(string) bool) {
	c.SessionSmoothnessSet = isSet("session-arrival-smoothness")
	c.TrajectoryMinSet, c.TrajectoryMaxSet = isSet("trajectory-start-min-ratio"), isSet("trajectory-start-max-ratio")
	c.AgenticGraceSet = isSet("agentic-warmup-grace-period")
	c.IdleGapCapSet = isSet("system-idle-gap-cap-seconds")
}
