package main

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

	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/export"
	"github.com/surgebench/surge/tui"
)

// Result is how a run ended.
type Result struct {
	Summary   *metrics.Summary
	Dir       string
	Cancelled bool
	// Aborted is set when --failed-request-threshold stopped the run.
	Aborted bool
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
// The summary goes to out; notices and progress go to log.
func Run(ctx context.Context, c Config, out, log io.Writer) (*Result, error) {
	kind, err := endpoint.ParseKind(c.EndpointType)
	if err != nil {
		return nil, &UsageError{err}
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	uiMode, err := tui.ParseMode(c.UI, c.StdoutTTY)
	if err != nil {
		return nil, &UsageError{err}
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
	builder, counter, err := c.loadTokenizer()
	if err != nil {
		return nil, err
	}
	concs, rates, err := c.parseLoad()
	if err != nil {
		return nil, err
	}
	ds, err := c.loadDataset(builder, c.WarmupCount+c.promptsNeeded(concs, rates), log)
	if err != nil {
		return nil, err
	}
	p, err := c.plan(ds)
	if err != nil {
		return nil, err
	}

	target, stopTarget, err := c.target(ctx, log)
	if err != nil {
		return nil, err
	}
	defer stopTarget()

	dir := c.ArtifactDir
	if dir == "" {
		dir = DefaultArtifactDir(c.Model, string(kind), p.dirMode())
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
	colOpts := []metrics.Option{metrics.WithClock(clock), metrics.WithGoodput(slos), metrics.WithSink(jsonl)}
	if counter != nil {
		colOpts = append(colOpts, metrics.WithTokenizer(counter))
	}
	if len(p.values) > 1 {
		colOpts = append(colOpts, metrics.WithStages(p.mode, p.values))
	}
	col := metrics.NewCollector(colOpts...)
	ep := &endpoint.Endpoint{Kind: kind, Model: c.Model, Streaming: c.Streaming, Extra: extra}
	genOpts := []loadgen.Option{
		loadgen.WithStart(start),
		loadgen.WithHeaders(headers),
		loadgen.WithRequestTimeout(c.Timeout),
		loadgen.WithGracePeriod(c.Grace),
		loadgen.WithClient(&http.Client{Transport: loadgen.NewTransport(maxInt(concs))}),
		loadgen.WithBodyHook(inputs.Add),
		loadgen.WithSecrets(secretValues(c.APIKey, headers)...),
	}
	if c.FailedThreshold > 0 {
		genOpts = append(genOpts, loadgen.WithFailureThreshold(c.FailedThreshold, max(maxInt(concs), 10)))
	}
	gen, err := loadgen.New(target, ep, ds, col, genOpts...)
	if err != nil {
		col.Close()
		return nil, &UsageError{err}
	}

	logw := &heldLog{w: log}
	if uiMode == tui.ModeDashboard {
		logw.hold()
	}
	tel, err := c.startTelemetry(ctx, target, dir, start, col, logw)
	if err != nil {
		col.Close()
		return nil, err
	}

	runCtx, stopIssuing := context.WithCancel(ctx)
	defer stopIssuing()
	info := tui.Info{Model: c.Model, URL: target, Endpoint: string(kind), Mode: p.mode,
		Target: p.targetLabel(), TotalRequests: p.total, Duration: c.Duration}
	if len(p.values) > 1 {
		info.Stages = p.values
	}
	var runErr error
	uiErr := present(ctx, uiMode, info, col, log, stopIssuing, func() { runErr = gen.Run(runCtx, p.stages) })
	telData, telErr := tel.stop()
	summary := col.Close()
	logw.release()
	end := time.Now()

	res := &Result{Summary: summary, Dir: dir, Cancelled: runCtx.Err() != nil && !errors.Is(runErr, loadgen.ErrFailureThreshold)}
	res.Aborted = errors.Is(runErr, loadgen.ErrFailureThreshold)
	c.judge(summary, p)

	run := export.Run{
		SurgeVersion: c.Version, Start: start, End: end, WasCancelled: res.Cancelled || res.Aborted,
		InputConfig: c.inputConfig(headers),
		RunInfo: map[string]any{"target_url": target, "endpoint": kind.Path(), "dataset": ds.Name,
			"conversations": len(ds.Conversations), "mode": p.mode, "stage_values": p.values},
		Extra: map[string]float64{},
	}
	if telData != nil {
		run.Telemetry = telData
		if j, ok := tel.col.EnergyJoules(); ok && j > 0 {
			if toks := summary.Run[metrics.TotalOutputTokens]; toks > 0 {
				run.Extra["output_tokens_per_joule"] = toks / j
				run.Extra["energy_per_output_token"] = j / toks
			}
		}
	}
	errs := []error{uiErr, jsonl.Err(), inputs.Close(), telErr}
	if runErr != nil && !res.Aborted {
		errs = append(errs, runErr)
	}
	title := fmt.Sprintf("surge profile: %s @ %s (%s, %s %s)", c.Model, target, kind, p.mode, p.targetLabel())
	errs = append(errs, report(out, dir, title, summary, run))
	if res.Aborted {
		fmt.Fprintf(out, "stopped early: %v (--failed-request-threshold %g)\n", runErr, c.FailedThreshold)
	}
	if res.Aborted {
		return res, runErr
	}
	return res, errors.Join(errs...)
}

// maxPrompts bounds the synthetic prompts built for a duration-bound run.
const maxPrompts = 200_000

// promptsNeeded is how many distinct synthetic prompts a run uses: one per
// request of every stage, so no prompt repeats and a server's prefix cache
// sees no accidental hits. A duration-bound run sizes it from the rate (or
// a generous guess for a closed loop); the prompts then cycle if needed.
func (c *Config) promptsNeeded(concs []int, rates []float64) int {
	stages := max(len(concs), len(rates), 1)
	n := max(c.RequestCount, defaultRequestCount) * stages
	if c.Duration > 0 && c.RequestCount == 0 {
		secs := c.Duration.Seconds() * float64(stages)
		guess := 1000.0
		for _, r := range rates {
			guess = max(guess, r*secs*1.1)
		}
		n = int(min(guess, maxPrompts))
	}
	return n
}

// target returns the server to benchmark: --url, or the embedded mock
// started on a free loopback port when --url is empty or "mock".
func (c *Config) target(ctx context.Context, log io.Writer) (url string, stop func(), err error) {
	if c.URL != "" && c.URL != "mock" {
		return c.URL, func() {}, nil
	}
	mock, err := mockserver.Start(ctx, "127.0.0.1:0", mockserver.Config{TTFT: 20 * time.Millisecond, ITL: 5 * time.Millisecond, Model: c.Model})
	if err != nil {
		return "", nil, fmt.Errorf("starting the embedded mock server: %w", err)
	}
	fmt.Fprintf(log, "no --url given: benchmarking the embedded mock server at %s (TTFT 20ms, ITL 5ms)\n", mock.URL())
	return mock.URL(), func() { _ = mock.Close(context.Background()) }, nil
}

// report writes the summary exports, prints the console table and lists
// every file of the run.
func report(out io.Writer, dir, title string, s *metrics.Summary, run export.Run) error {
	err := errors.Join(
		writeFile(filepath.Join(dir, FileJSON), func(w io.Writer) error { return export.JSON(w, s, run) }),
		writeFile(filepath.Join(dir, FileCSV), func(w io.Writer) error { return export.CSV(w, s) }),
	)
	export.Console(out, title, s)
	fmt.Fprintf(out, "\nExports in %s:\n", dir)
	for _, f := range []string{FileJSON, FileCSV, FileJSONL, FileInputs, FileGPUTelemetry, FileServerMetrics} {
		if _, statErr := os.Stat(filepath.Join(dir, f)); statErr == nil {
			fmt.Fprintf(out, "  %s\n", filepath.Join(dir, f))
		}
	}
	return err
}

// judge marks the knee of a sweep and adds the warnings the schedule
// earns: an achieved rate under 95% of the target.
func (c *Config) judge(s *metrics.Summary, p *plan) {
	if len(s.Stages) > 1 {
		pts := make([]schedule.StagePoint, len(s.Stages))
		for i, st := range s.Stages {
			pts[i] = schedule.StagePoint{Value: st.Value, P95TTFTms: st.TTFT.P95, Throughput: st.OutputTokenThroughput}
			if st.TTFT.Count == 0 {
				// Non-streamed sweeps judge by latency.
				pts[i].P95TTFTms = st.Latency.P95
			}
		}
		s.Knee, s.Operating = schedule.Knee(pts, c.KneeFactor)
		if s.Knee >= 0 {
			s.Stages[s.Knee].Knee = true
			s.Warnings = append(s.Warnings, fmt.Sprintf(
				"knee at %s %g: p95 TTFT rose more than %g× over the first stage while throughput gained < 10%%; recommended operating point: %s %g",
				p.mode, s.Stages[s.Knee].Value, kneeFactor(c.KneeFactor), p.mode, s.Stages[s.Operating].Value))
		}
	}
	// Judge the client by the schedule it was given (a Poisson sample's own
	// rate), not the nominal target a short sample can miss by chance.
	if p.target > 0 && s.IntendedRate > 0 && s.SendRate < 0.95*s.IntendedRate {
		s.Warnings = append(s.Warnings, fmt.Sprintf(
			"achieved request rate %.2f/s is %.1f%% of the schedule's %.2f/s (--request-rate %g): the client fell behind",
			s.SendRate, 100*s.SendRate/s.IntendedRate, s.IntendedRate, p.target))
	}
}

func kneeFactor(f float64) float64 {
	if f > 0 {
		return f
	}
	return schedule.DefaultKneeFactor
}

// targetLabel is the mode's value as shown to people: "8", "1,2,4".
func (p *plan) targetLabel() string {
	parts := make([]string, len(p.values))
	for i, v := range p.values {
		parts[i] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strings.Join(parts, ",")
}

// secretValues lists what must never be exported: the API key, and the
// values of secret headers, with and without a "Bearer " scheme.
func secretValues(apiKey string, h http.Header) []string {
	out := []string{apiKey}
	for k, vs := range h {
		if !IsSecretHeader(k) {
			continue
		}
		for _, v := range vs {
			out = append(out, v)
			if _, tok, ok := strings.Cut(v, " "); ok {
				out = append(out, tok)
			}
		}
	}
	return out
}

func maxInt(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
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
	case c.RequestCount < 0:
		return usagef("--request-count must be ≥ 1, got %d", c.RequestCount)
	case c.WarmupCount < 0:
		return usagef("--warmup-request-count must be ≥ 0, got %d", c.WarmupCount)
	case c.Duration < 0:
		return usagef("--benchmark-duration must be > 0, got %s", c.Duration)
	case c.Grace < 0:
		return usagef("--benchmark-grace-period must be ≥ 0, got %s", c.Grace)
	case c.Timeout <= 0:
		return usagef("--request-timeout-seconds must be > 0")
	case c.ISL <= 0:
		return usagef("--isl must be ≥ 1, got %d", c.ISL)
	case c.OSL < 0:
		return usagef("--osl must be ≥ 0, got %d", c.OSL)
	case c.ISLStddev < 0 || c.OSLStddev < 0:
		return usagef("--isl-stddev and --osl-stddev must be ≥ 0")
	case c.FailedThreshold < 0 || c.FailedThreshold > 1:
		return usagef("--failed-request-threshold must be between 0 and 1, got %g", c.FailedThreshold)
	case c.KneeFactor < 0:
		return usagef("--knee-factor must be > 1, got %g", c.KneeFactor)
	case c.NumUsers > 0 && c.UserCentricRate <= 0:
		return usagef("--num-users needs --user-centric-rate (the users' combined requests per second)")
	case c.GPUInterval < 0:
		return usagef("--gpu-telemetry-interval must be > 0")
	}
	return nil
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// DefaultArtifactDir is artifacts/<model>-<endpoint>-<mode><value>.
func DefaultArtifactDir(model, kind, mode string) string {
	name := strings.Trim(unsafeChars.ReplaceAllString(model, "_"), "_")
	return filepath.Join("artifacts", fmt.Sprintf("%s-%s-%s", name, kind, mode))
}
