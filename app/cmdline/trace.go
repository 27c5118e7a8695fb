package cmdline

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// catTrace groups, in --help-aiperf's neighbourhood, AIPerf's trace replay
// and synthesis flags: hidden from --help (docs/aiperf-compat.md lists
// them), honoured as AIPerf's.
const catTrace = "Trace replay and synthesis"

// TraceConfig is AIPerf's trace replay and synthesis flags. A number that
// AIPerf leaves unset (None) is kept as given ("": not given) and read by
// the spec.
type TraceConfig struct {
	// ReplaySpeedup is --replay-speedup ("": real time).
	ReplaySpeedup string
	// OpenLoop and NoOpenLoop are --open-loop-replay (the default, said
	// outright) and --no-open-loop-replay; OpenLoopStrict is
	// --open-loop-strict.
	OpenLoop, NoOpenLoop, OpenLoopStrict bool
	// InterTurnDelayCap, MaxIdleGapCap and TraceIdleGapCap are
	// --inter-turn-delay-cap-seconds, --max-idle-gap-cap-seconds and
	// --trace-idle-gap-cap-seconds ("": none).
	InterTurnDelayCap, MaxIdleGapCap, TraceIdleGapCap string
	// IgnoreTraceDelays is --ignore-trace-delays.
	IgnoreTraceDelays bool
	// SessionSampleRatio is --trace-session-sample-ratio ("": every
	// session).
	SessionSampleRatio string
	// MaxContextLength is --max-context-length (0: no limit).
	MaxContextLength int
	// ThinkTimeOnly is --use-think-time-only.
	ThinkTimeOnly bool
	// AllowWrap and NoAllowWrap are --allow-dataset-wrap and
	// --no-allow-dataset-wrap (neither: AIPerf's unset).
	AllowWrap, NoAllowWrap bool
	// OmitKVHints is --omit-kv-hints; ForceMinTokens and NoForceMinTokens
	// are --force-min-tokens (the default) and --no-force-min-tokens.
	OmitKVHints, ForceMinTokens, NoForceMinTokens bool
	// SynthesisConfig holds the --synthesis-* flags (synthesis.go).
	SynthesisConfig
}

// optionalNumber is a number flag AIPerf leaves None when not given, as
// input_config shows it: the number, or null.
func optionalNumber(s string) any {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	return s
}

// traceOptions are the rows of the trace flags (flags.go's options holds
// them with the rest).
func traceOptions() []option {
	num := func(get func(c *Config) *string) func(c *Config, _ http.Header) any {
		return func(c *Config, _ http.Header) any { return optionalNumber(*get(c)) }
	}
	return []option{
		{flag: &cli.StringFlag{Hidden: true, Category: catTrace, Name: "replay-speedup", Usage: "trace replay: divide every timestamp and think time by this (10: ten times faster than recorded)"}, path: "input.replay_speedup",
			field: func(c *Config) any { return &c.ReplaySpeedup }, export: num(func(c *Config) *string { return &c.ReplaySpeedup })},
		{flag: &cli.BoolFlag{Hidden: true, Category: catTrace, Name: "open-loop-replay", Usage: "Baseten replay: every turn at its recorded time, or after the previous reply if later (the default)"}, path: "input.open_loop_replay",
			field: func(c *Config) any { return &c.OpenLoop }, export: func(c *Config, _ http.Header) any { return !c.NoOpenLoop }},
		{flag: &cli.BoolFlag{Hidden: true, Category: catTrace, Name: "no-open-loop-replay", Usage: "Baseten replay: a later turn a think time after the previous reply (closed loop)"}, path: "input.no_open_loop_replay",
			field: func(c *Config) any { return &c.NoOpenLoop }},
		{flag: &cli.BoolFlag{Hidden: true, Category: catTrace, Name: "open-loop-strict", Usage: "Baseten replay: every row its own session at its recorded time"}, path: "input.open_loop_strict",
			field: func(c *Config) any { return &c.OpenLoopStrict }},
		{flag: &cli.StringFlag{Hidden: true, Category: catTrace, Name: "inter-turn-delay-cap-seconds", Usage: "trace replay: cut every think time to at most this many seconds"}, path: "input.inter_turn_delay_cap_seconds",
			field: func(c *Config) any { return &c.InterTurnDelayCap }, export: num(func(c *Config) *string { return &c.InterTurnDelayCap })},
		{flag: &cli.StringFlag{Hidden: true, Category: catTrace, Name: "max-idle-gap-cap-seconds", Usage: "trace replay: shorten every gap between consecutive sends to at most this many seconds (after --replay-speedup)"}, path: "input.max_idle_gap_cap_seconds",
			field: func(c *Config) any { return &c.MaxIdleGapCap }, export: num(func(c *Config) *string { return &c.MaxIdleGapCap })},
		{flag: &cli.StringFlag{Hidden: true, Category: catTrace, Name: "trace-idle-gap-cap-seconds", Usage: "WEKA replay: shorten every gap between a trace's call starts to at most this many seconds"}, path: "loadgen.trace_idle_gap_cap_seconds",
			field: func(c *Config) any { return &c.TraceIdleGapCap }, export: num(func(c *Config) *string { return &c.TraceIdleGapCap })},
		{flag: &cli.BoolFlag{Hidden: true, Category: catTrace, Name: "ignore-trace-delays", Usage: "trace datasets: drop every timestamp and think time (the turns go back to back at the run's load)"}, path: "input.ignore_trace_delays",
			field: func(c *Config) any { return &c.IgnoreTraceDelays }},
		{flag: &cli.StringFlag{Hidden: true, Category: catTrace, Name: "trace-session-sample-ratio", Usage: "trace replay: keep this fraction of the sessions, whole, drawn from --random-seed"}, path: "input.trace_session_sample_ratio",
			field: func(c *Config) any { return &c.SessionSampleRatio }, export: num(func(c *Config) *string { return &c.SessionSampleRatio })},
		{flag: &cli.IntFlag{Hidden: true, Category: catTrace, Name: "max-context-length", Usage: "WEKA replay: leave out traces whose largest call context (input + output tokens) exceeds this"}, path: "input.max_context_length",
			field: func(c *Config) any { return &c.MaxContextLength }},
		{flag: &cli.BoolFlag{Hidden: true, Category: catTrace, Name: "use-think-time-only", Usage: "WEKA replay: wait each call's recorded think_time instead of the idle gap since the previous call's end"}, path: "input.use_think_time_only",
			field: func(c *Config) any { return &c.ThinkTimeOnly }},
		{flag: &cli.BoolFlag{Hidden: true, Category: catTrace, Name: "allow-dataset-wrap", Usage: "WEKA replay: let more lanes of --concurrency than traces reuse traces"}, path: "input.allow_dataset_wrap",
			field: func(c *Config) any { return &c.AllowWrap }, export: wrapExport},
		{flag: &cli.BoolFlag{Hidden: true, Category: catTrace, Name: "no-allow-dataset-wrap", Usage: "WEKA replay: refuse more lanes than traces, even with --cache-bust"}, path: "input.no_allow_dataset_wrap",
			field: func(c *Config) any { return &c.NoAllowWrap }},
		{flag: &cli.BoolFlag{Hidden: true, Category: catTrace, Name: "omit-kv-hints", Usage: "Baseten replay: send no recorded hash_ids and block_size"}, path: "input.omit_kv_hints",
			field: func(c *Config) any { return &c.OmitKVHints }},
		{flag: &cli.BoolFlag{Hidden: true, Category: catTrace, Name: "force-min-tokens", Usage: "Baseten replay: min_tokens = the recorded output length (the default)"}, path: "input.force_min_tokens",
			field: func(c *Config) any { return &c.ForceMinTokens }, export: func(c *Config, _ http.Header) any { return !c.NoForceMinTokens }},
		{flag: &cli.BoolFlag{Hidden: true, Category: catTrace, Name: "no-force-min-tokens", Usage: "Baseten replay: send no min_tokens (generations end at EOS)"}, path: "input.no_force_min_tokens",
			field: func(c *Config) any { return &c.NoForceMinTokens }},
	}
}

// wrapExport is input.allow_dataset_wrap as input_config shows it: true,
// false, or null when neither switch was given (AIPerf's unset).
func wrapExport(c *Config, _ http.Header) any {
	switch {
	case c.AllowWrap:
		return true
	case c.NoAllowWrap:
		return false
	}
	return nil
}
