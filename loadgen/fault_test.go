package loadgen

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// Fault tests: servers on 127.0.0.1 that misbehave on purpose. Every case
// checks that the run finishes, that each failed request is exactly one
// error record carrying a code, a type and a message, that the error
// summary groups them, and that the successful requests next to them are
// unaffected. (generator_test.go covers connection refused, 404, non-SSE
// bodies, a cut stream, a bad JSON chunk, a first-byte timeout and 500 with
// Retry-After; they are not repeated here.)

// tokenEvent is one OpenAI chat chunk carrying content.
func tokenEvent(content string) string {
	return fmt.Sprintf("data: {\"choices\":[{\"delta\":{\"content\":%q}}]}\n\n", content)
}

const finishEvents = "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"

// rawStream answers every request with body as an SSE stream, flushed once.
func rawStream(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	})
}

// goodStream sends n content events and a proper ending.
func goodStream(w http.ResponseWriter, n int) {
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	for i := range n {
		_, _ = io.WriteString(w, tokenEvent(fmt.Sprintf(" t%d", i)))
		fl.Flush()
	}
	_, _ = io.WriteString(w, finishEvents)
}

// resetAfter writes the response headers and n content events, then
// aborts the connection with a TCP RST (linger 0) instead of a FIN.
func resetAfter(t *testing.T, w http.ResponseWriter, n int) {
	conn, bw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	fmt.Fprint(bw, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
	for i := range n {
		fmt.Fprint(bw, tokenEvent(fmt.Sprintf(" t%d", i)))
	}
	_ = bw.Flush()
	// Give the client time to read the events before the reset discards
	// whatever is still unread in its socket buffer (generous: a loaded
	// machine can leave the reading goroutine unscheduled for a while).
	time.Sleep(200 * time.Millisecond)
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

func checkOneErrorRecordEach(t *testing.T, sink *collectSink, want int) {
	t.Helper()
	if len(sink.recs) != want {
		t.Fatalf("%d records, want one per request (%d)", len(sink.recs), want)
	}
	for _, r := range sink.recs {
		if r.Err != nil && (r.Err.Type == "" || r.Err.Message == "") {
			t.Errorf("error record without type or message: %+v", r.Err)
		}
	}
}

func TestHTTPErrorBodies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		status     int
		retryAfter string
		body       string
		want       metrics.Error
	}{
		{"429 rate limited (OpenAI body)", 429, "7",
			`{"error":{"message":"Rate limit reached for requests","type":"rate_limit_exceeded","code":"rate_limit_exceeded"}}`,
			metrics.Error{Code: 429, Type: "rate_limit_exceeded", Message: "Rate limit reached for requests"}},
		{"503 overloaded (vLLM body)", 503, "30",
			`{"object":"error","message":"The server is overloaded","type":"ServiceUnavailableError","param":null,"code":503}`,
			metrics.Error{Code: 503, Type: "ServiceUnavailableError", Message: "The server is overloaded"}},
		{"500 internal (OpenAI body)", 500, "",
			`{"error":{"message":"CUDA out of memory","type":"server_error","code":500}}`,
			metrics.Error{Code: 500, Type: "server_error", Message: "CUDA out of memory"}},
		{"503 FastAPI detail body", 503, "",
			`{"detail":"Service Unavailable: model loading"}`,
			metrics.Error{Code: 503, Type: "Service Unavailable", Message: "Service Unavailable: model loading"}},
		{"502 from a proxy, plain text", 502, "",
			"upstream connect error or disconnect/reset before headers",
			metrics.Error{Code: 502, Type: "Bad Gateway", Message: "upstream connect error or disconnect/reset before headers"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer ts.Close()
			s, sink := runOnce(t, ts.URL, chat(true), []Stage{{Limit: schedule.Constant(2), Count: 5}})
			checkOneErrorRecordEach(t, sink, 5)
			for _, r := range sink.recs {
				if diff := cmp.Diff(tc.want, *r.Err); diff != "" {
					t.Errorf("error record (-want +got):\n%s", diff)
				}
				if r.RetryAfter != tc.retryAfter {
					t.Errorf("Retry-After %q recorded, want %q", r.RetryAfter, tc.retryAfter)
				}
			}
			if diff := cmp.Diff([]metrics.ErrorCount{{Details: tc.want, Count: 5}}, s.Errors); diff != "" {
				t.Errorf("error summary (-want +got):\n%s", diff)
			}
			if s.Run[metrics.ErrorRequestCount] != 5 || s.Run[metrics.RequestCount] != 0 {
				t.Errorf("ok %v err %v, want 0/5", s.Run[metrics.RequestCount], s.Run[metrics.ErrorRequestCount])
			}
		})
	}
}

func TestResetMidStream(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		resetAfter(t, w, 3)
	}))
	defer ts.Close()
	s, sink := runOnce(t, ts.URL, chat(true), []Stage{{Limit: schedule.Constant(2), Count: 4}})
	checkOneErrorRecordEach(t, sink, 4)
	want := metrics.Error{Code: 200, Type: ErrStream, Message: "connection reset by the server mid-stream"}
	if diff := cmp.Diff([]metrics.ErrorCount{{Details: want, Count: 4}}, s.Errors); diff != "" {
		t.Errorf("error summary (-want +got):\n%s", diff)
	}
	for _, r := range sink.recs {
		// The tokens that did arrive are kept on the record (for debugging
		// the JSONL), but the request counts as failed.
		if len(r.TokenNs) != 3 {
			t.Errorf("%d token events before the reset, want 3", len(r.TokenNs))
		}
	}
}

// TestMixedFaultsLeaveSuccessesUnaffected interleaves 429s, resets and
// good streams from one server: the good ones must measure exactly as
// they would alone.
func TestMixedFaultsLeaveSuccessesUnaffected(t *testing.T) {
	t.Parallel()
	const tokens, ttft = 6, 15 * time.Millisecond
	var n atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch n.Add(1) % 4 {
		case 0:
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(429)
			_, _ = io.WriteString(w, `{"error":{"message":"slow down","type":"rate_limit_exceeded","code":429}}`)
		case 1:
			resetAfter(t, w, 2)
		default:
			time.Sleep(ttft)
			goodStream(w, tokens)
		}
	}))
	defer ts.Close()
	s, sink := runOnce(t, ts.URL, chat(true), []Stage{{Limit: schedule.Constant(4), Count: 40}})
	checkOneErrorRecordEach(t, sink, 40)
	if s.Run[metrics.RequestCount] != 20 || s.Run[metrics.ErrorRequestCount] != 20 {
		t.Fatalf("ok %v err %v, want 20/20 (errors %+v)", s.Run[metrics.RequestCount], s.Run[metrics.ErrorRequestCount], s.Errors)
	}
	wantErrs := map[string]int64{"rate_limit_exceeded": 10, ErrStream: 10}
	gotErrs := map[string]int64{}
	for _, e := range s.Errors {
		gotErrs[e.Details.Type] += e.Count
	}
	if diff := cmp.Diff(wantErrs, gotErrs); diff != "" {
		t.Errorf("error summary by type (-want +got):\n%s", diff)
	}
	if osl := s.Metrics[metrics.OSL]; osl.Min != tokens || osl.Max != tokens || osl.Count != 20 {
		t.Errorf("OSL %v..%v over %d requests, want %d over 20: failed requests leaked into the distribution",
			osl.Min, osl.Max, osl.Count, tokens)
	}
	if ttftD := s.Metrics[metrics.TTFT]; ttftD.Min < 15 || ttftD.Count != 20 {
		t.Errorf("TTFT min %.2f ms over %d, want ≥ 15 ms over 20 (the failed requests have no TTFT)", ttftD.Min, ttftD.Count)
	}
	if got := s.Run[metrics.TotalOutputTokens]; got != 20*tokens {
		t.Errorf("total_output_tokens %v, want %d", got, 20*tokens)
	}
	for i, r := range sink.recs {
		if r.Err == nil && (sink.vals[i].OSL != tokens || len(r.TokenNs) != tokens) {
			t.Errorf("successful record with OSL %v and %d events, want %d", sink.vals[i].OSL, len(r.TokenNs), tokens)
		}
	}
}

// TestMalformedSSE covers the SSE framing a real server (or proxy) may
// produce. Framing the spec allows must parse into the right token count;
// streams with no usable events must fail with a clear error.
func TestMalformedSSE(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("x", 1<<20+512) // one data line > 1 MiB
	cases := []struct {
		name     string
		body     string
		wantOSL  int
		wantText string
		wantErr  *metrics.Error
	}{
		{name: "CRLF line ends",
			body:    strings.ReplaceAll(tokenEvent("a")+tokenEvent("b")+tokenEvent("c")+finishEvents, "\n", "\r\n"),
			wantOSL: 3, wantText: "abc"},
		{name: "CR-only line ends",
			body:    strings.ReplaceAll(tokenEvent("a")+tokenEvent("b")+finishEvents, "\n", "\r"),
			wantOSL: 2, wantText: "ab"},
		{name: "comments and keep-alives between events",
			body:    ": ping\n\n" + tokenEvent("a") + ": keep-alive\n" + tokenEvent("b") + ":\n\n" + finishEvents,
			wantOSL: 2, wantText: "ab"},
		{name: "multi-line data joined with newlines",
			body:    "data: {\"choices\":[{\"delta\":\ndata: {\"content\":\"a\"}}]}\n\n" + tokenEvent("b") + finishEvents,
			wantOSL: 2, wantText: "ab"},
		{name: "event: and id: fields are ignored",
			body:    "event: message\nid: 1\n" + tokenEvent("a") + "retry: 10\n" + tokenEvent("b") + finishEvents,
			wantOSL: 2, wantText: "ab"},
		{name: "data line over 1 MiB",
			body:    tokenEvent("a") + tokenEvent(huge) + tokenEvent("b") + finishEvents,
			wantOSL: 3, wantText: "a" + huge + "b"},
		{name: "some lines missing the data: prefix are skipped",
			body:    "{\"choices\":[{\"delta\":{\"content\":\"lost\"}}]}\n\n" + tokenEvent("a") + finishEvents,
			wantOSL: 1, wantText: "a"},
		{name: "no line has the data: prefix",
			body:    "{\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n{\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n[DONE]\n\n",
			wantErr: &metrics.Error{Code: 200, Type: ErrStream, Message: "stream ended without [DONE] or a finish_reason"}},
		{name: "data is not JSON",
			body:    "data: hello world\n\n" + finishEvents,
			wantErr: &metrics.Error{Code: 200, Type: ErrInvalidResponse}},
		{name: "error object inside the stream",
			body:    tokenEvent("a") + "data: {\"error\":{\"message\":\"engine died\",\"type\":\"internal_error\",\"code\":500}}\n\n",
			wantErr: &metrics.Error{Code: 500, Type: "internal_error", Message: "engine died"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(rawStream(tc.body))
			defer ts.Close()
			s, sink := runOnce(t, ts.URL, chat(true), []Stage{{Limit: schedule.Constant(2), Count: 3}})
			checkOneErrorRecordEach(t, sink, 3)
			if tc.wantErr != nil {
				if len(s.Errors) != 1 || s.Errors[0].Count != 3 {
					t.Fatalf("error summary %+v, want one group of 3", s.Errors)
				}
				got := s.Errors[0].Details
				if tc.wantErr.Message == "" {
					got.Message = "" // the decoder's wording is its own; it only must not be empty
				}
				if diff := cmp.Diff(*tc.wantErr, got); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				return
			}
			if len(s.Errors) != 0 {
				t.Fatalf("errors %+v, want none", s.Errors)
			}
			for i, r := range sink.recs {
				if sink.vals[i].OSL != float64(tc.wantOSL) || r.Text != tc.wantText {
					t.Errorf("OSL %v text %.40q (%d bytes), want %d and %.40q (%d bytes)",
						sink.vals[i].OSL, r.Text, len(r.Text), tc.wantOSL, tc.wantText, len(tc.wantText))
				}
			}
		})
	}
}

// TestByteAtATimeStream: a server that flushes every byte separately must
// still produce exactly its events, each timed when its first byte came.
func TestByteAtATimeStream(t *testing.T) {
	t.Parallel()
	body := tokenEvent("a") + tokenEvent("b") + tokenEvent("c") + finishEvents
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for i := range len(body) {
			_, _ = io.WriteString(w, body[i:i+1])
			fl.Flush()
		}
	}))
	defer ts.Close()
	s, sink := runOnce(t, ts.URL, chat(true), []Stage{{Limit: schedule.Constant(2), Count: 4}})
	checkOneErrorRecordEach(t, sink, 4)
	if len(s.Errors) != 0 || s.Metrics[metrics.OSL].Min != 3 || s.Metrics[metrics.OSL].Max != 3 {
		t.Errorf("errors %+v, OSL %+v; want no errors and OSL 3", s.Errors, s.Metrics[metrics.OSL])
	}
	for _, r := range sink.recs {
		if r.Text != "abc" {
			t.Errorf("text %q, want abc", r.Text)
		}
	}
}

// TestTrickleServerTimesOut: one byte a second after the headers never
// finishes an event; --request-timeout-seconds must end the request with
// a timeout record, and the run must not wait for the server.
func TestTrickleServerTimesOut(t *testing.T) {
	t.Parallel()
	body := tokenEvent("never finished")
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		fl.Flush()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for i := 0; i < len(body); i++ {
			_, _ = io.WriteString(w, body[i:i+1])
			fl.Flush()
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
			}
		}
	}))
	defer ts.Close()
	began := time.Now()
	s, sink := runOnce(t, ts.URL, chat(true), []Stage{{Limit: schedule.Constant(3), Count: 3}},
		WithRequestTimeout(1500*time.Millisecond))
	if took := time.Since(began); took > 4*time.Second {
		t.Errorf("run took %s with a 1.5 s request timeout", took)
	}
	checkOneErrorRecordEach(t, sink, 3)
	want := metrics.Error{Code: 200, Type: ErrTimeout, Message: "response not finished within 1.5s (--request-timeout-seconds)"}
	if diff := cmp.Diff([]metrics.ErrorCount{{Details: want, Count: 3}}, s.Errors); diff != "" {
		t.Errorf("error summary (-want +got):\n%s", diff)
	}
	for _, r := range sink.recs {
		if d := time.Duration(r.EndNs - r.SentNs); d < 1400*time.Millisecond || d > 3*time.Second {
			t.Errorf("failed after %s, want ≈ the 1.5 s timeout", d)
		}
	}
}

// TestShortBody: a response whose connection closes before the length its
// Content-Length declared says so, streamed or whole; a chunked stream cut
// inside an event still says that.
func TestShortBody(t *testing.T) {
	t.Parallel()
	events := tokenEvent(" a") + tokenEvent(" b")
	whole := `{"choices":[{"message":{"content":"hello"},"finish_reason":"stop"}]}`
	cases := []struct {
		name      string
		streaming bool
		head      string // the response head, without its blank line
		body      string
		want      string
	}{
		{"SSE with a Content-Length", true, "Content-Type: text/event-stream\r\nContent-Length: 4096", events,
			fmt.Sprintf("connection closed before the Content-Length was reached (%d of 4096 bytes)", len(events))},
		{"JSON with a Content-Length", false, "Content-Type: application/json\r\nContent-Length: 4096", whole,
			fmt.Sprintf("connection closed before the Content-Length was reached (%d of 4096 bytes)", len(whole))},
		{"SSE cut inside an event, no length", true, "Content-Type: text/event-stream\r\nConnection: close", events + "data: {\"choi",
			"stream cut in the middle of an event"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				conn, bw, err := http.NewResponseController(w).Hijack()
				if err != nil {
					t.Errorf("hijack: %v", err)
					return
				}
				fmt.Fprintf(bw, "HTTP/1.1 200 OK\r\n%s\r\n\r\n%s", tc.head, tc.body)
				_ = bw.Flush()
				_ = conn.Close()
			}))
			defer ts.Close()
			s, sink := runOnce(t, ts.URL, chat(tc.streaming), []Stage{{Limit: schedule.Constant(1), Count: 2}})
			checkOneErrorRecordEach(t, sink, 2)
			want := metrics.Error{Code: 200, Type: ErrStream, Message: tc.want}
			if diff := cmp.Diff([]metrics.ErrorCount{{Details: want, Count: 2}}, s.Errors); diff != "" {
				t.Errorf("error summary (-want +got):\n%s", diff)
			}
		})
	}
}
