package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

var lookupTool = []map[string]any{{"type": "function", "function": map[string]any{
	"name": "lookup", "parameters": map[string]any{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}}}}}

// agentDataset is n conversations of turns turns that offer a tool.
func agentDataset(n, turns int) *datasets.Dataset {
	ds := &datasets.Dataset{Name: "agent"}
	for i := range n {
		c := datasets.Conversation{ID: "agent-" + string(rune('a'+i))}
		for j := range turns {
			c.Turns = append(c.Turns, datasets.Turn{Text: "task step " + string(rune('0'+j)), InputTokens: 3, MaxTokens: 6, Tools: lookupTool})
		}
		ds.Conversations = append(ds.Conversations, c)
	}
	return ds
}

// bodyLog keeps every body a run sends, by session and request.
type bodyLog struct {
	mu     sync.Mutex
	bodies map[int64]map[int][]byte
}

func (b *bodyLog) Body(session int64, _ int, _ string, turn int, body []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bodies == nil {
		b.bodies = map[int64]map[int][]byte{}
	}
	if b.bodies[session] == nil {
		b.bodies[session] = map[int][]byte{}
	}
	b.bodies[session][turn] = body
}
func (b *bodyLog) EndSession(int64, int) {}

// runAgent runs stages of ds against a mock of cfg with a tool loop.
func runAgent(t *testing.T, cfg mockserver.Config, kind endpoint.Kind, ds *datasets.Dataset, loop ToolLoop, count int) (*mockserver.Server, *metrics.Summary, []*metrics.Record, *bodyLog) {
	t.Helper()
	srv := mockserver.New(cfg)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	sink, log := &collectSink{}, &bodyLog{}
	col := metrics.NewCollector(metrics.WithSink(sink))
	g, err := New(ts.URL, &endpoint.Endpoint{Kind: kind, Model: "m", Streaming: true}, ds, col, WithToolLoop(loop), WithBodySink(log))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Run(ctx, []Stage{{Limit: schedule.Constant(2), Count: count}}); err != nil {
		t.Fatal(err)
	}
	s := col.Close()
	recs := sink.recs
	sort.Slice(recs, func(i, j int) bool { return recs[i].Index < recs[j].Index })
	if got := g.ToolLoopRequests(); got != int64(len(recs)-count) {
		t.Errorf("the loop counted %d requests; %d records for %d turns", got, len(recs), count)
	}
	return srv, s, recs, log
}

// TestToolLoop: every reply that calls a tool is answered, after the
// tools' delay, with a result of the chosen text, up to MaxRounds; the
// mock sees each result answer its call, in each API's shape, and the
// context grows as the session goes.
func TestToolLoop(t *testing.T) {
	t.Parallel()
	const delay = 30 * time.Millisecond
	for _, kind := range []endpoint.Kind{endpoint.Chat, endpoint.Responses, endpoint.Messages} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			loop := ToolLoop{Results: []string{"result alpha", "result beta"}, ResultTokens: 2, Delay: delay, MaxRounds: 2}
			srv, s, recs, log := runAgent(t, mockserver.Config{ToolCallRate: 1, DefaultOutputTokens: 4}, kind, agentDataset(2, 2), loop, 4)
			// Every reply calls: each of the 4 turns gets 2 rounds.
			if len(recs) != 12 || s.Run[metrics.ErrorRequestCount] != 0 {
				t.Fatalf("%d records, errors %+v", len(recs), s.Errors)
			}
			st := srv.Stats()
			if st.ToolResults == 0 || st.ToolRejected != 0 || st.ToolCalls != 12 {
				t.Fatalf("mock stats %+v", st)
			}
			bySession := map[int64][]*metrics.Record{}
			for _, r := range recs {
				bySession[r.Session] = append(bySession[r.Session], r)
			}
			for sess, rs := range bySession {
				prev := 0
				for k, r := range rs {
					wantRound := k % 3
					if r.ToolRound != wantRound || r.TurnIndex != k/3 {
						t.Fatalf("session %d request %d: turn %d round %d", sess, k, r.TurnIndex, r.ToolRound)
					}
					switch {
					case wantRound > 0 && (r.TurnKind != metrics.TurnToolResult || time.Duration(r.ToolWaitNs) < delay):
						t.Errorf("session %d request %d: kind %v, waited %v for the tools", sess, k, r.TurnKind, time.Duration(r.ToolWaitNs))
					case k == 0 && r.TurnKind != metrics.TurnFirst, k == 3 && r.TurnKind != metrics.TurnUser:
						t.Errorf("session %d request %d: kind %v", sess, k, r.TurnKind)
					}
					if len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "lookup" || r.ToolCallErrors != 0 {
						t.Errorf("session %d request %d: calls %+v", sess, k, r.ToolCalls)
					}
					if r.ContextTokens <= prev {
						t.Errorf("session %d request %d: context %d after %d", sess, k, r.ContextTokens, prev)
					}
					prev = r.ContextTokens
				}
				// The session's last body carries every result before it:
				// the first turn's two rounds, and the results of the calls
				// its bound left (answered in the history before the next
				// turn), then the second turn's two.
				body := log.bodies[sess][len(rs)-1]
				if n := bytes.Count(body, []byte("result ")); n != 5 {
					t.Errorf("session %d: last body holds %d tool results, want 5: %s", sess, n, body)
				}
			}
		})
	}
}

// TestToolLoopBadInput: a call whose arguments are not JSON is counted,
// answered all the same, and the run goes on; a prompt past the server's
// window is a context_overflow record that ends its session alone; a
// dataset's tool result for an unknown call is counted and the server's
// refusal recorded as what it is.
func TestToolLoopBadInput(t *testing.T) {
	t.Parallel()
	loop := ToolLoop{Results: []string{"r"}, ResultTokens: 1, MaxRounds: 1}
	_, s, recs, _ := runAgent(t, mockserver.Config{ToolCallRate: 1, BadToolArgsRate: 1, DefaultOutputTokens: 3}, endpoint.Chat, agentDataset(2, 1), loop, 2)
	if len(recs) != 4 || s.Run[metrics.ErrorRequestCount] != 0 {
		t.Fatalf("%d records, errors %+v", len(recs), s.Errors)
	}
	for _, r := range recs {
		if r.ToolCallErrors != 1 || json.Valid([]byte(r.ToolCalls[0].Arguments)) {
			t.Errorf("record %d: %d argument errors for %+v", r.Index, r.ToolCallErrors, r.ToolCalls)
		}
	}

	// A window of 40: each session's second round passes it.
	_, s, recs, _ = runAgent(t, mockserver.Config{ToolCallRate: 1, DefaultOutputTokens: 8, MaxModelLen: 40}, endpoint.Chat, agentDataset(3, 1),
		ToolLoop{Results: []string{strings.Repeat("word ", 12)}, ResultTokens: 12, MaxRounds: 5}, 3)
	overflows := 0
	for _, r := range recs {
		if r.Err != nil {
			if r.Err.Type != ErrContextOverflow || r.Err.Code != 400 || !strings.Contains(r.Err.Message, "maximum context length is 40") {
				t.Errorf("record %d: error %+v", r.Index, r.Err)
			}
			overflows++
		}
	}
	if overflows != 3 || s.Sessions == nil || s.Sessions.ContextOverflows != 3 {
		t.Fatalf("%d overflows in %d records, want one per session (sessions %+v)", overflows, len(recs), s.Sessions)
	}

	stray := &datasets.Dataset{Name: "stray", Conversations: []datasets.Conversation{{ID: "s", Turns: []datasets.Turn{{
		Messages: []map[string]any{{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "nobody", "content": "x"}}, MaxTokens: 2}}}}}
	_, _, recs, _ = runAgent(t, mockserver.Config{}, endpoint.Chat, stray, loop, 1)
	if len(recs) != 1 || recs[0].UnknownToolResults != 1 || recs[0].Err == nil || recs[0].Err.Type != "invalid_request_error" || recs[0].Err.Code != 400 {
		t.Fatalf("record %+v, error %+v", recs[0], recs[0].Err)
	}
}

// TestClassifyOverflow: servers' words for a prompt past the window make
// a context_overflow error; other errors keep their type.
func TestClassifyOverflow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		e    metrics.Error
		want string
	}{
		{metrics.Error{Code: 400, Type: "BadRequestError", Message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens"}, ErrContextOverflow},
		{metrics.Error{Code: 400, Type: "invalid_request_error", Message: "prompt is too long: 210000 tokens > 200000 maximum"}, ErrContextOverflow},
		{metrics.Error{Code: 400, Type: "invalid_request_error", Message: "Your input exceeds the context window of this model. code: context_length_exceeded"}, ErrContextOverflow},
		{metrics.Error{Code: 413, Type: "Request Entity Too Large", Message: "Input is too long for requested model."}, ErrContextOverflow},
		{metrics.Error{Code: 200, Type: "error", Message: "The input (5000 tokens) is longer than the model's context length (4096 tokens)."}, ErrContextOverflow},
		// llama.cpp b4747 without context shift (a real server's answer).
		{metrics.Error{Code: 400, Type: "invalid_request_error", Message: "the request exceeds the available context size. try increasing the context size or enable context shift"}, ErrContextOverflow},
		{metrics.Error{Code: 400, Type: "invalid_request_error", Message: "tool_call_id answers no tool call"}, "invalid_request_error"},
		{metrics.Error{Code: 500, Type: "server_error", Message: "maximum context length exceeded while paging"}, "server_error"},
		{metrics.Error{Type: ErrTimeout, Message: "context length"}, ErrTimeout},
	} {
		e := tc.e
		classifyOverflow(&e)
		if e.Type != tc.want || e.Message != tc.e.Message {
			t.Errorf("%+v: type %q, want %q", tc.e, e.Type, tc.want)
		}
	}
}
