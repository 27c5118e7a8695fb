package spec

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
)

func TestBackendFlags(t *testing.T) {
	t.Parallel()
	s, err := parseArgs(t, "--otel-url", "collector:4318/otlp", "--stream", "timing", "--otel-resource-attributes", "team=perf,env=ci", "region=eu",
		"--gen-ai-provider", "openai", "--otel-span-sample-ratio", "1", "--otel-interval", "2",
		"--mlflow-tracking-uri", "https://mlflow.example.com", "--mlflow-tag", "team:perf", `{"ci": "yes", "n": 3}`,
		"--mlflow-artifact-glob", "*.json,plots/*", "--mlflow-parent-run-id", "p1")
	if err != nil {
		t.Fatal(err)
	}
	o, m := s.Backends.OTel, s.Backends.MLflow
	if o == nil || o.MetricsURL != "http://collector:4318/otlp/v1/metrics" || o.TracesURL != "http://collector:4318/otlp/v1/traces" ||
		o.Statistics || !o.Progress || o.Provider != "openai" || o.SpanRatio != 1 || o.Interval != 2*time.Second ||
		len(o.Resource) != 3 || o.Resource["region"] != "eu" {
		t.Errorf("OTel %+v", o)
	}
	if m == nil || m.URL.String() != "https://mlflow.example.com" || m.Experiment != "surge" || m.ParentRun != "p1" ||
		m.Tags["team"] != "perf" || m.Tags["ci"] != "yes" || m.Tags["n"] != "3" || strings.Join(m.Globs, " ") != "*.json plots/*" {
		t.Errorf("MLflow %+v", m)
	}
	if s, err := parseArgs(t); err != nil || s.Backends.OTel != nil || s.Backends.MLflow != nil {
		t.Errorf("no flags: %+v, %v", s.Backends, err)
	}
}

func TestBackendFlagErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--stream", "metrics"}, "--stream shapes what --otel-url sends: give --otel-url too"},
		{[]string{"--gen-ai-provider", "x"}, "--gen-ai-provider shapes what --otel-url sends"},
		{[]string{"--otel-url", "grpc://c:4317"}, "--otel-url \"grpc://c:4317\": only http and https collectors"},
		{[]string{"--otel-url", "c:4318", "--stream", "logs"}, `--stream "logs": want metrics, timing, default or none`},
		{[]string{"--otel-url", "c:4318", "--otel-resource-attributes", "team"}, `--otel-resource-attributes "team": want key=value`},
		{[]string{"--otel-url", "c:4318", "--otel-span-sample-ratio", "2"}, "--otel-span-sample-ratio must be between 0 and 1, got 2"},
		{[]string{"--otel-url", "c:4318", "--otel-interval", "0"}, "--otel-interval must be > 0 s, got 0"},
		{[]string{"--mlflow-run-name", "r"}, "--mlflow-run-name shapes what --mlflow-tracking-uri logs"},
		{[]string{"--mlflow-tracking-uri", "file:///tmp/mlruns"}, "not a file store"},
		{[]string{"--mlflow-tracking-uri", "localhost:5000", "--mlflow-tag", "novalue"}, `--mlflow-tag "novalue": want key:value or a JSON object`},
		{[]string{"--mlflow-tracking-uri", "localhost:5000", "--mlflow-artifact-glob", "[x"}, "--mlflow-artifact-glob"},
		{[]string{"--mlflow-tracking-uri", "localhost:5000", "--mlflow-experiment", " "}, "--mlflow-experiment is empty"},
	} {
		_, err := parseArgs(t, tc.args...)
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a usage error saying %q", tc.args, err, tc.want)
		}
	}
}

func FuzzAddTags(f *testing.F) {
	for _, s := range []string{"team:perf", `{"a": "b", "n": 1}`, "k:", ":v", "{", `{"a": null}`, "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m := map[string]string{}
		if err := addTags(m, s); err == nil && len(m) == 0 && !strings.HasPrefix(strings.TrimSpace(s), "{") {
			t.Fatalf("addTags(%q) took no tag without an error", s)
		}
		for k := range m {
			if k == "" && !strings.HasPrefix(strings.TrimSpace(s), "{") {
				t.Fatalf("addTags(%q): an empty key", s)
			}
		}
	})
}
