package spec

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/export"
	"github.com/surgebench/surge/telemetry"
)

// The levels of --export-level, AIPerf's.
const (
	LevelSummary = "summary" // the summary files only
	LevelRecords = "records" // and the per-request JSONL
	LevelRaw     = "raw"     // and every request and response as sent and read
)

// Export file names, as AIPerf names them.
const (
	FileJSON  = "profile_export_aiperf.json"
	FileCSV   = "profile_export_aiperf.csv"
	FileJSONL = "profile_export.jsonl"
	// FileRaw is AIPerf's raw dump, written at --export-level raw.
	FileRaw = "profile_export_raw.jsonl"

	// The files whose names no prefix changes.
	FileInputs        = "inputs.json"
	FileState         = export.StateFile
	FileGPUTelemetry  = "gpu_telemetry_export.jsonl"
	FileServerMetrics = "server_metrics_export.jsonl"
	FileReport        = "report.html"
	// DirPlots is where --auto-plot draws a run's charts, AIPerf's folder.
	DirPlots = "plots"
)

// Exports is where and what a run writes.
type Exports struct {
	// Dir is --output-artifact-dir ("": AIPerf's name under artifacts/).
	Dir   string
	Level string
	// Slice is --slice-duration (0: no timeslices).
	Slice time.Duration
	Files Files
	// Report writes report.html at the end (--report), Plots the charts as
	// PNG files into plots/ (--auto-plot), Outputs every response's text
	// into outputs.json (--export-outputs-json).
	Report, Plots, Outputs bool
	// Trim is --trim: the headline numbers the whole run's, or its steady
	// state's.
	Trim metrics.Trim
}

// Files are the file names of a run's exports: AIPerf's defaults, or
// AIPerf's names under --profile-export-prefix.
type Files struct {
	JSON, CSV, JSONL, Raw         string
	TimeslicesJSON, TimeslicesCSV string
	// Outputs is --export-outputs-json's file; NetworkLatency the
	// probes of --network-latency-automatic.
	Outputs, NetworkLatency string
}

// prefixSuffixes are the endings AIPerf drops from --profile-export-prefix
// (longest first), so "foo.json" and "foo_timeslices.csv" give the base foo.
var prefixSuffixes = []string{"_network_latency.jsonl", "_outputs.json", "_server_metrics.parquet", "_server_metrics.jsonl", "_server_metrics.json",
	"_server_metrics.csv", "_gpu_telemetry.jsonl", "_timeslices.csv", "_timeslices.json", "_raw.jsonl",
	".parquet", ".csv", ".json", ".jsonl"}

// ExportFiles returns the export file names for prefix ("": AIPerf's
// default names).
func ExportFiles(prefix string) Files {
	base := prefix
	for _, s := range prefixSuffixes {
		if strings.HasSuffix(base, s) {
			base = strings.TrimSuffix(base, s)
			break
		}
	}
	if base == "" {
		return Files{JSON: FileJSON, CSV: FileCSV, JSONL: FileJSONL, Raw: FileRaw,
			TimeslicesJSON: "profile_export_aiperf_timeslices.json", TimeslicesCSV: "profile_export_aiperf_timeslices.csv",
			Outputs: export.OutputsFile, NetworkLatency: "profile_export_network_latency.jsonl"}
	}
	return Files{JSON: base + ".json", CSV: base + ".csv", JSONL: base + ".jsonl", Raw: base + "_raw.jsonl",
		TimeslicesJSON: base + "_timeslices.json", TimeslicesCSV: base + "_timeslices.csv", Outputs: base + "_" + export.OutputsFile,
		NetworkLatency: base + "_network_latency.jsonl"}
}

// distinct refuses a prefix that names two of a run's files alike (foo
// "inputs" would write the summary over inputs.json): each file is
// written whole, so one would be lost.
func (f Files) distinct(prefix string) error {
	files := []struct{ name, what string }{
		{FileInputs, "request bodies"}, {FileState, "state sidecar"}, {FileGPUTelemetry, "GPU telemetry"},
		{FileServerMetrics, "server metrics"}, {telemetry.ServerMetricsJSONFile, "server metrics summary"},
		{telemetry.ServerMetricsCSVFile, "server metrics CSV"}, {FileReport, "report"}, {DirPlots, "plots"},
		{f.JSON, "summary JSON"}, {f.CSV, "summary CSV"}, {f.JSONL, "per-request records"}, {f.Raw, "raw dump"},
		{f.TimeslicesJSON, "timeslices JSON"}, {f.TimeslicesCSV, "timeslices CSV"},
		{f.Outputs, "outputs"}, {f.NetworkLatency, "network latency probes"},
	}
	seen := map[string]string{}
	for _, x := range files {
		if other, ok := seen[x.name]; ok {
			return cmdline.Usagef("--profile-export-prefix %q would write the %s over %s (the %s): choose another prefix", prefix, x.what, x.name, other)
		}
		seen[x.name] = x.what
	}
	return nil
}

// parseExports reads --export-level, --slice-duration and
// --profile-export-prefix.
func parseExports(s *Spec, c *cmdline.Config) error {
	e := Exports{Dir: c.ArtifactDir, Report: c.Report, Outputs: c.ExportOutputs, Level: strings.ToLower(strings.TrimSpace(c.ExportLevel)), Files: ExportFiles(c.ExportPrefix)}
	switch e.Level {
	case "":
		e.Level = LevelRecords
	case LevelSummary, LevelRecords, LevelRaw:
	default:
		return cmdline.Usagef("--export-level %q: want summary, records or raw", c.ExportLevel)
	}
	trim, err := metrics.ParseTrim(c.Trim)
	if err != nil {
		return cmdline.Usagef("--%w", err)
	}
	e.Trim = trim
	switch {
	case c.AutoPlot && c.NoAutoPlot:
		return cmdline.Usagef("--auto-plot and --no-auto-plot: give one")
	case c.AutoPlot:
		e.Plots = true
	}
	if strings.ContainsAny(c.ExportPrefix, `/\`) {
		return cmdline.Usagef("--profile-export-prefix %q: a file name, not a path (the folder is --output-artifact-dir)", c.ExportPrefix)
	}
	if err := e.Files.distinct(c.ExportPrefix); err != nil {
		return err
	}
	if v := strings.TrimSpace(c.SliceDuration); v != "" {
		d, err := parseSliceDuration(v)
		if err != nil {
			return cmdline.Usagef("--slice-duration: %w", err)
		}
		e.Slice = d
	}
	s.Exports = e
	return nil
}

// parseSliceDuration reads seconds ("30", "0.5") or a duration with its
// unit ("30s", "5m", "2h", "1h30m"), as AIPerf's --slice-duration does.
func parseSliceDuration(s string) (time.Duration, error) {
	var d time.Duration
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(secs) || math.IsInf(secs, 0) || secs > math.MaxInt64/float64(time.Second) {
			return 0, fmt.Errorf("%q is not a duration", s)
		}
		d = time.Duration(secs * float64(time.Second))
	} else if d, err = time.ParseDuration(s); err != nil {
		return 0, fmt.Errorf("%q is not seconds or a duration such as 30s, 5m, 2h", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q: want a duration > 0", s)
	}
	return d, nil
}

// Telemetry is what a run samples beside its requests: local GPUs (NVML),
// DCGM exporters and the servers' /metrics.
type Telemetry struct {
	NoGPU bool
	// DCGM are --gpu-telemetry's exporter URLs.
	DCGM []string
	// GPUInterval, ServerInterval and ServerTimeout: 0 for the library's
	// defaults.
	GPUInterval, ServerInterval, ServerTimeout time.Duration
	// NoServerMetrics turns the /metrics scrapes off; ServerMetrics are
	// the endpoints scraped besides each target's own.
	NoServerMetrics bool
	ServerMetrics   []string
	// Network is the round trip the network-adjusted latencies subtract.
	Network Network
}

// Network is AIPerf's network latency adjustment: a round trip probed
// every Interval during the profile (Auto), or given (MeanMs, when
// MeanSet).
type Network struct {
	Auto     bool
	Interval time.Duration
	MeanMs   float64
	MeanSet  bool
}

// Adjusts reports whether the run reports network-adjusted latencies.
func (n Network) Adjusts() bool { return n.Auto || n.MeanSet }

// parseNetwork reads --network-latency-*: probing or a given mean, not
// both; the interval with probing only.
func parseNetwork(c *cmdline.Config) (Network, error) {
	n := Network{Auto: c.NetworkAuto, Interval: c.NetworkInterval}
	if v := strings.TrimSpace(c.NetworkMean); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return n, cmdline.Usagef("--network-latency-mean %q: want milliseconds ≥ 0", c.NetworkMean)
		}
		n.MeanMs, n.MeanSet = f, true
	}
	switch {
	case n.Auto && n.MeanSet:
		return n, cmdline.Usagef("--network-latency-automatic and --network-latency-mean: give one (probe the round trip, or give it)")
	case n.Interval < 0:
		return n, cmdline.Usagef("--network-latency-ping-interval must be > 0")
	case n.Interval > 0 && !n.Auto:
		return n, cmdline.Usagef("--network-latency-ping-interval paces --network-latency-automatic's probes: give it")
	case n.Interval == 0:
		n.Interval = time.Second
	}
	return n, nil
}

func parseTelemetry(s *Spec, c *cmdline.Config) error {
	dcgm, err := gpuTelemetryURLs(c.GPUTelemetryURLs)
	if err != nil {
		return err
	}
	more, err := MetricsURLs("--server-metrics", c.ServerMetricsURLs)
	if err != nil {
		return err
	}
	network, err := parseNetwork(c)
	if err != nil {
		return err
	}
	s.Telemetry = Telemetry{NoGPU: c.NoGPUTelemetry, DCGM: dcgm, GPUInterval: c.GPUInterval, ServerInterval: c.ServerInterval,
		ServerTimeout: c.ServerTimeout, NoServerMetrics: c.NoServerMetrics, ServerMetrics: more, Network: network}
	return nil
}

// MetricsURLs reads a list of Prometheus endpoints as AIPerf does: the
// scheme optional (http), a bare host:port meaning its /metrics; empty
// items (a bare flag) and repeats are dropped. flag names the list in
// errors.
func MetricsURLs(flag string, raw []string) ([]string, error) {
	var out []string
	for _, r := range raw {
		if strings.TrimSpace(r) == "" {
			continue
		}
		u, err := loadgen.BaseURL(r)
		if err != nil {
			return nil, cmdline.Usagef("%s: %w", flag, err)
		}
		s := u.String()
		if u.Path == "" || u.Path == "/" {
			s = telemetry.MetricsURL(u)
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// gpuTelemetryURLs reads --gpu-telemetry: DCGM exporter URLs, and AIPerf's
// words for what surge does anyway (pynvml: the local GPUs, which NVML
// samples unless --no-gpu-telemetry; dashboard: the dashboard shows GPUs
// whenever there are readings); a bare flag asks for the default.
func gpuTelemetryURLs(raw []string) ([]string, error) {
	var urls []string
	for _, r := range raw {
		switch w := strings.ToLower(strings.TrimSpace(r)); {
		case w == "" || w == "pynvml" || w == "nvml" || w == "dashboard":
		case w == "amdsmi":
			return nil, cmdline.Usagef("--gpu-telemetry amdsmi: surge samples NVIDIA GPUs only (NVML, DCGM exporters)")
		case strings.HasSuffix(w, ".csv"):
			return nil, cmdline.Usagef("--gpu-telemetry %s: surge reads no custom GPU metrics file; it records NVML's and DCGM's own fields", r)
		default:
			urls = append(urls, r)
		}
	}
	return MetricsURLs("--gpu-telemetry", urls)
}
