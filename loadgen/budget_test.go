package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"runtime"
	rtmetrics "runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/datasets/tokenizer"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/frames"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// The hot-path budget (issue 56): what one stream may cost the client per
// token and per request, counted, never timed, over a real loopback
// stream. A server in this process sends each token only once the client
// has taken the one before (lockstep), so every token is its own socket
// read and the counts do not depend on the machine's speed or load.
//
// Per token (tokens 2 to n−1 of a request, while nothing else runs): heap
// allocations and bytes, clock readings, calls into the Recorder, socket
// reads. Per request (first token to first token, a window of requests in
// the steady state): allocations and bytes, goroutines started, clock
// readings, Recorder calls; the record's shard work (metrics.Collector)
// included, since it shares the client's cores with the streams.
//
// A feature that adds work on the request path joins budgetCases: its
// generator or collector options in a case of its own (or an existing
// case's, when every run pays it). Raising a budget is a decision made in
// review, with the reason in the commit; docs/benchmarks.md says how.

// budget is the most a stream may cost. Per-token figures are medians over
// the requests (a rare wake-up of another goroutine inside a window cannot
// move them); per-request figures are means over a window of requests.
type budget struct {
	// allocsPerToken and bytesPerToken: heap allocations on the path of
	// a token (0: the hot path allocates nothing per token).
	allocsPerToken, bytesPerToken float64
	// clockPerToken: readings of the run clock per token (the SSE
	// reader's one per read).
	clockPerToken float64
	// recorderPerToken: calls into the Recorder per token (Tokens).
	recorderPerToken float64
	// readsPerToken: socket reads per token (one: the token's own; the
	// read that finds the stream's end aside).
	readsPerToken float64
	// allocsPerRequest, bytesPerRequest: the heap allocations of one
	// request's whole life (dispatch, body, send, headers, stream
	// set-up and end, the record and its shard's work).
	allocsPerRequest, bytesPerRequest float64
	// goroutinesPerRequest: goroutines started per request.
	goroutinesPerRequest float64
	// clockPerRequest: run-clock readings per request, besides its
	// tokens' (14; one more when the dispatcher's wait for a slot wakes
	// twice, as it may on a slow machine).
	clockPerRequest float64
	// recorderPerRequest: Recorder calls per request, besides Tokens.
	recorderPerRequest float64
}

// budgetCase is one way of streaming whose cost is budgeted.
type budgetCase struct {
	name string
	kind endpoint.Kind
	// gen and col are the generator's and the collector's options: a
	// feature's, or the defaults' (nil).
	gen []Option
	col []metrics.Option
	// maxTokens is the turn's output cap (0: none; the stream is
	// budgetTokens long either way).
	maxTokens int
	// mock shapes the stream (the mock's own, for the endpoint type).
	mock   mockserver.Config
	budget budget
}

// budgetTokens is each stream's length.
const budgetTokens = 32

// The steady-state window: requests before budgetWarm warm the pools and
// the connection; per-request figures are the mean of the next
// budgetWindow (a multiple of the dispatcher's lookahead batch, so its
// batches fall whole in the window).
const (
	budgetWarm   = 2 * lookaheadBatch
	budgetWindow = 4 * lookaheadBatch
)

// chatBudget is the default chat stream's budget: what it costs, to the
// allocation (the counts are exact), so that any work added shows.
var chatBudget = budget{
	allocsPerToken: 0, bytesPerToken: 0, clockPerToken: 1, recorderPerToken: 1, readsPerToken: 1,
	// The event ends beside the token times (8 B a token, in their one
	// allocation) and the record's values' tokens per event (64 B): what
	// each event carried, for a server that batches its tokens (issue 55).
	// The server's account of the request in the record (48 B: the record
	// to its next size class, 128 B), the traceparent that carries the
	// request id (32 B more than the id alone) and the trace's slots for
	// the two headers' values (32 B), which spare the headers' own
	// allocations (issue 54).
	allocsPerRequest: 66, bytesPerRequest: 7<<10 + budgetTokens*8 + 64 + 192, goroutinesPerRequest: 0.1, clockPerRequest: 15,
	recorderPerRequest: 3,
}

// budgetTokenizer counts with the embedded tokenizer, as a run does by
// default, loading it at its first use.
type budgetTokenizer struct{}

func (budgetTokenizer) Count(text string) int {
	tok, err := tokenizer.Default()
	if err != nil {
		panic(err)
	}
	return tok.Count(text)
}

// with is b changed by f: a case's differences from chatBudget, each with
// its reason.
func (b budget) with(f func(b *budget)) budget {
	f(&b)
	return b
}

var budgetCases = []budgetCase{
	{name: "chat", kind: endpoint.Chat, maxTokens: budgetTokens, budget: chatBudget},
	{name: "chat, read stamps", kind: endpoint.Chat, maxTokens: budgetTokens, gen: []Option{WithTimestamps(ReadTimestamps)}, budget: chatBudget},
	{name: "chat, no output cap", kind: endpoint.Chat, budget: chatBudget.with(func(b *budget) {
		b.bytesPerRequest += uncappedPrealloc * 20 // the token slices (times and event ends 8 B, read delays 4 B) start at uncappedPrealloc
	})},
	{name: "chat, reasoning", kind: endpoint.Chat, maxTokens: budgetTokens, mock: mockserver.Config{ReasoningTokens: 8}, budget: chatBudget.with(func(b *budget) {
		b.allocsPerRequest++   // the reasoning text's string
		b.recorderPerRequest++ // Reasoning, at the first reasoning token
	})},
	{name: "chat, tokens counted by the tokenizer", kind: endpoint.Chat, maxTokens: budgetTokens, col: []metrics.Option{metrics.WithTokenizer(budgetTokenizer{})}, budget: chatBudget},
	{name: "completions", kind: endpoint.Completions, maxTokens: budgetTokens, budget: chatBudget},
	{name: "responses", kind: endpoint.Responses, maxTokens: budgetTokens, budget: chatBudget},
	{name: "messages", kind: endpoint.Messages, maxTokens: budgetTokens, budget: chatBudget.with(func(b *budget) {
		b.allocsPerRequest += 3 // its request: Messages' body and headers
		b.bytesPerRequest += 64 // their bytes
	})},
	// The server's own account of its time (llama.cpp's timings in the
	// last chunk, here the mock's with its queue): read once per
	// response, into the record, without allocating; the breakdown is
	// the shard's work.
	{name: "chat, server timings", kind: endpoint.Chat, maxTokens: budgetTokens, mock: mockserver.Config{Timings: mockserver.TimingsMock}, budget: chatBudget},
	{name: "chat, prefill cap", kind: endpoint.Chat, maxTokens: budgetTokens, gen: []Option{WithPrefillConcurrency(1)}, budget: chatBudget.with(func(b *budget) {
		b.clockPerRequest++ // the wait for a prefill slot is timed
	})},
}

// TestBudgetHotPath streams budgetCases' requests one at a time in
// lockstep and holds each to its budget.
func TestBudgetHotPath(t *testing.T) {
	if testing.Short() {
		t.Skip("streams a few hundred requests over loopback")
	}
	// One P, as testing.AllocsPerRun runs: the goroutines of the path take
	// turns in a fixed order, so a window holds its own work only.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, bc := range budgetCases {
		t.Run(bc.name, func(t *testing.T) {
			got := measureBudget(t, bc)
			t.Logf("per token: %s", got.perToken())
			t.Logf("per request: %s", got.perRequest())
			got.within(t, bc.budget)
		})
	}
}

func (b budget) perToken() string {
	return fmt.Sprintf("%g allocs, %g B, %g clock readings, %g Recorder calls, %g socket reads",
		b.allocsPerToken, b.bytesPerToken, b.clockPerToken, b.recorderPerToken, b.readsPerToken)
}

func (b budget) perRequest() string {
	return fmt.Sprintf("%.1f allocs, %.0f B, %.2f goroutines, %.1f clock readings, %.1f Recorder calls",
		b.allocsPerRequest, b.bytesPerRequest, b.goroutinesPerRequest, b.clockPerRequest, b.recorderPerRequest)
}

// within fails t for every figure of b over its limit in max.
func (b budget) within(t *testing.T, max budget) {
	t.Helper()
	for _, c := range []struct {
		what     string
		got, max float64
		pooled   bool // what pooling saves is in the count
	}{
		{"allocations per token", b.allocsPerToken, max.allocsPerToken, false},
		{"bytes allocated per token", b.bytesPerToken, max.bytesPerToken, false},
		{"clock readings per token", b.clockPerToken, max.clockPerToken, false},
		{"Recorder calls per token", b.recorderPerToken, max.recorderPerToken, false},
		{"socket reads per token", b.readsPerToken, max.readsPerToken, false},
		{"allocations per request", b.allocsPerRequest, max.allocsPerRequest, true},
		{"bytes allocated per request", b.bytesPerRequest, max.bytesPerRequest, true},
		{"goroutines started per request", b.goroutinesPerRequest, max.goroutinesPerRequest, false},
		{"clock readings per request", b.clockPerRequest, max.clockPerRequest, false},
		{"Recorder calls per request", b.recorderPerRequest, max.recorderPerRequest, false},
	} {
		if raceEnabled && c.pooled {
			// Under the race detector sync.Pool drops items at random: a
			// request may build what it would have reused.
			continue
		}
		if c.got > c.max {
			t.Errorf("%s: %g, over the budget of %g (docs/benchmarks.md: the hot-path budget)", c.what, c.got, c.max)
		}
	}
}

// counters are the process's running totals a window is measured by.
type counters struct {
	allocs, bytes, goroutines, clock, recorder uint64
}

func (c counters) sub(o counters) counters {
	return counters{c.allocs - o.allocs, c.bytes - o.bytes, c.goroutines - o.goroutines, c.clock - o.clock, c.recorder - o.recorder}
}

// meter reads counters without allocating. The allocations come from
// runtime.ReadMemStats, exact to the allocation as testing.AllocsPerRun
// counts them (runtime/metrics' counts lag by whatever the per-P caches
// hold).
type meter struct {
	mem      runtime.MemStats
	samples  []rtmetrics.Sample
	clock    atomic.Uint64
	recorder atomic.Uint64
}

func newMeter() *meter {
	return &meter{samples: []rtmetrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}}
}

func (m *meter) read() counters {
	runtime.ReadMemStats(&m.mem)
	rtmetrics.Read(m.samples)
	return counters{
		allocs: m.mem.Mallocs, bytes: m.mem.TotalAlloc, goroutines: m.samples[0].Value.Uint64(),
		clock: m.clock.Load(), recorder: m.recorder.Load(),
	}
}

// budgetRecorder is the collector as the generator sees it, counting
// calls, reading the meter at the points a window starts and ends, and
// letting the lockstep server send the next token once a token was
// taken. Its own bookkeeping allocates nothing.
type budgetRecorder struct {
	Recorder
	m    *meter
	next chan struct{}
	// Touched by the reading goroutine only (one request at a time).
	tokens int
	// firsts[i] is the meter at request i's first token; spans[i] the
	// meter from its second token to its last.
	firsts []counters
	spans  []counters
	from   counters
	// reads, events and records total the socket reads, token events
	// and records of the window's requests (from the collector's shard).
	reads, events, records atomic.Int64
}

func (r *budgetRecorder) Started(p metrics.Phase) {
	r.m.recorder.Add(1)
	r.Recorder.Started(p)
}

func (r *budgetRecorder) FirstToken(index int64, p metrics.Phase, ttftNs int64) {
	r.m.recorder.Add(1)
	if int(index) < len(r.firsts) {
		r.firsts[index] = r.m.read()
	}
	r.tokens = 0
	r.Recorder.FirstToken(index, p, ttftNs)
}

func (r *budgetRecorder) Tokens(index, atNs int64, n int) {
	r.m.recorder.Add(1)
	r.Recorder.Tokens(index, atNs, n)
	r.tokens++
	switch r.tokens {
	case 2: // the window opens after the second token's own work
		r.from = r.m.read()
	case budgetTokens:
		if int(index) < len(r.spans) {
			r.spans[index] = r.m.read().sub(r.from)
		}
	}
	select {
	case r.next <- struct{}{}:
	default: // the server is gone: the run fails on its own
	}
}

func (r *budgetRecorder) Reasoning(index int64) {
	r.m.recorder.Add(1)
	r.Recorder.Reasoning(index)
}

func (r *budgetRecorder) Add(rec *metrics.Record) {
	r.m.recorder.Add(1)
	r.Recorder.Add(rec)
}

// WriteRecord is the collector's sink: it totals the window's reads.
func (r *budgetRecorder) WriteRecord(rec *metrics.Record, _ *metrics.Values, _ bool) {
	if rec.Index >= budgetWarm && rec.Index < budgetWarm+budgetWindow {
		r.reads.Add(rec.HTTP.ChunksReceived)
		r.events.Add(int64(len(rec.TokenNs)))
		r.records.Add(1)
	}
}

// measureBudget runs bc's requests and returns what they cost.
func measureBudget(t *testing.T, bc budgetCase) budget {
	t.Helper()
	ep := &endpoint.Endpoint{Kind: bc.kind, Model: "m", Streaming: true}
	srv := newLockstepServer(t, bc.mock, ep)
	total := budgetWarm + budgetWindow + 1
	rec := &budgetRecorder{m: newMeter(), next: srv.next, firsts: make([]counters, total), spans: make([]counters, total)}
	col := metrics.NewCollector(append([]metrics.Option{metrics.WithSink(rec), metrics.WithShards(1)}, bc.col...)...)
	rec.Recorder = col
	ds := &datasets.Dataset{Name: "budget", Conversations: []datasets.Conversation{
		{ID: "c", Turns: []datasets.Turn{{Text: "a prompt of a few words", InputTokens: 6, MaxTokens: bc.maxTokens}}},
	}}
	g, err := New(srv.url, ep, ds, rec, bc.gen...)
	if err != nil {
		t.Fatal(err)
	}
	now := g.now
	g.now = func() int64 { rec.m.clock.Add(1); return now() }
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := g.Run(ctx, []Stage{{Phase: metrics.Profile, Limit: schedule.Constant(1), Count: total}}); err != nil {
		t.Fatal(err)
	}
	s := col.Close()
	if n := s.Run[metrics.RequestCount]; n != float64(total) {
		t.Fatalf("%v of %d requests succeeded (errors: %v)", n, total, s.Errors)
	}

	var b budget
	// Per token: the median request's window of budgetTokens − 2 tokens.
	tokens := float64(budgetTokens - 2)
	median := func(f func(c counters) uint64) float64 {
		xs := make([]float64, 0, budgetWindow)
		for _, c := range rec.spans[budgetWarm : budgetWarm+budgetWindow] {
			xs = append(xs, float64(f(c))/tokens)
		}
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	b.allocsPerToken = median(func(c counters) uint64 { return c.allocs })
	b.bytesPerToken = median(func(c counters) uint64 { return c.bytes })
	b.clockPerToken = median(func(c counters) uint64 { return c.clock })
	b.recorderPerToken = median(func(c counters) uint64 { return c.recorder })
	b.readsPerToken = float64(rec.reads.Load()-rec.records.Load()) / float64(rec.events.Load())

	// Per request: the window's mean, its tokens' own counts taken out.
	w := rec.firsts[budgetWarm+budgetWindow].sub(rec.firsts[budgetWarm])
	n := float64(budgetWindow)
	b.allocsPerRequest = float64(w.allocs)/n - budgetTokens*b.allocsPerToken
	b.bytesPerRequest = float64(w.bytes)/n - budgetTokens*b.bytesPerToken
	b.goroutinesPerRequest = float64(w.goroutines) / n
	b.clockPerRequest = float64(w.clock)/n - budgetTokens*b.clockPerToken
	b.recorderPerRequest = float64(w.recorder)/n - budgetTokens*b.recorderPerToken
	return b
}

// lockstepServer is an HTTP/1.1 server on 127.0.0.1 that answers every
// request with the mock's stream for the endpoint, writing each token's
// event (and the events before it that carry no token) only once the
// client took the token before it (next). It allocates nothing per
// request or token, so the process's counts are the client's.
type lockstepServer struct {
	url  string
	next chan struct{}
	// writes[0] is the response's head and its first token, writes[i]
	// token i, last the stream's end (the events after the last token
	// and the chunked body's end).
	writes [][]byte
	last   []byte
}

func newLockstepServer(t *testing.T, mock mockserver.Config, ep *endpoint.Endpoint) *lockstepServer {
	t.Helper()
	events, ct := mockStream(t, mock, ep, budgetTokens)
	s := &lockstepServer{next: make(chan struct{}, 1)}
	// Cut the stream after each token's event: a decoder says which
	// events carry one.
	dec := ep.NewDecoder()
	var out endpoint.Output
	var pending []byte
	readers := frames.NewReaders(nil, 0)
	for _, ev := range events {
		pending = append(pending, ev...)
		rd, _ := readers.Open(ct, ep, bytes.NewReader(ev))
		e, err := rd.Next()
		if err != nil {
			t.Fatalf("the mock's event %q: %v", ev, err)
		}
		if d, _ := dec.Event(e.Type, e.Data, &out); d.Content || d.Reasoning || d.ToolCall {
			s.writes = append(s.writes, chunk(pending))
			pending = nil
		}
	}
	if len(s.writes) != budgetTokens {
		t.Fatalf("the mock's %s stream has %d token events, want %d", ep.Kind, len(s.writes), budgetTokens)
	}
	s.writes[0] = append([]byte("HTTP/1.1 200 OK\r\nContent-Type: "+ct+"\r\nTransfer-Encoding: chunked\r\n\r\n"), s.writes[0]...)
	s.last = append(chunk(pending), "0\r\n\r\n"...)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.url = "http://" + ln.Addr().String()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() { s.serve(c) })
		}
	})
	return s
}

// chunk is b as one chunk of a chunked body.
func chunk(b []byte) []byte {
	return fmt.Appendf(nil, "%x\r\n%s\r\n", len(b), b)
}

// serve answers the requests of one connection until it closes.
func (s *lockstepServer) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReaderSize(c, 64<<10)
	for {
		if !readRequest(r) {
			return
		}
		for i, w := range s.writes {
			if i > 0 {
				<-s.next
			}
			if _, err := c.Write(w); err != nil {
				return
			}
		}
		<-s.next
		if _, err := c.Write(s.last); err != nil {
			return
		}
	}
}

// readRequest reads one request's head and body, allocating nothing:
// false when the connection ended.
func readRequest(r *bufio.Reader) bool {
	length := 0
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return false
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			break
		}
		const cl = "content-length:"
		if len(line) > len(cl) && bytes.EqualFold(line[:len(cl)], []byte(cl)) {
			for _, c := range bytes.TrimSpace(line[len(cl):]) {
				length = 10*length + int(c-'0')
			}
		}
	}
	_, err := r.Discard(length)
	return err == nil
}
