package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// streamServer is an OpenAI-style SSE server with known timing: tokens are
// due at arrival+ttft+i*itl (absolute deadlines, so the server's own
// scheduling does not drift).
type streamServer struct {
	ttft, itl time.Duration
	tokens    int
	reasoning int
	failEvery int // every n-th request answers 500 (0: never)
	// onRequest, when set, sees each request's arrival number (from 1).
	onRequest  func(n int64)
	requests   atomic.Int64
	mu         sync.Mutex
	lastBodies []map[string]any
	// writes holds, per X-Request-ID, when the handler began and when it
	// began writing each token event: what the server really did, against
	// which the client's timing is judged. Stamps are taken before each
	// write, so the client cannot have read an event before its stamp.
	writes map[string]*serverTimes
}

// serverTimes is one request as the server saw it.
type serverTimes struct {
	arrival time.Time
	tokens  []time.Time
}

func (s *streamServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	st := &serverTimes{arrival: time.Now()}
	n := s.requests.Add(1)
	if s.onRequest != nil {
		s.onRequest(n)
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error","code":400}}`, 400)
		return
	}
	s.mu.Lock()
	s.lastBodies = append(s.lastBodies, body)
	s.mu.Unlock()
	if s.failEvery > 0 && n%int64(s.failEvery) == 0 {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(500)
		fmt.Fprint(w, `{"error":{"message":"injected","type":"server_error","code":500}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n")
	fl.Flush()
	for i := range s.tokens {
		due := st.arrival.Add(s.ttft + time.Duration(i)*s.itl)
		t := time.NewTimer(time.Until(due))
		select {
		case <-r.Context().Done(): // the client left: do not hold Close up
			t.Stop()
			return
		case <-t.C:
		}
		field := "content"
		if i < s.reasoning {
			field = "reasoning_content"
		}
		st.tokens = append(st.tokens, time.Now())
		fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{%q:\" tok%d\"}}]}\n\n", field, i)
		fl.Flush()
	}
	fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\n")
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":%d}}\n\n", s.tokens)
	fmt.Fprint(w, "data: [DONE]\n\n")
	s.mu.Lock()
	if s.writes == nil {
		s.writes = map[string]*serverTimes{}
	}
	s.writes[r.Header.Get("X-Request-ID")] = st
	s.mu.Unlock()
}

func testDataset(t testing.TB, n int) *datasets.Dataset {
	t.Helper()
	ds := &datasets.Dataset{Name: "test"}
	for i := range n {
		ds.Conversations = append(ds.Conversations, datasets.Conversation{
			ID:    fmt.Sprintf("c%d", i),
			Turns: []datasets.Turn{{Text: fmt.Sprintf("prompt number %d", i), InputTokens: 16, MaxTokens: 8}},
		})
	}
	return ds
}

// collectSink keeps every record for inspection.
type collectSink struct {
	mu   sync.Mutex
	recs []*metrics.Record
	vals []metrics.Values
}

func (c *collectSink) WriteRecord(r *metrics.Record, v *metrics.Values, _ bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recs = append(c.recs, r)
	c.vals = append(c.vals, *v)
}

func runOnce(t *testing.T, url string, ep *endpoint.Endpoint, stages []Stage, opts ...Option) (*metrics.Summary, *collectSink) {
	t.Helper()
	return runOnceAt(t, time.Now(), url, ep, stages, opts...)
}

// runOnceAt is runOnce with the run clock's zero at start, so a test can
// put the server's own timestamps on the records' clock.
func runOnceAt(t testing.TB, start time.Time, url string, ep *endpoint.Endpoint, stages []Stage, opts ...Option) (*metrics.Summary, *collectSink) {
	t.Helper()
	sink := &collectSink{}
	col := metrics.NewCollector(metrics.WithSink(sink), metrics.WithClock(func() int64 { return int64(time.Since(start)) }))
	g, err := New(url, ep, testDataset(t, 16), col, append([]Option{WithStart(start)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Run(ctx, stages); err != nil {
		t.Fatal(err)
	}
	return col.Close(), sink
}

func chat(streaming bool) *endpoint.Endpoint {
	return &endpoint.Endpoint{Kind: endpoint.Chat, Model: "m", Streaming: streaming}
}

// TestTimingMatchesServerAtConcurrency8 judges the client's clock against
// the server's own stamps, request by request, on one monotonic clock.
// Causality bounds hold on any machine: a request is stamped sent before
// the server saw it, and each token read after the server began writing
// it. The lag from the server's write to the client's stamp only has a
// generous bound here (a loaded 2-core machine can deschedule either side
// for several ms); BenchmarkClientLag reports the real figure.
func TestTimingMatchesServerAtConcurrency8(t *testing.T) {
	const tokens = 16
	srv := &streamServer{ttft: 20 * time.Millisecond, itl: 5 * time.Millisecond, tokens: tokens}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	start := time.Now()
	s, sink := runOnceAt(t, start, ts.URL, chat(true), []Stage{{Limit: schedule.Constant(8), Count: 64}})
	if got := s.Run[metrics.RequestCount]; got != 64 {
		t.Fatalf("request_count %v, want 64 (errors: %+v)", got, s.Errors)
	}
	if osl := s.Metrics[metrics.OSL]; osl.Min != tokens || osl.Max != tokens {
		t.Errorf("OSL %v..%v, want %d (role-only and finish chunks are not tokens)", osl.Min, osl.Max, tokens)
	}
	if len(sink.recs) != 64 {
		t.Fatalf("%d records, want 64", len(sink.recs))
	}
	lags := checkAgainstServer(t, start, srv, sink.recs)
	// Median lag from the server's write to the client's stamp: ≈ 0.1 ms
	// on an idle machine. 10 ms is far above what load adds and still
	// catches a client that stamps late (after decoding a whole buffer,
	// or after the next token: the stream's ITL is 5 ms and 15 gaps long).
	if p50 := lags[len(lags)/2]; p50 > 10*time.Millisecond {
		t.Errorf("median lag from server write to client stamp %v, want ≤ 10 ms", p50)
	}
	// The summary's TTFT is the records' TTFT: the server's first write
	// (≥ 20 ms after arrival, by its deadlines) bounds it from below.
	if ttft := s.Metrics[metrics.TTFT]; ttft.Min < 20 {
		t.Errorf("TTFT min %.3f ms, below the server's 20 ms first-token deadline", ttft.Min)
	}
}

// checkAgainstServer checks every record against the server's stamps for
// the same X-Request-ID and returns the sorted lags from each server write
// to the client's stamp of that event.
func checkAgainstServer(t testing.TB, start time.Time, srv *streamServer, recs []*metrics.Record) []time.Duration {
	t.Helper()
	srv.mu.Lock()
	defer srv.mu.Unlock()
	var lags []time.Duration
	for _, r := range recs {
		st := srv.writes[r.RequestID]
		if st == nil {
			t.Fatalf("record %s: the server never finished a request with that X-Request-ID", r.RequestID)
		}
		if arrival := int64(st.arrival.Sub(start)); r.SentNs > arrival {
			t.Errorf("record %s stamped sent at %d ns, after the server saw it at %d ns", r.RequestID, r.SentNs, arrival)
		}
		if len(r.TokenNs) != len(st.tokens) {
			t.Fatalf("record %s: %d token events, the server wrote %d", r.RequestID, len(r.TokenNs), len(st.tokens))
		}
		for i, at := range r.TokenNs {
			lag := time.Duration(at - int64(st.tokens[i].Sub(start)))
			if lag < 0 {
				t.Fatalf("record %s: token %d stamped %v before the server began writing it", r.RequestID, i, -lag)
			}
			lags = append(lags, lag)
		}
	}
	slices.Sort(lags)
	return lags
}

func TestReasoningSplit(t *testing.T) {
	srv := &streamServer{ttft: 5 * time.Millisecond, itl: 2 * time.Millisecond, tokens: 8, reasoning: 3}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	s, sink := runOnce(t, ts.URL, chat(true), []Stage{{Limit: schedule.Constant(2), Count: 4}})
	// A loaded machine can deliver several events in one read (one stamp),
	// so TTFO may equal TTFT; it can never precede it.
	if s.Metrics[metrics.TTFO].Avg < s.Metrics[metrics.TTFT].Avg {
		t.Errorf("TTFO avg %.2f before TTFT avg %.2f", s.Metrics[metrics.TTFO].Avg, s.Metrics[metrics.TTFT].Avg)
	}
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	for i, r := range sink.recs {
		v := sink.vals[i]
		if len(r.TokenNs) != 8 || r.ReasoningEvents != 3 {
			t.Fatalf("%d token events, %d reasoning, want 8 and 3", len(r.TokenNs), r.ReasoningEvents)
		}
		// TTFT is the first reasoning event, TTFO the first content one
		// (event 3), both from the request's start as AIPerf stamps it.
		if want := ms(r.TokenNs[0] - r.Issued()); math.Abs(v.TTFT-want) > 1e-6 {
			t.Errorf("TTFT %.4f ms, want %.4f (the first reasoning event)", v.TTFT, want)
		}
		if want := ms(r.TokenNs[3] - r.Issued()); r.FirstContentNs != r.TokenNs[3] || math.Abs(v.TTFO-want) > 1e-6 {
			t.Errorf("TTFO %.4f ms, want %.4f (the first content event)", v.TTFO, want)
		}
		if r.ReasoningText != " tok0 tok1 tok2" || !strings.HasPrefix(r.Text, " tok3") {
			t.Errorf("reasoning %q text %q", r.ReasoningText, r.Text)
		}
	}
}

func TestEveryRequestBecomesOneRecord(t *testing.T) {
	srv := &streamServer{ttft: time.Millisecond, itl: time.Millisecond, tokens: 4, failEvery: 3}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	s, sink := runOnce(t, ts.URL, chat(true), []Stage{{Limit: schedule.Constant(4), Count: 30}})
	if int64(len(sink.recs)) != srv.requests.Load() || len(sink.recs) != 30 {
		t.Fatalf("%d records for %d requests sent, want 30 each", len(sink.recs), srv.requests.Load())
	}
	if s.Run[metrics.ErrorRequestCount] != 10 || s.Run[metrics.RequestCount] != 20 {
		t.Errorf("ok %v err %v, want 20/10", s.Run[metrics.RequestCount], s.Run[metrics.ErrorRequestCount])
	}
	if len(s.Errors) != 1 || s.Errors[0].Details != (metrics.Error{Code: 500, Type: "server_error", Message: "injected"}) {
		t.Errorf("error summary %+v", s.Errors)
	}
	for _, r := range sink.recs {
		if r.Err != nil && r.RetryAfter != "1" {
			t.Errorf("Retry-After not recorded: %+v", r)
		}
	}
}

func TestFailuresBecomeErrorRecords(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + closed.Addr().String()
	closed.Close()
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html>hello</html>")
	}))
	defer html.Close()
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n")
	}))
	defer cut.Close()
	badJSON := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":\n\ndata: [DONE]\n\n")
	}))
	defer badJSON.Close()
	stall := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		// Reading the body lets net/http notice the client hanging up.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer stall.Close()

	cases := []struct {
		name, url, wantType string
		wantCode            int
	}{
		{"connection refused", refused, ErrConnection, 0},
		{"404", notFound.URL, "Not Found", 404},
		{"non-SSE body", html.URL, ErrInvalidResponse, 200},
		{"stream cut without [DONE]", cut.URL, ErrStream, 200},
		{"malformed JSON chunk", badJSON.URL, ErrInvalidResponse, 200},
		{"no first byte before the timeout", stall.URL, ErrTimeout, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, sink := runOnce(t, tc.url, chat(true), []Stage{{Limit: schedule.Constant(2), Count: 3}},
				WithRequestTimeout(300*time.Millisecond))
			if len(sink.recs) != 3 || s.Run[metrics.ErrorRequestCount] != 3 {
				t.Fatalf("%d records, %v errors; want 3 failed", len(sink.recs), s.Run[metrics.ErrorRequestCount])
			}
			e := sink.recs[0].Err
			if e.Type != tc.wantType || e.Code != tc.wantCode || e.Message == "" {
				t.Errorf("error %+v, want type %q code %d with a message", e, tc.wantType, tc.wantCode)
			}
		})
	}
}

func TestDurationStopsIssuingAndGraceCancels(t *testing.T) {
	srv := &streamServer{ttft: 10 * time.Millisecond, itl: 100 * time.Millisecond, tokens: 50} // 5 s streams
	ts := httptest.NewServer(srv)
	defer ts.Close()
	began := time.Now()
	s, sink := runOnce(t, ts.URL, chat(true), []Stage{{Limit: schedule.Constant(4), Duration: 200 * time.Millisecond}},
		WithGracePeriod(200*time.Millisecond))
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("run took %s; the duration and grace period should end it in ≈ 0.4 s", took)
	}
	if len(sink.recs) != 4 || s.Errors[0].Details.Type != ErrCancelled {
		t.Errorf("%d records, errors %+v; want 4 cancelled after the grace period", len(sink.recs), s.Errors)
	}
	for _, r := range sink.recs {
		if !r.Cancelled || r.AckNs < r.SentNs || r.AckNs > r.EndNs {
			t.Errorf("record %s: cancelled %v, ack %d (sent %d, end %d); want cancelled, acknowledged in between",
				r.RequestID, r.Cancelled, r.AckNs, r.SentNs, r.EndNs)
		}
	}
}

func TestInterruptDrainsInFlight(t *testing.T) {
	// The interrupt comes when the server has seen the third request, so
	// however loaded the machine, exactly 3 streams (0.2 s each) are in
	// flight and none has finished.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := &streamServer{ttft: 5 * time.Millisecond, itl: 20 * time.Millisecond, tokens: 10,
		onRequest: func(n int64) {
			if n == 3 {
				cancel()
			}
		}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	start := time.Now()
	sink := &collectSink{}
	col := metrics.NewCollector(metrics.WithSink(sink))
	g, err := New(ts.URL, chat(true), testDataset(t, 4), col, WithStart(start), WithGracePeriod(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Run(ctx, []Stage{{Limit: schedule.Constant(3), Count: 1000}}); err != nil {
		t.Fatal(err)
	}
	s := col.Close()
	if s.Run[metrics.ErrorRequestCount] != 0 || s.Run[metrics.RequestCount] != 3 {
		t.Errorf("ok %v err %v: the 3 in-flight streams should finish within the grace period, and no more start",
			s.Run[metrics.RequestCount], s.Run[metrics.ErrorRequestCount])
	}
}

func TestNonStreamingAndCompletions(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/completions" {
			if _, ok := body["prompt"].(string); !ok || body["max_tokens"] != 8.0 {
				http.Error(w, "bad completions body", 400)
				return
			}
			fmt.Fprint(w, `{"choices":[{"text":" a b c","finish_reason":"length"}],"usage":{"prompt_tokens":16,"completion_tokens":3}}`)
			return
		}
		if body["max_completion_tokens"] != 8.0 || body["stream"] != nil {
			http.Error(w, "bad chat body", 400)
			return
		}
		fmt.Fprint(w, `{"choices":[{"message":{"role":"assistant","content":"a b c"},"finish_reason":"length"}],"usage":{"prompt_tokens":16,"completion_tokens":3}}`)
	}))
	defer ts.Close()
	for _, ep := range []*endpoint.Endpoint{chat(false), {Kind: endpoint.Completions, Model: "m"}} {
		s, _ := runOnce(t, ts.URL, ep, []Stage{{Limit: schedule.Constant(2), Count: 4}})
		if s.Run[metrics.RequestCount] != 4 {
			t.Fatalf("%s: %v ok, errors %+v", ep.Kind, s.Run[metrics.RequestCount], s.Errors)
		}
		if _, ok := s.Metrics[metrics.TTFT]; ok {
			t.Errorf("%s: non-streamed run reports TTFT", ep.Kind)
		}
		if osl := s.Metrics[metrics.OSL]; osl.Avg != 3 {
			t.Errorf("%s: OSL %v, want 3 from usage", ep.Kind, osl.Avg)
		}
	}
}

func TestRequestURL(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want, err string }{
		{"127.0.0.1:8000", "http://127.0.0.1:8000/v1/chat/completions", ""},
		{"http://h:1/", "http://h:1/v1/chat/completions", ""},
		{"https://h/v1", "https://h/v1/chat/completions", ""},
		{"http://h/v1/chat/completions", "http://h/v1/chat/completions", ""},
		{"http://h/proxy", "http://h/proxy/v1/chat/completions", ""},
		{"ftp://h", "", "scheme"},
		{"", "", "empty"},
	}
	for _, tc := range cases {
		got, err := RequestURL(tc.in, endpoint.Chat.Path())
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("RequestURL(%q) error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("RequestURL(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	// A query string in --url or --endpoint stays a query string (Azure's
	// deployments), and an escaped path segment stays escaped (Bedrock's
	// model ids), for every endpoint type.
	paths := []struct{ base, path, want string }{
		{"https://r.openai.azure.com", "/openai/deployments/gpt/chat/completions?api-version=2024-10-21",
			"https://r.openai.azure.com/openai/deployments/gpt/chat/completions?api-version=2024-10-21"},
		{"https://r.openai.azure.com/openai/deployments/gpt?api-version=2024-10-21", "/chat/completions",
			"https://r.openai.azure.com/openai/deployments/gpt/chat/completions?api-version=2024-10-21"},
		{"https://h/x?a=1", "/v1/embeddings?b=2", "https://h/x/v1/embeddings?a=1&b=2"},
		{"https://h/v1/chat/completions?a=1", "/v1/chat/completions?a=1", "https://h/v1/chat/completions?a=1"},
		{"http://h:9", "/model/anthropic.claude-v2%3A1/converse-stream", "http://h:9/model/anthropic.claude-v2%3A1/converse-stream"},
		{"http://h:9", "/v1beta/models/gemini:streamGenerateContent?alt=sse", "http://h:9/v1beta/models/gemini:streamGenerateContent?alt=sse"},
	}
	for _, tc := range paths {
		got, err := RequestURL(tc.base, tc.path)
		if err != nil || got != tc.want {
			t.Errorf("RequestURL(%q, %q) = %q, %v; want %q", tc.base, tc.path, got, err, tc.want)
		}
	}
}

func TestOpenLoopRateKeepsSchedule(t *testing.T) {
	srv := &streamServer{ttft: time.Millisecond, itl: time.Millisecond, tokens: 2}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	sched, err := schedule.Arrival("constant", 200, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	s, sink := runOnce(t, ts.URL, chat(true), []Stage{{Schedule: sched, Count: 100}})
	took := time.Since(began)
	if s.Run[metrics.RequestCount] != 100 {
		t.Fatalf("%v ok, errors %+v", s.Run[metrics.RequestCount], s.Errors)
	}
	// 100 requests at 200/s: the last is due at 495 ms, and none may go
	// early. (How late they go is the scheduler-lag benchmark's business: a
	// busy CI machine can stall this test for seconds.)
	if took < 480*time.Millisecond {
		t.Errorf("run took %s, want at least the schedule's 0.5 s", took)
	}
	var first, last int64
	for i, r := range sink.recs {
		if r.IntendedNs == 0 || r.SentNs < r.IntendedNs || !r.Scheduled {
			t.Fatalf("record sent at %d, intended %d, scheduled %v: want a scheduled send at or after its time", r.SentNs, r.IntendedNs, r.Scheduled)
		}
		if i == 0 || r.IntendedNs < first {
			first = r.IntendedNs
		}
		last = max(last, r.IntendedNs)
	}
	if span := time.Duration(last - first); span < 494*time.Millisecond || span > 496*time.Millisecond {
		t.Errorf("intended send times span %s, want the constant 200/s schedule's 495 ms", span)
	}
	if s.SchedulerLag.Count != 100 {
		t.Errorf("scheduler lag count %d, want 100", s.SchedulerLag.Count)
	}
}

func TestUserCentricSessionsCarryHistory(t *testing.T) {
	srv := &streamServer{ttft: time.Millisecond, itl: time.Millisecond, tokens: 2}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	ds := &datasets.Dataset{Name: "mt"}
	for i := range 4 {
		c := datasets.Conversation{ID: fmt.Sprintf("s%d", i)}
		for k := range 3 {
			c.Turns = append(c.Turns, datasets.Turn{Text: fmt.Sprintf("s%d turn %d", i, k)})
		}
		ds.Conversations = append(ds.Conversations, c)
	}
	plan, err := schedule.Users(40, 2, 1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	sink := &collectSink{}
	col := metrics.NewCollector(metrics.WithSink(sink))
	g, err := New(ts.URL, chat(true), ds, col)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Run(context.Background(), []Stage{{Users: plan, Count: 12}}); err != nil {
		t.Fatal(err)
	}
	s := col.Close()
	if s.Run[metrics.RequestCount] != 12 {
		t.Fatalf("%v ok, errors %+v", s.Run[metrics.RequestCount], s.Errors)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	longest := 0
	for _, b := range srv.lastBodies {
		msgs := b["messages"].([]any)
		longest = max(longest, len(msgs))
		if n := len(msgs); n > 1 {
			if role := msgs[n-2].(map[string]any)["role"]; role != "assistant" {
				t.Errorf("message before the new turn has role %v, want the assistant's live reply", role)
			}
			if c := msgs[n-2].(map[string]any)["content"]; c != " tok0 tok1" {
				t.Errorf("history carries %q, want the reply the server streamed", c)
			}
		}
	}
	if longest != 5 {
		t.Errorf("longest history %d messages, want 5 (third turn: 2 earlier turns and their replies)", longest)
	}
	// AIPerf's session_num and x_correlation_id: one per session run, the
	// same on each of its turns.
	bySession := map[int64]map[string]bool{}
	corrs := map[string]bool{}
	for _, r := range sink.recs {
		if bySession[r.Session] == nil {
			bySession[r.Session] = map[string]bool{}
		}
		bySession[r.Session][r.CorrelationID+"/"+r.ConversationID] = true
		corrs[r.CorrelationID] = true
		if r.Cancelled || r.CorrelationID == "" {
			t.Errorf("record %s: cancelled %v, correlation id %q", r.RequestID, r.Cancelled, r.CorrelationID)
		}
	}
	if len(bySession) != 4 || len(corrs) != 4 {
		t.Errorf("%d session numbers, %d correlation ids; want 4 of each", len(bySession), len(corrs))
	}
	for n, ids := range bySession {
		if n < 0 || n > 3 || len(ids) != 1 {
			t.Errorf("session %d: %v; want one correlation id and conversation", n, ids)
		}
	}
}

// TestWarmupFlowsIntoProfile: the profile starts while warmup requests are
// still streaming (no drain between them), and the concurrency cap holds
// across the change.
func TestWarmupFlowsIntoProfile(t *testing.T) {
	var cur, peak atomic.Int64
	inner := &streamServer{ttft: time.Millisecond, itl: 10 * time.Millisecond, tokens: 10}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := cur.Add(1)
		defer cur.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		inner.ServeHTTP(w, r)
	}))
	defer ts.Close()
	limit := schedule.Constant(3)
	_, sink := runOnce(t, ts.URL, chat(true), []Stage{
		{Phase: metrics.Warmup, Limit: limit, Count: 5},
		{Phase: metrics.Profile, Limit: limit, Count: 6},
	})
	if got := peak.Load(); got > 3 {
		t.Errorf("%d requests in flight at once, cap 3", got)
	}
	var lastWarmupEnd, firstProfileSent int64
	for _, r := range sink.recs {
		switch r.Phase {
		case metrics.Warmup:
			lastWarmupEnd = max(lastWarmupEnd, r.EndNs)
		default:
			if firstProfileSent == 0 || r.SentNs < firstProfileSent {
				firstProfileSent = r.SentNs
			}
		}
	}
	if len(sink.recs) != 11 || firstProfileSent >= lastWarmupEnd {
		t.Errorf("%d records; first profile send %d, last warmup end %d: want the profile to start before the warmup drained",
			len(sink.recs), firstProfileSent, lastWarmupEnd)
	}
}

// TestConnectionsAreReused: stopping at [DONE] must not cost a connection
// per request (a new handshake would land in the next request's TTFT).
func TestConnectionsAreReused(t *testing.T) {
	srv := &streamServer{ttft: time.Millisecond, itl: time.Millisecond, tokens: 3}
	var conns atomic.Int64
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	defer ts.Close()
	runOnce(t, ts.URL, chat(true), []Stage{{Limit: schedule.Constant(2), Count: 50}})
	if n := conns.Load(); n > 2 {
		t.Errorf("%d connections for 50 requests at concurrency 2, want 2", n)
	}
}

// TestTargetsRoundRobin: with several servers, request i goes to server i
// mod n (AIPerf's --url list), and each turn names its own model.
func TestTargetsRoundRobin(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	models := map[string]int{}
	var hits [3]atomic.Int64
	var urls []string
	for i := range hits {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits[i].Add(1)
			var body map[string]any
			_ = json.NewDecoder(r.Body).Decode(&body)
			mu.Lock()
			models[fmt.Sprint(body["model"])]++
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"choices":[{"message":{"role":"assistant","content":"a b"},"finish_reason":"stop"}],"usage":{"prompt_tokens":16,"completion_tokens":2}}`)
		}))
		defer ts.Close()
		urls = append(urls, ts.URL)
	}
	ds := testDataset(t, 12)
	for i := range ds.Conversations {
		if i%3 != 0 {
			ds.Conversations[i].Turns[0].Model = []string{"", "a", "b"}[i%3]
		}
	}
	col := metrics.NewCollector()
	g, err := New(urls[0], chat(false), ds, col, WithTargets(urls[1:]...))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Run(context.Background(), []Stage{{Limit: schedule.Constant(3), Count: 12}}); err != nil {
		t.Fatal(err)
	}
	if s := col.Close(); s.Run[metrics.RequestCount] != 12 {
		t.Fatalf("%v requests ok, errors %+v", s.Run[metrics.RequestCount], s.Errors)
	}
	for i := range hits {
		if n := hits[i].Load(); n != 4 {
			t.Errorf("server %d got %d requests, want 4 of 12", i, n)
		}
	}
	// Under the lock: the race detector cannot see that a handler's write
	// happened before the response it sent.
	mu.Lock()
	if models["m"] != 4 || models["a"] != 4 || models["b"] != 4 {
		t.Errorf("models sent %v, want 4 each of the endpoint's m and the turns' a and b", models)
	}
	mu.Unlock()
	if _, err := New(urls[0], chat(false), ds, col, WithTargets("ftp://x")); err == nil {
		t.Error("a bad extra target was accepted")
	}
}

// TestRawCapture: with WithRawCapture every record keeps the body it sent
// and each event it read, in order and stamped; a failure keeps the
// server's error body.
func TestRawCapture(t *testing.T) {
	t.Parallel()
	srv := &streamServer{ttft: time.Millisecond, itl: time.Millisecond, tokens: 3, failEvery: 4}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	_, sink := runOnce(t, ts.URL, chat(true), []Stage{{Limit: schedule.Constant(2), Count: 8}}, WithRawCapture())
	if len(sink.recs) != 8 {
		t.Fatalf("%d records, want 8", len(sink.recs))
	}
	for _, r := range sink.recs {
		raw := r.Raw
		if raw == nil || !bytes.Contains(raw.Body, []byte(`"messages"`)) {
			t.Fatalf("record %s: raw %+v, want the body sent", r.RequestID, raw)
		}
		if r.Err != nil {
			if raw.Status != 500 || raw.Stream || len(raw.Events) != 1 || !bytes.Contains(raw.Events[0].Data, []byte("injected")) {
				t.Errorf("failed record %s: raw %+v, want status 500 and the error body", r.RequestID, raw)
			}
			continue
		}
		// role chunk, 3 tokens, finish, usage, [DONE]
		if !raw.Stream || raw.Status != 200 || len(raw.Events) != 7 || string(raw.Events[6].Data) != "[DONE]" {
			t.Errorf("record %s: stream %v status %d, %d events; want the 7 events of the stream", r.RequestID, raw.Stream, raw.Status, len(raw.Events))
		}
		for i := 1; i < len(raw.Events); i++ {
			if raw.Events[i].AtNs < raw.Events[i-1].AtNs || raw.Events[i].AtNs < r.SentNs {
				t.Errorf("record %s: event %d at %d, before the one before it or the send", r.RequestID, i, raw.Events[i].AtNs)
			}
		}
	}
}

// TestLookaheadKeepsOrder: batched or not, the dispatcher gets every
// session start of the plan once, in order, with its body built, also
// when it stops early.
func TestLookaheadKeepsOrder(t *testing.T) {
	ds := testDataset(t, 5)
	g, err := New("http://127.0.0.1:1", chat(true), ds, metrics.NewCollector())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ count, take int }{
		{1, 1}, {lookaheadBatch - 1, -1}, {lookaheadBatch, -1}, {lookaheadBatch + 1, -1},
		{3*lookaheadDepth + 7, -1}, {3 * lookaheadDepth, 5}, {3 * lookaheadDepth, lookaheadBatch + 1},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		for c := range g.lookahead(ctx, Stage{Count: tc.count}, 0) {
			if c.Index != n {
				t.Fatalf("count %d: start %d is session %d", tc.count, n, c.Index)
			}
			if want := &ds.Conversations[n%len(ds.Conversations)]; c.conv != want || !bytes.Contains(c.body, []byte(want.Turns[0].Text)) {
				t.Fatalf("count %d: start %d has conversation %s, body %q", tc.count, n, c.conv.ID, c.body)
			}
			if n++; n == tc.take {
				break
			}
		}
		cancel()
		want := tc.count
		if tc.take > 0 {
			want = tc.take
		}
		if n != want {
			t.Errorf("count %d: %d starts, want %d", tc.count, n, want)
		}
	}
}

// TestAbortCutsTheGracePeriod: after an interrupt, a second one cancels
// the in-flight streams at once instead of waiting out a 30 s grace
// period, and each still becomes a record.
func TestAbortCutsTheGracePeriod(t *testing.T) {
	ctx, stopIssuing := context.WithCancel(context.Background())
	defer stopIssuing()
	abortCtx, abort := context.WithCancel(context.Background())
	defer abort()
	srv := &streamServer{ttft: 5 * time.Millisecond, itl: 100 * time.Millisecond, tokens: 300, // 30 s streams
		onRequest: func(n int64) {
			if n == 3 {
				stopIssuing()
				time.AfterFunc(100*time.Millisecond, abort)
			}
		}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	sink := &collectSink{}
	col := metrics.NewCollector(metrics.WithSink(sink))
	g, err := New(ts.URL, chat(true), testDataset(t, 4), col, WithStart(time.Now()), WithGracePeriod(30*time.Second), WithAbort(abortCtx))
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if err := g.Run(ctx, []Stage{{Limit: schedule.Constant(3), Count: 1000}}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("the run took %s after an abort; want well under the 30 s grace period", took)
	}
	col.Close()
	if len(sink.recs) != 3 {
		t.Fatalf("%d records, want the 3 in flight", len(sink.recs))
	}
	for _, r := range sink.recs {
		if !r.Cancelled || r.Err == nil || !strings.Contains(r.Err.Message, "aborted") {
			t.Errorf("record %s: cancelled %v, error %+v; want cancelled by the abort", r.RequestID, r.Cancelled, r.Err)
		}
	}
}
