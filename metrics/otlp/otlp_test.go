package otlp_test

import (
	"context"
	"math"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/otlp"
	"github.com/surgebench/surge/metrics/otlp/otlptest"
)

func TestEndpoints(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, metrics, traces, err string }{
		{in: "collector:4318", metrics: "http://collector:4318/v1/metrics", traces: "http://collector:4318/v1/traces"},
		{in: "http://collector:4318/", metrics: "http://collector:4318/v1/metrics", traces: "http://collector:4318/v1/traces"},
		{in: "https://otel.example.com/v1/metrics", metrics: "https://otel.example.com/v1/metrics", traces: "https://otel.example.com/v1/traces"},
		{in: "https://gw.example.com/otlp", metrics: "https://gw.example.com/otlp/v1/metrics", traces: "https://gw.example.com/otlp/v1/traces"},
		{in: "[::1]:4318", metrics: "http://[::1]:4318/v1/metrics", traces: "http://[::1]:4318/v1/traces"},
		{in: " ", err: "empty"},
		{in: "grpc://collector:4317", err: "OTLP/gRPC"},
		{in: "http://:4318", err: "want host"},
		{in: "http://u:secret@collector:4318", err: "OTEL_EXPORTER_OTLP_HEADERS"},
		{in: "http://collector:4318/?a=1", err: "no query"},
	} {
		m, tr, err := otlp.Endpoints(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Endpoints(%q): err %v, want one saying %q", c.in, err, c.err)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("Endpoints(%q): the error repeats the password: %v", c.in, err)
			}
			continue
		}
		if err != nil || m != c.metrics || tr != c.traces {
			t.Errorf("Endpoints(%q) = %q, %q, %v; want %q, %q", c.in, m, tr, err, c.metrics, c.traces)
		}
	}
}

// record is a finished streamed request of the profile.
func record(i int64, failed bool) (*metrics.Record, *metrics.Values, bool) {
	r := &metrics.Record{Index: i, RequestID: "req-" + string(rune('a'+i%26)), ConversationID: "conv", Phase: metrics.Profile,
		Stage: 1, SentNs: int64(time.Second) + i*int64(time.Millisecond), EndNs: int64(2*time.Second) + i*int64(time.Millisecond), Streamed: true}
	v := &metrics.Values{TTFT: 120, ITL: 8, Latency: 900, ISL: 550, OSL: 100}
	if failed {
		r.Err = &metrics.Error{Code: 503, Type: "HTTPStatus", Message: "busy"}
		*v = metrics.Values{TTFT: math.NaN(), ITL: math.NaN(), Latency: 30, ISL: 550, OSL: math.NaN()}
	}
	return r, v, !failed
}

func snapshot() metrics.Snapshot {
	q := metrics.Quantiles{Count: 10, Avg: 120, P50: 110, P90: 150, P99: 190}
	return metrics.Snapshot{Elapsed: 5 * time.Second, Started: 12, Finished: 10, Failed: 1, InFlight: 2, OutputTokens: 1000,
		Run: map[string]metrics.Quantiles{"time_to_first_token": q}, Window: map[string]metrics.Quantiles{"time_to_first_token": q}, Stage: 1}
}

func TestExportsMetricsAndSpansWithGenAINames(t *testing.T) {
	t.Parallel()
	rcv := otlptest.New(t)
	mu, tu, err := otlp.Endpoints(rcv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	var wmu sync.Mutex
	e, err := otlp.New(mu, tu, snapshot, otlp.WithSpans(1), otlp.WithInterval(50*time.Millisecond),
		otlp.WithRun("run-1", "1.2.3"), otlp.WithResource(map[string]string{"deployment.environment": "ci"}),
		otlp.WithGenAI(otlp.GenAI{Operation: "chat", Provider: "openai", Model: "qwen", ServerAddress: "127.0.0.1", ServerPort: 8000}),
		otlp.WithOrigin(time.Unix(1700000000, 0)),
		otlp.WithWarning(func(s string) { wmu.Lock(); warnings = append(warnings, s); wmu.Unlock() }))
	if err != nil {
		t.Fatal(err)
	}
	for i := range int64(20) {
		e.WriteRecord(record(i, i == 7))
	}
	// Live metrics arrive while the run goes on.
	deadline := time.Now().Add(20 * time.Second)
	for m, _ := rcv.Exports(); m == 0; m, _ = rcv.Exports() {
		if time.Now().After(deadline) {
			t.Fatal("no live metric export within 20 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	sum := &metrics.Summary{Metrics: map[metrics.Tag]metrics.Distribution{
		metrics.TTFT: {Unit: "ms", Avg: 121, P50: 111, P99: 191, Count: 19}},
		Run: map[metrics.Tag]float64{metrics.RequestCount: 19, metrics.OutputTokenThroughput: 333}}
	st := e.Close(context.Background(), sum)
	if st.Records != 20 || st.Dropped != 0 || st.Spans != 20 || st.SpansFailed != 0 || st.SpansDropped != 0 || st.MetricFailures != 0 {
		t.Errorf("stats %+v: want 20 records, 20 spans, nothing dropped or failed", st)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings from a healthy collector: %q", warnings)
	}

	got := map[string][]otlptest.Point{}
	for _, m := range rcv.Metrics() {
		got[m.GetName()] = append(got[m.GetName()], m.Points()...)
		if m.Resource["service.name"] != "surge" || m.Resource["service.version"] != "1.2.3" || m.Resource["deployment.environment"] != "ci" {
			t.Errorf("%s: resource %v", m.GetName(), m.Resource)
		}
	}
	for _, name := range []string{"gen_ai.client.operation.duration", "gen_ai.client.token.usage", "gen_ai.client.operation.time_to_first_chunk",
		"gen_ai.client.operation.time_per_output_chunk", "surge.requests.started", "surge.requests.finished", "surge.requests.failed",
		"surge.requests.in_flight", "surge.output_tokens", "surge.time_to_first_token", "surge.request_count", "surge.output_token_throughput"} {
		if len(got[name]) == 0 {
			t.Errorf("no %s received", name)
		}
	}
	for _, p := range got["gen_ai.client.operation.duration"] {
		for _, k := range []string{"gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model", "server.address"} {
			if p.Attrs[k] == nil {
				t.Errorf("gen_ai.client.operation.duration point without %s: %v", k, p.Attrs)
			}
		}
	}
	var last otlptest.Point // the final export's TTFT p99 is the summary's
	for _, p := range got["surge.time_to_first_token"] {
		if p.Attrs["surge.statistic"] == "p99" && p.Attrs["surge.window"] == "run" {
			last = p
		}
	}
	if last.Value != 191 || last.Attrs["surge.run.id"] != "run-1" {
		t.Errorf("the last TTFT p99 sent: %+v, want the summary's 191 with the run's id", last)
	}
	var tokens = map[string]float64{}
	for _, p := range got["gen_ai.client.token.usage"] {
		tokens[p.Attrs["gen_ai.token.type"].(string)] = p.Sum
	}
	if tokens["input"] != 19*550 || tokens["output"] != 19*100 {
		t.Errorf("token usage sums %v, want input %d and output %d (the failed request left out)", tokens, 19*550, 19*100)
	}

	spans := rcv.Spans()
	if len(spans) != 20 {
		t.Fatalf("%d spans, want 20", len(spans))
	}
	for _, s := range spans {
		a := s.Attrs()
		if s.GetName() != "chat qwen" || a["gen_ai.request.model"] != "qwen" || a["gen_ai.operation.name"] != "chat" ||
			a["surge.run.id"] != "run-1" || a["surge.stage"] != int64(1) || a["gen_ai.usage.input_tokens"] != int64(550) {
			t.Errorf("span %q: attributes %v", s.GetName(), a)
		}
		if a["error.type"] == nil {
			if a["gen_ai.usage.output_tokens"] != int64(100) || a["gen_ai.response.time_to_first_chunk"] != 0.12 {
				t.Errorf("span of a successful request: %v", a)
			}
		} else if a["error.type"] != "503" || s.GetStatus().GetCode() != 2 {
			t.Errorf("span of the failed request: %v, status %v", a, s.GetStatus())
		}
		if d := time.Duration(s.GetEndTimeUnixNano() - s.GetStartTimeUnixNano()); d != time.Second {
			t.Errorf("span lasts %v, want the request's 1s", d)
		}
	}
}

func TestSpansAreSampledEvenly(t *testing.T) {
	t.Parallel()
	rcv := otlptest.New(t)
	mu, tu, _ := otlp.Endpoints(rcv.URL)
	e, err := otlp.New(mu, tu, snapshot, otlp.WithSpans(0.1), otlp.WithStreams(false, false))
	if err != nil {
		t.Fatal(err)
	}
	for i := range int64(1000) {
		e.WriteRecord(record(i, false))
	}
	st := e.Close(context.Background(), nil)
	if n := len(rcv.Spans()); n < 95 || n > 105 || st.Spans != int64(n) {
		t.Errorf("%d spans of 1000 requests at 0.1 (stats %+v), want about 100", n, st)
	}
	if m, _ := rcv.Exports(); m != 0 {
		t.Errorf("%d metric exports with both --stream domains off", m)
	}
}

// A collector that is not there is one warning, however many exports
// fail, and the exporter still ends within its bounds.
func TestDeadCollectorIsOneWarning(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	mu, tu, _ := otlp.Endpoints(addr)
	var mu2 sync.Mutex
	var warnings []string
	e, err := otlp.New(mu, tu, snapshot, otlp.WithSpans(1), otlp.WithInterval(20*time.Millisecond),
		otlp.WithWarning(func(s string) { mu2.Lock(); warnings = append(warnings, s); mu2.Unlock() }))
	if err != nil {
		t.Fatal(err)
	}
	for i := range int64(50) {
		e.WriteRecord(record(i, false))
	}
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	st := e.Close(context.Background(), nil)
	if took := time.Since(start); took > otlp.ExportTimeout {
		t.Errorf("Close took %v", took)
	}
	mu2.Lock()
	defer mu2.Unlock()
	if len(warnings) != 1 || !strings.Contains(warnings[0], addr) || !strings.Contains(warnings[0], "goes on without it") {
		t.Errorf("warnings %q, want one naming %s", warnings, addr)
	}
	if st.MetricFailures == 0 || st.MetricFailures != st.MetricExports || st.SpansFailed != st.Spans {
		t.Errorf("stats %+v: every export should have failed", st)
	}
}

// The shards never wait on the exporter: a full queue drops the record
// from the export, counted, and says so once.
func TestFullQueueDropsAndCounts(t *testing.T) {
	t.Parallel()
	rcv := otlptest.New(t)
	mu, tu, _ := otlp.Endpoints(rcv.URL)
	var warnings []string
	e, err := otlp.New(mu, tu, snapshot, otlp.WithSpans(1), otlp.WithQueue(1),
		otlp.WithWarning(func(s string) { warnings = append(warnings, s) }))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		for i := range int64(20000) {
			e.WriteRecord(record(i, false))
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("WriteRecord blocked")
	}
	st := e.Close(context.Background(), nil)
	if st.Records+st.Dropped != 20000 || st.Dropped == 0 {
		t.Fatalf("stats %+v: want every record counted, some dropped", st)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "left out of the export") {
		t.Errorf("warnings %q, want one reporting the drops", warnings)
	}
	if n := len(rcv.Spans()); int64(n) != st.Spans || int64(n)+st.SpansDropped != st.Records {
		t.Errorf("%d spans received, stats %+v", n, st)
	}
	if !slices.ContainsFunc(rcv.Metrics(), func(m otlptest.Metric) bool { return m.GetName() == "surge.requests.finished" }) {
		t.Error("no final metrics")
	}
}

func FuzzEndpoints(f *testing.F) {
	for _, s := range []string{"collector:4318", "https://c/v1/metrics", "http://[::1]:4318/p/", "grpc://c", "http://u:p@c", "", "::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, tr, err := otlp.Endpoints(s)
		if err != nil {
			return
		}
		if !strings.HasSuffix(m, "/v1/metrics") || !strings.HasSuffix(tr, "/v1/traces") ||
			strings.TrimSuffix(m, "/v1/metrics") != strings.TrimSuffix(tr, "/v1/traces") ||
			!strings.HasPrefix(m, "http://") && !strings.HasPrefix(m, "https://") {
			t.Fatalf("Endpoints(%q) = %q, %q", s, m, tr)
		}
	})
}
