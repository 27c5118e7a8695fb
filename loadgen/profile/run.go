package profile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/export"
)

// Result is how a run ended.
type Result struct {
	Summary   *metrics.Summary
	Dir       string
	Cancelled bool
}

// AllFailed reports whether the run completed without one successful
// request (exit code 1).
func (r *Result) AllFailed() bool {
	return r.Summary.Run[metrics.RequestCount] == 0
}

// Export file names, as AIPerf names them.
const (
	FileJSON   = "profile_export_aiperf.json"
	FileCSV    = "profile_export_aiperf.csv"
	FileJSONL  = "profile_export.jsonl"
	FileInputs = "inputs.json"
)

// Run benchmarks the configured target. Cancelling ctx stops issuing; the
// run then drains within the grace period and still writes every export.
// Messages for the user go to out (summary) and log (progress, notices).
func Run(ctx context.Context, c Config, out, log io.Writer) (*Result, error) {
	kind, err := endpoint.ParseKind(c.EndpointType)
	if err != nil {
		return nil, &UsageError{err}
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	extra, err := ParseExtraInputs(c.ExtraInputs)
	if err != nil {
		return nil, &UsageError{err}
	}
	headers, err := ParseHeaders(c.Headers)
	if err != nil {
		return nil, &UsageError{err}
	}
	if c.APIKey != "" && headers.Get("Authorization") == "" {
		headers.Set("Authorization", "Bearer "+c.APIKey)
	}
	slos, err := metrics.ParseGoodput(c.Goodput)
	if err != nil {
		return nil, &UsageError{err}
	}

	target := c.URL
	if target == "" || target == "mock" {
		mock, err := mockserver.Start(ctx, "127.0.0.1:0", mockserver.Config{TTFT: 20 * time.Millisecond, ITL: 5 * time.Millisecond, Model: c.Model})
		if err != nil {
			return nil, fmt.Errorf("starting the embedded mock server: %w", err)
		}
		defer mock.Close(context.Background())
		target = mock.URL()
		fmt.Fprintf(log, "no --url given: benchmarking the embedded mock server at %s (TTFT 20ms, ITL 5ms)\n", target)
	}

	count := c.RequestCount
	if count <= 0 {
		count = 10
	}
	ds, err := datasets.Synthetic(datasets.SyntheticOptions{
		Count: c.WarmupCount + count, ISL: c.ISL, ISLStddev: c.ISLStddev, OSL: c.OSL, OSLStddev: c.OSLStddev, Seed: c.Seed,
	})
	if err != nil {
		return nil, &UsageError{err}
	}

	dir := c.ArtifactDir
	if dir == "" {
		dir = DefaultArtifactDir(c.Model, string(kind), c.Concurrency, c.RequestRate)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--output-artifact-dir: %w", err)
	}
	jsonlFile, err := os.Create(filepath.Join(dir, FileJSONL))
	if err != nil {
		return nil, err
	}
	defer jsonlFile.Close()
	inputsFile, err := os.Create(filepath.Join(dir, FileInputs))
	if err != nil {
		return nil, err
	}
	defer inputsFile.Close()

	start := time.Now()
	clock := func() int64 { return int64(time.Since(start)) }
	jsonl := export.NewJSONL(jsonlFile, start)
	inputs := export.NewInputs(inputsFile)
	col := metrics.NewCollector(metrics.WithClock(clock), metrics.WithGoodput(slos), metrics.WithSink(jsonl))
	ep := &endpoint.Endpoint{Kind: kind, Model: c.Model, Streaming: c.Streaming, Extra: extra}
	gen, err := loadgen.New(target, ep, ds, col,
		loadgen.WithStart(start),
		loadgen.WithHeaders(headers),
		loadgen.WithRequestTimeout(c.Timeout),
		loadgen.WithGracePeriod(c.Grace),
		loadgen.WithClient(&http.Client{Transport: loadgen.NewTransport(c.Concurrency)}),
		loadgen.WithBodyHook(inputs.Add),
	)
	if err != nil {
		col.Close()
		return nil, &UsageError{err}
	}

	stages := c.stages(count)
	progress := startProgress(ctx, c.UI, log, col, count)
	runErr := gen.Run(ctx, stages)
	summary := col.Close()
	progress.stop()
	end := time.Now()
	res := &Result{Summary: summary, Dir: dir, Cancelled: ctx.Err() != nil}

	var errs []error
	errs = append(errs, runErr, jsonl.Err(), inputs.Close())
	run := export.Run{
		SurgeVersion: c.Version, Start: start, End: end, WasCancelled: res.Cancelled,
		InputConfig: c.inputConfig(headers),
		RunInfo:     map[string]any{"target_url": target, "endpoint": kind.Path(), "dataset": ds.Name, "conversations": len(ds.Conversations)},
	}
	errs = append(errs, writeFile(filepath.Join(dir, FileJSON), func(w io.Writer) error { return export.JSON(w, summary, run) }))
	errs = append(errs, writeFile(filepath.Join(dir, FileCSV), func(w io.Writer) error { return export.CSV(w, summary) }))

	title := fmt.Sprintf("surge profile: %s @ %s (%s)", c.Model, target, kind)
	export.Console(out, title, summary)
	fmt.Fprintf(out, "\nExports in %s:\n", dir)
	for _, f := range []string{FileJSON, FileCSV, FileJSONL, FileInputs} {
		fmt.Fprintf(out, "  %s\n", filepath.Join(dir, f))
	}
	return res, errors.Join(errs...)
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

func (c *Config) validate() error {
	switch {
	case c.Model == "":
		return usagef("--model is required (the model name the server serves)")
	case c.Concurrency < 0:
		return usagef("--concurrency must be ≥ 1, got %d", c.Concurrency)
	case c.RequestRate < 0:
		return usagef("--request-rate must be > 0, got %g", c.RequestRate)
	case c.RequestCount < 0:
		return usagef("--request-count must be ≥ 1, got %d", c.RequestCount)
	case c.WarmupCount < 0:
		return usagef("--warmup-request-count must be ≥ 0, got %d", c.WarmupCount)
	case c.Duration < 0:
		return usagef("--benchmark-duration must be > 0, got %s", c.Duration)
	case c.Timeout <= 0:
		return usagef("--request-timeout-seconds must be > 0")
	case c.ISL <= 0:
		return usagef("--isl must be ≥ 1, got %d", c.ISL)
	case c.OSL < 0:
		return usagef("--osl must be ≥ 0, got %d", c.OSL)
	case c.ISLStddev < 0 || c.OSLStddev < 0:
		return usagef("--isl-stddev and --osl-stddev must be ≥ 0")
	}
	return nil
}

// stages builds the warmup and profile stages.
func (c *Config) stages(count int) []loadgen.Stage {
	limit := schedule.Constant(c.Concurrency)
	if c.Concurrency == 0 && c.RequestRate == 0 {
		limit = schedule.Constant(1)
	}
	var st []loadgen.Stage
	if c.WarmupCount > 0 {
		st = append(st, loadgen.Stage{Phase: metrics.Warmup, Limit: limit, Count: c.WarmupCount})
	}
	p := loadgen.Stage{Phase: metrics.Profile, Limit: limit, Count: count, Duration: c.Duration}
	if c.Duration > 0 && c.RequestCount == 0 {
		p.Count = 0 // the duration alone ends the run
	}
	st = append(st, p)
	return st
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// DefaultArtifactDir is artifacts/<model>-<endpoint>-<mode><value>.
func DefaultArtifactDir(model, kind string, concurrency int, rate float64) string {
	mode := "concurrency" + strconv.Itoa(max(concurrency, 1))
	if rate > 0 {
		mode = "request_rate" + strconv.FormatFloat(rate, 'f', -1, 64)
		if concurrency > 0 {
			mode += "-concurrency" + strconv.Itoa(concurrency)
		}
	}
	name := strings.Trim(unsafeChars.ReplaceAllString(model, "_"), "_")
	return filepath.Join("artifacts", fmt.Sprintf("%s-%s-%s", name, kind, mode))
}
