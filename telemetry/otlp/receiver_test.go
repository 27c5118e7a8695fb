package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/surgebench/surge/metrics"
)

// vllmSpan is a request span as vLLM's output processor makes it
// (vllm/tracing.py's SpanAttributes; seconds as doubles, counts as ints).
func vllmSpan(trace string, queue, ttft, e2e, prefill, decode float64) *tracepb.Span {
	id, _ := hex.DecodeString(trace)
	d := func(k string, v float64) *commonpb.KeyValue {
		return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v}}}
	}
	i := func(k string, v int64) *commonpb.KeyValue {
		return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v}}}
	}
	s := func(k, v string) *commonpb.KeyValue {
		return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
	}
	return &tracepb.Span{TraceId: id, SpanId: []byte{1, 2, 3, 4, 5, 6, 7, 8}, Name: "llm_request", Kind: tracepb.Span_SPAN_KIND_SERVER,
		Attributes: []*commonpb.KeyValue{
			s("gen_ai.response.model", "m"), s("gen_ai.request.id", "chatcmpl-"+trace),
			d("gen_ai.request.temperature", 1), i("gen_ai.request.max_tokens", 128), i("gen_ai.usage.prompt_tokens", 512),
			i("gen_ai.usage.completion_tokens", 128),
			d(AttrQueue, queue), d(AttrFirstToken, ttft), d(AttrE2E, e2e), d(AttrPrefill, prefill), d(AttrDecode, decode),
			d("gen_ai.latency.time_in_model_inference", prefill+decode),
		}}
}

func export(spans ...*tracepb.Span) []byte {
	b, err := proto.Marshal(&tracepb.TracesData{ResourceSpans: []*tracepb.ResourceSpans{{
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans}},
	}}})
	if err != nil {
		panic(err)
	}
	return b
}

func post(t *testing.T, url, ct, enc string, body []byte) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", ct)
	if enc != "" {
		req.Header.Set("Content-Encoding", enc)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func traceID(t *testing.T, s string) [16]byte {
	id, ok := metrics.TraceID(s)
	if !ok {
		t.Fatalf("trace id %q", s)
	}
	return id
}

// A vLLM span, sent as protobuf (plain and gzip) or JSON, gives its
// request's queue, prefill, decode, time to first token and whole time,
// taken once by the request's trace id.
func TestReceiverVLLMSpans(t *testing.T) {
	t.Parallel()
	r := New()
	srv := httptest.NewServer(r)
	defer srv.Close()
	const a, b = "5b8efff798038103d269b633813fc60c", "0af7651916cd43dd8448eb211c80319c"
	if code := post(t, srv.URL+Path, "application/x-protobuf", "", export(vllmSpan(a, 0.0123, 0.0571, 0.5, 0.0432, 0.4429))); code != 200 {
		t.Fatalf("protobuf export: %d", code)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, _ = zw.Write(export(vllmSpan(b, 0, 0.02, 0.1, 0.02, 0.08)))
	_ = zw.Close()
	if code := post(t, srv.URL+Path, "application/x-protobuf", "gzip", z.Bytes()); code != 200 {
		t.Fatalf("gzip export: %d", code)
	}
	got, ok := r.Take(traceID(t, a))
	want := metrics.ServerTiming{Source: metrics.TimingOTLP,
		Has:   metrics.ServerQueue | metrics.ServerPrefill | metrics.ServerDecode | metrics.ServerFirstToken | metrics.ServerTotal,
		Queue: 12_300_000, Prefill: 43_200_000, Decode: 442_900_000, FirstToken: 57_100_000, Total: 500_000_000}
	if !ok || got != want {
		t.Errorf("span a: %+v (%v), want %+v", got, ok, want)
	}
	if _, again := r.Take(traceID(t, a)); again {
		t.Error("a span was taken twice")
	}
	if got, ok := r.Take(traceID(t, b)); !ok || got.Queue != 0 || got.Has&metrics.ServerQueue == 0 || got.Decode != 80_000_000 {
		t.Errorf("span b: %+v (%v)", got, ok)
	}
	// The JSON encoding, as an OTLP/HTTP JSON exporter sends it: the
	// span without gen_ai.latency.* attributes is not kept.
	js, err := os.ReadFile("testdata/vllm_spans.json")
	if err != nil {
		t.Fatal(err)
	}
	if code := post(t, srv.URL+Path, "application/json", "", js); code != 200 {
		t.Fatalf("JSON export: %d", code)
	}
	if got, ok := r.Take(traceID(t, a)); !ok || got != want {
		t.Errorf("JSON span: %+v (%v), want %+v", got, ok, want)
	}
	st := r.Stats()
	if st.Exports != 3 || st.Spans != 4 || st.Timed != 3 || st.Refused != 0 {
		// Four spans read, three with a request's timing (the JSON's
		// http_request span has none); each kept once (its request id
		// names the same id as its trace).
		t.Errorf("stats %+v", st)
	}
}

// A span whose trace is not surge's (the server did not take the
// traceparent) still joins by the request id vLLM names it with:
// "chatcmpl-" and the X-Request-Id surge sent.
func TestReceiverJoinsByRequestID(t *testing.T) {
	t.Parallel()
	r := New()
	sp := vllmSpan("0af7651916cd43dd8448eb211c80319c", 0.01, 0.02, 0.1, 0.01, 0.08)
	rid := "1234567890abcdef1234567890abcdef"
	sp.Attributes[1].Value = &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "chatcmpl-" + rid}}
	if _, err := r.readProto(export(sp)); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Take(traceID(t, rid)); !ok {
		t.Error("not found by its request id")
	}
}

// What no exporter sends is refused with a client error, within the
// bounds; the store keeps at most MaxKept timings, the oldest dropped.
func TestReceiverRefusesAndBounds(t *testing.T) {
	t.Parallel()
	r := New()
	srv := httptest.NewServer(r)
	defer srv.Close()
	for _, tc := range []struct {
		name, path, ct, enc string
		body                []byte
		want                int
	}{
		{"garbage", Path, "application/x-protobuf", "", []byte("\xff\xff\xff\xff garbage"), 400},
		{"not JSON", Path, "application/json", "", []byte("{"), 400},
		{"over the bound", Path, "application/x-protobuf", "", bytes.Repeat([]byte{0}, MaxBody+1), 413},
		{"a gzip bomb", Path, "application/x-protobuf", "gzip", gzipped(bytes.Repeat([]byte{0}, MaxBody+1)), 413},
		{"bad gzip", Path, "application/x-protobuf", "gzip", []byte("not gzip"), 400},
		{"unknown encoding", Path, "application/x-protobuf", "br", []byte{}, 400},
		{"elsewhere", "/v1/metrics", "application/x-protobuf", "", []byte{}, 404},
	} {
		if got := post(t, srv.URL+tc.path, tc.ct, tc.enc, tc.body); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	resp, err := http.Get(srv.URL + Path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", resp.StatusCode)
	}
	if st := r.Stats(); st.Refused != 8 {
		t.Errorf("refused %d, want 8", st.Refused)
	}
	timing := metrics.ServerTiming{Source: metrics.TimingOTLP, Has: metrics.ServerQueue}
	id := func(i int) [16]byte {
		var b [16]byte
		b[0], b[1], b[2], b[15] = byte(i), byte(i>>8), byte(i>>16), 1
		return b
	}
	for i := range MaxKept + 10 {
		r.keep(id(i), timing)
	}
	if st := r.Stats(); st.Dropped != 10 {
		t.Errorf("dropped %d, want 10", st.Dropped)
	}
	if _, ok := r.Take(id(0)); ok {
		t.Error("the oldest was kept past the bound")
	}
	if _, ok := r.Take(id(MaxKept + 9)); !ok {
		t.Error("the newest was dropped")
	}
}

func gzipped(b []byte) []byte {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return z.Bytes()
}

// Start listens on the address, the URL names it, and the context's end
// stops it.
func TestReceiverStart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	r, err := Start(ctx, ":0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.URL(), "http://127.0.0.1:") || !strings.HasSuffix(r.URL(), Path) {
		t.Errorf("URL %s", r.URL())
	}
	if code := post(t, r.URL(), "application/x-protobuf", "", export()); code != 200 {
		t.Errorf("empty export: %d", code)
	}
	cancel()
	select {
	case <-r.done:
	case <-time.After(5 * time.Second):
		t.Fatal("still serving after its context ended")
	}
	if _, err := Start(context.Background(), "nonsense"); err == nil {
		t.Error("an address without a port was taken")
	}
}

// FuzzReceiverBody: no body, protobuf or JSON, panics the receiver, and
// what it keeps is believable.
func FuzzReceiverBody(f *testing.F) {
	f.Add(export(vllmSpan("5b8efff798038103d269b633813fc60c", 0.01, 0.02, 0.1, 0.01, 0.08)), false)
	if js, err := os.ReadFile("testdata/vllm_spans.json"); err == nil {
		f.Add(js, true)
	}
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz","attributes":[{"key":"gen_ai.latency.e2e","value":{"intValue":"-5"}}]}]}]}]}`), true)
	f.Fuzz(func(t *testing.T, body []byte, js bool) {
		r := New()
		if js {
			_, _ = r.readJSON(body)
		} else {
			_, _ = r.readProto(body)
		}
		for id, tm := range r.kept {
			if id == ([16]byte{}) || tm.Source != metrics.TimingOTLP || tm.Has == 0 {
				t.Fatalf("kept %x: %+v", id, tm)
			}
			for _, d := range []int64{tm.Queue, tm.Prefill, tm.Decode, tm.FirstToken, tm.Total} {
				if d < 0 {
					t.Fatalf("a negative duration kept: %+v", tm)
				}
			}
		}
	})
}
