package metrics

import (
	"math"
	"testing"
)

// agentRecord is a successful streamed request of session sess: sent at
// sentMs, its first token ttftMs later, ended at endMs.
func agentRecord(idx, sess int64, turn, round int, kind TurnKind, sentMs, ttftMs, endMs float64, prompt, cached int) *Record {
	ms := func(x float64) int64 { return int64(x * 1e6) }
	r := &Record{Index: idx, Session: sess, TurnIndex: turn, ToolRound: round, TurnKind: kind, Streamed: true,
		SentNs: ms(sentMs), EndNs: ms(endMs), TokenNs: []int64{ms(sentMs + ttftMs), ms(endMs)}, InputTokens: 10,
		Usage: Usage{Present: true, PromptTokens: prompt, CompletionTokens: 2, CacheReadTokens: cached,
			Fields: UsagePromptField | UsageCompletionField | UsageCacheReadField}}
	return r
}

// TestSessions: sessions' durations and sizes, TTFT by turn kind and by
// context band, the cached fraction, tool calls and time in tools.
func TestSessions(t *testing.T) {
	t.Parallel()
	c := NewCollector(WithShards(3))
	// Session 0: a first turn, two tool rounds, a user turn.
	a := agentRecord(0, 0, 0, 0, TurnFirst, 100, 50, 200, 100, 0)
	a.ToolCalls = []ToolCall{{ID: "c1", Name: "f", Arguments: "{}"}}
	b := agentRecord(1, 0, 0, 1, TurnToolResult, 300, 10, 350, 140, 100)
	b.ToolWaitNs, b.ToolCalls, b.ToolCallErrors = int64(100e6), []ToolCall{{ID: "c2", Name: "f", Arguments: "{"}}, 1
	d := agentRecord(2, 0, 0, 2, TurnToolResult, 400, 12, 420, 180, 140)
	d.ToolWaitNs = int64(50e6)
	e := agentRecord(3, 0, 1, 0, TurnUser, 500, 20, 600, 260, 180)
	// Session 1: its first turn, then one past the window.
	f := agentRecord(4, 1, 0, 0, TurnFirst, 0, 60, 100, 100, 0)
	g := &Record{Index: 5, Session: 1, TurnIndex: 1, TurnKind: TurnUser, SentNs: 150e6, EndNs: 160e6,
		Err: &Error{Code: 400, Type: "context_overflow", Message: "maximum context length"}}
	// A warmup record is no session's.
	w := agentRecord(6, 2, 0, 0, TurnFirst, 0, 1, 2, 5, 0)
	w.Phase = Warmup
	for _, r := range []*Record{a, b, d, e, f, g, w} {
		c.Add(r)
	}
	s := c.Close().Sessions
	if s == nil {
		t.Fatal("no sessions")
	}
	if s.Count != 2 || s.Completed != 1 || s.Requests.Max != 4 || s.Requests.Min != 2 || s.Turns.Max != 2 {
		t.Fatalf("sessions %+v requests %+v turns %+v", s, s.Requests, s.Turns)
	}
	if s.Duration.Max != 500 || s.Duration.Min != 160 {
		t.Errorf("durations %+v, want 500 and 160 ms", s.Duration)
	}
	if s.TTFT["first"].Count != 2 || s.TTFT["tool_result"].Count != 2 || s.TTFT["tool_result"].Avg != 11 || s.TTFT["user"].Avg != 20 {
		t.Errorf("TTFT by kind %+v", s.TTFT)
	}
	// Cached: (0+100+140+180+0) of (100+140+180+260+100) prompt tokens.
	if want := 420.0 / 780; math.Abs(s.Cached-want) > 1e-9 || s.CacheReports != 5 {
		t.Errorf("cached fraction %v (%d reports), want %v", s.Cached, s.CacheReports, want)
	}
	if s.CachedByKind["first"] != 0 || math.Abs(s.CachedByKind["tool_result"]-240.0/320) > 1e-9 {
		t.Errorf("cached by kind %v", s.CachedByKind)
	}
	if s.ToolCalls != 2 || s.ToolCallErrors != 1 || s.ToolCallSuccess() != 0.5 || s.ToolResults != 2 || s.ContextOverflows != 1 {
		t.Errorf("tools %+v", s)
	}
	if s.ToolTimeMs != 150 || s.ServerTimeMs != 100+50+20+100+100 {
		t.Errorf("time in tools %v ms, on the server %v ms", s.ToolTimeMs, s.ServerTimeMs)
	}
	// Context: the server's prompt counts; bands cover them in order.
	if s.Context.Count != 5 || s.Context.Max != 260 {
		t.Errorf("context %+v", s.Context)
	}
	n := int64(0)
	for i, b := range s.ByContext {
		n += b.Count
		if i > 0 && b.From < s.ByContext[i-1].To || b.Context < float64(b.From) || b.Context >= float64(b.To) {
			t.Errorf("band %+v", b)
		}
	}
	if n != 5 {
		t.Errorf("bands hold %d requests, want 5", n)
	}
}

// TestNoSessions: a run of single requests has nothing to say.
func TestNoSessions(t *testing.T) {
	t.Parallel()
	c := NewCollector()
	for i := range 4 {
		c.Add(&Record{Index: int64(i), Session: int64(i), SentNs: 1e6, EndNs: 2e6, TokenNs: []int64{2e6}, Streamed: true})
	}
	if s := c.Close().Sessions; s != nil {
		t.Fatalf("sessions %+v", s)
	}
}
