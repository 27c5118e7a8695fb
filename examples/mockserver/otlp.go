package mockserver

import (
	"bytes"
	"context"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/surgebench/surge/internal/outbound"
)

// The mock's spans, as vLLM sends them when started with
// --otlp-traces-endpoint (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf):
// one "llm_request" span per generation request, under the trace of the
// request's W3C traceparent, its times in seconds in gen_ai.latency.*
// attributes, sent in batches over OTLP/HTTP through the one outbound
// policy. A batch goes every spanEvery or at spanBatch spans; the spans
// waiting are bounded (spanQueue: past it a span is dropped, as an
// exporter's queue drops them).
const (
	spanEvery = 100 * time.Millisecond
	spanBatch = 512
	spanQueue = 8192
)

// span is one request's times, kept until its batch goes.
type span struct {
	trace, parent           [16]byte
	hasParent               bool
	id                      string // gen_ai.request.id
	arrival, end            time.Time
	queue, prefill, decode  time.Duration
	firstToken, e2e         time.Duration
	promptTokens, generated int
	model                   string
}

// exporter batches spans and posts them to Config.OTLPEndpoint.
type exporter struct {
	url    string
	client *http.Client
	spans  chan span
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
}

func newExporter(url string) *exporter {
	e := &exporter{url: url, client: outbound.NewClient(outbound.WithTimeout(5 * time.Second)),
		spans: make(chan span, spanQueue), stop: make(chan struct{}), done: make(chan struct{})}
	go e.run()
	return e
}

// add queues a span, dropping it when the queue is full.
func (e *exporter) add(sp span) {
	select {
	case e.spans <- sp:
	default:
	}
}

func (e *exporter) run() {
	defer close(e.done)
	t := time.NewTicker(spanEvery)
	defer t.Stop()
	var batch []span
	flush := func() {
		if len(batch) > 0 {
			e.post(batch)
			batch = batch[:0]
		}
	}
	for {
		select {
		case sp := <-e.spans:
			batch = append(batch, sp)
			if len(batch) >= spanBatch {
				flush()
			}
		case <-t.C:
			flush()
		case <-e.stop:
			for {
				select {
				case sp := <-e.spans:
					batch = append(batch, sp)
				default:
					flush()
					return
				}
			}
		}
	}
}

// close sends what is queued and stops.
func (e *exporter) close() {
	e.once.Do(func() { close(e.stop) })
	<-e.done
}

// post sends one batch; a failure drops it, as an exporter gives up on a
// batch its collector refused.
func (e *exporter) post(batch []span) {
	body, err := proto.Marshal(tracesOf(batch))
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := e.client.Do(req)
	if err != nil {
		return
	}
	_, _ = outbound.ReadBody(ctx, resp, 64<<10, "OTLP export response")
}

// tracesOf is a batch as OTLP's TracesData (an ExportTraceServiceRequest
// on the wire): one resource, vLLM's instrumentation scope.
func tracesOf(batch []span) *tracepb.TracesData {
	str := func(k, v string) *commonpb.KeyValue {
		return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
	}
	num := func(k string, v float64) *commonpb.KeyValue {
		return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v}}}
	}
	integer := func(k string, v int) *commonpb.KeyValue {
		return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: int64(v)}}}
	}
	spans := make([]*tracepb.Span, 0, len(batch))
	for _, sp := range batch {
		id := sp.trace
		s := &tracepb.Span{
			TraceId: id[:], SpanId: spanID(sp), Name: "llm_request", Kind: tracepb.Span_SPAN_KIND_SERVER,
			StartTimeUnixNano: uint64(sp.arrival.UnixNano()), EndTimeUnixNano: uint64(sp.end.UnixNano()),
			Attributes: []*commonpb.KeyValue{
				str("gen_ai.response.model", sp.model),
				str("gen_ai.request.id", sp.id),
				integer("gen_ai.usage.prompt_tokens", sp.promptTokens),
				integer("gen_ai.usage.completion_tokens", sp.generated),
				num("gen_ai.latency.time_in_queue", sp.queue.Seconds()),
				num("gen_ai.latency.time_to_first_token", sp.firstToken.Seconds()),
				num("gen_ai.latency.e2e", sp.e2e.Seconds()),
				num("gen_ai.latency.time_in_model_prefill", sp.prefill.Seconds()),
				num("gen_ai.latency.time_in_model_decode", sp.decode.Seconds()),
				num("gen_ai.latency.time_in_model_inference", (sp.prefill + sp.decode).Seconds()),
			},
		}
		if sp.hasParent {
			s.ParentSpanId = sp.parent[:8]
		}
		spans = append(spans, s)
	}
	return &tracepb.TracesData{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{str("service.name", "mock")}},
		ScopeSpans: []*tracepb.ScopeSpans{{
			Scope: &commonpb.InstrumentationScope{Name: "vllm.entrypoints.openai.api_server"},
			Spans: spans,
		}},
	}}}
}

// spanID is the span's own id: the request's arrival, which is unique
// enough for a mock (never zero).
func spanID(sp span) []byte {
	b := make([]byte, 8)
	n := uint64(sp.arrival.UnixNano()) | 1
	for i := range b {
		b[i] = byte(n >> (8 * i))
	}
	return b
}

// traceparent reads a W3C traceparent header's trace and parent ids
// ("00-<32 hex>-<16 hex>-<2 hex>"); ok false for anything else.
func traceparent(h string) (trace, parent [16]byte, ok bool) {
	if len(h) != 55 || h[2] != '-' || h[35] != '-' || h[52] != '-' {
		return trace, parent, false
	}
	if _, err := hex.Decode(trace[:], []byte(h[3:35])); err != nil {
		return trace, parent, false
	}
	if _, err := hex.Decode(parent[:8], []byte(h[36:52])); err != nil {
		return trace, parent, false
	}
	return trace, parent, trace != [16]byte{}
}

// traced sends g's span once it ended at end, when the mock exports
// spans: under the request's trace (a new one when it sent none).
func (s *Server) traced(g *generation, r *http.Request, end time.Time) {
	if s.spans == nil {
		return
	}
	sp := span{id: "chatcmpl-" + strconv.FormatUint(g.n, 10), arrival: g.arrival, end: end, queue: g.queued(),
		prefill: g.prefilled(), decode: g.decoded(end), e2e: end.Sub(g.arrival), promptTokens: g.prompt, generated: g.out, model: g.model}
	sp.firstToken = sp.queue + sp.prefill
	if !g.firstAt.IsZero() {
		sp.firstToken = g.firstAt.Sub(g.arrival)
	}
	if id := r.Header.Get("X-Request-Id"); id != "" {
		sp.id = "chatcmpl-" + id // vLLM's: its request id is the client's
	}
	var ok bool
	sp.trace, sp.parent, ok = traceparent(r.Header.Get("Traceparent"))
	sp.hasParent = ok
	if !ok {
		n := uint64(g.arrival.UnixNano()) ^ g.n<<40
		for i := range 8 {
			sp.trace[i], sp.trace[8+i] = byte(n>>(8*i)), byte(g.n>>(8*i))
		}
	}
	s.spans.add(sp)
}

// Close stops the mock's background work: the spans still queued are
// sent first. Running.Close calls it; a Server served by hand (New) calls
// it when done.
func (s *Server) Close() {
	if s.spans != nil {
		s.spans.close()
	}
}
