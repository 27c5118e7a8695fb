package profile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/export"
	"github.com/surgebench/surge/telemetry"
	"github.com/surgebench/surge/telemetry/serverinfo"
	"github.com/surgebench/surge/tui"
)

// Telemetry export file names.
const (
	FileGPUTelemetry  = spec.FileGPUTelemetry
	FileServerMetrics = spec.FileServerMetrics
)

// telemetryRun samples GPUs and server metrics for the length of a run.
type telemetryRun struct {
	col    *telemetry.Collector
	live   liveTelemetry
	cancel context.CancelFunc
	done   chan error
	files  []*os.File
	// gpus are NVML's GPUs (name, memory, driver) for run_info.server;
	// nil without NVML.
	gpus []serverinfo.GPU
}

// startTelemetry starts the samplers tc asks for; targets are the
// servers requests go to, whose own /metrics are scraped. Sources that are
// not there (no NVML, no /metrics) are reported once and skipped; the run
// goes on without them. measuring says whether the run is past its
// warmup: the samples before are the summaries' baseline, not their data.
func startTelemetry(ctx context.Context, tc *spec.Telemetry, targets []string, dir string, start time.Time, measuring func() bool, log io.Writer) (*telemetryRun, error) {
	logf := func(format string, args ...any) { fmt.Fprintf(log, format+"\n", args...) }
	var gpus []telemetry.GPUSource
	var facts []serverinfo.GPU
	if !tc.NoGPU {
		if src, err := telemetry.NVML(); err != nil {
			logf("GPU telemetry: %v", err)
		} else {
			gpus = append(gpus, src)
			facts, _ = serverinfo.GPUs(ctx, src) // what the run ran on, for run_info.server
		}
	}
	for _, u := range tc.DCGM {
		gpus = append(gpus, telemetry.DCGM(u, nil))
	}
	var servers []string
	if !tc.NoServerMetrics {
		// As AIPerf: each target's own /metrics, and any --server-metrics
		// besides.
		for _, t := range targets {
			u, err := loadgen.BaseURL(t)
			if err != nil {
				return nil, &cmdline.UsageError{Err: fmt.Errorf("--server-metrics: %w", err)}
			}
			servers = append(servers, telemetry.MetricsURL(u))
		}
		for _, m := range tc.ServerMetrics {
			if !slices.Contains(servers, m) {
				servers = append(servers, m)
			}
		}
	}
	t := &telemetryRun{done: make(chan error, 1), gpus: facts}
	opts := []telemetry.Option{
		telemetry.Start(start), telemetry.GPU(gpus...), telemetry.ServerMetrics(servers...),
		telemetry.Logf(logf), telemetry.OnSample(t.live.record), telemetry.Measuring(measuring),
	}
	if tc.GPUInterval > 0 {
		opts = append(opts, telemetry.Interval(tc.GPUInterval))
	}
	if tc.ServerInterval > 0 {
		opts = append(opts, telemetry.ServerInterval(tc.ServerInterval))
	}
	if tc.ServerTimeout > 0 {
		opts = append(opts, telemetry.ServerTimeout(tc.ServerTimeout))
	}
	if len(gpus) > 0 {
		f, err := os.Create(filepath.Join(dir, FileGPUTelemetry))
		if err != nil {
			return nil, err
		}
		t.files = append(t.files, f)
		opts = append(opts, telemetry.GPUSink(f))
	}
	if len(servers) > 0 {
		f, err := os.Create(filepath.Join(dir, FileServerMetrics))
		if err != nil {
			t.close()
			return nil, err
		}
		t.files = append(t.files, f)
		opts = append(opts, telemetry.ServerSink(f))
	}
	t.col = telemetry.New(opts...)
	parent := ctx
	ctx, t.cancel = context.WithCancel(context.WithoutCancel(ctx))
	go func() { t.done <- t.col.Run(ctx) }()
	// The servers' first token counters are read before the first request,
	// so the run's counts and theirs cover the same requests (a /metrics
	// slower than that is not waited for).
	select {
	case <-t.col.Ready():
	case <-time.After(firstScrapeWait):
	case <-parent.Done():
	}
	return t, nil
}

// firstScrapeWait bounds the wait for the servers' first /metrics reading
// before the run's first request.
const firstScrapeWait = 2 * time.Second

// writeServerExports writes AIPerf's server_metrics_export.json and .csv
// into dir from the run's scrapes; nothing when no endpoint answered.
func writeServerExports(dir string, m *telemetry.ServerExport, run export.Run) error {
	if m == nil {
		return nil
	}
	h := telemetry.ExportHeader{AIPerfVersion: export.AIPerfVersion, SurgeVersion: run.SurgeVersion,
		BenchmarkID: run.BenchmarkID, InputConfig: run.InputConfig}
	return errors.Join(
		WriteFile(filepath.Join(dir, telemetry.ServerMetricsJSONFile), func(w io.Writer) error { return m.WriteJSON(w, h) }),
		WriteFile(filepath.Join(dir, telemetry.ServerMetricsCSVFile), func(w io.Writer) error { return m.WriteCSV(w, h) }))
}

// stop ends sampling and returns the summary for telemetry_data (nil when
// nothing was sampled).
func (t *telemetryRun) stop() (*telemetry.Data, error) {
	t.cancel()
	err := <-t.done
	t.close()
	return t.col.Summary(), err
}

func (t *telemetryRun) close() {
	for _, f := range t.files {
		f.Close()
	}
}

// liveTelemetry keeps the latest GPU and server readings for the
// dashboard's panels: display only, so they never pass through metrics.
type liveTelemetry struct {
	mu     sync.Mutex
	gpus   []telemetry.GPUSample
	server []telemetry.ServerSample
}

// record is the sampler's OnSample: a kind with no source this round (nil)
// keeps its last readings.
func (l *liveTelemetry) record(gpus []telemetry.GPUSample, server []telemetry.ServerSample) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if gpus != nil {
		l.gpus = slices.Clone(gpus)
	}
	// Each endpoint's scrape reports on its own: keep the latest per URL.
	for _, s := range server {
		if i := slices.IndexFunc(l.server, func(o telemetry.ServerSample) bool { return o.URL == s.URL }); i >= 0 {
			l.server[i] = s
		} else {
			l.server = append(l.server, s)
		}
	}
}

// servers is the latest server scrape per endpoint (for --stop-on).
func (l *liveTelemetry) servers() []telemetry.ServerSample {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.server)
}

// frame is snap with the latest readings, as the dashboard draws it: its
// newest warning (the one the dashboard shows) as the summary's one line.
func (l *liveTelemetry) frame(snap metrics.Snapshot) tui.Frame {
	if n := len(snap.Warnings); n > 0 {
		snap.Warnings = append(snap.Warnings[:n-1:n-1], export.ClassifyWarning(snap.Warnings[n-1]).Line)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return tui.Frame{Snapshot: snap, GPUs: slices.Clone(l.gpus), Server: slices.Clone(l.server)}
}
