package spec

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/datasets"
)

// TestAgenticFlags: each agent flag reaches the spec as typed settings.
func TestAgenticFlags(t *testing.T) {
	t.Parallel()
	s, err := parseArgs(t, "--tool-loop", "--tool-result-tokens", "64", "--tool-delay", "250", "--tool-loop-max-rounds", "3")
	if err != nil {
		t.Fatal(err)
	}
	if l := s.Agentic.ToolLoop; l == nil || *l != (ToolLoop{MaxRounds: 3, ResultTokens: 64, Delay: 250 * time.Millisecond}) {
		t.Errorf("tool loop %+v", l)
	}
	s, err = parseArgs(t, "--session-arrival-rate", "2.5", "--session-arrival-pattern", "gamma", "--session-arrival-smoothness", "0.5", "--concurrency", "8")
	if err != nil {
		t.Fatal(err)
	}
	if sa := s.Agentic.SessionArrival; sa == nil || *sa != (SessionArrival{Rate: 2.5, Pattern: "gamma", Smoothness: 0.5}) || s.Dataset.CacheBust != datasets.CacheBustFirstTurnPrefix {
		t.Errorf("session arrival %+v", sa)
	}
	s, err = parseArgs(t, "--trajectory-start-max-ratio", "0.6", "--burst-phase-starts", "--agentic-cache-warmup-duration", "30",
		"--agentic-warmup-grace-period", "5", "--system-idle-gap-cap-seconds", "2", "--concurrency", "4")
	if err != nil {
		t.Fatal(err)
	}
	want := Replay{MinRatio: 0.25, MaxRatio: 0.6, Burst: true, CacheWarmup: 30 * time.Second, Grace: 5 * time.Second, IdleGapCap: 2 * time.Second}
	if r := s.Agentic.Replay; r == nil || *r != want {
		t.Errorf("replay %+v, want %+v", r, want)
	}
	// A lower bound alone: the upper takes AIPerf's 0.75.
	if s, err = parseArgs(t, "--trajectory-start-min-ratio", "0.4"); err != nil || s.Agentic.Replay.MaxRatio != 0.75 || s.Agentic.Replay.MinRatio != 0.4 {
		t.Errorf("min ratio alone: %+v, %v", s.Agentic.Replay, err)
	}
	// Replay flags without a ratio: lanes from their first turns.
	if s, err = parseArgs(t, "--burst-phase-starts"); err != nil || s.Agentic.Replay.MaxRatio != 0 {
		t.Errorf("burst alone: %+v, %v", s.Agentic.Replay, err)
	}
	s, err = parseArgs(t, "--scenario", ScenarioAgentX, "--custom-dataset-type", "weka", "--input-file", "../../datasets/testdata/weka", "--benchmark-duration", "900")
	if err != nil {
		t.Fatal(err)
	}
	a := s.Agentic
	if a.Replay == nil || a.Replay.MinRatio != 0.25 || a.Replay.MaxRatio != 0.75 || s.Dataset.CacheBust != datasets.CacheBustFirstTurnPrefix || a.TraceIdleGapCap != time.Minute ||
		s.Endpoint.Extra["ignore_eos"] != true || len(a.Locks) != 0 {
		t.Errorf("scenario %+v, extra %v", a, s.Endpoint.Extra)
	}
	s, err = parseArgs(t, "--mock-tool-call-rate", "0.2", "--mock-bad-tool-args-rate", "0.1", "--mock-prefix-cache", "--mock-max-model-len", "4096")
	if err != nil || s.Agentic.Mock != (MockAgent{ToolCallRate: 0.2, BadToolArgs: 0.1, PrefixCache: true, MaxModelLen: 4096}) {
		t.Errorf("mock %+v, %v", s.Agentic.Mock, err)
	}
}

// TestAgenticFlagErrors: a setting an agent flag cannot honour is a
// usage error naming the flag, before the run.
func TestAgenticFlagErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tool-delay", "10"}, "--tool-delay shapes the client's tool loop: give --tool-loop"},
		{[]string{"--tool-result-tokens", "10"}, "--tool-result-tokens shapes"},
		{[]string{"--tool-loop", "--endpoint-type", "completions"}, "not completions"},
		{[]string{"--tool-loop", "--tool-loop-max-rounds", "0"}, "--tool-loop-max-rounds must be ≥ 1"},
		{[]string{"--tool-loop", "--tool-result-tokens", "-1"}, "--tool-result-tokens must be between"},
		{[]string{"--tool-loop", "--tool-delay", "-5"}, "--tool-delay must be ≥ 0"},
		{[]string{"--session-arrival-pattern", "constant"}, "give the rate"},
		{[]string{"--session-arrival-smoothness", "2"}, "give the rate"},
		{[]string{"--session-arrival-rate", "-1"}, "--session-arrival-rate must be ≥ 1e-06, got -1"},
		{[]string{"--session-arrival-rate", "1", "--session-arrival-pattern", "concurrency_burst"}, "poisson, constant or gamma"},
		{[]string{"--session-arrival-rate", "1", "--session-arrival-pattern", "uniform"}, "want poisson, constant or gamma"},
		{[]string{"--session-arrival-rate", "1", "--session-arrival-smoothness", "2"}, "give --session-arrival-pattern gamma"},
		{[]string{"--session-arrival-rate", "1", "--request-rate", "3"}, "it excludes --request-rate"},
		{[]string{"--session-arrival-rate", "1", "--concurrency", "1,2"}, "excludes a --concurrency list"},
		{[]string{"--session-arrival-rate", "1", "--trajectory-start-max-ratio", "0.5"}, "excludes --session-arrival-rate"},
		{[]string{"--trajectory-start-max-ratio", "1.5"}, "between 0 and 1"},
		{[]string{"--trajectory-start-min-ratio", "0.6", "--trajectory-start-max-ratio", "0.5"}, "is above"},
		{[]string{"--trajectory-start-max-ratio", "0.5", "--request-rate", "2"}, "it excludes --request-rate"},
		{[]string{"--trajectory-start-max-ratio", "0.5", "--warmup-request-count", "3"}, "--warmup-* do not apply"},
		{[]string{"--agentic-warmup-grace-period", "3"}, "give --trajectory-start-max-ratio"},
		{[]string{"--system-idle-gap-cap-seconds", "-1"}, "must be ≥ 0"},
		{[]string{"--agentic-cache-warmup-duration", "5", "--user-centric-rate", "2", "--num-users", "2"}, "excludes --user-centric-rate"},
		{[]string{"--scenario", "nope"}, "surge knows inferencex-agentx-mvp"},
		{[]string{"--scenario", ScenarioAgentX}, "it replays WEKA (AgentX) traces"},
		{[]string{"--scenario", ScenarioAgentX, "--custom-dataset-type", "weka", "--input-file", "../../datasets/testdata/weka", "--benchmark-duration", "60"}, "at least 900 s"},
		{[]string{"--scenario", ScenarioAgentX, "--custom-dataset-type", "weka", "--input-file", "../../datasets/testdata/weka", "--benchmark-duration", "900", "--extra-inputs", "ignore_eos:false"}, "sends ignore_eos: true"},
		{[]string{"--unsafe-override"}, "give --scenario"},
		{[]string{"--mock-tool-call-rate", "2"}, "--mock-tool-call-rate must be between 0 and 1, got 2"},
		{[]string{"--tool-max-argument-bytes", "10"}, `--tool-max-argument-bytes "10": want between 1KiB and 1TiB`},
		{[]string{"--tool-max-argument-bytes", "lots"}, `--tool-max-argument-bytes "lots": want a size`},
		{[]string{"--session-max-context-bytes", "1e300"}, `--session-max-context-bytes "1e300": want a size`},
		{[]string{"--tool-max-calls-per-reply", "0"}, "--tool-max-calls-per-reply must be ≥ 1, got 0"},
		{[]string{"--session-max-context-tokens", "0"}, "--session-max-context-tokens must be ≥ 1, got 0"},
	} {
		_, err := parseArgs(t, tc.args...)
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
}

// TestSessionLimitFlags: the session limits reach the spec, sizes read as
// --max-memory reads them; the context's bytes left unset (0: derived
// from the memory budget when the run is prepared).
func TestSessionLimitFlags(t *testing.T) {
	t.Parallel()
	s, err := parseArgs(t)
	if err != nil {
		t.Fatal(err)
	}
	if l := s.Agentic.Limits; l != (SessionLimits{ToolArgumentBytes: 4 << 20, ToolCalls: 128, ContextTokens: 2 << 20}) {
		t.Errorf("defaults %+v", l)
	}
	s, err = parseArgs(t, "--tool-max-argument-bytes", "512KiB", "--tool-max-calls-per-reply", "16",
		"--session-max-context-tokens", "100000", "--session-max-context-bytes", "8MB")
	if err != nil {
		t.Fatal(err)
	}
	if l := s.Agentic.Limits; l != (SessionLimits{ToolArgumentBytes: 512 << 10, ToolCalls: 16, ContextTokens: 100000, ContextBytes: 8e6}) {
		t.Errorf("given %+v", l)
	}
}

// TestScenarioUnsafeOverride: --unsafe-override keeps a run that breaks the
// scenario's locks, each a warning, the run not a valid submission.
func TestScenarioUnsafeOverride(t *testing.T) {
	t.Parallel()
	s, err := parseArgs(t, "--scenario", ScenarioAgentX, "--unsafe-override", "--benchmark-duration", "5")
	if err != nil {
		t.Fatal(err)
	}
	w := s.Agentic.ScenarioWarnings()
	if len(w) != 2 || !strings.Contains(w[0], "WEKA") || !strings.Contains(w[1], "900 s") || !strings.Contains(w[1], "not a valid submission") {
		t.Errorf("warnings %q", w)
	}
}
