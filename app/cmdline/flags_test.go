package cmdline

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v2"
)

// parseProfile parses args as `surge profile` would and returns the config.
func parseProfile(t *testing.T, args ...string) Config {
	t.Helper()
	got, err := ParseProfile(args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return got
}

func TestFlagsFillTheConfig(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	def := parseProfile(t)
	want := Config{Models: []string{"mock"}, ModelFromServer: true, ModelSelection: "round_robin", TokenizerRevision: "main", WaitInterval: 5 * time.Second, WaitMode: "inference", EndpointType: "chat", ArrivalPattern: "poisson", Smoothness: 1, KneeFactor: 2,
		Grace: 30 * time.Second, ISL: 550, Timeout: 21600 * time.Second, GPUInterval: time.Second, ServerTimeout: 5 * time.Second, Timestamps: "kernel",
		ReasoningFormat: "auto", RankingsPassagesMean: 1, RankingsPassageTokens: 550, ConnectionReuse: "pooled", MaxResponseMiB: 64, ConnectionRetries: "1", TurnDelayRatio: 1, TurnsMean: 1, ExportLevel: "records",
		NumDatasetEntries: 100, CacheBust: "none", TextBatchSize: 1, SeedDrawn: true, Seed: def.Seed,
		ImageFormat: "png", ImageSource: "noise", ImageSourceSampling: "random-with-replacement", ImageBatchSize: 1,
		AudioFormat: "wav", AudioSampleRates: []string{"16"}, AudioDepths: []string{"16"}, AudioChannels: 1, AudioBatchSize: 1, SweepMode: "grid", NumProfileRuns: 1, ConfidenceLevel: 0.95,
		AgenticConfig: AgenticConfig{ToolLoopRounds: 8, ToolResultTokens: 256, SessionArrivalPattern: "poisson", MockToolCallRate: 0.5,
			ToolMaxArgumentBytes: "4MiB", ToolMaxCalls: 128, SessionMaxContextTokens: 2 << 20},
		AdaptiveConfig: AdaptiveConfig{AdaptivePeriod: 30 * time.Second, AdaptiveMinCompleted: 1, AdaptiveStrategy: "ramp_until_fail",
			AdaptiveStepPolicy: "sla_margin", AdaptiveBaseStep: 10, AdaptiveMaxMultiplier: 4, AdaptiveStepPercent: 25},
		ExportConfig:    ExportConfig{OTelInterval: 10 * time.Second, OTelSpans: 0.1, MLflowExperiment: "surge"},
		BreakdownConfig: BreakdownConfig{OTLPWait: 10 * time.Second},
		Cloud:           Cloud{AuthTimeout: 30 * time.Second},
	} // the seed is drawn: TestAIPerfDefaults
	if d := cmp.Diff(want, def); d != "" {
		t.Errorf("defaults (-want +got)\n%s", d)
	}
	got := parseProfile(t, "-m", "qwen", "--benchmark-grace-period", "2.5", "--fixed-schedule-end-offset", "1500",
		"--header", "A: 1", "--header", "B: 2", "--server-metrics", "http://a/metrics,http://b/metrics", "--no-server-metrics",
		"--synthetic-input-tokens-mean", "64", "--random-seed", "7", "--auth-timeout-seconds", "2.5")
	if len(got.Models) != 1 || got.Models[0] != "qwen" || got.Grace != 2500*time.Millisecond || got.EndOffset != 1500*time.Millisecond ||
		got.ISL != 64 || got.Seed != 7 || !got.NoServerMetrics || got.ModelFromServer || got.Cloud.AuthTimeout != 2500*time.Millisecond {
		t.Errorf("parsed %+v", got)
	}
	if d := cmp.Diff([]string{"A: 1", "B: 2"}, got.Headers); d != "" {
		t.Errorf("--header (-want +got)\n%s", d)
	}
	if d := cmp.Diff([]string{"http://a/metrics", "http://b/metrics"}, got.ServerMetricsURLs); d != "" {
		t.Errorf("--server-metrics (-want +got)\n%s", d)
	}
	if h := parseProfile(t, "-H", "A: 1", "-H", "A: 1").Headers; len(h) != 2 {
		t.Errorf("-H twice gave %q, want both", h)
	}
}

// TestAIPerfDefaults: the defaults AIPerf's users count on (issue 32),
// one row each: its 6 h request timeout, 100 dataset entries reused, a
// random seed per run (kept in input_config, so --random-seed repeats
// it; a seed given, 0 included, is kept), a turn delay ratio that
// multiplies (0 removes the delays), and input_config's numbers as
// numbers.
func TestAIPerfDefaults(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	def := parseProfile(t)
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"--request-timeout-seconds 21600", def.Timeout == 21600*time.Second},
		{"--num-dataset-entries 100", def.NumDatasetEntries == 100},
		{"--conversation-turn-delay-ratio 1, delays kept", def.TurnDelayRatio == 1 && !def.NoTurnDelays},
		{"a seed drawn, JSON-exact", def.SeedDrawn && def.Seed < 1<<53},
	} {
		if !c.ok {
			t.Errorf("%s: got %+v", c.name, def)
		}
	}
	if a, b := parseProfile(t).Seed, parseProfile(t).Seed; a == b {
		t.Errorf("two runs drew the same seed %d", a)
	}
	if c := parseProfile(t, "--random-seed", "0"); c.Seed != 0 || c.SeedDrawn {
		t.Errorf("--random-seed 0: seed %d drawn %v, want 0 as given", c.Seed, c.SeedDrawn)
	}
	if c := parseProfile(t, "--conversation-turn-delay-ratio", "0"); !c.NoTurnDelays {
		t.Error("--conversation-turn-delay-ratio 0 keeps the delays; AIPerf multiplies by 0")
	}
	if c := parseProfile(t, "--conversation-turn-delay-ratio", "0.5"); c.NoTurnDelays || c.TurnDelayRatio != 0.5 {
		t.Errorf("--conversation-turn-delay-ratio 0.5: %+v", c)
	}
	for _, c := range []struct {
		args []string
		path string
		want string
	}{
		{[]string{"--concurrency", "100"}, "loadgen.concurrency", "100"},
		{[]string{"--concurrency", "1,2,4"}, "loadgen.concurrency", "[1,2,4]"},
		{[]string{"--request-rate", "2.5"}, "loadgen.request_rate", "2.5"},
		{[]string{"--random-seed", "42"}, "input.random_seed", "42"},
		{nil, "loadgen.concurrency", "null"},
	} {
		cfg := parseProfile(t, c.args...)
		ic := cfg.InputConfig(nil)
		v, _ := PathValue(ic, c.path)
		b, err := json.Marshal(v)
		if err != nil || string(b) != c.want {
			t.Errorf("%v: %s = %s (%v), want %s", c.args, c.path, b, err, c.want)
		}
	}
}

// TestInputConfigHasEveryFlag: input_config comes from the flag table, so
// every flag reaches it, in the flag's own units.
func TestInputConfigHasEveryFlag(t *testing.T) {
	c := Config{Grace: 5 * time.Second, StartOffset: 250 * time.Millisecond, NoServerMetrics: true, APIKey: "sk-secret-x",
		Models: []string{"a", "b"}, ISL: 550, ExtraInputs: []string{"ignore_eos:true,api_key:sk-secret-y"},
		Foreign: map[string][]string{"workers-max": {"4"}, "export-http-trace": {"true"}, "wandb-tag": {"a", "b"}}}
	ic := c.InputConfig(http.Header{"Authorization": {"Bearer sk-secret-x"}, "X-Team": {"infra"}})
	leaves := 0
	var walk func(map[string]any)
	walk = func(m map[string]any) {
		for _, v := range m {
			if sub, ok := v.(map[string]any); ok {
				walk(sub)
			} else {
				leaves++
			}
		}
	}
	walk(ic)
	path := regexp.MustCompile(`^[a-z_]+(\.[a-z0-9_]+)*$`)
	seen := map[string]string{}
	for _, o := range options {
		name := o.flag.Names()[0]
		if !path.MatchString(o.path) {
			t.Errorf("--%s: input_config path %q", name, o.path)
		}
		if other, ok := seen[o.path]; ok {
			t.Errorf("--%s and --%s share input_config path %s", name, other, o.path)
		}
		seen[o.path] = name
		if _, ok := PathValue(ic, o.path); !ok {
			t.Errorf("input_config lacks %s (--%s)", o.path, name)
		}
	}
	if want := len(options) + len(c.Foreign); leaves != want {
		t.Errorf("input_config has %d values, want %d (a flag's path is another's section?)", leaves, want)
	}
	for p, want := range map[string]any{
		"loadgen.benchmark_grace_period": 5.0, "input.fixed_schedule_start_offset": 250.0, "no_server_metrics": true,
		"endpoint.api_key": Redacted, "endpoint.model_names": []string{"a", "b"}, "input.prompt.input_tokens.mean": 550,
		"input.headers":       [][2]string{{"Authorization", Redacted}, {"X-Team", "infra"}},
		"input.extra":         [][2]any{{"ignore_eos", true}, {"api_key", Redacted}},
		"service.workers_max": "4", "output.export_http_trace": true, "output.wandb.tags": []string{"a", "b"},
	} {
		got, _ := PathValue(ic, p)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got)\n%s", p, d)
		}
	}
	b, _ := json.Marshal(ic)
	if strings.Contains(string(b), "sk-secret") {
		t.Errorf("a secret reached input_config: %s", b)
	}
}

// TestSweepListFlags: the list flags take one value (their field) or a
// comma list (SweepLists, the field holding the first), ints checked as
// ints, and input_config shows the list.
func TestSweepListFlags(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	c := parseProfile(t, "--isl", "128,512", "--osl", "16", "--benchmark-duration", "1.5,3", "--user-centric-rate", "2,4", "--num-users", "3,6", "--request-count", "5,10")
	want := map[string][]float64{"isl": {128, 512}, "benchmark-duration": {1.5, 3}, "user-centric-rate": {2, 4}, "num-users": {3, 6}, "request-count": {5, 10}}
	if d := cmp.Diff(want, c.SweepLists); d != "" {
		t.Errorf("SweepLists (-want +got)\n%s", d)
	}
	if c.ISL != 128 || c.OSL != 16 || c.Duration != 1500*time.Millisecond || c.UserCentricRate != 2 || c.NumUsers != 3 || c.RequestCount != 5 {
		t.Errorf("first values: %+v", c)
	}
	ic := c.InputConfig(nil)
	if v, _ := PathValue(ic, "input.prompt.input_tokens.mean"); !cmp.Equal(v, []any{int64(128), int64(512)}) {
		t.Errorf("input_config isl = %#v", v)
	}
	if v, _ := PathValue(ic, "input.prompt.output_tokens.mean"); v != 16 {
		t.Errorf("input_config osl = %#v, want 16", v)
	}
	if v, _ := PathValue(ic, "loadgen.benchmark_duration"); !cmp.Equal(v, []any{1.5, 3.0}) {
		t.Errorf("input_config duration = %#v", v)
	}
	for _, bad := range [][]string{{"--isl", "128,x"}, {"--isl", "1.5"}, {"--request-count", "5,"}, {"--benchmark-duration", "1,nan"},
		{"--isl", strings.Repeat("1,", MaxSweepValues) + "1"}} {
		if _, err := ParseProfile(bad...); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(bad[0], "--")) {
			t.Errorf("%q: err %v, want one naming the flag", bad, err)
		}
	}
}

// FuzzSweepValue: a list flag's value either fails to parse or yields at
// most MaxSweepValues finite values, the field holding the first.
func FuzzSweepValue(f *testing.F) {
	for _, s := range []string{"128", "128,512", "1.5,3", "", ",", "1,,2", "nan", "inf", "-3,4", "1e3", " 7 , 8 "} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, integer bool) {
		c := &Config{}
		var n int
		var x float64
		first := any(&x)
		if integer {
			first = &n
		}
		v := &sweepValue{s: sweep(c, "f", first)}
		if err := v.Set(s); err != nil {
			return
		}
		got := []float64{v.s.get()}
		if l, ok := c.SweepLists["f"]; ok {
			if len(l) < 2 || len(l) > MaxSweepValues || l[0] != got[0] {
				t.Fatalf("%q: list %v, first %v", s, l, got[0])
			}
			got = l
		}
		for _, g := range got {
			if g != g || g > 1e308 || g < -1e308 {
				t.Fatalf("%q: value %v not finite", s, g)
			}
		}
		if again := (&sweepValue{s: sweep(c, "f", first)}); again.Set(v.String()) != nil {
			t.Fatalf("%q: its own String %q does not parse", s, v.String())
		}
	})
}

// TestWithPath: the copy has the value, the original keeps its own.
func TestWithPath(t *testing.T) {
	m := map[string]any{"input": map[string]any{"prompt": map[string]any{"isl": 1}, "x": 2}}
	got := WithPath(m, "input.prompt.isl", 9)
	if v, _ := PathValue(got, "input.prompt.isl"); v != 9 {
		t.Errorf("copy isl %v", v)
	}
	if v, _ := PathValue(got, "input.x"); v != 2 {
		t.Errorf("copy lost input.x: %v", v)
	}
	if v, _ := PathValue(m, "input.prompt.isl"); v != 1 {
		t.Errorf("original changed: %v", v)
	}
	if p := PathOf("isl"); p != "input.prompt.input_tokens.mean" {
		t.Errorf("PathOf(isl) = %q", p)
	}
}

// TestFlagNamesShared: every profile flag's Names is its name then its
// aliases, as urfave's flags give them, and allocates nothing (it is
// called ≈ 79,000 times before a run starts); appending to the slice does
// not change the flag's names.
func TestFlagNamesShared(t *testing.T) { // not parallel: AllocsPerRun
	var c Config
	flags := ProfileFlags(&c)
	flags = append(flags, SearchFlags(&c)...)
	flags = append(flags, NewValueFlag(cli.GenericFlag{Name: "x", Aliases: []string{"y"}}), &ValueFlag{GenericFlag: cli.GenericFlag{Name: "z"}})
	for _, f := range flags {
		var name string
		var aliases []string
		switch f := f.(type) {
		case *stringFlag:
			name, aliases = f.Name, f.Aliases
		case *intFlag:
			name, aliases = f.Name, f.Aliases
		case *boolFlag:
			name, aliases = f.Name, f.Aliases
		case *uint64Flag:
			name, aliases = f.Name, f.Aliases
		case *float64Flag:
			name, aliases = f.Name, f.Aliases
		case *ValueFlag:
			name, aliases = f.Name, f.Aliases
		case *repeatableFlag:
			name, aliases = f.Name, f.Aliases
		case *switchFlag:
			name, aliases = f.Name, f.Aliases
		default:
			t.Fatalf("%T: not a flag type of this package", f)
		}
		want := append([]string{name}, aliases...)
		got := f.Names()
		if !cmp.Equal(got, want) {
			t.Errorf("%s: Names() = %q, want %q", name, got, want)
		}
		if grown := append(got, "appended"); len(grown) != len(want)+1 {
			t.Fatalf("%s: append to Names() = %q", name, grown)
		}
		if again := f.Names(); !cmp.Equal(again, want) {
			t.Errorf("%s: after an append to Names(), Names() = %q", name, again)
		}
		if vf, ok := f.(*ValueFlag); ok && vf.names == nil {
			continue // a literal ValueFlag builds its names per call
		}
		if n := testing.AllocsPerRun(10, func() { f.Names() }); n != 0 {
			t.Errorf("%s: Names() allocates %v times", name, n)
		}
	}
}
