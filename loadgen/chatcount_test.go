package loadgen

import (
	"cmp"
	"context"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// TestChatMessagesOnRecords: with WithChatMessages each chat request's
// record carries what it sent, the system prompt, the history with the
// server's replies and the turn; a turn that sends a dataset payload and
// a generator without the option carry none.
func TestChatMessagesOnRecords(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer ts.Close()
	ds := &datasets.Dataset{Name: "mt", Conversations: []datasets.Conversation{
		{ID: "c", SystemPrompt: "be brief", Turns: []datasets.Turn{{Text: "first question", MaxTokens: 3}, {Text: "second question", MaxTokens: 3}}},
		{ID: "p", Turns: []datasets.Turn{{Payload: map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "raw"}}}, MaxTokens: 3}}},
	}}
	run := func(opts ...Option) map[string][]*metrics.Record {
		sink := &collectSink{}
		col := metrics.NewCollector(metrics.WithSink(sink))
		g, err := New(ts.URL, chat(false), ds, col, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Run(context.Background(), []Stage{{Limit: schedule.Constant(1), Count: 3}}); err != nil {
			t.Fatal(err)
		}
		col.Close()
		by := map[string][]*metrics.Record{}
		// In issue order: the collector may hold the first record with
		// usage back until it can judge the usage.
		slices.SortFunc(sink.recs, func(a, b *metrics.Record) int { return cmp.Compare(a.Index, b.Index) })
		for _, r := range sink.recs {
			if r.Err != nil {
				t.Fatalf("record failed: %+v", r.Err)
			}
			by[r.ConversationID] = append(by[r.ConversationID], r)
		}
		return by
	}
	by := run(WithChatMessages())
	c := by["c"]
	if len(c) != 2 || c[0].TurnIndex != 0 || c[1].TurnIndex != 1 {
		t.Fatalf("conversation c: %d records, turns %v", len(c), turns(c))
	}
	want0 := []metrics.ChatMessage{{Role: "system", Content: "be brief"}, {Role: "user", Content: "first question"}}
	want1 := append(append([]metrics.ChatMessage{}, want0...),
		metrics.ChatMessage{Role: "assistant", Content: c[0].Text}, metrics.ChatMessage{Role: "user", Content: "second question"})
	for i, want := range [][]metrics.ChatMessage{want0, want1} {
		got := c[i].Chat
		if len(got) != len(want) {
			t.Fatalf("turn %d: Chat %+v, want %+v", i, got, want)
		}
		for j := range want {
			if got[j] != want[j] {
				t.Errorf("turn %d message %d: %+v, want %+v", i, j, got[j], want[j])
			}
		}
	}
	if c[0].Text == "" {
		t.Error("the mock's reply is empty: the history check proves nothing")
	}
	if p := by["p"]; len(p) != 1 || p[0].Chat != nil {
		t.Errorf("a dataset payload's record carries messages: %+v", p)
	}
	for _, r := range run()["c"] {
		if r.Chat != nil {
			t.Errorf("without WithChatMessages a record carries %+v", r.Chat)
		}
	}
}

func turns(recs []*metrics.Record) []int {
	var out []int
	for _, r := range recs {
		out = append(out, r.TurnIndex)
	}
	return out
}
