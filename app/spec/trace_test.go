package spec

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/datasets"
)

// TestTraceFlags: the trace replay flags fill the dataset's Replay as
// given (AIPerf's units: seconds, ratios), input_config keeps them at
// AIPerf's paths, and their bad values and combinations are refused
// naming the flag.
func TestTraceFlags(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	s, err := parseArgs(t, "--input-file", "t.parquet", "--custom-dataset-type", "baseten", "--replay-speedup", "2.5",
		"--inter-turn-delay-cap-seconds", "0", "--max-idle-gap-cap-seconds", "1.5", "--trace-session-sample-ratio", "0.25",
		"--no-open-loop-replay", "--omit-kv-hints", "--no-force-min-tokens")
	if err != nil {
		t.Fatal(err)
	}
	want := datasets.ReplayOptions{Speedup: 2.5, DelayCapSet: true, IdleGapCap: 1500 * time.Millisecond, SessionSample: 0.25,
		ClosedLoop: true, OmitKVHints: true, NoMinTokens: true}
	if s.Dataset.Replay != want {
		t.Errorf("replay %+v, want %+v", s.Dataset.Replay, want)
	}
	ic := s.InputConfig()
	for path, v := range map[string]any{"input.replay_speedup": 2.5, "input.inter_turn_delay_cap_seconds": 0.0,
		"input.open_loop_replay": false, "input.force_min_tokens": false, "input.omit_kv_hints": true,
		"input.allow_dataset_wrap": nil} {
		if got, ok := cmdline.PathValue(ic, path); !ok || got != v {
			t.Errorf("input_config %s = %v, want %v", path, got, v)
		}
	}
	s, err = parseArgs(t, "--input-file", "dir", "--custom-dataset-type", "weka", "--use-think-time-only", "--max-context-length", "9000",
		"--trace-idle-gap-cap-seconds", "30", "--allow-dataset-wrap")
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Dataset.Replay; !r.ThinkTimeOnly || r.MaxContext != 9000 || r.TraceIdleGapCap != 30*time.Second || !r.TraceIdleGapCapSet || s.Dataset.Wrap != WrapAllowed {
		t.Errorf("weka flags: %+v, wrap %v", r, s.Dataset.Wrap)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--replay-speedup", "0"}, "--replay-speedup \"0\": want a number > 0"},
		{[]string{"--replay-speedup", "fast"}, "--replay-speedup \"fast\""},
		{[]string{"--max-idle-gap-cap-seconds", "0", "--input-file", "x"}, "want seconds > 0"},
		{[]string{"--inter-turn-delay-cap-seconds", "-1"}, "want seconds ≥ 0"},
		{[]string{"--trace-session-sample-ratio", "2", "--input-file", "x"}, "a fraction of the sessions"},
		{[]string{"--max-context-length", "-3"}, "--max-context-length must be ≥ 1"},
		{[]string{"--open-loop-replay", "--no-open-loop-replay"}, "give one"},
		{[]string{"--open-loop-strict", "--no-open-loop-replay"}, "--open-loop-strict"},
		{[]string{"--force-min-tokens", "--no-force-min-tokens"}, "give one"},
		{[]string{"--allow-dataset-wrap", "--no-allow-dataset-wrap"}, "give one"},
		{[]string{"--ignore-trace-delays", "--use-think-time-only"}, "cannot be used together"},
		{[]string{"--input-file", "x", "--ignore-trace-delays", "--fixed-schedule"}, "--ignore-trace-delays drops the timestamps"},
		{[]string{"--replay-speedup", "2"}, "--replay-speedup applies to trace types only, not to a synthetic dataset"},
		{[]string{"--input-file", "x", "--custom-dataset-type", "mooncake_trace", "--open-loop-strict"}, "--open-loop-strict applies to baseten only"},
		{[]string{"--input-file", "x", "--custom-dataset-type", "baseten", "--max-context-length", "5"}, "--max-context-length applies to weka only"},
		{[]string{"--input-file", "x", "--custom-dataset-type", "bailian_trace", "--allow-dataset-wrap"}, "--allow-dataset-wrap applies to a WEKA replay"},
	} {
		_, err := parseArgs(t, tc.args...)
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
}

// TestSynthesisFlags: the --synthesis-* flags fill the dataset's
// Synthesis, input_config shows the multipliers (1 when not given), and
// bad values or a dataset they cannot reshape are refused by flag.
func TestSynthesisFlags(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	s, err := parseArgs(t, "--input-file", "t.jsonl", "--custom-dataset-type", "mooncake_trace", "--synthesis-prefix-len-multiplier", "1.5",
		"--synthesis-prefix-root-multiplier", "3", "--synthesis-max-isl", "4096", "--synthesis-max-osl", "100")
	if err != nil {
		t.Fatal(err)
	}
	if want := (datasets.SynthesisOptions{PrefixLen: 1.5, PrefixRoot: 3, MaxISL: 4096, MaxOSL: 100}); s.Dataset.Synthesis != want {
		t.Errorf("synthesis %+v, want %+v", s.Dataset.Synthesis, want)
	}
	ic := s.InputConfig()
	for path, v := range map[string]any{"input.synthesis.prefix_len_multiplier": 1.5, "input.synthesis.speedup_ratio": 1.0,
		"input.synthesis.prefix_root_multiplier": 3, "input.synthesis.max_isl": 4096} {
		if got, _ := cmdline.PathValue(ic, path); got != v {
			t.Errorf("input_config %s = %v, want %v", path, got, v)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--synthesis-speedup-ratio", "0"}, "--synthesis-speedup-ratio \"0\": want a number > 0"},
		{[]string{"--synthesis-max-isl", "-1"}, "--synthesis-max-isl must be ≥ 1"},
		{[]string{"--synthesis-output-len-multiplier", "2"}, "--synthesis-output-len-multiplier reshapes a trace"},
		{[]string{"--input-file", "x", "--custom-dataset-type", "azure_trace", "--synthesis-prefix-root-multiplier", "2"}, "no hash ids to reshape"},
		{[]string{"--input-file", "x", "--custom-dataset-type", "baseten", "--synthesis-speedup-ratio", "2"}, "--synthesis-speedup-ratio does not apply to a Baseten replay"},
	} {
		_, err := parseArgs(t, tc.args...)
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
}
