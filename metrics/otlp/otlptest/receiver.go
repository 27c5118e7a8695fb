// Package otlptest is an OTLP/HTTP receiver for tests: a real HTTP server
// on loopback that decodes what an exporter sends with the protocol's own
// generated types (go.opentelemetry.io/proto/otlp), as a collector would.
package otlptest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	collmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Receiver collects the metrics and spans sent to it.
type Receiver struct {
	// URL is its base URL (http://127.0.0.1:PORT).
	URL string

	mu      sync.Mutex
	metrics []*collmetricpb.ExportMetricsServiceRequest
	traces  []*colltracepb.ExportTraceServiceRequest
	headers []http.Header
}

// New starts a receiver that t closes.
func New(t testing.TB) *Receiver {
	r := &Receiver{}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// ServeHTTP decodes an export request of /v1/metrics or /v1/traces.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 64<<20))
	if err != nil || req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want a POST of application/x-protobuf", http.StatusBadRequest)
		return
	}
	var reply proto.Message
	r.mu.Lock()
	r.headers = append(r.headers, req.Header.Clone())
	switch req.URL.Path {
	case "/v1/metrics":
		m := &collmetricpb.ExportMetricsServiceRequest{}
		err = proto.Unmarshal(body, m)
		r.metrics = append(r.metrics, m)
		reply = &collmetricpb.ExportMetricsServiceResponse{}
	case "/v1/traces":
		m := &colltracepb.ExportTraceServiceRequest{}
		err = proto.Unmarshal(body, m)
		r.traces = append(r.traces, m)
		reply = &colltracepb.ExportTraceServiceResponse{}
	default:
		r.mu.Unlock()
		http.NotFound(w, req)
		return
	}
	r.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b, _ := proto.Marshal(reply)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

// Exports counts the metric and trace export requests received.
func (r *Receiver) Exports() (metricExports, traceExports int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.metrics), len(r.traces)
}

// Headers are the headers of every request received.
func (r *Receiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.headers)
}

// Metrics are every metric received, in order, each with its resource's
// attributes.
func (r *Receiver) Metrics() []Metric {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Metric
	for _, req := range r.metrics {
		for _, rm := range req.GetResourceMetrics() {
			res := Attributes(rm.GetResource().GetAttributes())
			for _, sm := range rm.GetScopeMetrics() {
				for _, m := range sm.GetMetrics() {
					out = append(out, Metric{Metric: m, Resource: res})
				}
			}
		}
	}
	return out
}

// Spans are every span received, in order, each with its resource's
// attributes.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Span
	for _, req := range r.traces {
		for _, rs := range req.GetResourceSpans() {
			res := Attributes(rs.GetResource().GetAttributes())
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					out = append(out, Span{Span: s, Resource: res})
				}
			}
		}
	}
	return out
}

// Metric is one received metric.
type Metric struct {
	*metricpb.Metric
	Resource map[string]any
}

// Points are the metric's data points' attributes and values (a
// histogram's: its count).
func (m Metric) Points() []Point {
	var out []Point
	switch d := m.GetData().(type) {
	case *metricpb.Metric_Gauge:
		for _, p := range d.Gauge.GetDataPoints() {
			out = append(out, Point{Attrs: Attributes(p.GetAttributes()), Value: number(p)})
		}
	case *metricpb.Metric_Sum:
		for _, p := range d.Sum.GetDataPoints() {
			out = append(out, Point{Attrs: Attributes(p.GetAttributes()), Value: number(p)})
		}
	case *metricpb.Metric_Histogram:
		for _, p := range d.Histogram.GetDataPoints() {
			out = append(out, Point{Attrs: Attributes(p.GetAttributes()), Value: float64(p.GetCount()), Sum: p.GetSum()})
		}
	}
	return out
}

func number(p *metricpb.NumberDataPoint) float64 {
	if v, ok := p.GetValue().(*metricpb.NumberDataPoint_AsInt); ok {
		return float64(v.AsInt)
	}
	return p.GetAsDouble()
}

// Point is one data point.
type Point struct {
	Attrs map[string]any
	// Value is a gauge's or sum's value, a histogram's count (Sum its sum).
	Value, Sum float64
}

// Span is one received span.
type Span struct {
	*tracepb.Span
	Resource map[string]any
}

// Attrs are the span's attributes.
func (s Span) Attrs() map[string]any { return Attributes(s.GetAttributes()) }

// Attributes reads OTLP attributes into a map of Go values (string,
// int64, float64, bool).
func Attributes(kvs []*commonpb.KeyValue) map[string]any {
	m := map[string]any{}
	for _, kv := range kvs {
		switch v := kv.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.GetKey()] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.GetKey()] = v.IntValue
		case *commonpb.AnyValue_DoubleValue:
			m[kv.GetKey()] = v.DoubleValue
		case *commonpb.AnyValue_BoolValue:
			m[kv.GetKey()] = v.BoolValue
		default:
			m[kv.GetKey()] = kv.GetValue().String()
		}
	}
	return m
}
