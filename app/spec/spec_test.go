package spec

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/tui"
)

// parseArgs parses args as `surge profile` does: the command line into a
// Config, then the Config into a Spec.
func parseArgs(t *testing.T, args ...string) (*Spec, error) {
	t.Helper()
	c, err := cmdline.ParseProfile(args...)
	if err != nil {
		return nil, err // a value its flag's limits refuse (cmdline.CheckNumbers)
	}
	return Parse(c)
}

// base is the smallest Config a run takes.
func base() cmdline.Config {
	return cmdline.Config{Model: "m", EndpointType: "chat", ISL: 8, Timeout: time.Second}
}

func TestExportFlagErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ level, slice, prefix, want string }{
		{level: "all", want: `--export-level "all": want summary, records or raw`},
		{slice: "soon", want: `--slice-duration: "soon" is not seconds or a duration such as 30s, 5m, 2h`},
		{slice: "-1", want: `--slice-duration: "-1": want a duration > 0`},
		{slice: "0s", want: `--slice-duration: "0s": want a duration > 0`},
		{prefix: "out/run", want: `--profile-export-prefix "out/run": a file name, not a path (the folder is --output-artifact-dir)`},
	} {
		c := base()
		c.ExportLevel, c.SliceDuration, c.ExportPrefix = tc.level, tc.slice, tc.prefix
		_, err := Parse(c)
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || err.Error() != tc.want {
			t.Errorf("%+v: %v, want usage error %q", tc, err, tc.want)
		}
	}
	for in, want := range map[string]time.Duration{"30": 30 * time.Second, "0.5": 500 * time.Millisecond, "5m": 5 * time.Minute, "2h": 2 * time.Hour} {
		if d, err := parseSliceDuration(in); err != nil || d != want {
			t.Errorf("parseSliceDuration(%q) = %v, %v; want %v", in, d, err, want)
		}
	}
	for in, want := range map[string]string{"": "profile_export_aiperf.json", "foo": "foo.json", "foo.csv": "foo.json", "foo_raw.jsonl": "foo.json", "foo_timeslices.csv": "foo.json"} {
		if got := ExportFiles(in).JSON; got != want {
			t.Errorf("exportNames(%q).JSON = %q, want %q", in, got, want)
		}
	}
}

func FuzzParseSliceDuration(f *testing.F) {
	for _, s := range []string{"30", "0.5", "5m", "2h", "1h30m", "-1", "0", "1e400", "NaN", "inf", "9223372036s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseSliceDuration(s)
		if err == nil && d <= 0 {
			t.Fatalf("parseSliceDuration(%q) = %v without an error", s, d)
		}
	})
}

func TestTelemetryURLsAsAIPerfGivesThem(t *testing.T) {
	got, err := gpuTelemetryURLs([]string{"", "pynvml", "dashboard", "node1:9400", "http://node2:9401/metrics", "node1:9400"})
	if d := cmp.Diff([]string{"http://node1:9400/metrics", "http://node2:9401/metrics"}, got); err != nil || d != "" {
		t.Errorf("--gpu-telemetry: %v (-want +got)\n%s", err, d)
	}
	for _, bad := range []string{"amdsmi", "custom_gpu_metrics.csv", "ftp://x"} {
		var ue *cmdline.UsageError
		if _, err := gpuTelemetryURLs([]string{bad}); !errors.As(err, &ue) || !strings.Contains(err.Error(), "--gpu-telemetry") {
			t.Errorf("--gpu-telemetry %s: %v, want a usage error naming the flag", bad, err)
		}
	}
	got, err = MetricsURLs("--server-metrics", []string{"node1:8081", "https://node2:9090/custom/metrics"})
	if d := cmp.Diff([]string{"http://node1:8081/metrics", "https://node2:9090/custom/metrics"}, got); err != nil || d != "" {
		t.Errorf("--server-metrics: %v (-want +got)\n%s", err, d)
	}
}

// TestForeignFlagsThroughTheCommand: AIPerf's flags surge does not
// implement are noted once each (a neutral value says nothing), as INFO
// lines: quiet at --log-level WARNING.
func TestForeignFlagsThroughTheCommand(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	for _, tc := range []struct {
		args  []string
		notes int
	}{
		{[]string{"--workers-max", "8", "--zmq-host", "10.0.0.1"}, 2},
		{[]string{"--workers-max", "8", "--log-level", "warning"}, 0},
		{[]string{"--request-cancellation-rate", "0", "--num-profile-runs", "1", "--url-strategy", "round_robin"}, 0},
	} {
		s, err := parseArgs(t, tc.args...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		var log strings.Builder
		l := s.Logger(&log)
		for _, n := range s.Notes {
			l.Notef("%s", n)
		}
		if n := strings.Count(log.String(), "note: "); n != tc.notes {
			t.Errorf("%v: %d notes, want %d:\n%s", tc.args, n, tc.notes, log.String())
		}
		if tc.notes > 0 && !strings.Contains(log.String(), "--workers-max 8 is AIPerf's") {
			t.Errorf("%v: the note does not repeat the value as given:\n%s", tc.args, log.String())
		}
	}
}

// TestVerboseOnATerminalIsSimple: -v on a terminal shows the simple UI, as
// AIPerf's does, so its debug lines are not hidden under the dashboard.
func TestVerboseOnATerminalIsSimple(t *testing.T) {
	c := base()
	c.Verbose, c.StdoutTTY = true, true
	s, err := Parse(c)
	if err != nil {
		t.Fatal(err)
	}
	if s.UI != tui.ModeSimple || !s.Logger(nil).Enabled("DEBUG") {
		t.Errorf("-v on a terminal: ui %v, level %d", s.UI, s.LogLevel)
	}
	if ic, _ := cmdline.PathValue(s.InputConfig(), "service.ui_type"); ic != "simple" {
		t.Errorf("input_config ui_type %v, want the simple UI it ran", ic)
	}
}

// TestAutoPlot: --auto-plot asks for the PNG charts, --no-auto-plot is the
// default said outright, both together are refused; input_config keeps
// whether the run plots under AIPerf's output.auto_plot.
func TestAutoPlot(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	for _, tc := range []struct {
		args  []string
		plots bool
	}{{nil, false}, {[]string{"--auto-plot"}, true}, {[]string{"--no-auto-plot"}, false}} {
		s, err := parseArgs(t, tc.args...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		ic, _ := cmdline.PathValue(s.InputConfig(), "output.auto_plot")
		if s.Exports.Plots != tc.plots || ic != tc.plots {
			t.Errorf("%v: plots %v, input_config %v; want %v", tc.args, s.Exports.Plots, ic, tc.plots)
		}
	}
	var ue *cmdline.UsageError
	if _, err := parseArgs(t, "--auto-plot", "--no-auto-plot"); !errors.As(err, &ue) || !strings.Contains(err.Error(), "--auto-plot and --no-auto-plot") {
		t.Errorf("both: %v, want a usage error naming both", err)
	}
}

// TestMediaFlagsThatWouldBeIgnored: a negative or half-given image size
// would leave the images off and measure text alone: refused, naming the
// flag, before anything runs.
func TestMediaFlagsThatWouldBeIgnored(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--image-width-mean", "-1", "--image-height-mean", "100"}, "--image-width-mean must be > 0, got -1"},
		{[]string{"--image-width-mean", "100"}, "images need both"},
		{[]string{"--image-width-mean", "64", "--image-height-mean", "64", "--image-height-stddev", "-3"}, "--image-height-stddev must be ≥ 0"},
		{[]string{"--audio-length-mean", "-2"}, "--audio-length-mean must be > 0"},
	} {
		var ue *cmdline.UsageError
		if _, err := parseArgs(t, tc.args...); !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error %q", tc.args, err, tc.want)
		}
	}
	if _, err := parseArgs(t, "--image-width-mean", "64", "--image-height-mean", "64"); err != nil {
		t.Errorf("both sizes: %v", err)
	}
}

// TestExportNamesCannotCollide: a prefix that would write one of a run's
// files over another is refused, naming both.
func TestExportNamesCannotCollide(t *testing.T) {
	for prefix, want := range map[string]string{
		"inputs":                     `"inputs" would write the summary JSON over inputs.json (the request bodies)`,
		"profile_export_surge_state": "summary JSON over profile_export_surge_state.json (the state sidecar)",
		"server_metrics_export":      "(the server metrics summary)",
		"gpu_telemetry_export.csv":   "per-request records over gpu_telemetry_export.jsonl (the GPU telemetry)",
	} {
		c := base()
		c.ExportPrefix = prefix
		var ue *cmdline.UsageError
		if _, err := Parse(c); !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
			t.Errorf("--profile-export-prefix %s: %v, want a usage error naming %q", prefix, err, want)
		}
	}
	for _, ok := range []string{"", "run1", "inputs_v2"} {
		c := base()
		c.ExportPrefix = ok
		if _, err := Parse(c); err != nil {
			t.Errorf("--profile-export-prefix %q: %v", ok, err)
		}
	}
}

// TestAbsurdValuesAreRefused: a zero bound given on purpose, a rate or
// concurrency no client can apply, a count past any run: each refused
// before anything runs, naming the flag (they hung or ran something else).
func TestAbsurdValuesAreRefused(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--request-count", "0"}, "--request-count must be ≥ 1, got 0"},
		{[]string{"--benchmark-duration", "0"}, "--benchmark-duration must be > 0 s, got 0"},
		{[]string{"--request-rate", "1e308"}, "--request-rate 1e+308 is more than one client can send"},
		{[]string{"--concurrency", "1000000000"}, "--concurrency 1000000000 is more than one client can hold"},
		{[]string{"--concurrency", "1,2000000"}, "--concurrency 2000000"},
		{[]string{"--request-count", "99999999999999999"}, "--request-count must be ≤ 1125899906842624, got 99999999999999999"},
		{[]string{"--isl", "999999999"}, "--isl must be ≤ 4194304, got 999999999"},
		{[]string{"--request-count", "5,0"}, "--request-count must be ≥ 1, got 0"},
		{[]string{"--user-centric-rate", "2e6", "--num-users", "4"}, "--user-centric-rate must be ≤ 1000000, got 2e6"},
	} {
		var ue *cmdline.UsageError
		if _, err := parseArgs(t, tc.args...); !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error %q", tc.args, err, tc.want)
		}
	}
	for _, ok := range [][]string{{"--request-count", "99999999999"}, {"--concurrency", "1000"}, {"--request-rate", "5000"}} {
		if _, err := parseArgs(t, ok...); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
}
