package profile

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/internal/outbound"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/telemetry/otlp"
)

// breakdown is a run's own sources of the time breakdown
// (docs/time-breakdown.md): the OTLP receiver a tracing server sends its
// spans to, and koboldcpp's perf endpoint asked after each request. The
// responses' own accounts (llama.cpp's timings, TGI's headers, SGLang's
// meta_info, Ollama's durations) need nothing from here.
type breakdown struct {
	s   *spec.Spec
	rcv *otlp.Receiver
}

// startBreakdown starts the receiver when the run has one, before the
// target (the embedded mock may send it its spans).
func startBreakdown(ctx context.Context, s *spec.Spec, log io.Writer) (*breakdown, error) {
	b := &breakdown{s: s}
	if s.Breakdown.OTLPReceiver == "" {
		return b, nil
	}
	rcv, err := otlp.Start(ctx, s.Breakdown.OTLPReceiver)
	if err != nil {
		return nil, fmt.Errorf("--otlp-receiver: %w", err)
	}
	b.rcv = rcv
	fmt.Fprintf(log, "OTLP receiver at %s: point the server's trace exporter there (vLLM: --otlp-traces-endpoint %s with OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf)\n",
		rcv.URL(), rcv.URL())
	return b, nil
}

// stop closes the receiver.
func (b *breakdown) stop() {
	if b.rcv != nil {
		_ = b.rcv.Close()
	}
}

// mock sets how the embedded mock reports its own times.
func (b *breakdown) mock(cfg *mockserver.Config) {
	switch t := b.s.Breakdown.MockTimings; t {
	case "otlp":
		if b.rcv != nil {
			cfg.OTLPEndpoint = b.rcv.URL()
		}
	default:
		cfg.Timings = t
	}
}

// collectorOptions joins the records to the receiver's spans.
func (b *breakdown) collectorOptions() []metrics.Option {
	if b.rcv == nil {
		return nil
	}
	return []metrics.Option{metrics.WithServerSpans(b.rcv, b.s.Breakdown.OTLPWait)}
}

// generatorOptions asks koboldcpp's perf after each request.
func (b *breakdown) generatorOptions(target string) []loadgen.Option {
	if !b.s.Breakdown.KoboldPerf {
		return nil
	}
	return []loadgen.Option{loadgen.WithAfterResponse(koboldPerf(target, b.s.Request.Headers))}
}

// koboldMaxBody bounds /api/extra/perf's answer (a few hundred bytes).
const koboldMaxBody = 64 << 10

// koboldPerf is the probe of /api/extra/perf on base: the prompt's and
// the generation's times of the request just made, when its count of
// generations says the last is that request's (one request at a time:
// the spec checked).
func koboldPerf(base string, headers http.Header) func(ctx context.Context, rec *metrics.Record) {
	client := outbound.NewClient(outbound.WithTimeout(5 * time.Second))
	u, err := loadgen.RequestURL(base, "/api/extra/perf")
	if err != nil {
		return func(context.Context, *metrics.Record) {}
	}
	// The count of generations at the last answer (one request at a time,
	// but each on a goroutine of its own).
	var last atomic.Int64
	last.Store(-1)
	return func(ctx context.Context, rec *metrics.Record) {
		if rec.Server.Known() {
			return // the response gave its own
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return
		}
		for k, vs := range headers {
			req.Header[k] = vs
		}
		resp, err := client.Do(req)
		if err != nil {
			return
		}
		body, err := outbound.ReadBody(ctx, resp, koboldMaxBody, "koboldcpp's /api/extra/perf")
		if err != nil || resp.StatusCode != http.StatusOK {
			return
		}
		p, err := endpoint.ParseKoboldPerf(body)
		if err != nil {
			return
		}
		// Its first answer, or one generation more than the last: this
		// request's. Otherwise another client's or none: unknown.
		if prev := last.Swap(p.Gens); prev < 0 || p.Gens == prev+1 {
			rec.Server = p.Timing
		}
	}
}

// awaitSpans gives the records still waiting for their spans the rest of
// their wait (an interrupt ends it at once), saying so.
func (b *breakdown) awaitSpans(ctx context.Context, col *metrics.Collector, log io.Writer) {
	if b.rcv == nil {
		return
	}
	if n := col.Waiting(); n > 0 {
		fmt.Fprintf(log, "waiting up to %s for the server's spans of %d requests (--otlp-wait)\n", b.s.Breakdown.OTLPWait, n)
	}
	col.AwaitSpans(ctx)
}

// consoleNote is the console's line on the receiver's spans ("": none).
func (b *breakdown) consoleNote(sum *metrics.Summary) string {
	if b.rcv == nil {
		return ""
	}
	st := b.rcv.Stats()
	j := sum.SpanJoins
	if j == nil {
		j = &metrics.SpanJoins{}
	}
	var parts []string
	parts = append(parts, fmt.Sprintf("OTLP spans: %d received in %d exports, %d joined to requests", st.Spans, st.Exports, j.Joined))
	if j.Missed > 0 {
		parts = append(parts, fmt.Sprintf("%d requests got none within --otlp-wait", j.Missed))
	}
	if st.Refused > 0 {
		parts = append(parts, fmt.Sprintf("%d exports refused", st.Refused))
	}
	if st.Spans == 0 {
		parts = append(parts, "is the server's exporter pointed at "+b.rcv.URL()+"?")
	}
	return strings.Join(parts, "; ")
}
