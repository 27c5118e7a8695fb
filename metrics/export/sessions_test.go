package export

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/surgebench/surge/metrics"
)

// agentFixture is two agent sessions: a first turn, a tool round (one
// call's arguments broken) and a user turn; then a first turn and a turn
// past the server's window.
func agentFixture(sink metrics.RecordSink) *metrics.Summary {
	c := metrics.NewCollector(metrics.WithShards(1), metrics.WithClock(func() int64 { return 0 }), metrics.WithSink(sink))
	// rec builds a record; each is added once it is whole (the collector
	// reads it from another goroutine).
	rec := func(idx, sess int64, turn, round int, kind metrics.TurnKind, sentMs, ttftMs, endMs int64, prompt, cached, ctx int) *metrics.Record {
		r := &metrics.Record{Index: idx, Session: sess, RequestID: "r" + string(rune('a'+idx)), CorrelationID: "s" + string(rune('a'+sess)),
			ConversationID: "agent", TurnIndex: turn, ToolRound: round, TurnKind: kind, Streamed: true, InputTokens: 20,
			SentNs: sentMs * ms, EndNs: endMs * ms, TokenNs: []int64{(sentMs + ttftMs) * ms, endMs * ms}, FirstContentNs: (sentMs + ttftMs) * ms,
			ContextTokens: ctx, Usage: metrics.Usage{Present: true, PromptTokens: prompt, CompletionTokens: 2, CacheReadTokens: cached,
				Fields: metrics.UsagePromptField | metrics.UsageCompletionField | metrics.UsageCacheReadField}}
		return r
	}
	a := rec(0, 0, 0, 0, metrics.TurnFirst, 100, 40, 150, 120, 0, 20)
	a.ToolCalls = []metrics.ToolCall{{ID: "c1", Name: "lookup", Arguments: `{"q":"x"}`}, {ID: "c2", Name: "lookup", Arguments: `{"q":`}}
	a.ToolCallErrors = 1
	b := rec(1, 0, 0, 1, metrics.TurnToolResult, 250, 12, 290, 170, 120, 62)
	b.ToolWaitNs = 100 * ms
	c.Add(a)
	c.Add(b)
	c.Add(rec(2, 0, 1, 0, metrics.TurnUser, 300, 15, 340, 230, 170, 104))
	c.Add(rec(3, 1, 0, 0, metrics.TurnFirst, 120, 45, 170, 110, 0, 20))
	c.Add(&metrics.Record{Index: 4, Session: 1, RequestID: "re", CorrelationID: "sb", ConversationID: "agent", TurnIndex: 1,
		TurnKind: metrics.TurnUser, SentNs: 200 * ms, EndNs: 205 * ms, InputTokens: 20, UnknownToolResults: 1,
		Err: &metrics.Error{Code: 400, Type: "context_overflow", Message: "This model's maximum context length is 200 tokens."}})
	return c.Close()
}

// TestGoldenSessionsExports pins what every export says of an agent run's
// sessions: the JSON's "sessions" section, the CSV's session rows, the
// console's lines and the records' agent fields.
func TestGoldenSessionsExports(t *testing.T) {
	var jsonl bytes.Buffer
	sink := NewJSONL(&jsonl, fixtureStart, WithWorkerID("test"))
	s := agentFixture(sink)
	if s.Sessions == nil {
		t.Fatal("no sessions")
	}
	var js bytes.Buffer
	if err := JSON(&js, s, Run{SurgeVersion: "test", Start: fixtureStart, End: fixtureStart.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var section bytes.Buffer
	if err := json.Indent(&section, doc["sessions"], "", "  "); err != nil {
		t.Fatal(err)
	}
	section.WriteByte('\n')
	golden(t, "sessions.json", section.Bytes())
	var csv bytes.Buffer
	if err := CSV(&csv, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "sessions.csv", csv.Bytes())
	var con bytes.Buffer
	Console(&con, "surge profile: agent", s)
	golden(t, "sessions_console.txt", con.Bytes())
	golden(t, "sessions.jsonl", jsonl.Bytes())
}
