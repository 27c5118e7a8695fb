package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
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

// hostileReplies is an OpenAI-compatible chat server whose streamed
// replies are built ahead (reply(n) for its n-th request, from 0), so
// serving them allocates nothing the client's heap would be blamed for.
// It keeps each request's body size and tool_call_ids.
type hostileReplies struct {
	replies  [][]byte
	fallback []byte
	mu       sync.Mutex
	sizes    []int
	bodies   [][]byte
	requests atomic.Int64
}

func (h *hostileReplies) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	n := int(h.requests.Add(1) - 1)
	h.mu.Lock()
	h.sizes = append(h.sizes, len(body))
	if len(body) < 1<<20 {
		h.bodies = append(h.bodies, body)
	} else {
		h.bodies = append(h.bodies, nil)
	}
	h.mu.Unlock()
	reply := h.fallback
	if n < len(h.replies) {
		reply = h.replies[n]
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = w.Write(reply)
}

// sseToolCalls is a streamed chat reply calling calls tools: call i has
// id ids(i) (omitted when ""), and arguments args, sent in pieces of at
// most piece bytes.
func sseToolCalls(calls int, ids func(int) string, args string, piece int) []byte {
	var b bytes.Buffer
	for i := range calls {
		id := ""
		if s := ids(i); s != "" {
			id = fmt.Sprintf(`"id":%q,`, s)
		}
		fmt.Fprintf(&b, "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":%d,%s\"type\":\"function\",\"function\":{\"name\":\"lookup\",\"arguments\":\"\"}}]}}]}\n\n", i, id)
		for rest := args; rest != ""; {
			n := min(piece, len(rest))
			fmt.Fprintf(&b, "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":%d,\"function\":{\"arguments\":%q}}]}}]}\n\n", i, rest[:n])
			rest = rest[n:]
		}
	}
	b.WriteString("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":5}}\n\ndata: [DONE]\n\n")
	return b.Bytes()
}

// sseText is a streamed chat reply of text, in usage tokens.
func sseText(text string, tokens int) []byte {
	return fmt.Appendf(nil, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", text, tokens)
}

// brief keeps what a test needs of each record (not its text: a 20 MB
// reply's must not stay in the heap the test measures).
type brief struct {
	mu   sync.Mutex
	recs []briefRecord
}

type briefRecord struct {
	turn, round, calls int
	kind               metrics.TurnKind
	errType, errMsg    string
	ids                []string
}

func (b *brief) WriteRecord(r *metrics.Record, _ *metrics.Values, _ bool) {
	br := briefRecord{turn: r.TurnIndex, round: r.ToolRound, calls: len(r.ToolCalls), kind: r.TurnKind}
	for _, c := range r.ToolCalls {
		br.ids = append(br.ids, c.ID)
	}
	if r.Err != nil {
		br.errType, br.errMsg = r.Err.Type, r.Err.Message
	}
	b.mu.Lock()
	b.recs = append(b.recs, br)
	b.mu.Unlock()
}

// heapPeak samples the heap in use until stop is called, and returns the
// highest value it saw above the heap at its start.
func heapPeak() (stop func() uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapInuse, ms.HeapInuse
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak - base
	}
}

// TestSessionLimits runs sessions against servers that send what no agent
// does: each session ends where the limit says, with one
// session_limit record for the request it did not send (which the server
// never sees), the run going on; ids a server sent missing, repeated or a
// megabyte long go back as surge's own, counted; and the client's heap
// stays within a few replies' size (a 20 MB reply: under 160 MB; before,
// the loop resent it round after round, 167 MB bodies and GBs of RSS).
func TestSessionLimits(t *testing.T) {
	bigArgs := `{"q":"` + strings.Repeat("a", 20<<20) + `"}`
	uniqueIDs := func(i int) string { return fmt.Sprintf("call_%d", i) }
	// One conversation of turns that offer a tool and set no output cap
	// (a cap's guard would end a flood of deltas first).
	oneTurn := func(turns int) *datasets.Dataset {
		ds := agentDataset(1, turns)
		for i := range ds.Conversations[0].Turns {
			ds.Conversations[0].Turns[i].MaxTokens = 0
		}
		return ds
	}
	for _, tc := range []struct {
		name    string
		replies [][]byte
		// fallback answers every request after replies (nil: text).
		fallback []byte
		ds       *datasets.Dataset
		loop     bool
		limits   SessionLimits
		// requests is what the server must see, records the records
		// (the refusal included), want the refusal's message (""
		// none).
		requests, records int
		want              string
		replaced          int64
		// heap bounds the client's heap growth (0: not measured).
		heap uint64
	}{
		{name: "20 MB of arguments a reply", replies: [][]byte{sseToolCalls(1, uniqueIDs, bigArgs, 256<<10)}, ds: oneTurn(1), loop: true,
			requests: 1, records: 2, want: `a tool call's arguments are 20.0 MiB, more than 4 MiB`, heap: 160 << 20},
		{name: "10,000 calls a reply", replies: [][]byte{sseToolCalls(10_000, uniqueIDs, "{}", 64)}, ds: oneTurn(1), loop: true,
			requests: 1, records: 2, want: "a reply made more than 128 tool calls", heap: 160 << 20},
		{name: "20 MB of arguments, no loop, next turn", replies: [][]byte{sseToolCalls(1, uniqueIDs, bigArgs, 256<<10)}, ds: oneTurn(2),
			requests: 1, records: 2, want: "more than 4 MiB"},
		{name: "a reply of 20 MB that nothing resends", replies: [][]byte{sseToolCalls(1, uniqueIDs, bigArgs, 256<<10)}, ds: oneTurn(1),
			requests: 1, records: 1},
		{name: "context bytes: 300 kB a reply, 1 MB at most", fallback: sseText(strings.Repeat("b", 300<<10), 10), ds: oneTurn(8),
			limits: SessionLimits{ContextBytes: 1 << 20}, requests: 4, records: 5, want: "context would be"},
		{name: "context tokens: 1000 a reply, 2500 at most", fallback: sseText("ok", 1000), ds: oneTurn(8),
			limits: SessionLimits{ContextTokens: 2500}, requests: 3, records: 4, want: "tokens, more than 2500"},
		{name: "missing ids", replies: [][]byte{sseToolCalls(3, func(int) string { return "" }, "{}", 64)}, ds: oneTurn(1), loop: true,
			requests: 2, records: 2, replaced: 3},
		{name: "duplicate ids", replies: [][]byte{sseToolCalls(3, func(int) string { return "call_1" }, "{}", 64)}, ds: oneTurn(1), loop: true,
			requests: 2, records: 2, replaced: 2},
		{name: "a 1 MB id", replies: [][]byte{sseToolCalls(2, func(i int) string { return strings.Repeat("x", 1<<20+i) }, "{}", 64)}, ds: oneTurn(1), loop: true,
			requests: 2, records: 2, replaced: 2},
		{name: "the same id every reply", replies: [][]byte{sseToolCalls(1, func(int) string { return "call_1" }, "{}", 64),
			sseToolCalls(1, func(int) string { return "call_1" }, "{}", 64)}, ds: oneTurn(1), loop: true,
			requests: 3, records: 3, replaced: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fallback := tc.fallback
			if fallback == nil {
				fallback = sseText("done", 2)
			}
			srv := &hostileReplies{replies: tc.replies, fallback: fallback}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			sink := &brief{}
			col := metrics.NewCollector(metrics.WithSink(sink))
			opts := []Option{WithSessionLimits(tc.limits)}
			if tc.loop {
				opts = append(opts, WithToolLoop(ToolLoop{Results: []string{"result"}, ResultTokens: 1, MaxRounds: 8}))
			}
			g, err := New(ts.URL, &endpoint.Endpoint{Kind: endpoint.Chat, Model: "m", Streaming: true}, tc.ds, col, opts...)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var peak func() uint64
			if tc.heap > 0 {
				peak = heapPeak()
			}
			if err := g.Run(ctx, []Stage{{Limit: schedule.Constant(1), Count: len(tc.ds.Conversations[0].Turns)}}); err != nil {
				t.Fatal(err)
			}
			if peak != nil {
				grew := peak()
				t.Logf("heap in use grew by %d MB at most", grew>>20)
				if grew > tc.heap {
					t.Errorf("the heap grew by %d MB, more than %d MB", grew>>20, tc.heap>>20)
				}
			}
			s := col.Close()
			srv.mu.Lock()
			sizes := srv.sizes
			srv.mu.Unlock()
			if got := srv.requests.Load(); got != int64(tc.requests) {
				t.Errorf("the server saw %d requests, want %d (sizes %v)", got, tc.requests, sizes)
			}
			var refusals []briefRecord
			for _, r := range sink.recs {
				if r.errType != "" {
					refusals = append(refusals, r)
				}
			}
			switch {
			case len(sink.recs) != tc.records:
				t.Errorf("%d records, want %d: %+v", len(sink.recs), tc.records, sink.recs)
			case tc.want == "" && len(refusals) > 0:
				t.Errorf("errors %+v, want none", refusals)
			case tc.want != "" && (len(refusals) != 1 || refusals[0].errType != ErrSessionLimit || !strings.Contains(refusals[0].errMsg, tc.want)):
				t.Errorf("errors %+v, want one %s saying %q", refusals, ErrSessionLimit, tc.want)
			case tc.want != "" && s.SessionLimits() != 1:
				t.Errorf("the summary counts %d session limits: %+v", s.SessionLimits(), s.Errors)
			}
			if got := g.ReplacedToolCallIDs(); got != tc.replaced {
				t.Errorf("%d ids replaced, want %d", got, tc.replaced)
			}
			if tc.replaced > 0 {
				checkIDs(t, srv, sink)
			}
		})
	}
}

// checkIDs: every call the server's replies made went back with an id of
// at most MaxToolCallID bytes, unique in the session, and each tool
// result answers one of them.
func checkIDs(t *testing.T, srv *hostileReplies, sink *brief) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range sink.recs {
		for _, id := range r.ids {
			if id == "" || len(id) > MaxToolCallID || seen[id] {
				t.Errorf("id %.40q sent back (empty, too long or repeated)", id)
			}
			seen[id] = true
		}
	}
	answered := regexp.MustCompile(`"tool_call_id":"([^"]*)"`)
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for i, b := range srv.bodies {
		for _, m := range answered.FindAllSubmatch(b, -1) {
			if !seen[string(m[1])] {
				t.Errorf("request %d answers %q, no call's id", i, m[1])
			}
		}
	}
}

// TestCallsUpToLinear: a reply of many calls, their pieces interleaved
// as parallel calls stream, is put together call by call in the order
// first seen, the first max only, and the count of them all.
func TestCallsUpToLinear(t *testing.T) {
	t.Parallel()
	var chunks []string
	const n = 5000
	for i := range n {
		chunks = append(chunks, fmt.Sprintf(`{"choices":[{"delta":{"tool_calls":[{"index":%d,"id":"c%d","function":{"name":"f","arguments":"{\"a\":"}}]}}]}`, i, i))
	}
	for i := range n {
		chunks = append(chunks, fmt.Sprintf(`{"choices":[{"delta":{"tool_calls":[{"index":%d,"function":{"arguments":"%d}"}}]}}]}`, i, i))
	}
	d := (&endpoint.Endpoint{Kind: endpoint.Chat}).NewDecoder()
	var out endpoint.Output
	for _, c := range chunks {
		if _, err := d.Event(nil, []byte(c), &out); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	calls, total := out.Tools.CallsUpTo(129)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("putting %d calls together took %v", n, took)
	}
	if total != n || len(calls) != 129 {
		t.Fatalf("%d calls of %d, want 129 of %d", len(calls), total, n)
	}
	for i, c := range calls {
		if c.ID != fmt.Sprintf("c%d", i) || c.Arguments != fmt.Sprintf(`{"a":%d}`, i) {
			t.Fatalf("call %d: %+v", i, c)
		}
	}
	if all := out.Tools.Calls(); len(all) != n || all[n-1].Arguments != fmt.Sprintf(`{"a":%d}`, n-1) {
		t.Errorf("Calls: %d, last %+v", len(all), all[len(all)-1])
	}
}
