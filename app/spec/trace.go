package spec

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/datasets"
)

// Wrap is whether a WEKA replay may reuse traces when --concurrency asks
// for more lanes than it has (AIPerf's --allow-dataset-wrap): unset,
// allowed, or refused outright.
type Wrap int

// The wrap settings.
const (
	// WrapUnset refuses a wrap unless --cache-bust keeps the reused
	// traces' prompts distinct.
	WrapUnset Wrap = iota
	WrapAllowed
	WrapRefused
)

// replayFlags names the flags behind datasets.ReplayOptions' fields.
var replayFlags = map[string]string{
	"Replay.Speedup": "--replay-speedup", "Replay.ClosedLoop": "--no-open-loop-replay", "Replay.Strict": "--open-loop-strict",
	"Replay.DelayCap": "--inter-turn-delay-cap-seconds", "Replay.IdleGapCap": "--max-idle-gap-cap-seconds",
	"Replay.IgnoreDelays": "--ignore-trace-delays", "Replay.SessionSample": "--trace-session-sample-ratio",
	"Replay.MaxContext": "--max-context-length", "Replay.ThinkTimeOnly": "--use-think-time-only",
	"Replay.TraceIdleGapCap": "--trace-idle-gap-cap-seconds", "Replay.OmitKVHints": "--omit-kv-hints",
	"Replay.NoMinTokens": "--no-force-min-tokens",
}

// ReplayFlags names the flags behind datasets.ReplayOptions' fields, for
// the errors a dataset load returns about them.
func ReplayFlags() map[string]string { return replayFlags }

// parseTrace reads the trace replay flags into the dataset's Replay. The
// options a dataset type cannot honour are refused here when
// --custom-dataset-type (or no file: synthetic prompts) says the type, and
// by the load otherwise.
func parseTrace(s *Spec, c *cmdline.Config) error {
	r := &s.Dataset.Replay
	var err error
	if r.Speedup, err = positive("--replay-speedup", c.ReplaySpeedup); err != nil {
		return err
	}
	var capSet bool
	if r.DelayCap, capSet, err = seconds("--inter-turn-delay-cap-seconds", c.InterTurnDelayCap, true); err != nil {
		return err
	}
	r.DelayCapSet = capSet
	if r.IdleGapCap, _, err = seconds("--max-idle-gap-cap-seconds", c.MaxIdleGapCap, false); err != nil {
		return err
	}
	if r.TraceIdleGapCap, r.TraceIdleGapCapSet, err = seconds("--trace-idle-gap-cap-seconds", c.TraceIdleGapCap, true); err != nil {
		return err
	}
	if r.SessionSample, err = positive("--trace-session-sample-ratio", c.SessionSampleRatio); err != nil {
		return err
	}
	switch {
	case r.SessionSample > 1:
		return cmdline.Usagef("--trace-session-sample-ratio %s: a fraction of the sessions, in (0, 1]", c.SessionSampleRatio)
	case c.MaxContextLength < 0:
		return cmdline.Usagef("--max-context-length must be ≥ 1, got %d", c.MaxContextLength)
	case c.OpenLoop && c.NoOpenLoop:
		return cmdline.Usagef("--open-loop-replay and --no-open-loop-replay: give one")
	case c.OpenLoopStrict && c.NoOpenLoop:
		return cmdline.Usagef("--open-loop-strict sends every row at its recorded time: not with --no-open-loop-replay")
	case c.ForceMinTokens && c.NoForceMinTokens:
		return cmdline.Usagef("--force-min-tokens and --no-force-min-tokens: give one")
	case c.AllowWrap && c.NoAllowWrap:
		return cmdline.Usagef("--allow-dataset-wrap and --no-allow-dataset-wrap: give one")
	case c.IgnoreTraceDelays && c.ThinkTimeOnly:
		return cmdline.Usagef("--ignore-trace-delays and --use-think-time-only cannot be used together")
	case c.IgnoreTraceDelays && c.FixedSchedule:
		return cmdline.Usagef("--ignore-trace-delays drops the timestamps --fixed-schedule replays: give one")
	}
	cb, err := datasets.ParseCacheBust(c.CacheBust)
	if err != nil {
		return cmdline.Usagef("--cache-bust %w", err)
	}
	if cb != datasets.CacheBustNone {
		s.Dataset.CacheBust = cb
	}
	r.ClosedLoop, r.Strict, r.IgnoreDelays = c.NoOpenLoop, c.OpenLoopStrict, c.IgnoreTraceDelays
	r.MaxContext, r.ThinkTimeOnly = c.MaxContextLength, c.ThinkTimeOnly
	r.OmitKVHints, r.NoMinTokens = c.OmitKVHints, c.NoForceMinTokens
	switch {
	case c.AllowWrap:
		s.Dataset.Wrap = WrapAllowed
	case c.NoAllowWrap:
		s.Dataset.Wrap = WrapRefused
	}
	kind := s.Dataset.knownType()
	if kind == "" {
		return nil // guessed from the file when it loads
	}
	if err := r.Check(kind); err != nil {
		return &cmdline.UsageError{Err: cmdline.ForFlags(err, replayFlags)}
	}
	if s.Dataset.Wrap != WrapUnset && kind != datasets.TypeWeka {
		return cmdline.Usagef("--allow-dataset-wrap applies to a WEKA replay (--custom-dataset-type weka), not to a %s dataset (its conversations are reused in turn)", kind)
	}
	return nil
}

// knownType is the dataset's type before it loads: --custom-dataset-type,
// the public dataset, or synthetic; "" when a file's type is guessed.
func (d *Dataset) knownType() string {
	switch {
	case d.Type != "":
		return d.Type
	case d.Public != "":
		return d.Public
	case d.InputFile == "":
		return datasets.TypeSynthetic
	}
	return ""
}

// positive parses an optional number flag that must be > 0 (0: not
// given).
func positive(flag, v string) (float64, error) {
	if strings.TrimSpace(v) == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f <= 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, cmdline.Usagef("%s %q: want a number > 0", flag, v)
	}
	return f, nil
}

// seconds parses an optional seconds flag (≥ 0 when zero is allowed, else
// > 0), reporting whether it was given.
func seconds(flag, v string, zero bool) (time.Duration, bool, error) {
	if strings.TrimSpace(v) == "" {
		return 0, false, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	bad := err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || (f == 0 && !zero) || f*float64(time.Second) > math.MaxInt64
	if bad {
		want := "seconds > 0"
		if zero {
			want = "seconds ≥ 0"
		}
		return 0, false, cmdline.Usagef("%s %q: want %s", flag, v, want)
	}
	return time.Duration(f * float64(time.Second)), true, nil
}

// synthesisFlags names the flags behind datasets.SynthesisOptions' fields.
var synthesisFlags = map[string]string{
	"Synthesis.Speedup": "--synthesis-speedup-ratio", "Synthesis.PrefixLen": "--synthesis-prefix-len-multiplier",
	"Synthesis.PromptLen": "--synthesis-prompt-len-multiplier", "Synthesis.OutputLen": "--synthesis-output-len-multiplier",
	"Synthesis.PrefixRoot": "--synthesis-prefix-root-multiplier", "Synthesis.MaxISL": "--synthesis-max-isl",
	"Synthesis.MaxOSL": "--synthesis-max-osl",
}

// SynthesisFlags names the flags behind datasets.SynthesisOptions'
// fields, for the errors a dataset load returns about them.
func SynthesisFlags() map[string]string { return synthesisFlags }

// parseSynthesis reads the --synthesis-* flags into the dataset's
// Synthesis, refused here for a type they cannot reshape when the type is
// known before the load.
func parseSynthesis(s *Spec, c *cmdline.Config) error {
	o := &s.Dataset.Synthesis
	var err error
	for _, f := range []struct {
		flag, v string
		to      *float64
	}{{"--synthesis-speedup-ratio", c.SynthSpeedup, &o.Speedup}, {"--synthesis-prefix-len-multiplier", c.SynthPrefixLen, &o.PrefixLen},
		{"--synthesis-prompt-len-multiplier", c.SynthPromptLen, &o.PromptLen}, {"--synthesis-output-len-multiplier", c.SynthOutputLen, &o.OutputLen}} {
		if *f.to, err = positive(f.flag, f.v); err != nil {
			return err
		}
	}
	switch {
	case c.SynthPrefixRoot < 0:
		return cmdline.Usagef("--synthesis-prefix-root-multiplier must be ≥ 1, got %d", c.SynthPrefixRoot)
	case c.SynthMaxISL < 0:
		return cmdline.Usagef("--synthesis-max-isl must be ≥ 1, got %d", c.SynthMaxISL)
	case c.SynthMaxOSL < 0:
		return cmdline.Usagef("--synthesis-max-osl must be ≥ 1, got %d", c.SynthMaxOSL)
	}
	o.PrefixRoot, o.MaxISL, o.MaxOSL = c.SynthPrefixRoot, c.SynthMaxISL, c.SynthMaxOSL
	if kind := s.Dataset.knownType(); kind != "" {
		if err := o.Check(kind); err != nil {
			return &cmdline.UsageError{Err: cmdline.ForFlags(err, synthesisFlags)}
		}
	}
	return nil
}
