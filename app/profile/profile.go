package profile

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/metrics/artifact"
	runreport "github.com/surgebench/surge/metrics/report"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/calibrate"
	"github.com/surgebench/surge/loadgen/cpuload"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/heapfloor"
	"github.com/surgebench/surge/loadgen/wire"
	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/export"
	"github.com/surgebench/surge/metrics/fingerprint"
	"github.com/surgebench/surge/telemetry"
	"github.com/surgebench/surge/tui"
)

// Result is how a run ended.
type Result struct {
	Summary   *metrics.Summary
	Dir       string
	Cancelled bool
	// Aborted is set when --failed-request-threshold stopped the run.
	Aborted bool
	// WriteFault is a failed write to a file of the run that stopped it
	// (exit code cmdline.ExitWriteFault).
	WriteFault error
}

// AllFailed reports whether the run completed without one successful
// request (exit code 1), unless every request that did not succeed was
// cancelled by the client (--request-cancellation-rate 100): the server
// failed none.
func (r *Result) AllFailed() bool {
	run := r.Summary.Run
	errs := run[metrics.ErrorRequestCount]
	return run[metrics.RequestCount] == 0 && (errs == 0 || errs > run[metrics.CancelledRequestCount])
}

// Export file names, as AIPerf names them.
const (
	FileJSON   = "profile_export_aiperf.json"
	FileCSV    = "profile_export_aiperf.csv"
	FileJSONL  = "profile_export.jsonl"
	FileInputs = "inputs.json"
	// fileRaw is AIPerf's raw dump, written at --export-level raw.
	fileRaw = "profile_export_raw.jsonl"
	// FileState is surge's sidecar of the run's metrics state, which
	// `surge merge` combines.
	FileState = export.StateFile
)

// Run benchmarks the configured target. Cancelling ctx stops issuing; the
// run then drains within the grace period and still writes every export.
// The summary goes to out; notices and progress go to log.
func Run(ctx context.Context, c cmdline.Config, out, log io.Writer) (*Result, error) {
	if c.NumProfileRuns > 1 {
		return runRepeated(ctx, c, out, log)
	}
	p, err := prepareCtx(ctx, c, log)
	if err != nil {
		return nil, err
	}
	o, err := p.execute(ctx, log)
	if err != nil {
		return nil, err
	}
	return p.report(o, out)
}

// config is the command line's Config with what a run adds to it:
// validation, the plan, the dataset, the endpoint, the exports.
type config struct{ cmdline.Config }

// prepared is a run resolved before anything starts: every flag validated
// and parsed, the tokenizer and dataset loaded, the load planned. Nothing
// in it needs closing.
type prepared struct {
	c       config
	kind    endpoint.Kind
	ep      *endpoint.Endpoint
	reuse   loadgen.ConnectionReuse
	uiMode  tui.Mode
	extra   map[string]any
	headers http.Header // as sent: the API key's Authorization included
	Slos    []metrics.SLO
	counter metrics.TokenCounter // nil: counts from usage or SSE events
	builder datasets.Tokenizer   // built the prompts (nil: the embedded Qwen3)
	tokSrc  tokenizerSource
	maxConc int // the largest concurrency cap of any stage
	stamps  loadgen.Timestamps
	Shard   loadgen.Shard // this host's part of the plan (zero: all of it)
	exports exportSettings
	StartAt time.Time // --start-at (zero: at once)
	ds      *datasets.Dataset
	plan    *plan
	live    *liveSession   // nil: the run follows its plan, unwatched
	log     cmdline.Logger // notes and debug lines, as --log-level allows
	ready   readiness      // --wait-for-model-*
}

// Prepare validates c and resolves it into a plan. It starts nothing and
// writes nothing but the dataset's report lines to log; with no --model
// and a real server, it asks the server's /v1/models for the name.
func Prepare(c cmdline.Config, log io.Writer) (*prepared, error) {
	return prepareCtx(context.Background(), c, log)
}

// prepareCtx is prepare that stops a tokenizer download when ctx ends.
func prepareCtx(ctx context.Context, cc cmdline.Config, log io.Writer) (*prepared, error) {
	c := config{cc}
	l, err := c.ResolveAIPerf(log)
	if err != nil {
		return nil, err
	}
	if err := c.ResolveTargets(); err != nil {
		return nil, err
	}
	p := &prepared{c: c, log: l, ready: readiness{timeout: c.WaitTimeout, interval: c.WaitInterval, mode: c.WaitMode}}
	if p.ready.mode == "" {
		p.ready.mode = cmdline.ProbeInference
	}
	if err := p.ready.validate(p.ready.mode != cmdline.ProbeInference, p.ready.interval != 0 && p.ready.interval != 5*time.Second); err != nil {
		return nil, err
	}
	if p.kind, err = endpoint.ParseKind(c.EndpointType); err != nil {
		return nil, &cmdline.UsageError{Err: err}
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	if err := c.validateRepeats(); err != nil {
		return nil, err
	}
	if err := c.validateEdges(); err != nil {
		return nil, err
	}
	if err := c.validateMedia(p.kind); err != nil {
		return nil, err
	}
	if p.Shard, err = c.HostShard(); err != nil {
		return nil, err
	}
	if p.exports, err = c.exports(); err != nil {
		return nil, err
	}
	if p.StartAt, err = c.StartTime(time.Now()); err != nil {
		return nil, err
	}
	var ok bool
	if p.stamps, ok = loadgen.ParseTimestamps(c.Timestamps); !ok {
		return nil, &cmdline.UsageError{Err: fmt.Errorf("--timestamps %q: want kernel or read", c.Timestamps)}
	}
	if _, err := gpuTelemetryURLs(c.GPUTelemetryURLs); err != nil {
		return nil, err
	}
	if _, err := metricsURLs("--server-metrics", c.ServerMetricsURLs); err != nil {
		return nil, err
	}
	if p.uiMode, err = tui.ParseMode(c.UI, c.StdoutTTY); err != nil {
		return nil, cmdline.Usagef("--ui %w", err)
	}
	if p.extra, err = cmdline.ParseExtraInputs(c.ExtraInputs); err != nil {
		return nil, &cmdline.UsageError{Err: err}
	}
	if p.headers, err = cmdline.ParseHeaders(c.Headers); err != nil {
		return nil, &cmdline.UsageError{Err: err}
	}
	if p.ep, err = c.endpointFor(p.kind, p.extra); err != nil {
		return nil, err
	}
	if c.Streaming && !p.ep.Info().Streams {
		// As AIPerf: the flag is dropped, not the run.
		fmt.Fprintf(log, "warning: --streaming: endpoint type %s does not stream; its requests are sent and read whole\n", p.kind)
	}
	if c.Search != nil {
		if err := needsStreaming(c.Search.SLO, c.Streaming && p.ep.Info().Streams, p.kind); err != nil {
			return nil, err
		}
	}
	if p.reuse, err = loadgen.ParseConnectionReuse(c.ConnectionReuse); err != nil {
		return nil, cmdline.Usagef("--connection-reuse-strategy: %w", err)
	}
	if name, value := p.ep.KeyHeader(c.APIKey); c.APIKey != "" && p.headers.Get(name) == "" {
		p.headers.Set(name, value)
	}
	p.modelFromServer(ctx, &c, log) // before the tokenizer: the model's own builds the prompts
	if p.Slos, err = metrics.ParseGoodput(c.Goodput); err != nil {
		return nil, cmdline.Usagef("--goodput: %w", err)
	}
	builder, counter, tokSrc, err := c.loadTokenizer(ctx, p.log)
	if err != nil {
		return nil, err
	}
	p.builder, p.counter, p.tokSrc = builder, counter, tokSrc
	load, err := c.parseLoad()
	if err != nil {
		return nil, err
	}
	p.maxConc = maxInt(load.concs)
	if err := p.validateLoadControl(load.concs); err != nil {
		return nil, err
	}
	if err := p.checkSharding(load); err != nil {
		return nil, err
	}
	sw, err := c.sweepOf(load)
	if err != nil {
		return nil, err
	}
	var pools valuePools
	if sw != nil {
		if p.plan, p.ds, err = c.planSweep(ctx, builder, load, sw, log); err != nil {
			return nil, err
		}
	} else if pools, err = c.loadValueDatasets(ctx, &p.ds, builder, load, log); err != nil {
		return nil, err
	}
	if err := checkMedia(p.ds, p.ep); err != nil {
		return nil, err
	}
	if err := checkBodies(p.ds, p.ep); err != nil {
		return nil, err
	}
	assignModels(p.ds, c.Models, c.ModelSelection, c.Seed)
	if len(c.Models) > 1 {
		p.log.Debugf("models %q share the prompts (%s)", c.Models, c.ModelSelection)
	}
	if len(c.URLs) > 1 {
		p.log.Debugf("servers %q take the requests round-robin", cmdline.RedactURLs(c.URLs))
	}
	if sw == nil {
		if p.plan, err = c.plan(p.ds, load); err != nil {
			return nil, err
		}
		pools.assign(p.plan.stages)
	}
	if !p.Shard.Whole() && p.plan.total > 0 {
		p.plan.total = loadgen.PlannedRequests(p.plan.stages, p.ds, p.Shard)
		if p.plan.total == 0 {
			// It would run nothing and end as "every request failed".
			return nil, cmdline.Usagef("--request-count %d leaves shard %s nothing to send: the plan has fewer sessions than shards", c.RequestCount, p.Shard)
		}
	}
	if p.live, err = p.prepareLive(); err != nil {
		return nil, err
	}
	return p, nil
}

// outcome is what executing a prepared run produced, for report.
type outcome struct {
	target     string
	dir        string
	start, end time.Time
	summary    *metrics.Summary
	telemetry  *telemetry.Data
	// serverExport is the server-metrics summary (nil: no endpoint answered).
	serverExport *telemetry.ServerExport
	// telemetryBetween is telemetry_data over part of the run (a sweep's
	// stage); nil without telemetry.
	telemetryBetween func(from, to time.Duration) *telemetry.Data
	energy           float64             // joules the GPUs used (0: unknown)
	cancelled        bool                // ctx ended the run (not the failure threshold)
	aborted          bool                // a second interrupt cut the drain short
	fault            error               // a failed write that stopped the run (*WriteFaultError)
	runErr           error               // the generator's
	clockDrift       time.Duration       // wall clock against the run clock (a step moves kernel stamps)
	server           *fingerprint.Server // what the target says it is (nil: nothing)
	late             time.Duration       // how late the run started for --start-at
	gcCycles         uint64              // the client's garbage collections during the run
	heapFloor        int64               // the heap under which it did not collect (0: none)
	state            *metrics.State
	// benchmarkID identifies the run in its exports (AIPerf's
	// benchmark_id: a random UUID).
	benchmarkID string
	errs        []error // the UI's, the exports' and telemetry's
}

// execute starts the target, the exports, the collector, telemetry and the
// UI, applies the plan and tears all of it down again, on every path, in
// one place.
func (p *prepared) execute(ctx context.Context, log io.Writer) (o *outcome, err error) {
	c := &p.c
	var cleanup []func()
	defer func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			cleanup[i]()
		}
	}()
	o = &outcome{dir: c.ArtifactDir, benchmarkID: newBenchmarkID()}
	// No collection while the heap is small: a cycle's mark work on a
	// client busy reading tokens delays every read behind it.
	cleanup = append(cleanup, heapfloor.Hold(heapfloor.Default))
	o.heapFloor = heapfloor.Active()

	target, stopTarget, err := c.target(ctx, log)
	if err != nil {
		return nil, err
	}
	cleanup = append(cleanup, stopTarget)
	o.target = target
	if err := p.ready.wait(ctx, append([]string{target}, c.URLs[min(1, len(c.URLs)):]...), p.ep, c.Models, p.headers, p.log); err != nil {
		return nil, err
	}
	o.server = probeServer(ctx, target, p.headers)

	if o.dir == "" {
		o.dir = filepath.Join("artifacts", p.artifactName()+p.shardDir())
	}
	moved, err := MoveAside(o.dir, "--output-artifact-dir", p.exports.files)
	if err != nil {
		return nil, err
	}
	if moved != "" {
		fmt.Fprintf(log, "%s held an earlier run: moved it to %s\n", o.dir, moved)
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return nil, fmt.Errorf("--output-artifact-dir: %w", err)
	}

	o.late = p.waitForStart(ctx, log)
	o.start = time.Now()
	gcBefore := heapfloor.Cycles()
	clock := func() int64 { return int64(time.Since(o.start)) }
	jsonlName := p.exports.files.JSONL
	if p.exports.level == levelSummary {
		jsonlName = "" // no per-request records at --export-level summary
	}
	rawName := ""
	if p.exports.level == levelRaw {
		rawName = p.exports.files.Raw
	}
	var inputsOpts []export.InputsOption
	if p.exports.level == levelSummary {
		inputsOpts = append(inputsOpts, export.HashMedia()) // inputs.json small: media as digests
	}
	// A failed write to a per-request file stops issuing when it happens.
	runCtx, stopIssuing := context.WithCancel(ctx)
	defer stopIssuing()
	fault := &writeFault{log: log, stop: stopIssuing}
	folders, err := openRunFolders(o.dir, p.stageFolders(), jsonlName, rawName, inputsOpts, o.start, fault.reporter, export.WithWorkerID(o.benchmarkID[:8]))
	if err != nil {
		return nil, err
	}
	cleanup = append(cleanup, folders.close) // the inputs writers' goroutines end on every path
	for _, v := range c.SecretValues(p.headers) {
		folders.secrets = append(folders.secrets, []byte(v))
	}
	logw := &heldLog{w: log}
	if p.uiMode == tui.ModeDashboard {
		logw.hold()
	}
	colOpts := []metrics.Option{metrics.WithClock(clock), metrics.WithOrigin(o.start), metrics.WithGoodput(p.Slos),
		metrics.WithSlices(p.exports.slice), metrics.WithSink(folders),
		metrics.WithCounting(metrics.Counting{Retokenize: c.RetokenizeOutput, ServerInput: c.UseServerTokenCount}),
		// Caveats the collector finds as records come (a prompt the server
		// cut): printed at once, as the generator's.
		metrics.WithLiveWarning(func(msg string) { fmt.Fprintf(logw, "warning: %s\n", msg) })}
	if meter, err := cpuload.Start(); err == nil {
		// Which side kept the CPU busy, for the read delay warning (not
		// measured where /proc/stat is missing).
		colOpts = append(colOpts, metrics.WithMachineLoad(meter.Load))
	}
	if p.counter != nil {
		colOpts = append(colOpts, metrics.WithTokenizer(p.counter))
	}
	if len(p.plan.values) > 1 {
		colOpts = append(colOpts, metrics.WithStages(p.plan.mode, p.plan.values))
		if sw := p.plan.sweep; sw != nil && len(sw.dims) > 1 {
			colOpts = append(colOpts, metrics.WithStageLabels(sw.labels()))
		}
	}
	colOpts = append(colOpts, p.live.sinks(clock)...)
	col := metrics.NewCollector(colOpts...)
	closeCol := sync.OnceValue(col.Close)
	cleanup = append(cleanup, func() { closeCol() })
	cleanup = append(cleanup, logw.release)

	ep := p.ep
	tr := loadgen.NewTransport(p.maxConc)
	cleanup = append(cleanup, tr.CloseIdleConnections) // a process may run many
	// A second interrupt cuts the drain short (loadgen.WithAbort).
	abortCtx, abort := context.WithCancel(context.Background())
	defer abort()
	genOpts := []loadgen.Option{
		loadgen.WithStart(o.start),
		loadgen.WithAbort(abortCtx),
		loadgen.WithHeaders(p.headers),
		loadgen.WithRequestTimeout(c.Timeout),
		loadgen.WithGracePeriod(c.Grace),
		loadgen.WithClient(&http.Client{Transport: tr}),
		loadgen.WithBodySink(folders),
		loadgen.WithSecrets(c.SecretValues(p.headers)...),
		loadgen.WithTimestamps(p.stamps),
		loadgen.WithConnectionReuse(p.reuse),
		loadgen.WithSessionHeader(c.SessionHeader),
		loadgen.WithShard(p.Shard),
		// Live: printed at once (after the dashboard leaves, while it runs)
		// and shown on the dashboard; the summary's warnings repeat it.
		loadgen.WithWarning(func(msg string) {
			fmt.Fprintf(logw, "warning: %s\n", msg)
			col.Warn(msg)
		}),
	}
	if p.exports.level == levelRaw {
		genOpts = append(genOpts, loadgen.WithRawCapture())
	}
	if c.NoCapGuard {
		genOpts = append(genOpts, loadgen.WithoutCapGuard())
	}
	if c.FailedThreshold > 0 {
		genOpts = append(genOpts, loadgen.WithFailureThreshold(c.FailedThreshold, max(p.maxConc, 10)))
	}
	if len(c.URLs) > 1 {
		genOpts = append(genOpts, loadgen.WithTargets(c.URLs[1:]...))
	}
	genOpts = append(genOpts, p.edgeOptions()...)
	genOpts = append(genOpts, p.loadControlOptions()...)
	p.checkFDLimit(logw)
	gen, err := loadgen.New(target, ep, p.ds, col, genOpts...)
	if err != nil {
		return nil, &cmdline.UsageError{Err: err}
	}

	// The warmup's scrapes are the baseline, as its records are left out.
	measuring := func() bool { return col.Phase() == metrics.Profile }
	tel, err := c.startTelemetry(ctx, target, o.dir, o.start, measuring, logw)
	if err != nil {
		return nil, err
	}

	interrupt := p.interrupts(stopIssuing, abort, func() int64 { return col.Snapshot().InFlight }, logw)
	defer interrupt.release()
	if err := p.live.start(ctx, c.ControlAddr, c.ControlToken, func() int64 { return col.Snapshot().InFlight }, logw); err != nil {
		return nil, err
	}
	info := tui.Info{Model: c.ModelLabel(), URL: cmdline.RedactURL(target), Endpoint: string(p.kind), Mode: p.plan.mode,
		Target: p.plan.targetLabel(), TotalRequests: p.plan.total, Duration: c.Duration, Control: p.live.control(),
		Shard: p.Shard.String()}
	if len(p.plan.values) > 1 {
		info.Stages = p.plan.values
		if sw := p.plan.sweep; sw != nil && len(sw.dims) > 1 {
			for i := range sw.points {
				info.StageLabels = append(info.StageLabels, sw.short(i))
			}
		}
	}
	for _, st := range p.plan.stages {
		if st.Phase == metrics.Profile {
			info.StageRequests = append(info.StageRequests, st.Count)
		}
	}
	frame := func() tui.Frame {
		f := p.live.frame(tel.live.frame(col.Snapshot()))
		f.InPrefill, f.PrefillCap = gen.InPrefill(), c.PrefillConcurrency
		if c.WarmupPrefillConcurrency > 0 && col.Phase() == metrics.Warmup {
			f.PrefillCap = c.WarmupPrefillConcurrency
		}
		return f
	}
	uiErr := present(ctx, p.uiMode, info, frame, log, interrupt.ask, func() {
		o.runErr = p.live.run(runCtx, gen, p.plan.stages, stopIssuing, logw, tel.live.servers)
	})
	interrupt.release() // no ask reads the collector once it is closed
	telData, telErr := tel.stop()
	o.serverExport = tel.col.ServerExport()
	o.summary = closeCol()
	o.state = col.State()
	o.state.Origin = o.start
	o.clockDrift = gen.ClockDrift()
	logw.release()
	o.end = time.Now()
	o.gcCycles = heapfloor.Cycles() - gcBefore
	o.fault = fault.Err()
	o.cancelled = runCtx.Err() != nil && !errors.Is(o.runErr, loadgen.ErrFailureThreshold) && p.live.trip() == nil && o.fault == nil
	o.aborted = abortCtx.Err() != nil
	if telData != nil {
		o.telemetry, o.telemetryBetween = telData, tel.col.SummaryBetween
		if j, ok := tel.col.EnergyJoules(); ok {
			o.energy = j
		}
	}
	o.errs = []error{uiErr, folders.finish(), telErr}
	return o, nil
}

// Report judges the run, writes the summary exports and prints the
// console summary.
func (p *prepared) report(o *outcome, out io.Writer) (*Result, error) {
	c := &p.c
	aborted := errors.Is(o.runErr, loadgen.ErrFailureThreshold)
	res := &Result{Summary: o.summary, Dir: o.dir, Cancelled: o.cancelled, Aborted: aborted, WriteFault: o.fault}
	c.judge(o.summary, p.plan)

	run := export.Run{
		BenchmarkID:  o.benchmarkID,
		SurgeVersion: c.Version, Start: o.start, End: o.end, WasCancelled: res.Cancelled || res.Aborted || o.fault != nil,
		InputConfig: c.InputConfig(p.headers),
		RunInfo: map[string]any{"target_url": cmdline.RedactURL(o.target), "endpoint": p.ep.Path(), "dataset": p.ds.Name,
			"conversations": len(p.ds.Conversations), "mode": p.plan.mode, "stage_values": p.plan.values,
			"timestamps": p.stamps.String(), "kernel_timestamps_supported": wire.Supported,
			"clock_drift_ms": float64(o.clockDrift) / 1e6,
			"client_gc":      map[string]any{"cycles": o.gcCycles, "heap_floor_mib": o.heapFloor >> 20}},
		Extra: map[string]float64{},
	}
	run.RunInfo.(map[string]any)["tokenizer"] = p.tokSrc
	if len(c.URLs) > 1 {
		run.RunInfo.(map[string]any)["target_urls"] = cmdline.RedactURLs(c.URLs)
	}
	if len(c.Models) > 1 {
		run.RunInfo.(map[string]any)["models"] = c.Models
		run.RunInfo.(map[string]any)["model_selection_strategy"] = c.ModelSelection
	}
	switch {
	case !p.Shard.Whole():
		run.RunInfo.(map[string]any)["shard"] = p.shardInfo(o.late)
	case !p.StartAt.IsZero():
		run.RunInfo.(map[string]any)["start_at"] = p.shardInfo(o.late)
	}
	if o.late > lateWarnAfter {
		o.summary.Warnings = append(o.summary.Warnings, p.lateWarning(o.late))
	}
	if n := o.summary.Redirects(); n > 0 {
		o.summary.Warnings = append(o.summary.Warnings, redirectWarning(n, c.FollowRedirects))
	}
	p.addRunInfo(run.RunInfo.(map[string]any), o.benchmarkID)
	if p.stageFolders() != nil {
		run.RunInfo.(map[string]any)["sweep_id"] = o.benchmarkID
		run.RunInfo.(map[string]any)["stage_folders"] = p.stageFolders()
	}
	run.Fingerprint = p.fingerprint(run.InputConfig.(map[string]any), o.server)
	cores := calibrate.CurrentCores()
	run.RunInfo.(map[string]any)["client_cores"] = cores
	if cal, err := calibrate.Load(); err == nil && cal != nil {
		run.RunInfo.(map[string]any)["client_calibration"] = cal
		if w := cal.CoresWarning(cores); w != "" {
			o.summary.Warnings = append(o.summary.Warnings, w)
		}
	}
	if o.clockDrift > time.Millisecond && p.stamps == loadgen.KernelTimestamps {
		o.summary.Warnings = append(o.summary.Warnings, fmt.Sprintf(
			"the wall clock moved %.1f ms against the monotonic clock during the run: kernel timestamps after the step are off by up to that much", float64(o.clockDrift)/1e6))
	}
	if o.telemetry != nil {
		run.Telemetry = o.telemetry
		if j := o.energy; j > 0 {
			if toks := o.summary.Run[metrics.TotalOSL]; toks > 0 {
				run.Extra["output_tokens_per_joule"] = toks / j
				run.Extra["energy_per_output_token"] = j / toks
			}
		}
	}
	errs := o.errs
	if o.runErr != nil && !aborted {
		errs = append(errs, o.runErr)
	}
	p.live.annotate(o.summary, run.RunInfo.(map[string]any))
	title := fmt.Sprintf("surge profile: %s @ %s (%s, %s %s)", c.ModelLabel(), cmdline.RedactURL(o.target), p.kind, p.plan.mode, p.plan.targetLabel())
	if !p.Shard.Whole() {
		title += ", shard " + p.Shard.String()
	}
	if c.Search != nil {
		from := p.plan.targetLabel()
		if p.live != nil && p.live.pilot != nil {
			from = num(p.live.scfg.Start) + " (the pilot's pick)"
		}
		title = fmt.Sprintf("surge search: %s @ %s (%s, %s from %s)", c.ModelLabel(), cmdline.RedactURL(o.target), p.kind, p.plan.mode, from)
	}
	switch {
	case o.aborted:
		title += " — interrupted: in-flight requests cancelled"
	case o.cancelled:
		title += " — interrupted"
	}
	var folders []string
	if subs := p.stageFolders(); subs != nil {
		var err error
		folders, err = p.reportSweep(o, run, subs)
		errs = append(errs, err)
	}
	errs = append(errs, writeServerExports(o.dir, o.serverExport, run))
	errs = append(errs, Report(out, o.dir, p.exports.files, title, o.summary, o.state, run, folders))
	if c.Report {
		errs = append(errs, writeRunReport(out, o.dir))
	}
	if err := p.live.conclude(out); err != nil {
		errs = append(errs, err)
	}
	if aborted {
		fmt.Fprintf(out, "stopped early: %v (--failed-request-threshold %g)\n", o.runErr, c.FailedThreshold)
		return res, o.runErr
	}
	if o.fault != nil {
		fmt.Fprintf(out, "stopped early: %v\n", o.fault)
		return res, errors.Join(append(errs, o.fault)...)
	}
	return res, errors.Join(errs...)
}

// newBenchmarkID returns a random (version 4) UUID.
func newBenchmarkID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// maxPrompts bounds the synthetic prompts built for a duration-bound run.
const maxPrompts = 200_000

// conversationsNeeded is how many synthetic conversations (or random_pool
// draws) a run builds: --num-dataset-entries, or enough for one per
// session of the warmup and every stage, so no prompt repeats and a
// server's prefix cache sees no accidental hits. A duration-bound run sizes
// it from the rate (or a generous guess for a closed loop); the
// conversations then cycle if needed.
func (c *config) conversationsNeeded(l load) int {
	if c.NumDatasetEntries > 0 {
		return c.NumDatasetEntries
	}
	stages := max(len(l.concs), len(l.rates), 1)
	if c.ConversationNum > 0 && c.RequestCount == 0 {
		return c.warmupConversations() + c.ConversationNum*stages
	}
	n := c.RequestCount * stages
	if n == 0 {
		for i := range stages {
			n += l.defaultCount(i)
		}
	}
	if c.Duration > 0 && c.RequestCount == 0 {
		secs := c.Duration.Seconds() * float64(stages)
		guess := 1000.0
		for _, r := range l.rates {
			guess = max(guess, r*secs*1.1)
		}
		n = int(min(guess, maxPrompts))
	}
	// A conversation of several turns serves as many requests.
	per := max(c.TurnsMean-c.TurnsStddev, 1)
	return c.warmupConversations() + (n+per-1)/per
}

// target returns the server to benchmark: --url, or the embedded mock
// started on a free loopback port when --url is empty or "mock".
func (c *config) target(ctx context.Context, log io.Writer) (url string, stop func(), err error) {
	if c.URL != "" && c.URL != "mock" {
		return c.URL, func() {}, nil
	}
	// Not stopped by ctx: an interrupt drains the requests in flight, so the
	// mock must outlive it; the run's cleanup closes it.
	mock, err := mockserver.Start(context.WithoutCancel(ctx), "127.0.0.1:0", mockserver.Config{TTFT: 20 * time.Millisecond, ITL: 5 * time.Millisecond, Model: c.Model,
		PrefillPerImage: c.MockPrefillPerImage, PrefillPerAudioSecond: c.MockPrefillPerAudioSecond})
	if err != nil {
		return "", nil, fmt.Errorf("starting the embedded mock server: %w", err)
	}
	fmt.Fprintf(log, "no --url given: benchmarking the embedded mock server at %s (TTFT 20ms, ITL 5ms%s)\n", mock.URL(), c.mockMediaLine())
	return mock.URL(), func() { _ = mock.Close(context.Background()) }, nil
}

// Report writes the summary exports, prints the console table and lists
// every file of the run.
func Report(out io.Writer, dir string, files exportFiles, title string, s *metrics.Summary, st *metrics.State, run export.Run, folders []string) error {
	err := WriteExports(dir, files, s, st, run)
	export.Console(out, title, s)
	export.ConsoleStages(out, s)
	fmt.Fprintf(out, "\nExports in %s:\n", dir)
	for _, f := range []string{files.JSON, files.CSV, files.JSONL, files.Raw, files.TimeslicesJSON, files.TimeslicesCSV, FileInputs, FileState, FileGPUTelemetry, FileServerMetrics,
		telemetry.ServerMetricsJSONFile, telemetry.ServerMetricsCSVFile} {
		if _, statErr := os.Stat(filepath.Join(dir, f)); statErr == nil {
			fmt.Fprintf(out, "  %s\n", filepath.Join(dir, f))
		}
	}
	for _, f := range folders {
		fmt.Fprintf(out, "  %s%c\n", filepath.Join(dir, f), filepath.Separator)
	}
	return err
}

// WriteExports writes a run's summary files into dir: the JSON, the CSV,
// the timeslices (--slice-duration) and the state sidecar.
func WriteExports(dir string, files exportFiles, s *metrics.Summary, st *metrics.State, run export.Run) error {
	err := errors.Join(
		WriteFile(filepath.Join(dir, files.JSON), func(w io.Writer) error { return export.JSON(w, s, run) }),
		WriteFile(filepath.Join(dir, files.CSV), func(w io.Writer) error { return export.CSV(w, s, export.WithTelemetry(run.Telemetry)) }),
	)
	if s.Timeslices != nil {
		err = errors.Join(err,
			WriteFile(filepath.Join(dir, files.TimeslicesJSON), func(w io.Writer) error { return export.TimeslicesJSON(w, s, run.InputConfig) }),
			WriteFile(filepath.Join(dir, files.TimeslicesCSV), func(w io.Writer) error { return export.TimeslicesCSV(w, s) }))
	}
	// The state goes last: a merge waiting for a shard takes it as the sign
	// that the shard's exports are complete.
	return errors.Join(err, WriteFile(filepath.Join(dir, FileState), func(w io.Writer) error { return json.NewEncoder(w).Encode(st) }))
}

// judge marks the knee of a sweep and adds the warnings the schedule
// earns: an achieved rate under 95% of the target.
func (c *config) judge(s *metrics.Summary, p *plan) {
	// A sweep over prompts, counts or users has no knee to judge.
	if p.sweep == nil && s.MarkKnee(c.KneeFactor) {
		s.Warnings = append(s.Warnings, fmt.Sprintf(
			"knee at %s %g: p95 TTFT rose more than %g× over the first stage while throughput gained < 10%%; recommended operating point: %s %g",
			p.mode, s.Stages[s.Knee].Value, kneeFactor(c.KneeFactor), p.mode, s.Stages[s.Operating].Value))
	} else if v := s.KneeVerdict; p.sweep == nil && v.Inconclusive {
		s.Warnings = append(s.Warnings, fmt.Sprintf(
			"knee %s: at %s %g the stages' 95%% intervals could not tell whether p95 TTFT rose more than %g× and throughput gained < 10%%; no knee or operating point is named",
			v, p.mode, s.Stages[v.At].Value, kneeFactor(c.KneeFactor)))
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
	return metrics.DefaultKneeFactor
}

// targetLabel is the mode's value as shown to people: "8", "1,2,4".
func (p *plan) targetLabel() string {
	if sw := p.sweep; sw != nil && len(sw.dims) > 1 {
		return strings.Join(sw.labels(), "; ")
	}
	parts := make([]string, len(p.values))
	for i, v := range p.values {
		parts[i] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strings.Join(parts, ",")
}

func maxInt(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// WriteFile writes path whole or not at all: into a temporary file that
// is renamed into place, so a reader watching for the file (a merge
// waiting for its shards) never sees half of it.
func WriteFile(path string, write func(io.Writer) error) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

func (c *config) validate() error {
	switch {
	case c.Model == "":
		return cmdline.Usagef("--model is required (the model name the server serves)")
	case c.RequestCount < 0:
		return cmdline.Usagef("--request-count must be ≥ 1, got %d", c.RequestCount)
	case c.WarmupCount < 0:
		return cmdline.Usagef("--warmup-request-count must be ≥ 0, got %d", c.WarmupCount)
	case c.Duration < 0:
		return cmdline.Usagef("--benchmark-duration must be > 0, got %s", c.Duration)
	case c.Grace < 0:
		return cmdline.Usagef("--benchmark-grace-period must be ≥ 0, got %s", c.Grace)
	case c.Timeout <= 0:
		return cmdline.Usagef("--request-timeout-seconds must be > 0")
	case c.ISL < 0 || c.ISL == 0 && !c.syntheticMedia():
		return cmdline.Usagef("--isl must be ≥ 1, got %d", c.ISL)
	case c.OSL < 0:
		return cmdline.Usagef("--osl must be ≥ 0, got %d", c.OSL)
	case c.ISLStddev < 0 || c.OSLStddev < 0:
		return cmdline.Usagef("--isl-stddev and --osl-stddev must be ≥ 0")
	case c.FailedThreshold < 0 || c.FailedThreshold > 1:
		return cmdline.Usagef("--failed-request-threshold must be between 0 and 1, got %g", c.FailedThreshold)
	case c.TurnsMean < 0:
		return cmdline.Usagef("--conversation-turn-mean must be ≥ 1, got %d", c.TurnsMean)
	case c.TurnsStddev < 0:
		return cmdline.Usagef("--conversation-turn-stddev must be ≥ 0, got %d", c.TurnsStddev)
	case c.TurnDelayMean < 0 || c.TurnDelayStd < 0:
		return cmdline.Usagef("--conversation-turn-delay-mean and -stddev must be ≥ 0")
	case c.TurnDelayRatio < 0:
		return cmdline.Usagef("--conversation-turn-delay-ratio must be ≥ 0, got %g", c.TurnDelayRatio)
	case c.ConversationNum < 0:
		return cmdline.Usagef("--conversation-num must be ≥ 1, got %d", c.ConversationNum)
	case c.NumDatasetEntries < 0:
		return cmdline.Usagef("--num-dataset-entries must be ≥ 1, got %d", c.NumDatasetEntries)
	case !validSampling(&c.SamplingStrategy):
		return cmdline.Usagef("--dataset-sampling-strategy %q: want sequential, random or shuffle", c.SamplingStrategy)
	case c.KneeFactor < 0:
		return cmdline.Usagef("--knee-factor must be > 1, got %g", c.KneeFactor)
	case c.NumUsers > 0 && c.UserCentricRate <= 0:
		return cmdline.Usagef("--num-users needs --user-centric-rate (the users' combined requests per second)")
	case c.GPUInterval < 0:
		return cmdline.Usagef("--gpu-telemetry-interval must be > 0")
	case c.ServerInterval < 0:
		return cmdline.Usagef("--server-metrics-interval must be > 0")
	case c.ServerTimeout < 0:
		return cmdline.Usagef("--server-metrics-timeout must be > 0")
	case c.RetokenizeOutput && c.UseServerTokenCount:
		return cmdline.Usagef("--retokenize-output and --use-server-token-count ask for opposite output counts: give one")
	}
	return c.validateWarmup()
}

// validSampling checks a --dataset-sampling-strategy value and normalises
// it in place.
func validSampling(s *string) bool {
	v, err := datasets.ParseSampling(*s)
	if err != nil {
		return false
	}
	*s = v
	return true
}

// writeRunReport writes report.html into a finished run's folder (surge
// profile --report), read back from its exports as surge report reads it.
func writeRunReport(out io.Writer, dir string) error {
	run, err := artifact.Load(dir)
	if err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	paths, err := runreport.Write(filepath.Join(dir, "report.html"), runreport.FormatHTML, []*artifact.Run{run})
	if err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	fmt.Fprintf(out, "  %s\n", paths[0])
	return nil
}
