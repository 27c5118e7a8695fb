package loadgen

import (
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
	ttft, itl  time.Duration
	tokens     int
	reasoning  int
	failEvery  int // every n-th request answers 500 (0: never)
	requests   atomic.Int64
	mu         sync.Mutex
	lastBodies []map[string]any
	// firstFlush holds, per request, arrival → first token flushed: what the
	// server really did, against which the client's TTFT is judged.
	firstFlush []time.Duration
}

func (s *streamServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	arrival := time.Now()
	n := s.requests.Add(1)
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
		due := arrival.Add(s.ttft + time.Duration(i)*s.itl)
		time.Sleep(time.Until(due))
		field := "content"
		if i < s.reasoning {
			field = "reasoning_content"
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{%q:\" tok%d\"}}]}\n\n", field, i)
		fl.Flush()
		if i == 0 {
			s.mu.Lock()
			s.firstFlush = append(s.firstFlush, time.Since(arrival))
			s.mu.Unlock()
		}
	}
	fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\n")
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":%d}}\n\n", s.tokens)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func testDataset(t *testing.T, n int) *datasets.Dataset {
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
	start := time.Now()
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

func TestTimingMatchesServerAtConcurrency8(t *testing.T) {
	srv := &streamServer{ttft: 20 * time.Millisecond, itl: 5 * time.Millisecond, tokens: 16}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	s, sink := runOnce(t, ts.URL, chat(true), []Stage{{Limit: schedule.Constant(8), Count: 64}})
	if got := s.Run[metrics.RequestCount]; got != 64 {
		t.Fatalf("request_count %v, want 64 (errors: %+v)", got, s.Errors)
	}
	ttft, itl := s.Metrics[metrics.TTFT], s.Metrics[metrics.ITL]
	// The client adds loopback and parsing time on top of what the server
	// did; the median must stay within 1 ms of the server's own first flush,
	// and (without the race detector's slowdown) of the configuration.
	srv.mu.Lock()
	server := slices.Clone(srv.firstFlush)
	srv.mu.Unlock()
	slices.Sort(server)
	serverP50 := float64(server[len(server)/2]) / 1e6
	if d := ttft.P50 - serverP50; d < -0.05 || d > 1 {
		t.Errorf("TTFT p50 %.3f ms, server's own first flush p50 %.3f ms: want the client within 1 ms above it", ttft.P50, serverP50)
	}
	if !raceEnabled {
		if d := ttft.P50 - 20; d < 0 || d > 1 {
			t.Errorf("TTFT p50 %.3f ms, want within 1 ms above the configured 20 ms", ttft.P50)
		}
		if d := math.Abs(itl.P50 - 5); d > 1 {
			t.Errorf("ITL p50 %.3f ms, want within 1 ms of the configured 5 ms", itl.P50)
		}
	}
	if osl := s.Metrics[metrics.OSL]; osl.Min != 16 || osl.Max != 16 {
		t.Errorf("OSL %v..%v, want 16 (role-only and finish chunks are not tokens)", osl.Min, osl.Max)
	}
	if len(sink.recs) != 64 {
		t.Errorf("%d records, want 64", len(sink.recs))
	}
}

func TestReasoningSplit(t *testing.T) {
	srv := &streamServer{ttft: 5 * time.Millisecond, itl: 2 * time.Millisecond, tokens: 8, reasoning: 3}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	s, sink := runOnce(t, ts.URL, chat(true), []Stage{{Limit: schedule.Constant(2), Count: 4}})
	if s.Metrics[metrics.TTFO].Avg <= s.Metrics[metrics.TTFT].Avg {
		t.Errorf("TTFO avg %.2f not after TTFT avg %.2f", s.Metrics[metrics.TTFO].Avg, s.Metrics[metrics.TTFT].Avg)
	}
	for _, v := range sink.vals {
		if v.TTFO-v.TTFT < 2 { // at least one ITL; the server catches up late tokens
			t.Errorf("TTFO-TTFT = %.2f ms, want ≈ 6 ms (3 reasoning tokens at 2 ms)", v.TTFO-v.TTFT)
		}
	}
	for _, r := range sink.recs {
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
}

func TestInterruptDrainsInFlight(t *testing.T) {
	srv := &streamServer{ttft: 5 * time.Millisecond, itl: 20 * time.Millisecond, tokens: 10} // 0.2 s streams
	ts := httptest.NewServer(srv)
	defer ts.Close()
	start := time.Now()
	sink := &collectSink{}
	col := metrics.NewCollector(metrics.WithSink(sink))
	g, err := New(ts.URL, chat(true), testDataset(t, 4), col, WithStart(start), WithGracePeriod(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
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
	// 100 requests at 200/s: the last is due at 495 ms.
	if took < 480*time.Millisecond || took > 2*time.Second {
		t.Errorf("run took %s, want ≈ 0.5 s", took)
	}
	for _, r := range sink.recs {
		if r.IntendedNs == 0 || r.SentNs < r.IntendedNs || !r.Scheduled {
			t.Fatalf("record sent at %d, intended %d, scheduled %v: want a scheduled send at or after its time", r.SentNs, r.IntendedNs, r.Scheduled)
		}
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
