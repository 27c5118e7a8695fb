package cmdline

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
	want := Config{Models: []string{"mock"}, ModelSelection: "round_robin", TokenizerRevision: "main", WaitInterval: 5 * time.Second, WaitMode: "inference", EndpointType: "chat", ArrivalPattern: "poisson", Smoothness: 1, KneeFactor: 2,
		Grace: 30 * time.Second, ISL: 550, Timeout: 600 * time.Second, GPUInterval: time.Second, Timestamps: "kernel",
		ReasoningFormat: "auto", RankingsPassagesMean: 1, RankingsPassageTokens: 550, ConnectionReuse: "pooled", TurnDelayRatio: 1, TurnsMean: 1, ExportLevel: "records",
		ImageFormat: "png", ImageSource: "noise", ImageSourceSampling: "random-with-replacement", ImageBatchSize: 1,
		AudioFormat: "wav", AudioSampleRates: []string{"16"}, AudioDepths: []string{"16"}, AudioChannels: 1, AudioBatchSize: 1}
	if d := cmp.Diff(want, def); d != "" {
		t.Errorf("defaults (-want +got)\n%s", d)
	}
	got := parseProfile(t, "-m", "qwen", "--benchmark-grace-period", "2.5", "--fixed-schedule-end-offset", "1500",
		"--header", "A: 1", "--header", "B: 2", "--server-metrics", "http://a/metrics,http://b/metrics", "--no-server-metrics",
		"--synthetic-input-tokens-mean", "64", "--random-seed", "7")
	if len(got.Models) != 1 || got.Models[0] != "qwen" || got.Grace != 2500*time.Millisecond || got.EndOffset != 1500*time.Millisecond ||
		got.ISL != 64 || got.Seed != 7 || !got.NoServerMetrics {
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

// TestInputConfigHasEveryFlag: input_config comes from the flag table, so
// every flag reaches it, in the flag's own units.
func TestInputConfigHasEveryFlag(t *testing.T) {
	c := Config{Grace: 5 * time.Second, StartOffset: 250 * time.Millisecond, NoServerMetrics: true, APIKey: "sk-secret-x",
		Models: []string{"a", "b"}, ISL: 550, ExtraInputs: []string{"ignore_eos:true,api_key:sk-secret-y"},
		Foreign: map[string][]string{"workers-max": {"4"}, "export-http-trace": {"true"}, "otel-resource-attributes": {"a=1", "b=2"}}}
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
		"service.workers_max": "4", "output.export_http_trace": true, "output.otel_resource_attributes": []string{"a=1", "b=2"},
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
