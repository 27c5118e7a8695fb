package loadgen

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// eventReader hands out one SSE event (up to and including its blank
// line) per Read and counts the Reads, so a clock that returns the count
// stamps each event with its 1-based position in the stream.
type eventReader struct {
	rest  []byte
	reads int64
}

func (r *eventReader) Read(p []byte) (int, error) {
	if len(r.rest) == 0 {
		return 0, io.EOF
	}
	n := bytes.Index(r.rest, []byte("\n\n"))
	if n < 0 {
		n = len(r.rest)
	} else {
		n += 2
	}
	n = copy(p, r.rest[:n])
	r.rest = r.rest[n:]
	r.reads++
	return n, nil
}

// TestRealServerStreams reads each server's stream shape (testdata/streams,
// see its README) through the generator's own stream reader and checks
// which event is the first token, what OSL and text come out, and that the
// stream ends cleanly: also with its [DONE] cut off, which only a seen
// finish_reason makes a complete answer.
func TestRealServerStreams(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file string
		// firstToken and firstContent are 1-based event positions; 0: none.
		firstToken, firstContent int64
		events                   int // text-carrying events
		osl                      float64
		text, reasoning          string
	}{
		// No role chunk: the very first event is a token.
		{file: "llamacpp.sse", firstToken: 1, firstContent: 1, events: 3, osl: 3, text: "Hello there!"},
		// The role-only first chunk is not a token; the usage-only chunk
		// after the finish gives OSL.
		{file: "vllm.sse", firstToken: 2, firstContent: 2, events: 3, osl: 3, text: "Hello there!"},
		// Null-filled deltas are not tokens; reasoning comes first.
		{file: "sglang.sse", firstToken: 2, firstContent: 3, events: 3, osl: 4, text: "Hello there!", reasoning: "Greet"},
		// role on every delta: the first chunk carries text and is a token.
		{file: "tgi.sse", firstToken: 1, firstContent: 1, events: 3, osl: 3, text: "Hello there!"},
		{file: "ollama.sse", firstToken: 1, firstContent: 1, events: 3, osl: 3, text: "Hello there!"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			full, err := os.ReadFile(filepath.Join("testdata", "streams", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			noDone, ok := bytes.CutSuffix(full, []byte("data: [DONE]\n\n"))
			if !ok {
				t.Fatalf("%s does not end with data: [DONE]", tc.file)
			}
			for _, b := range [][]byte{full, noDone} {
				rec := readFixture(t, b)
				if rec.Err != nil {
					t.Fatalf("error %+v (with [DONE]: %v)", rec.Err, len(b) == len(full))
				}
				var first int64
				if len(rec.TokenNs) > 0 {
					first = rec.TokenNs[0]
				}
				v := metrics.Compute(rec, nil)
				got := []any{first, rec.FirstContentNs, len(rec.TokenNs), v.OSL, v.Source, rec.Text, rec.ReasoningText}
				want := []any{tc.firstToken, tc.firstContent, tc.events, tc.osl, metrics.SourceUsage, tc.text, tc.reasoning}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("[first token event, first content event, token events, OSL, source, text, reasoning] (-want +got):\n%s", d)
				}
			}
		})
	}
}

// TestServerErrorStreams serves each engine's in-stream failure
// (testdata/streams, see its README: real llama.cpp captures, the others
// written from each server's source) to a run and checks that every
// request is an error record with the server's code, type and message,
// out of the latency metrics and of goodput, in the error summary, and
// that the raw capture keeps the error as the server sent it. Before
// surge read them, the llama.cpp error field, SGLang's abort and the empty
// stream counted as successes with no tokens (good, in goodput).
func TestServerErrorStreams(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file  string
		kind  endpoint.Kind
		code  int
		typ   string
		msg   string // the message, or its start
		texts int    // text events read before the failure
		raw   string // the raw capture's error event: "error" (a field line) or its SSE type
	}{
		{"llamacpp-b4747-error-context.sse", endpoint.Chat, 400, ErrContextOverflow, "the request exceeds the available context size", 0, "error-field"},
		{"llamacpp-b4747-error-midstream.sse", endpoint.Chat, 500, "server_error", "context shift is disabled", 53, "error-field"},
		{"vllm-error.sse", endpoint.Chat, 500, "InternalServerError", "Internal server error", 1, ""},
		{"sglang-error.sse", endpoint.Chat, 503, "SERVICE_UNAVAILABLE", "The request is aborted by the scheduler: out of memory", 0, ""},
		{"sglang-abort.sse", endpoint.Chat, 200, endpoint.ErrFinishAbort, `the server aborted the answer (finish_reason "abort")`, 1, ""},
		{"tgi-error.sse", endpoint.Chat, 422, endpoint.ErrStreamResponse, "Request failed during generation: Server error: CUDA out of memory", 1, ""},
		{"ollama-error.sse", endpoint.Chat, 200, ErrStream, "stream ended without [DONE] or a finish_reason", 1, ""},
		{"anthropic-error.sse", endpoint.Messages, 200, "overloaded_error", "Overloaded", 1, "error"},
		{"responses-failed.sse", endpoint.Responses, 200, "server_error", "The model failed to generate a response.", 1, "response.failed"},
		{"vllm-empty.sse", endpoint.Chat, 200, metrics.ErrEmptyResponse, "the response ended without any output", 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			body, err := os.ReadFile(filepath.Join("testdata", "streams", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				w.Write(body)
			}))
			defer srv.Close()
			slos, err := metrics.ParseGoodput("time_to_first_token:100000")
			if err != nil {
				t.Fatal(err)
			}
			sink := &collectSink{}
			col := metrics.NewCollector(metrics.WithSink(sink), metrics.WithGoodput(slos))
			g, err := New(srv.URL, &endpoint.Endpoint{Kind: tc.kind, Model: "m", Streaming: true}, testDataset(t, 4), col,
				WithRawCapture(), WithoutCapGuard())
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Run(context.Background(), []Stage{{Limit: schedule.Constant(2), Count: 4}}); err != nil {
				t.Fatal(err)
			}
			s := col.Close()
			if len(sink.recs) != 4 {
				t.Fatalf("%d records, want 4", len(sink.recs))
			}
			for _, r := range sink.recs {
				if r.Err == nil {
					t.Fatalf("a success with %d text events: %q", len(r.TokenNs), r.Text)
				}
				if r.Err.Code != tc.code || r.Err.Type != tc.typ || !strings.HasPrefix(r.Err.Message, tc.msg) {
					t.Errorf("error %d %q %q, want %d %q %q…", r.Err.Code, r.Err.Type, r.Err.Message, tc.code, tc.typ, tc.msg)
				}
				if len(r.TokenNs) != tc.texts {
					t.Errorf("%d text events before the failure, want %d", len(r.TokenNs), tc.texts)
				}
				if tc.raw != "" && !rawHasError(r.Raw, tc.raw) {
					t.Errorf("the raw capture's %d events lost the error event %q", len(r.Raw.Events), tc.raw)
				}
			}
			if s.Run[metrics.ErrorRequestCount] != 4 || s.Run[metrics.RequestCount] != 0 || s.Run[metrics.GoodRequestCount] != 0 {
				t.Errorf("summary: %v errors, %v successes, %v good; want 4, 0, 0", s.Run[metrics.ErrorRequestCount], s.Run[metrics.RequestCount], s.Run[metrics.GoodRequestCount])
			}
			if _, ok := s.Metrics[metrics.TTFT]; ok {
				t.Errorf("failed requests gave a TTFT distribution: %+v", s.Metrics[metrics.TTFT])
			}
			if len(s.Errors) != 1 || s.Errors[0].Count != 4 || s.Errors[0].Details.Type != tc.typ {
				t.Errorf("error summary %+v, want one row of 4 %q", s.Errors, tc.typ)
			}
		})
	}
}

// rawHasError reports whether raw holds the error event: want "error-field"
// for llama.cpp's field line, else the event's SSE type.
func rawHasError(raw *metrics.RawExchange, want string) bool {
	if raw == nil {
		return false
	}
	for _, e := range raw.Events {
		if (want == "error-field" && e.ErrorField) || (want != "error-field" && e.Type == want) {
			return true
		}
	}
	return false
}

// readFixture reads the SSE stream b as a streamed chat answer, an event
// a read, on a clock that counts the reads.
func readFixture(t *testing.T, b []byte) *metrics.Record {
	t.Helper()
	col := metrics.NewCollector()
	defer col.Close()
	g, err := New("http://127.0.0.1:1", chat(true), testDataset(t, 1), col)
	if err != nil {
		t.Fatal(err)
	}
	body := &eventReader{rest: b}
	g.now = func() int64 { return body.reads }
	rec := &metrics.Record{Streamed: true}
	g.readStream(context.Background(), context.Background(), body, "text/event-stream", rec, &prefillSlot{})
	return rec
}
