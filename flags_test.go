package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v2"
)

// parseProfile parses args as `surge profile` would and returns the config.
func parseProfile(t *testing.T, args ...string) Config {
	t.Helper()
	got, err := tryParseProfile(args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return got
}

// tryParseProfile parses args as `surge profile` would: expanded as AIPerf
// reads them, then by urfave/cli, then completed from the context.
func tryParseProfile(args ...string) (Config, error) {
	var got Config
	cfg := &Config{}
	app := &cli.App{Name: "surge", Writer: io.Discard, ErrWriter: io.Discard, Commands: []*cli.Command{{
		Name: "profile", Flags: profileFlags(cfg), OnUsageError: onUsageError,
		Action: func(cc *cli.Context) error {
			if err := cfg.fromContext(cc); err != nil {
				return err
			}
			got = *cfg
			return nil
		},
	}}}
	full, err := commandArgs(append([]string{"surge", "profile"}, args...), app.Commands)
	if err != nil {
		return got, err
	}
	return got, app.Run(full)
}

func TestFlagsFillTheConfig(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	def := parseProfile(t)
	want := Config{Models: []string{"mock"}, ModelSelection: "round_robin", TokenizerRevision: "main", EndpointType: "chat", ArrivalPattern: "poisson", Smoothness: 1, KneeFactor: 2,
		Grace: 30 * time.Second, ISL: 550, Timeout: 600 * time.Second, GPUInterval: time.Second, Timestamps: "kernel",
		ReasoningFormat: "auto", RankingsPassagesMean: 1, RankingsPassageTokens: 550, ConnectionReuse: "pooled", TurnDelayRatio: 1, TurnsMean: 1, ExportLevel: "records"}
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
	c := Config{Grace: 5 * time.Second, StartOffset: 250 * time.Millisecond, NoServerMetrics: true, APIKey: "sk-x"}
	ic := c.inputConfig(http.Header{"Authorization": {"Bearer sk-x"}})
	for _, o := range options {
		key := o.key
		if key == "" {
			key = strings.ReplaceAll(o.flag.Names()[0], "-", "_")
		}
		if _, ok := ic[key]; !ok {
			t.Errorf("input_config lacks %s (--%s)", key, o.flag.Names()[0])
		}
	}
	if len(ic) != len(options) {
		t.Errorf("input_config has %d keys, %d flags", len(ic), len(options))
	}
	if ic["benchmark_grace_period"] != 5.0 || ic["fixed_schedule_start_offset"] != 250.0 || ic["no_server_metrics"] != true {
		t.Errorf("grace %v start offset %v no_server_metrics %v", ic["benchmark_grace_period"], ic["fixed_schedule_start_offset"], ic["no_server_metrics"])
	}
	if ic["api_key"] != Redacted || ic["headers"].(map[string]string)["Authorization"] != Redacted {
		t.Errorf("api_key %v headers %v: want both redacted", ic["api_key"], ic["headers"])
	}
}

func TestBadFlagValueIsAUsageError(t *testing.T) {
	for _, args := range [][]string{{"profile", "--benchmark-duration", "soon"}, {"profile", "--isl"}, {"mock-server", "--ttft", "x"}} {
		if got := run(append([]string{"surge"}, args...)); got != exitUsage {
			t.Errorf("surge %v exited %d, want %d", args, got, exitUsage)
		}
	}
}
