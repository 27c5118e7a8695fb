package cmdline

import (
	"bufio"
	"bytes"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v2"
)

// aiperfOptions reads AIPerf's documented `profile` option names
// (testdata/aiperf_profile_options.txt): one option a line, its names
// separated by spaces.
func aiperfOptions(t *testing.T) [][]string {
	t.Helper()
	f, err := os.Open("testdata/aiperf_profile_options.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, strings.Fields(line))
	}
	if len(out) < 200 {
		t.Fatalf("read %d options: the list is cut short", len(out))
	}
	return out
}

// sampleArgs is a command line that gives flag f (named name) a value its
// type parses.
func sampleArgs(name string, f cli.Flag) []string {
	if f.Names()[0] == ConfigFlag {
		return []string{name, os.DevNull} // read as it is parsed: an empty file
	}
	switch kindOf(f) {
	case argSwitch:
		return []string{name}
	}
	switch f.(type) {
	case *intFlag, *uint64Flag, *float64Flag, *ValueFlag:
		if g, ok := f.(*ValueFlag); ok {
			_, isDur := g.Value.(*DurationValue)
			_, isList := g.Value.(*sweepValue)
			if !isDur && !isList {
				return []string{name, "x:1"}
			}
		}
		return []string{name, sampleNumber(numberLimits[f.Names()[0]])}
	}
	return []string{name, "x:1"}
}

// sampleNumber is a value within l: 2 where it may be, else a bound.
func sampleNumber(l Limits) string {
	if l.check("x", value{x: 2}, "") == nil {
		return "2"
	}
	if l.check("x", value{x: l.Hi}, "") == nil {
		return strconv.FormatFloat(l.Hi, 'g', -1, 64)
	}
	return strconv.FormatFloat((l.Lo+l.Hi)/2, 'g', -1, 64)
}

// TestAIPerfOptionsParse walks AIPerf's documented option list: every name
// (aliases included) must be one surge profile accepts.
func TestAIPerfOptionsParse(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	byName := map[string]cli.Flag{}
	for _, f := range ProfileFlags(&Config{}) {
		for _, n := range f.Names() {
			byName[n] = f
		}
	}
	// Parsed in rounds, each giving a flag under one name only (urfave/cli
	// refuses two forms of one flag on a command line).
	var rounds [][]string
	var used []map[cli.Flag]bool
	for _, opt := range aiperfOptions(t) {
		for _, name := range opt {
			bare := strings.TrimLeft(name, "-")
			f, ok := byName[bare]
			if !ok {
				t.Errorf("AIPerf's %s: surge profile does not accept it", name)
				continue
			}
			r := 0
			for r < len(rounds) && used[r][f] {
				r++
			}
			if r == len(rounds) {
				rounds, used = append(rounds, nil), append(used, map[cli.Flag]bool{})
			}
			rounds[r], used[r][f] = append(rounds[r], sampleArgs(name, f)...), true
			// The names of one AIPerf option are one surge flag (a
			// --no-x negation may be a flag of its own).
			negation := strings.HasPrefix(bare, "no-") || strings.Contains(bare, "-no-")
			if first := byName[strings.TrimLeft(opt[0], "-")]; first != f && !negation {
				t.Errorf("AIPerf's %s and %s are one option; surge binds them to different flags", opt[0], name)
			}
		}
	}
	// Each parses (values are judged later, in prepare).
	for _, args := range rounds {
		if _, err := ParseProfile(args...); err != nil {
			t.Errorf("AIPerf's options: %v", err)
		}
	}
}

// TestForeignFlagsSayWhatSurgeDoes: each AIPerf flag surge does not
// implement is silent at a neutral value and otherwise either refused
// (exit 2) or noted once, naming the flag and saying what surge does.
func TestForeignFlagsSayWhatSurgeDoes(t *testing.T) {
	for _, o := range foreignOptions {
		name := o.names()[0]
		value := []string{"7"}
		if o.kind == argSwitch {
			value = []string{"true"}
		}
		if o.isNeutral(value) {
			value = []string{"someting-else"}
		}
		c := Config{Foreign: map[string][]string{name: value}}
		notes, err := c.ForeignNotes()
		switch {
		case o.refuse && o.isNeutral(value):
			t.Errorf("--%s: no non-neutral sample", name)
		case o.refuse:
			var ue *UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--"+name) || !strings.Contains(err.Error(), o.does) {
				t.Errorf("--%s %v: error %v, want a usage error naming the flag and saying what surge does", name, value, err)
			}
		case err != nil || len(notes) != 1 || !strings.Contains(notes[0], "--"+name) || !strings.Contains(notes[0], o.does):
			t.Errorf("--%s %v: notes %q, error %v; want one note naming the flag", name, value, notes, err)
		}
		for _, n := range o.neutral {
			c := Config{Foreign: map[string][]string{name: {n}}}
			if notes, err := c.ForeignNotes(); err != nil || len(notes) > 0 {
				t.Errorf("--%s %s (neutral): notes %q, error %v; want silence", name, n, notes, err)
			}
		}
	}
}

func TestExpandArgs(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	got := parseProfile(t, "--extra-inputs", "ignore_eos:true", "max_tokens:5", "--streaming",
		"-H", "A: 1", "B:2", "--gpu-telemetry", "--no-gpu-telemetry", "--server-metrics", "a:9400", "b:9400",
		"--num-requests", "3")
	if d := cmp.Diff([]string{"ignore_eos:true", "max_tokens:5"}, got.ExtraInputs); d != "" {
		t.Errorf("--extra-inputs a b (-want +got)\n%s", d)
	}
	if d := cmp.Diff([]string{"A: 1", "B:2"}, got.Headers); d != "" {
		t.Errorf("-H a b (-want +got)\n%s", d)
	}
	if d := cmp.Diff([]string{"a:9400", "b:9400"}, got.ServerMetricsURLs); d != "" {
		t.Errorf("--server-metrics a b (-want +got)\n%s", d)
	}
	// A bare --gpu-telemetry takes no value: the flag after it stays a flag.
	if !got.NoGPUTelemetry || !got.Streaming || len(got.GPUTelemetryURLs) != 1 || got.GPUTelemetryURLs[0] != "" {
		t.Errorf("bare --gpu-telemetry: urls %q, --no-gpu-telemetry %v, --streaming %v", got.GPUTelemetryURLs, got.NoGPUTelemetry, got.Streaming)
	}
	if got.RequestCount != 3 {
		t.Errorf("count %d", got.RequestCount)
	}
	// A negative value is the flag's value (refused by its limits), not a
	// flag of its own.
	if _, err := ParseProfile("--fixed-schedule-start-offset", "-5", "--num-requests", "3"); err == nil || !strings.Contains(err.Error(), "--fixed-schedule-start-offset must be ≥ 0 ms, got -5 ms") {
		t.Errorf("a negative value: %v, want it taken for the flag's value and refused", err)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--streaming", "true"}, `unexpected argument "true"`},
		{[]string{"-m", "a", "b"}, `unexpected argument "b": it follows -m, which takes one value`},
		{[]string{"--concurrency", "4", "stray", "--isl", "64"}, `unexpected argument "stray"`},
		{[]string{"--tokenizer", "--streaming"}, "--tokenizer needs a value (got the flag --streaming)"},
		{[]string{"--", "--isl", "64"}, `unexpected argument "--isl"`},
	} {
		_, err := ParseProfile(tc.args...)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
}

func TestAIPerfAliasesAndValues(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	got := parseProfile(t, "--prompt-input-tokens-mean", "100", "--prompt-input-tokens-stddev", "2.5",
		"--prompt-input-tokens-block-size", "16", "--prompt-output-tokens-mean", "20", "--prompt-output-tokens-stddev", "0.5",
		"--num-prefix-prompts", "3", "--prefix-prompt-length", "40", "--num-warmup-requests", "2",
		"--artifact-dir", "out", "--ui-type", "simple", "--request-rate-mode", "constant",
		"--benchmark-grace-period", "inf", "-vv")
	want := []any{100, 2.5, 16, 20, 0.5, 3, 40, 2, "out", "simple", "constant", Forever, true}
	have := []any{got.ISL, got.ISLStddev, got.ISLBlockSize, got.OSL, got.OSLStddev, got.PrefixPoolSize, got.PrefixLength,
		got.WarmupCount, got.ArtifactDir, got.UI, got.ArrivalPattern, got.Grace, got.ExtraVerbose}
	if d := cmp.Diff(want, have); d != "" {
		t.Errorf("AIPerf's names (-want +got)\n%s", d)
	}
	if v, _ := PathValue(got.InputConfig(http.Header{}), "loadgen.benchmark_grace_period"); v != "inf" {
		t.Errorf("input_config loadgen.benchmark_grace_period = %v, want \"inf\"", v)
	}
	// --vllm-burstiness alone selects gamma arrivals, as AIPerf's does.
	if c := parseProfile(t, "--vllm-burstiness", "0.5"); c.ArrivalPattern != "gamma" || c.Smoothness != 0.5 {
		t.Errorf("--vllm-burstiness 0.5: pattern %q smoothness %g, want gamma 0.5", c.ArrivalPattern, c.Smoothness)
	}
	if c := parseProfile(t, "--vllm-burstiness", "0.5", "--arrival-pattern", "poisson"); c.ArrivalPattern != "poisson" {
		t.Errorf("an explicit --arrival-pattern was replaced by %q", c.ArrivalPattern)
	}
}

func TestLogLevels(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{}, "INFO"}, {Config{LogLevel: "debug"}, "DEBUG"}, {Config{Verbose: true, LogLevel: "error"}, "DEBUG"},
		{Config{ExtraVerbose: true}, "TRACE"}, {Config{LogLevel: "Warning"}, "WARNING"},
	} {
		if lvl, err := tc.c.Level(); err != nil || logLevels[lvl] != tc.want {
			t.Errorf("%+v: level %v %v, want %s", tc.c, lvl, err, tc.want)
		}
	}
	var ue *UsageError
	if _, err := (&Config{LogLevel: "loud"}).Level(); !errors.As(err, &ue) {
		t.Errorf("--log-level loud: %v, want a usage error", err)
	}
	var log bytes.Buffer
	l := Logger{W: &log, Level: 1}
	l.Debugf("shown %d", 1)
	Logger{W: &log, Level: 2}.Debugf("hidden")
	if log.String() != "debug: shown 1\n" {
		t.Errorf("debug lines %q", log.String())
	}
}
