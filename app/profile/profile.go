package profile

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/metrics/artifact"
	runreport "github.com/surgebench/surge/metrics/report"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/datasets/tokenizer"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/internal/sanitize"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/auth"
	"github.com/surgebench/surge/loadgen/calibrate"
	"github.com/surgebench/surge/loadgen/cpuload"
	"github.com/surgebench/surge/loadgen/heapfloor"
	"github.com/surgebench/surge/loadgen/preflight"
	"github.com/surgebench/surge/loadgen/wire"
	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/export"
	"github.com/surgebench/surge/metrics/fingerprint"
	"github.com/surgebench/surge/telemetry"
	"github.com/surgebench/surge/telemetry/serverinfo"
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

// Export file names of surge's own beside AIPerf's (spec.Files).
const (
	FileInputs = spec.FileInputs
	// FileState is surge's sidecar of the run's metrics state, which
	// `surge merge` combines.
	FileState = spec.FileState
)

// Run benchmarks the target s names. Cancelling ctx stops issuing; the
// run then drains within the grace period and still writes every export.
// The summary goes to out; notices and progress go to log.
func Run(ctx context.Context, s *spec.Spec, out, log io.Writer) (*Result, error) {
	start := time.Now()
	res, err := runOnce(ctx, s, out, log)
	if res != nil {
		// After every export (a sweep's aggregate, the repeats' aggregate/):
		// the history reads the run back from its folder, MLflow takes
		// its files.
		remember(ctx, s, res.Dir, res.Cancelled, log)
		publish(ctx, s, res, start, log)
	}
	return res, err
}

// runOnce is Run but for the history: the plan, or its repeats.
func runOnce(ctx context.Context, s *spec.Spec, out, log io.Writer) (*Result, error) {
	if s.Load.Repeats.N > 1 {
		return runRepeated(ctx, s, out, log)
	}
	p, err := prepareCtx(ctx, s, log)
	if err != nil {
		return nil, err
	}
	defer p.closeAuth()
	o, err := p.execute(ctx, log)
	if err != nil {
		return nil, err
	}
	return p.report(o, out)
}

// prepared is a run resolved before anything starts: the model named, the
// tokenizer and dataset loaded, the load planned. Nothing in it needs
// closing but its cloud credentials (closeAuth).
type prepared struct {
	s       *spec.Spec
	counter metrics.TokenCounter // nil: counts from usage or SSE events
	builder datasets.Tokenizer   // built the prompts (nil: the embedded Qwen3)
	tokSrc  tokenizerSource
	ds      *datasets.Dataset
	plan    *plan
	live    *liveSession   // nil: the run follows its plan, unwatched
	log     cmdline.Logger // notes and debug lines, as --log-level allows
	// preflight is what the check of the target learnt (nil: not run).
	preflight *preflight.Result
	// toolResults are the tool loop's result texts (agentic.go), replay
	// the agentic replay's lanes (nil: none).
	toolResults []string
	replay      *loadgen.Replay
	// auth gives the requests a cloud's credentials (nil: none); it
	// refreshes them until closeAuth.
	auth auth.Authorizer
	// limits bound each session's growth (agentic.go).
	limits loadgen.SessionLimits
}

// Prepare resolves s into a plan. It starts nothing and writes nothing but
// the notes and the dataset's report lines to log; with no --model and a
// real server, it asks the server's /v1/models for the name.
func Prepare(s *spec.Spec, log io.Writer) (*prepared, error) {
	return prepareCtx(context.Background(), s, log)
}

// prepareCtx is Prepare that stops a tokenizer download or a dataset load
// when ctx ends.
func prepareCtx(ctx context.Context, s *spec.Spec, log io.Writer) (_ *prepared, err error) {
	p := &prepared{s: s, log: s.Logger(log)}
	if p.limits, err = sessionLimits(s); err != nil {
		return nil, err
	}
	for _, n := range s.Notes {
		p.log.Notef("%s", n)
	}
	for _, w := range s.Warnings {
		fmt.Fprint(log, export.FormatWarning(w, p.verbose(), s.Columns))
	}
	if p.auth, err = openAuth(ctx, s, log); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			p.closeAuth()
		}
	}()
	if p.auth != nil {
		p.s = s.WithSecrets(p.auth.Secrets()...)
		s = p.s
	}
	if !s.Target.Mock {
		if err := waitReady(ctx, s.Target.Wait, s.Target.URLs, s.Endpoint, s.Target.Models, s.Request.Headers, p.log); err != nil {
			return nil, err
		}
	}
	// Before the tokenizer: the model's own builds the prompts; before the
	// preflight, whose request names it.
	modelNote := p.modelFromServer(ctx, log)
	// A probe of a type whose bodies are the dataset's own (rankings
	// passages, raw bodies) is the dataset's first request: it waits for
	// the dataset.
	ownBody := preflight.OwnBody(s.Endpoint.Kind)
	if !ownBody {
		if err := p.checkTarget(ctx, log, nil); err != nil {
			return nil, err
		}
	}
	if modelNote != "" {
		fmt.Fprint(log, modelNote)
	}
	s = p.s
	if p.builder, p.counter, p.tokSrc, err = loadTokenizer(ctx, &s.Tokenizer, p.log); err != nil {
		return nil, err
	}
	if s.Tokenizer.ApplyChatTemplate {
		if p.counter, err = applyChatTemplate(ctx, s, p.builder, &p.tokSrc); err != nil {
			return nil, err
		}
	}
	var pools valuePools
	if s.Load.Sweep != nil {
		if p.plan, p.ds, err = planSweep(ctx, s, p.builder, log); err != nil {
			return nil, err
		}
	} else if pools, err = loadValueDatasets(ctx, s, &p.ds, p.builder, log); err != nil {
		return nil, err
	}
	if err := checkMedia(p.ds, s.Endpoint); err != nil {
		return nil, err
	}
	if ownBody {
		if err := p.checkTarget(ctx, log, p.firstTurn()); err != nil {
			return nil, err
		}
	}
	if err := checkBodies(p.ds, s.Endpoint); err != nil {
		return nil, err
	}
	if err := checkCacheBust(s, p.ds); err != nil {
		return nil, err
	}
	p.ds = assignModels(p.ds, s.Target.Models, s.Target.ModelSelection, s.Target.Weights, s.Seed())
	if err := p.prepareAgentic(ctx); err != nil {
		return nil, err
	}
	if len(s.Target.Models) > 1 {
		p.log.Debugf("models %q share the prompts (%s)", s.Target.Models, s.Target.ModelSelection)
	}
	if len(s.Target.URLs) > 1 {
		p.log.Debugf("servers %q take the requests round-robin", cmdline.RedactURLs(s.Target.URLs))
	}
	if s.Load.Sweep == nil {
		if p.plan, err = buildPlan(s, p.ds); err != nil {
			return nil, err
		}
		pools.assign(p.plan.stages)
		p.replay = p.plan.replay
	}
	if !s.Shard.Whole() && p.plan.total > 0 {
		p.plan.total = loadgen.PlannedRequests(p.plan.stages, p.ds, s.Shard)
		if p.plan.total == 0 {
			// It would run nothing and end as "every request failed".
			return nil, cmdline.Usagef("--request-count %d leaves shard %s nothing to send: the plan has fewer sessions than shards", s.Load.RequestCount, s.Shard)
		}
	}
	if p.live, err = p.prepareLive(); err != nil {
		return nil, err
	}
	return p, nil
}

// outcome is what executing a prepared run produced, for report.
type outcome struct {
	target string
	// defaultNote says a server answers at AIPerf's default --url though
	// the run used the embedded mock ("": none did, or --url was given).
	defaultNote string
	// otel is run_info.otel (nil: no --otel-url).
	otel       map[string]any
	dir        string
	start, end time.Time
	summary    *metrics.Summary
	telemetry  *telemetry.Data
	// serverExport is the server-metrics summary (nil: no endpoint answered).
	serverExport *telemetry.ServerExport
	// runTokens are the servers' token counters over the whole run, the
	// warmup's requests included (runTokensOK: a server exported them).
	runTokens   telemetry.TokenTotals
	runTokensOK bool
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
	facts            *serverinfo.Facts   // its engine, version, settings and GPUs (nil: none said)
	late             time.Duration       // how late the run started for --start-at
	gcCycles         uint64              // the client's garbage collections during the run
	heapFloor        int64               // the heap under which it did not collect (0: none)
	state            *metrics.State
	// benchmarkID identifies the run in its exports (AIPerf's
	// benchmark_id: a random UUID).
	benchmarkID string
	// network is run_info's network_latency (nil: no adjustment).
	network map[string]any
	// loopRequests and rejected are the tool loop's requests and the
	// session starts an admission ceiling turned away.
	loopRequests, rejected int64
	// replacedIDs counts the tool-call ids surge replaced.
	replacedIDs int64
	errs        []error // the UI's, the exports' and telemetry's
	// breakdownNote is the console's line on the server's spans ("": no
	// receiver).
	breakdownNote string
}

// execute starts the target, the exports, the collector, telemetry and the
// UI, applies the plan and tears all of it down again, on every path, in
// one place.
func (p *prepared) execute(ctx context.Context, log io.Writer) (o *outcome, err error) {
	s := p.s
	var cleanup []func()
	defer func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			cleanup[i]()
		}
	}()
	o = &outcome{dir: s.Exports.Dir, benchmarkID: newBenchmarkID()}
	// No collection while the heap is small: a cycle's mark work on a
	// client busy reading tokens delays every read behind it.
	cleanup = append(cleanup, heapfloor.Hold(heapfloor.Default))
	o.heapFloor = heapfloor.Active()

	if o.defaultNote = defaultServerNote(&s.Target, aiperfDefaultURL); o.defaultNote != "" {
		fmt.Fprintln(log, o.defaultNote)
	}
	bd, err := startBreakdown(ctx, s, log)
	if err != nil {
		return nil, err
	}
	cleanup = append(cleanup, bd.stop)
	target, stopTarget, err := startTarget(ctx, s, log, bd.mock)
	if err != nil {
		return nil, err
	}
	cleanup = append(cleanup, stopTarget)
	o.target = target
	if !s.Cloud.Cloud() {
		o.server, o.facts = probeServer(ctx, target, s.Request.Headers, p.log)
	}

	if o.dir == "" {
		o.dir = filepath.Join("artifacts", p.artifactName()+p.shardDir())
	}
	moved, err := MoveAside(o.dir, "--output-artifact-dir", s.Exports.Files)
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
	jsonlName := s.Exports.Files.JSONL
	if s.Exports.Level == spec.LevelSummary {
		jsonlName = "" // no per-request records at --export-level summary
	}
	rawName := ""
	if s.Exports.Level == spec.LevelRaw {
		rawName = s.Exports.Files.Raw
	}
	var inputsOpts []export.InputsOption
	if s.Exports.Level == spec.LevelSummary {
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
	for _, v := range s.Secrets {
		folders.secrets = append(folders.secrets, []byte(v))
	}
	var closeOutputs func() error // outputs.json, written once the collector is closed
	logw := &heldLog{w: log}
	if s.UI == tui.ModeDashboard {
		logw.hold()
	}
	colOpts := []metrics.Option{metrics.WithClock(clock), metrics.WithOrigin(o.start), metrics.WithGoodput(s.Goodput),
		metrics.WithSlices(s.Exports.Slice), metrics.WithSink(folders), metrics.WithTrim(s.Exports.Trim),
		metrics.WithCounting(metrics.Counting{Retokenize: s.Tokenizer.Retokenize, ServerInput: s.Tokenizer.UseServerCount}),
		// Caveats the collector finds as records come (a prompt the server
		// cut) show on the dashboard and are printed once, with the
		// summary's; the debug log says when each came.
		metrics.WithLiveWarning(p.liveWarning)}
	if meter, err := cpuload.Start(); err == nil {
		// Which side kept the CPU busy, for the read delay warning (not
		// measured where /proc/stat is missing).
		colOpts = append(colOpts, metrics.WithMachineLoad(meter.Load))
	}
	if p.counter != nil {
		colOpts = append(colOpts, metrics.WithTokenizer(p.counter))
		if p.tokSrc.Source != tokBuiltin {
			// The model's own (found by its name), or the one --tokenizer
			// gave, which the user named as the model's: a count that
			// differs from the server's is not the tokenizer's doing, and
			// asking whether --tokenizer is the model's would doubt a
			// choice the user made.
			colOpts = append(colOpts, metrics.WithModelTokenizer())
		}
	}
	if s.CostPerHour > 0 {
		colOpts = append(colOpts, metrics.WithCostPerHour(s.CostPerHour))
	}
	if len(p.plan.values) > 1 {
		colOpts = append(colOpts, metrics.WithStages(p.plan.mode, p.plan.values))
		if sw := p.plan.sweep; sw != nil && len(sw.Dims) > 1 {
			colOpts = append(colOpts, metrics.WithStageLabels(sw.Labels()))
		}
	}
	if s.Exports.Outputs {
		outputs, err := export.NewOutputs(filepath.Join(o.dir, s.Exports.Files.Outputs), o.start, s.Secrets...)
		if err != nil {
			return nil, fmt.Errorf("--export-outputs-json: %w", err)
		}
		colOpts = append(colOpts, metrics.WithSink(outputs))
		closeOutputs = outputs.Close
		cleanup = append(cleanup, func() { _ = outputs.Close() }) // a run that stopped early
	}
	colOpts = append(colOpts, p.live.sinks(clock)...)
	colOpts = append(colOpts, bd.collectorOptions()...)
	otel, err := p.startOTel(target, o.benchmarkID, o.start, logw)
	if err != nil {
		return nil, err
	}
	if otel != nil {
		colOpts = append(colOpts, metrics.WithSink(otel.exp))
		// Ends the exporter on every path; the run's own end sends the
		// summary first (a second Close does nothing).
		cleanup = append(cleanup, func() { otel.close(ctx, nil) })
	}
	col := metrics.NewCollector(colOpts...)
	closeCol := sync.OnceValue(col.Close)
	cleanup = append(cleanup, func() { closeCol() })
	if otel != nil {
		otel.attach(col)
		cleanup = append(cleanup, otel.detach) // before the collector closes
	}
	cleanup = append(cleanup, logw.release)

	ep := s.Endpoint
	tr := loadgen.NewTransport(s.Load.MaxConcurrency())
	cleanup = append(cleanup, tr.CloseIdleConnections) // a process may run many
	// A second interrupt cuts the drain short (loadgen.WithAbort).
	abortCtx, abort := context.WithCancel(context.Background())
	defer abort()
	genOpts := []loadgen.Option{
		loadgen.WithStart(o.start),
		loadgen.WithAbort(abortCtx),
		loadgen.WithHeaders(s.Request.Headers),
		loadgen.WithRequestTimeout(s.Request.Timeout),
		loadgen.WithGracePeriod(s.Request.Grace),
		loadgen.WithTransport(tr),
		loadgen.WithBodySink(folders),
		loadgen.WithSecrets(s.Secrets...),
		loadgen.WithTimestamps(s.Request.Timestamps),
		loadgen.WithConnectionReuse(s.Request.Reuse),
		loadgen.WithSessionHeader(s.Request.SessionHeader),
		loadgen.WithShard(s.Shard),
		// As the collector's own.
		loadgen.WithWarning(func(msg string) { p.liveWarning(msg); col.Warn(msg) }),
	}
	if p.auth != nil {
		genOpts = append(genOpts, loadgen.WithAuth(p.auth))
	}
	if s.Exports.Level == spec.LevelRaw {
		genOpts = append(genOpts, loadgen.WithRawCapture())
	}
	if s.Request.NoCapGuard {
		genOpts = append(genOpts, loadgen.WithoutCapGuard())
	}
	if _, chat := p.counter.(chatCounter); chat {
		genOpts = append(genOpts, loadgen.WithChatMessages())
	}
	if s.Load.FailedThreshold > 0 {
		genOpts = append(genOpts, loadgen.WithFailureThreshold(s.Load.FailedThreshold, max(s.Load.MaxConcurrency(), 10)))
	}
	if len(s.Target.URLs) > 1 {
		genOpts = append(genOpts, loadgen.WithTargets(s.Target.URLs[1:]...))
	}
	if h := s.Hooks; h.Reset || h.Profiler || s.Load.SweepCooldown > 0 {
		hooks, err := serverHooks(h, s.Load.SweepCooldown, s.Target.Servers(target), s.Request.Headers, p.log)
		if err != nil {
			return nil, err
		}
		genOpts = append(genOpts, loadgen.WithStageHooks(hooks))
	}
	if s.Dataset.CacheBust != "" {
		opt, err := cacheBustOption(s, p.builder)
		if err != nil {
			return nil, err
		}
		genOpts = append(genOpts, opt)
	}
	genOpts = append(genOpts, edgeOptions(&s.Request)...)
	genOpts = append(genOpts, loadControlOptions(s)...)
	genOpts = append(genOpts, p.agenticOptions()...)
	genOpts = append(genOpts, bd.generatorOptions(target)...)
	checkFDLimit(s.Load.MaxConcurrency(), p.log, logw)
	gen, err := loadgen.New(target, ep, p.ds, col, genOpts...)
	if err != nil {
		return nil, &cmdline.UsageError{Err: err}
	}

	// The warmup's scrapes are the baseline, as its records are left out.
	measuring := func() bool { return col.Phase() == metrics.Profile }
	scraped := s.Target.Servers(target)
	if s.Cloud.Cloud() {
		scraped = nil // a cloud's endpoint has no /metrics of the model's server
	}
	tel, err := startTelemetry(ctx, &s.Telemetry, scraped, o.dir, o.start, measuring, logw)
	if err != nil {
		return nil, err
	}
	probe, err := startNetworkProbe(ctx, s, s.Target.Servers(target), o.dir, measuring)
	if err != nil {
		return nil, err
	}
	if probe != nil {
		cleanup = append(cleanup, func() { _, _ = probe.p.Stop(); probe.file.Close() })
	}
	o.facts = withGPUs(o.facts, tel.gpus)

	interrupt := p.interrupts(stopIssuing, abort, func() int64 { return col.Snapshot().InFlight }, logw)
	defer interrupt.release()
	if err := p.live.openFiles(o.dir); err != nil {
		return nil, err
	}
	if err := p.live.start(ctx, s.Live.ControlAddr, s.Live.ControlToken, func() int64 { return col.Snapshot().InFlight }, logw); err != nil {
		return nil, err
	}
	info := tui.Info{Model: s.ModelLabel(), URL: cmdline.RedactURL(target), Endpoint: string(ep.Kind), Mode: p.plan.mode,
		Target: p.plan.targetLabel(), TotalRequests: p.plan.total, Duration: s.Load.Duration, Control: p.live.control(),
		Shard: s.Shard.String()}
	if len(p.plan.values) > 1 {
		info.Stages = p.plan.values
		if sw := p.plan.sweep; sw != nil && len(sw.Dims) > 1 {
			for i := range sw.Points {
				info.StageLabels = append(info.StageLabels, sw.Short(i))
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
		f.InPrefill, f.PrefillCap = gen.InPrefill(), s.Load.PrefillConcurrency
		if w := s.Load.Warmup.PrefillConcurrency; w > 0 && col.Phase() == metrics.Warmup {
			f.PrefillCap = w
		}
		return f
	}
	uiErr := present(ctx, s.UI, s.ProgressEvery, info, frame, log, interrupt.ask, func() {
		o.runErr = p.live.run(runCtx, gen, col, p.plan.stages, stopIssuing, logw, tel.live.servers)
	})
	p.live.finishPrecision(col, len(p.plan.values))
	interrupt.release() // no ask reads the collector once it is closed
	telData, telErr := tel.stop()
	o.serverExport = tel.col.ServerExport()
	o.runTokens, o.runTokensOK = tel.col.RunTokenTotals()
	bd.awaitSpans(ctx, col, logw)
	if otel != nil {
		otel.detach()
	}
	o.summary = closeCol()
	o.breakdownNote = bd.consoleNote(o.summary)
	if otel != nil {
		// After the last record, before the exports: run_info says what
		// the collector got.
		st := otel.close(ctx, o.summary)
		o.otel = otelInfo(s.Backends.OTel, st)
	}
	netInfo, netErr := adjustForNetwork(s, probe, o.summary, logw)
	o.network = netInfo
	o.state = col.State()
	o.state.Origin = o.start
	o.clockDrift = gen.ClockDrift()
	o.loopRequests, o.rejected, o.replacedIDs = gen.ToolLoopRequests(), gen.RejectedSessions(), gen.ReplacedToolCallIDs()
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
	o.errs = []error{uiErr, folders.finish(), telErr, netErr}
	if closeOutputs != nil {
		if err := closeOutputs(); err != nil {
			o.errs = append(o.errs, fmt.Errorf("--export-outputs-json: %w", err))
		}
	}
	return o, nil
}

// Report judges the run, writes the summary exports and prints the
// console summary.
func (p *prepared) report(o *outcome, out io.Writer) (*Result, error) {
	s := p.s
	aborted := errors.Is(o.runErr, loadgen.ErrFailureThreshold)
	res := &Result{Summary: o.summary, Dir: o.dir, Cancelled: o.cancelled, Aborted: aborted, WriteFault: o.fault}
	judge(s.Load.KneeFactor, o.summary, p.plan, p.judgesKnee())

	run := export.Run{
		BenchmarkID:  o.benchmarkID,
		SurgeVersion: s.Version, Start: o.start, End: o.end, WasCancelled: res.Cancelled || res.Aborted || o.fault != nil,
		InputConfig: s.InputConfig(),
		RunInfo: map[string]any{"target_url": cmdline.RedactURL(o.target), "endpoint": s.Endpoint.Path(), "dataset": p.ds.Name,
			"conversations": conversationCount(p.ds), "mode": p.plan.mode, "stage_values": p.plan.values,
			"timestamps": s.Request.Timestamps.String(), "kernel_timestamps_supported": wire.Supported,
			"clock_drift_ms": float64(o.clockDrift) / 1e6,
			"client_gc":      map[string]any{"cycles": o.gcCycles, "heap_floor_mib": o.heapFloor >> 20}},
		Extra: map[string]float64{},
		LoRA:  s.Target.LoRA,
	}
	run.RunInfo.(map[string]any)["tokenizer"] = p.tokSrc
	if o.network != nil {
		run.RunInfo.(map[string]any)["network_latency"] = o.network
	}
	if len(s.Target.URLs) > 1 {
		run.RunInfo.(map[string]any)["target_urls"] = cmdline.RedactURLs(s.Target.URLs)
	}
	if len(s.Target.Models) > 1 {
		run.RunInfo.(map[string]any)["models"] = s.Target.Models
		run.RunInfo.(map[string]any)["model_selection_strategy"] = s.Target.ModelSelection
	}
	switch {
	case !s.Shard.Whole():
		run.RunInfo.(map[string]any)["shard"] = p.shardInfo(o.late)
	case !s.StartAt.IsZero():
		run.RunInfo.(map[string]any)["start_at"] = p.shardInfo(o.late)
	}
	if o.late > lateWarnAfter {
		o.summary.Warnings = append(o.summary.Warnings, p.lateWarning(o.late))
	}
	if w := goneWarning(p.preflight, o.summary, o.start); w != "" {
		o.summary.Warnings = append(o.summary.Warnings, w)
	}
	if n := o.summary.Redirects(); n > 0 {
		o.summary.Warnings = append(o.summary.Warnings, redirectWarning(n, s.Request.FollowRedirects))
	}
	p.addRunInfo(run.RunInfo.(map[string]any), o.benchmarkID)
	if pf := preflightInfo(p.preflight); pf != nil {
		run.RunInfo.(map[string]any)["preflight"] = pf
	}
	p.agenticRunInfo(run.RunInfo.(map[string]any), o.summary, o)
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
	if o.clockDrift > time.Millisecond && s.Request.Timestamps == loadgen.KernelTimestamps {
		o.summary.Warnings = append(o.summary.Warnings, fmt.Sprintf(
			"the wall clock moved %.1f ms against the monotonic clock during the run: kernel timestamps after the step are off by up to that much", float64(o.clockDrift)/1e6))
	}
	if tt := o.runTokens; o.runTokensOK {
		// The server's counters from before the first request to after the
		// last, beside surge's counts of the same requests: the warmup's
		// and the profile's.
		o.summary.CompareServerTokens(metrics.ServerTokens{Prompt: tt.Prompt, Output: tt.Output, CachedPrompt: tt.CachedPrompt, Families: tt.Families,
			WithWarmup: o.summary.Warmup != nil})
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
	if o.otel != nil {
		run.RunInfo.(map[string]any)["otel"] = o.otel
	}
	if o.facts != nil {
		run.RunInfo.(map[string]any)["server"] = o.facts
		p.log.Debugf("the server says: %s", sanitize.Line(o.facts.String()))
	}
	historyInfo(s, run.RunInfo.(map[string]any))
	capCost := p.live.capacityCost(s.CostPerHour, o.summary)
	if capCost != nil {
		run.RunInfo.(map[string]any)["search_cost"] = capCost
	}
	p.live.annotate(o.summary, run.RunInfo.(map[string]any))
	title := fmt.Sprintf("surge profile: %s @ %s (%s, %s %s)", s.ModelLabel(), cmdline.RedactURL(o.target), s.Endpoint.Kind, p.plan.mode, p.plan.targetLabel())
	if !s.Shard.Whole() {
		title += ", shard " + s.Shard.String()
	}
	if s.Live.Search != nil {
		from := p.plan.targetLabel()
		if p.live != nil && p.live.pilot != nil {
			from = num(p.live.scfg.Start) + " (the pilot's pick)"
		}
		title = fmt.Sprintf("surge search: %s @ %s (%s, %s from %s)", s.ModelLabel(), cmdline.RedactURL(o.target), s.Endpoint.Kind, p.plan.mode, from)
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
	opts := []export.ConsoleOption{export.Verbose(p.verbose()), export.JudgedKnee(p.judgesKnee()), export.Width(s.Columns), export.Wide(s.Wide)}
	if o.defaultNote != "" {
		opts = append(opts, export.Note(strings.TrimPrefix(o.defaultNote, "note: ")))
	}
	if info := s.Endpoint.Info(); !s.Streaming && info.Streams && info.ProducesTokens {
		opts = append(opts, export.Note("TTFT and ITL need --streaming (this run read each answer whole)"))
	}
	if n := sessionsEndedFirst(s, o.summary, len(p.plan.values), o.cancelled || aborted); n != "" {
		opts = append(opts, export.Note(n))
	}
	if o.breakdownNote != "" {
		opts = append(opts, export.Note(o.breakdownNote))
	}
	opts = append(opts, export.BesidePrompt(p.besidePrompt()...))
	errs = append(errs, Report(out, o.dir, s.Exports.Files, title, o.summary, o.state, run, folders, opts...))
	if s.Exports.Report || s.Exports.Plots {
		errs = append(errs, writeRunReport(out, o.dir, s.Exports))
	}
	if err := p.live.conclude(out, o.summary); err != nil {
		errs = append(errs, err)
	}
	writeCost(out, capCost)
	if aborted {
		fmt.Fprintf(out, "stopped early: %v (--failed-request-threshold %g)\n", o.runErr, s.Load.FailedThreshold)
		return res, o.runErr
	}
	if o.fault != nil {
		fmt.Fprintf(out, "stopped early: %v\n", o.fault)
		return res, errors.Join(append(errs, o.fault)...)
	}
	return res, errors.Join(errs...)
}

// besidePrompt names what the run sends beside each turn's prompt, which
// the ISL leaves out and a server's usage counts: the system prompt, the
// user context, the conversation's history (a turn after the first sends
// the ones before it).
func (p *prepared) besidePrompt() []string {
	d := &p.s.Dataset
	var parts []string
	if d.SystemPrompt != "" || d.SharedSystemPromptLength > 0 {
		parts = append(parts, "the system prompt")
	}
	if d.UserContextLength > 0 {
		parts = append(parts, "the user context")
	}
	history := d.TurnsMean > 1
	if p.ds != nil {
		for i := range min(p.ds.Len(), 1000) {
			history = history || p.ds.Turns(i) > 1
		}
	}
	if history {
		parts = append(parts, "the conversation's history")
	}
	return parts
}

// sessionsEndedFirst is the note for a run whose --conversation-num
// ended its stages before --request-count did (AIPerf's meaning: the
// first bound reached ends a stage), "" when it did not or the run was
// stopped.
func sessionsEndedFirst(s *spec.Spec, sum *metrics.Summary, stages int, stopped bool) string {
	l := &s.Load
	if l.ConversationNum <= 0 || l.RequestCount <= 0 || stopped || sum == nil {
		return ""
	}
	sent := int(sum.Run[metrics.RequestCount] + sum.Run[metrics.ErrorRequestCount])
	want := l.RequestCount * max(stages, 1)
	if sent >= want {
		return ""
	}
	return fmt.Sprintf("--conversation-num %d ended the run after %d requests, before --request-count %d: as in AIPerf, the first bound reached ends a stage (raise or drop --conversation-num to send them all)",
		l.ConversationNum, sent, want)
}

// conversationCount is run_info.conversations: how many distinct
// conversations the dataset has, or "on demand" for synthetic prompts
// built without end (a new one per session).
func conversationCount(ds *datasets.Dataset) any {
	if n := ds.Len(); n < datasets.OnDemandLen {
		return n
	}
	return "on demand"
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
func conversationsNeeded(s *spec.Spec) int {
	if d := &s.Dataset; d.Entries > 0 {
		return d.Entries
	}
	return sessionsNeeded(s)
}

// sessionsNeeded is one conversation for each session of the warmup and
// every stage.
func sessionsNeeded(s *spec.Spec) int {
	l, d := &s.Load, &s.Dataset
	stages := max(len(l.Concs), len(l.Rates), 1)
	if l.ConversationNum > 0 && l.RequestCount == 0 {
		return warmupConversations(l.Warmup) + l.ConversationNum*stages
	}
	n := l.RequestCount * stages
	if n == 0 {
		for i := range stages {
			n += defaultStageCount(l, i)
		}
	}
	if l.Duration > 0 && l.RequestCount == 0 {
		secs := l.Duration.Seconds() * float64(stages)
		guess := 1000.0
		for _, r := range l.Rates {
			guess = max(guess, r*secs*1.1)
		}
		n = int(min(guess, maxPrompts))
	}
	// A conversation of several turns serves as many requests.
	per := max(d.TurnsMean-d.TurnsStddev, 1)
	return warmupConversations(l.Warmup) + (n+per-1)/per
}

// startTarget returns the server to benchmark: --url, or the embedded
// mock started on a free loopback port when --url is empty or "mock".
func startTarget(ctx context.Context, s *spec.Spec, log io.Writer, tune ...func(*mockserver.Config)) (url string, stop func(), err error) {
	t := &s.Target
	if !t.Mock {
		return t.URL, func() {}, nil
	}
	// Not stopped by ctx: an interrupt drains the requests in flight, so the
	// mock must outlive it; the run's cleanup closes it.
	// It counts prompt tokens with surge's embedded tokenizer, which
	// builds the prompts a run sends it: its usage agrees with their ISL.
	tok, err := tokenizer.Default()
	if err != nil {
		return "", nil, err
	}
	cfg := mockserver.Config{TTFT: mockserver.DefaultTTFT, ITL: mockserver.DefaultITL, PrefillPerToken: mockserver.DefaultPrefillPerToken, Tokenizer: tok,
		Model: t.Model(), PrefillPerImage: t.MockPrefillPerImage, PrefillPerAudioSecond: t.MockPrefillPerAudioSecond,
		SpecTokens: t.MockSpecTokens, SpecAcceptance: t.MockSpecAcceptance}
	mockAgent(&cfg, &s.Agentic)
	for _, f := range tune {
		f(&cfg)
	}
	mock, err := mockserver.Start(context.WithoutCancel(ctx), "127.0.0.1:0", cfg)
	if err != nil {
		return "", nil, fmt.Errorf("starting the embedded mock server: %w", err)
	}
	fmt.Fprint(log, export.Wrap(fmt.Sprintf("no --url given: benchmarking the embedded mock server at %s (TTFT %s + %s per prompt token, ITL %s%s)",
		mock.URL(), mockserver.DefaultTTFT, mockserver.DefaultPrefillPerToken, mockserver.DefaultITL, mockMediaLine(t)+mockSpecLine(t)), s.Columns, 2))
	return mock.URL(), func() {
		// Bounded: net/http's Shutdown waits 5 s on a connection a client
		// opened and sent nothing on (a request cancelled as it dialled,
		// the preflight's reachability dial); what is left is closed.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = mock.Close(ctx)
	}, nil
}

// Report writes the summary exports, prints the console summary (opts:
// how) and lists every file of the run.
func Report(out io.Writer, dir string, files spec.Files, title string, s *metrics.Summary, st *metrics.State, run export.Run, folders []string, opts ...export.ConsoleOption) error {
	err := WriteExports(dir, files, s, st, run)
	export.Console(out, title, s, opts...)
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
func WriteExports(dir string, files spec.Files, s *metrics.Summary, st *metrics.State, run export.Run) error {
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

// judgesKnee reports whether the run's stages have a knee to judge: a
// load's stage list has; a sweep over prompts, counts or users has not,
// nor a search, whose stages are probes.
func (p *prepared) judgesKnee() bool {
	return p.plan.sweep == nil && p.s.Live.Search == nil && len(p.plan.values) > 1
}

// liveWarning logs, at debug level, a caveat found while the run goes on
// (the summary prints it).
func (p *prepared) liveWarning(msg string) { p.log.Debugf("live warning: %s", msg) }

// verbose reports whether the console prints each warning's full text (-v).
func (p *prepared) verbose() bool { return p.log.Enabled("DEBUG") }

// judge marks the knee of a sweep (by --knee-factor) when it has one to
// judge, and adds the warnings the schedule earns: an achieved rate under
// 95% of the target.
func judge(knee float64, s *metrics.Summary, p *plan, kneeJudged bool) {
	if kneeJudged && s.MarkKnee(knee) {
		s.Warnings = append(s.Warnings, fmt.Sprintf(
			"knee at %s %g: p95 TTFT rose more than %g× over the first stage while throughput gained < 10%%; recommended operating point: %s %g",
			p.mode, s.Stages[s.Knee].Value, kneeFactor(knee), p.mode, s.Stages[s.Operating].Value))
	} else if v := s.KneeVerdict; kneeJudged && v.Inconclusive {
		s.Warnings = append(s.Warnings, fmt.Sprintf(
			"knee %s: at %s %g the stages' 95%% intervals could not tell whether p95 TTFT rose more than %g× and throughput gained < 10%%; no knee or operating point is named",
			v, p.mode, s.Stages[v.At].Value, kneeFactor(knee)))
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
	if sw := p.sweep; sw != nil && len(sw.Dims) > 1 {
		return strings.Join(sw.Labels(), "; ")
	}
	parts := make([]string, len(p.values))
	for i, v := range p.values {
		parts[i] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strings.Join(parts, ",")
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

// writeRunReport writes report.html (--report) and the charts as PNG
// files in plots/ (--auto-plot) into a finished run's folder, read back
// from its exports as surge report reads it.
func writeRunReport(out io.Writer, dir string, e spec.Exports) error {
	run, err := artifact.Load(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", reportFlag(e), err)
	}
	return writeReportData(out, dir, e, runreport.Build([]*artifact.Run{run}))
}

// writeReportData writes d as e asks: report.html, plots/*.png.
func writeReportData(out io.Writer, dir string, e spec.Exports, d runreport.Data) error {
	var paths []string
	if e.Report {
		path := filepath.Join(dir, spec.FileReport)
		if err := WriteFile(path, func(w io.Writer) error { return runreport.WriteHTML(w, d) }); err != nil {
			return fmt.Errorf("--report: %w", err)
		}
		paths = append(paths, path)
	}
	if e.Plots {
		pngs, err := runreport.WritePNGs(filepath.Join(dir, spec.DirPlots), d)
		if err != nil {
			return fmt.Errorf("--auto-plot: %w", err)
		}
		paths = append(paths, pngs...)
	}
	for _, p := range paths {
		fmt.Fprintf(out, "  %s\n", p)
	}
	return nil
}

// reportFlag names the flag that asked for the report, for its errors.
func reportFlag(e spec.Exports) string {
	if e.Report {
		return "--report"
	}
	return "--auto-plot"
}
