// Package otlp exports a run to an OpenTelemetry collector over OTLP/HTTP,
// with the official OpenTelemetry Go SDK (its metric and trace SDKs and
// their OTLP/HTTP exporters): the wire format, batching, temporality and
// the semantic conventions' names are the SDK's, not surge's.
//
// What it sends, and from where (never from a reading goroutine):
//
//   - The run's progress and statistics, every interval and once more at
//     the end, read from the collector's snapshots (and the final summary):
//     surge.requests.* counters, surge.<metric tag> gauges by statistic.
//   - The GenAI semantic conventions' client histograms
//     (gen_ai.client.operation.duration, gen_ai.client.token.usage,
//     gen_ai.client.operation.time_to_first_chunk and
//     time_per_output_chunk), AIPerf's metric names, from each finished
//     record.
//   - One span per sampled request (gen_ai.request.model,
//     gen_ai.usage.input_tokens, gen_ai.usage.output_tokens,
//     gen_ai.response.time_to_first_chunk, …; the run and stage as
//     surge.run.id and surge.stage), timed by the request's own stamps.
//
// Finished records reach the exporter through a bounded queue the metric
// shards never wait on: a record that finds it full is dropped from the
// export (never from the run) and counted. Exports go through the one
// outbound HTTP client, with a timeout each and no retries; a collector
// that fails is one warning, and the run goes on as if it were not there.
package otlp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/internal/outbound"
	"github.com/surgebench/surge/internal/sanitize"
	"github.com/surgebench/surge/metrics"
)

// Defaults.
const (
	// DefaultInterval is how often the run's metrics are sent.
	DefaultInterval = 10 * time.Second
	// DefaultQueue bounds the finished records waiting for the exporter.
	DefaultQueue = 4096
	// ExportTimeout bounds one export (a request to the collector).
	ExportTimeout = 10 * time.Second
	// MaxResponse bounds what is read of a collector's answer.
	MaxResponse = 1 << 20
)

// GenAI names the run in the semantic conventions' terms.
type GenAI struct {
	// Operation is gen_ai.operation.name (chat, text_completion,
	// embeddings); Provider gen_ai.provider.name; Model
	// gen_ai.request.model.
	Operation, Provider, Model string
	// ServerAddress and ServerPort are the target's (server.address,
	// server.port; "" and 0: not sent).
	ServerAddress string
	ServerPort    int
}

type options struct {
	interval       time.Duration
	statistics     bool
	progress       bool
	spanRatio      float64
	resource       map[string]string
	version, runID string
	genAI          GenAI
	origin         time.Time
	queue          int
	client         *http.Client
	warn, debug    func(string)
}

// Option configures an Exporter.
type Option func(*options)

// WithInterval sends the live metrics every d (default DefaultInterval).
func WithInterval(d time.Duration) Option { return func(o *options) { o.interval = d } }

// WithStreams picks AIPerf's --stream domains: statistics ("metrics":
// the latency and throughput gauges, the GenAI histograms) and progress
// ("timing": requests started, finished, failed, in flight; tokens).
func WithStreams(statistics, progress bool) Option {
	return func(o *options) { o.statistics, o.progress = statistics, progress }
}

// WithSpans sends a span for this fraction of the requests (0: none, 1:
// every one), chosen evenly by request index.
func WithSpans(ratio float64) Option { return func(o *options) { o.spanRatio = ratio } }

// WithResource adds resource attributes (--otel-resource-attributes),
// over surge's own (service.name, service.version).
func WithResource(attrs map[string]string) Option { return func(o *options) { o.resource = attrs } }

// WithRun names the run (surge.run.id: the benchmark id) and surge's
// version (service.version).
func WithRun(id, version string) Option {
	return func(o *options) { o.runID, o.version = id, version }
}

// WithGenAI sets the GenAI attributes every metric and span carries.
func WithGenAI(g GenAI) Option { return func(o *options) { o.genAI = g } }

// WithOrigin is the wall time of the run clock's zero (records' stamps are
// since then).
func WithOrigin(t time.Time) Option { return func(o *options) { o.origin = t } }

// WithQueue bounds the records waiting for the exporter (default
// DefaultQueue).
func WithQueue(n int) Option { return func(o *options) { o.queue = n } }

// WithWarning takes the one warning a failing collector gets, and the
// report of dropped records; WithDebug the rest (default: none).
func WithWarning(f func(string)) Option { return func(o *options) { o.warn = f } }

// WithDebug takes what only a debug log shows (the SDK's own errors).
func WithDebug(f func(string)) Option { return func(o *options) { o.debug = f } }

// Exporter sends one run to a collector. It is a metrics.RecordSink:
// WriteRecord may be called from every shard at once.
type Exporter struct {
	o        options
	url      string // the metrics endpoint, for the warning
	mp       *sdkmetric.MeterProvider
	tp       *sdktrace.TracerProvider
	tracer   trace.Tracer
	meter    metric.Meter
	snapshot func() metrics.Snapshot
	common   []attribute.KeyValue

	queue                      chan finished
	converted                  chan struct{}
	queued                     atomic.Int64
	dropped                    atomic.Int64
	spansEnded                 atomic.Int64
	final                      atomic.Pointer[metrics.Summary]
	closing                    atomic.Bool
	last                       metrics.Snapshot // the callback\'s own (the SDK calls it once at a time)
	closeOnce                  sync.Once
	stats                      Stats
	exports                    watch
	histograms                 histograms
	errorOpts                  map[string]metric.MeasurementOption // the converter's own
	okOpt, inputOpt, outputOpt metric.MeasurementOption
	spanAttrs                  []attribute.KeyValue
}

// Stats is what an export did, for run_info and the report of drops.
type Stats struct {
	// Records reached the exporter; Dropped found its queue full.
	Records, Dropped int64
	// Spans were handed to the collector's exporter (SpansDropped: ended
	// but never sent, the SDK's queue full or the end's bound passed);
	// SpansFailed of them were refused or lost on the way.
	Spans, SpansDropped, SpansFailed int64
	// MetricExports were attempted, MetricFailures failed.
	MetricExports, MetricFailures int64
}

// finished is what the export keeps of a record: copied in the shard, so
// the record goes back to its pool at once.
type finished struct {
	index                     int64
	requestID, conversationID string
	phase                     metrics.Phase
	stage                     int
	startNs, endNs            int64
	ttft, itl, latency        float64 // ms; NaN: none
	isl, osl                  float64 // NaN: unknown
	errType                   string
	errCode                   int
	cancelled, streamed       bool
}

// New starts exporting to the collector whose metrics endpoint is
// metricsURL and traces endpoint tracesURL (Endpoints), the live metrics
// read from snapshot every interval. Close ends it.
func New(metricsURL, tracesURL string, snapshot func() metrics.Snapshot, opts ...Option) (*Exporter, error) {
	o := options{interval: DefaultInterval, statistics: true, progress: true, queue: DefaultQueue}
	for _, opt := range opts {
		opt(&o)
	}
	o.client = outbound.NewClient(outbound.WithTimeout(ExportTimeout))
	if o.warn == nil {
		o.warn = func(string) {}
	}
	if o.debug == nil {
		o.debug = func(string) {}
	}
	if o.origin.IsZero() {
		o.origin = time.Now()
	}
	silenceSDK(o.debug)
	e := &Exporter{o: o, url: metricsURL, snapshot: snapshot, errorOpts: map[string]metric.MeasurementOption{}}
	e.exports.warn = o.warn
	res, err := e.resource()
	if err != nil {
		return nil, err
	}
	// No retries: a failed export is counted, and the next interval's
	// (cumulative) metrics carry what it held.
	noRetry := otlpmetrichttp.RetryConfig{Enabled: false}
	mexp, err := otlpmetrichttp.New(context.Background(), otlpmetrichttp.WithEndpointURL(metricsURL),
		otlpmetrichttp.WithHTTPClient(o.client), otlpmetrichttp.WithRetry(noRetry),
		otlpmetrichttp.WithMaxResponseSize(MaxResponse))
	if err != nil {
		return nil, fmt.Errorf("the OTLP metric exporter: %w", err)
	}
	mopts := []sdkmetric.Option{sdkmetric.WithResource(res)}
	if o.statistics || o.progress {
		mopts = append(mopts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(&metricExporter{Exporter: mexp, w: &e.exports, url: metricsURL},
			sdkmetric.WithInterval(o.interval), sdkmetric.WithTimeout(ExportTimeout))))
	}
	e.mp = sdkmetric.NewMeterProvider(mopts...)
	e.meter = e.mp.Meter("github.com/surgebench/surge", metric.WithInstrumentationVersion(o.version))
	e.common = e.commonAttributes()
	if err := e.instruments(); err != nil {
		_ = e.mp.Shutdown(context.Background())
		return nil, err
	}
	if o.spanRatio > 0 {
		texp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(tracesURL),
			otlptracehttp.WithHTTPClient(o.client), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}),
			otlptracehttp.WithMaxResponseSize(MaxResponse))
		if err != nil {
			_ = e.mp.Shutdown(context.Background())
			return nil, fmt.Errorf("the OTLP trace exporter: %w", err)
		}
		// The SDK's batcher drops what its queue cannot take (never
		// blocking the converter): ended − handed over is what it dropped.
		e.tp = sdktrace.NewTracerProvider(sdktrace.WithResource(res),
			sdktrace.WithBatcher(&spanExporter{SpanExporter: texp, w: &e.exports, url: tracesURL}, sdktrace.WithBatchTimeout(min(o.interval, 5*time.Second)),
				sdktrace.WithExportTimeout(ExportTimeout)))
		e.tracer = e.tp.Tracer("github.com/surgebench/surge", trace.WithInstrumentationVersion(o.version))
	}
	e.queue = make(chan finished, max(o.queue, 1))
	e.converted = make(chan struct{})
	go e.convert()
	return e, nil
}

// WriteRecord implements metrics.RecordSink: it copies what the export
// needs and queues it, never waiting (a full queue drops it from the
// export and counts it). It must not be called after Close.
func (e *Exporter) WriteRecord(r *metrics.Record, v *metrics.Values, _ bool) {
	f := finished{index: r.Index, requestID: r.RequestID, conversationID: r.ConversationID, phase: r.Phase, stage: r.Stage,
		startNs: r.SentNs, endNs: r.EndNs, ttft: v.TTFT, itl: v.ITL, latency: v.Latency, isl: v.ISL, osl: v.OSL,
		cancelled: r.Cancelled, streamed: r.Streamed}
	if r.IssuedNs > 0 {
		f.startNs = r.IssuedNs // where AIPerf's latencies start
	}
	if r.Err != nil {
		f.errType, f.errCode = r.Err.Type, r.Err.Code
	}
	select {
	case e.queue <- f:
		e.queued.Add(1)
	default:
		e.dropped.Add(1)
	}
}

// Close sends the final metrics (from s, the run's summary; nil: the last
// snapshot's) and the spans still queued, within ctx, and stops; it no
// longer asks for snapshots (the collector may be closed). It says
// what the export did; the records that missed it are reported once on
// the warning func.
func (e *Exporter) Close(ctx context.Context, s *metrics.Summary) Stats {
	e.closeOnce.Do(func() {
		e.closing.Store(true)
		close(e.queue)
		select {
		case <-e.converted:
		case <-ctx.Done():
		}
		if s != nil {
			e.final.Store(s)
		}
		if e.tp != nil {
			_ = e.tp.Shutdown(ctx)
		}
		_ = e.mp.Shutdown(ctx)
		e.stats = Stats{Records: e.queued.Load(), Dropped: e.dropped.Load(), MetricExports: e.exports.metricExports.Load(),
			MetricFailures: e.exports.metricFailures.Load(), Spans: e.exports.spans.Load(), SpansFailed: e.exports.spansFailed.Load()}
		e.stats.SpansDropped = max(e.spansEnded.Load()-e.stats.Spans, 0)
		if e.stats.Dropped > 0 && !e.exports.warned.Load() {
			e.o.warn(fmt.Sprintf("OpenTelemetry: %d of %d records were left out of the export to %s: its queue was full (the run itself kept every record)",
				e.stats.Dropped, e.stats.Dropped+e.stats.Records, e.url))
		}
	})
	return e.stats
}

// convert turns queued records into histogram points and spans, on a
// goroutine of its own (the SDK's instruments and spans allocate and lock).
func (e *Exporter) convert() {
	defer close(e.converted)
	ctx := context.Background()
	for f := range e.queue {
		if f.phase == metrics.Profile && e.o.statistics {
			e.observe(ctx, &f)
		}
		if e.tracer != nil && sampled(f.index, e.o.spanRatio) {
			e.span(ctx, &f)
		}
	}
}

// sampled chooses requests evenly: index·φ mod 1 below ratio picks that
// fraction of any run of consecutive indexes, the same on every run.
func sampled(index int64, ratio float64) bool {
	if ratio >= 1 {
		return true
	}
	const phi = 0.6180339887498949
	_, frac := math.Modf(float64(index) * phi)
	return frac < ratio
}

// histograms are the GenAI semantic conventions' client metrics.
type histograms struct {
	duration   genaiconv.ClientOperationDuration
	tokens     genaiconv.ClientTokenUsage
	firstChunk genaiconv.ClientOperationTimeToFirstChunk
	perChunk   genaiconv.ClientOperationTimePerOutputChunk
}

// observe records one profile request in the GenAI histograms (seconds and
// tokens, the conventions' units), with options made once (an option made
// per call is an allocation per call).
func (e *Exporter) observe(ctx context.Context, f *finished) {
	ok := e.okOpt
	if f.errType != "" {
		ok = e.errorOption(errorType(f))
	}
	if !math.IsNaN(f.latency) {
		e.histograms.duration.Inst().Record(ctx, f.latency/1e3, ok)
	}
	if f.errType != "" {
		return
	}
	if !math.IsNaN(f.ttft) && f.streamed {
		e.histograms.firstChunk.Inst().Record(ctx, f.ttft/1e3, e.okOpt)
	}
	if !math.IsNaN(f.itl) && f.streamed {
		e.histograms.perChunk.Inst().Record(ctx, f.itl/1e3, e.okOpt)
	}
	if !math.IsNaN(f.isl) {
		e.histograms.tokens.Inst().Record(ctx, int64(f.isl), e.inputOpt)
	}
	if !math.IsNaN(f.osl) {
		e.histograms.tokens.Inst().Record(ctx, int64(f.osl), e.outputOpt)
	}
}

// errorType is the conventions' error.type of a failed request: its HTTP
// status, or what the client saw.
func errorType(f *finished) string {
	switch {
	case f.cancelled:
		return "cancelled"
	case f.errCode > 0:
		return fmt.Sprint(f.errCode)
	case f.errType != "":
		return f.errType
	}
	return "_OTHER"
}

func (e *Exporter) errorOption(t string) metric.MeasurementOption {
	o, ok := e.errorOpts[t]
	if !ok {
		if len(e.errorOpts) >= 64 { // error types come from outside: bounded
			t = "_OTHER"
			if o, ok = e.errorOpts[t]; ok {
				return o
			}
		}
		o = metric.WithAttributeSet(attribute.NewSet(append(e.genAIAttributes(), semconv.ErrorTypeKey.String(t))...))
		e.errorOpts[t] = o
	}
	return o
}

// span sends one request as a client span named as the conventions name
// an inference span ("chat MODEL"), timed by the request's stamps.
func (e *Exporter) span(ctx context.Context, f *finished) {
	start := e.o.origin.Add(time.Duration(f.startNs))
	end := e.o.origin.Add(time.Duration(max(f.endNs, f.startNs)))
	attrs := append(e.spanAttrs[:len(e.spanAttrs):len(e.spanAttrs)],
		attribute.String("surge.phase", f.phase.String()), attribute.Int("surge.stage", f.stage),
		attribute.String("surge.request.id", f.requestID))
	if f.conversationID != "" {
		attrs = append(attrs, semconv.GenAIConversationID(f.conversationID))
	}
	if !math.IsNaN(f.isl) {
		attrs = append(attrs, semconv.GenAIUsageInputTokens(int(f.isl)))
	}
	if !math.IsNaN(f.osl) && f.errType == "" {
		attrs = append(attrs, semconv.GenAIUsageOutputTokens(int(f.osl)))
	}
	if !math.IsNaN(f.ttft) && f.streamed && f.errType == "" {
		attrs = append(attrs, semconv.GenAIResponseTimeToFirstChunk(f.ttft/1e3))
	}
	if f.errCode > 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(f.errCode))
	}
	name := e.o.genAI.Operation
	if e.o.genAI.Model != "" {
		name += " " + e.o.genAI.Model
	}
	_, sp := e.tracer.Start(ctx, name, trace.WithTimestamp(start), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attrs...), trace.WithNewRoot())
	if f.errType != "" {
		t := errorType(f)
		sp.SetAttributes(semconv.ErrorTypeKey.String(t))
		sp.SetStatus(codes.Error, t)
	}
	sp.End(trace.WithTimestamp(end))
	e.spansEnded.Add(1)
}

// genAIAttributes are the attributes every GenAI metric carries.
func (e *Exporter) genAIAttributes() []attribute.KeyValue {
	g := e.o.genAI
	a := []attribute.KeyValue{semconv.GenAIOperationNameKey.String(g.Operation), semconv.GenAIProviderNameKey.String(g.Provider)}
	if g.Model != "" {
		a = append(a, semconv.GenAIRequestModel(g.Model))
	}
	if g.ServerAddress != "" {
		a = append(a, semconv.ServerAddress(g.ServerAddress))
		if g.ServerPort > 0 {
			a = append(a, semconv.ServerPort(g.ServerPort))
		}
	}
	return a
}

// commonAttributes are the GenAI attributes and the run's id.
func (e *Exporter) commonAttributes() []attribute.KeyValue {
	a := e.genAIAttributes()
	if e.o.runID != "" {
		a = append(a, attribute.String("surge.run.id", e.o.runID))
	}
	return a
}

func (e *Exporter) resource() (*resource.Resource, error) {
	attrs := []attribute.KeyValue{semconv.ServiceName("surge")}
	if e.o.version != "" {
		attrs = append(attrs, semconv.ServiceVersion(e.o.version))
	}
	for k, v := range e.o.resource {
		attrs = append(attrs, attribute.String(k, v))
	}
	// Later attributes win: the user's over surge's.
	return resource.NewSchemaless(attrs...), nil
}

// silenceSDK keeps the SDK from printing on its own: every export's
// outcome is reported by the wrappers below, once; what else the SDK
// says goes to the debug log, sanitised.
func silenceSDK(debug func(string)) {
	otel.SetLogger(logr.Discard())
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		debug("OpenTelemetry SDK: " + sanitize.Line(err.Error()))
	}))
}

// watch follows the exports' outcomes: the first failure is the one
// warning a failing collector gets.
type watch struct {
	warn                          func(string)
	warned                        atomic.Bool
	metricExports, metricFailures atomic.Int64
	spans, spansFailed            atomic.Int64
}

func (w *watch) failed(url string, err error) {
	if w.warned.Swap(true) {
		return
	}
	w.warn(fmt.Sprintf("OpenTelemetry: the export to %s failed (%s): the run goes on without it, and later failures are only counted (run_info.otel)",
		url, reason(err)))
}

// reason says why an export failed in one line: the limit by name when a
// collector's answer was too large, the SDK's words otherwise, sanitised
// and cut (an answer's body may be in them).
func reason(err error) string {
	msg := err.Error()
	if strings.Contains(msg, "too large: exceeded") {
		return "its answer is over the " + bounded.Bytes(MaxResponse) + " limit"
	}
	var de *outbound.DowngradeError
	if errors.As(err, &de) {
		return de.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) || strings.Contains(msg, "Client.Timeout") {
		return fmt.Sprintf("no answer within %v", ExportTimeout)
	}
	msg = sanitize.Line(msg)
	if r := []rune(msg); len(r) > 200 {
		msg = string(r[:200]) + "…"
	}
	return msg
}

// metricExporter counts the metric exports and reports a failure once,
// returning nil so the SDK says nothing of its own.
type metricExporter struct {
	sdkmetric.Exporter
	w   *watch
	url string
}

func (m *metricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	err := m.Exporter.Export(ctx, rm)
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil // a periodic export cut short by the final one, which follows
	}
	m.w.metricExports.Add(1)
	if err != nil {
		m.w.metricFailures.Add(1)
		m.w.failed(m.url, err)
	}
	return nil
}

// spanExporter counts the spans handed over and those that failed.
type spanExporter struct {
	sdktrace.SpanExporter
	w   *watch
	url string
}

func (s *spanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	s.w.spans.Add(int64(len(spans)))
	if err := s.SpanExporter.ExportSpans(ctx, spans); err != nil {
		s.w.spansFailed.Add(int64(len(spans)))
		s.w.failed(s.url, err)
	}
	return nil
}
