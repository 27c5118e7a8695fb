package loadgen

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

func TestConnectionReuseStrategies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		reuse ConnectionReuse
		check func(t *testing.T, bySession map[string][]string, addrs map[string]bool)
	}{
		{ReuseSticky, func(t *testing.T, bySession map[string][]string, addrs map[string]bool) {
			for id, a := range bySession {
				for _, x := range a[1:] {
					if x != a[0] {
						t.Errorf("session %s used connections %v, want one", id, a)
						break
					}
				}
			}
			if len(addrs) != len(bySession) {
				t.Errorf("%d connections for %d sessions, want one each", len(addrs), len(bySession))
			}
		}},
		{ReuseNever, func(t *testing.T, _ map[string][]string, addrs map[string]bool) {
			if len(addrs) != 12 {
				t.Errorf("%d connections for 12 requests, want a new one per request", len(addrs))
			}
		}},
		{ReusePooled, func(t *testing.T, _ map[string][]string, addrs map[string]bool) {
			if len(addrs) > 2 {
				t.Errorf("%d connections at concurrency 2, want the pool's 2", len(addrs))
			}
		}},
	}
	for _, tc := range cases {
		t.Run(string(tc.reuse), func(t *testing.T) {
			t.Parallel()
			srv := &streamServer{ttft: time.Millisecond, itl: time.Millisecond, tokens: 2}
			var mu sync.Mutex
			bySession := map[string][]string{}
			addrs := map[string]bool{}
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				id := r.Header.Get("X-Correlation-ID")
				bySession[id] = append(bySession[id], r.RemoteAddr)
				addrs[r.RemoteAddr] = true
				mu.Unlock()
				srv.ServeHTTP(w, r)
			}))
			defer ts.Close()
			ds := &datasets.Dataset{Name: "mt"}
			for i := range 4 {
				c := datasets.Conversation{ID: fmt.Sprintf("s%d", i)}
				for k := range 3 {
					c.Turns = append(c.Turns, datasets.Turn{Text: fmt.Sprintf("s%d turn %d", i, k)})
				}
				ds.Conversations = append(ds.Conversations, c)
			}
			col := metrics.NewCollector()
			g, err := New(ts.URL, chat(true), ds, col, WithConnectionReuse(tc.reuse), WithSessionHeader("x-correlation-id"))
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Run(context.Background(), []Stage{{Limit: schedule.Constant(2), Count: 12}}); err != nil {
				t.Fatal(err)
			}
			if s := col.Close(); s.Run[metrics.RequestCount] != 12 {
				t.Fatalf("%v requests ok, errors %+v", s.Run[metrics.RequestCount], s.Errors)
			}
			mu.Lock()
			defer mu.Unlock()
			// The request budget may cut the last sessions short.
			if len(bySession) < 4 || bySession[""] != nil {
				t.Fatalf("session ids %v, want at least 4 sessions, each request with its id", bySession)
			}
			for id, a := range bySession {
				if len(a) > 3 {
					t.Errorf("session %s sent %d requests, more than its 3 turns", id, len(a))
				}
			}
			tc.check(t, bySession, addrs)
		})
	}
	if _, err := ParseConnectionReuse("sticky"); err == nil {
		t.Error("ParseConnectionReuse accepted sticky")
	}
}

// TestDeltaMessagesCarryReplies: a conversation of dataset messages in
// delta mode sends each turn's messages after the earlier ones and the
// server's live replies; a turn's role reaches the wire.
func TestDeltaMessagesCarryReplies(t *testing.T) {
	t.Parallel()
	srv := &streamServer{ttft: time.Millisecond, itl: time.Millisecond, tokens: 2}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	ds := &datasets.Dataset{Name: "delta", Conversations: []datasets.Conversation{{ID: "d", Turns: []datasets.Turn{
		{Messages: []map[string]any{{"role": "developer", "content": "a"}}, MessagesDelta: true},
		{Messages: []map[string]any{{"role": "user", "content": "b", "name": "bob"}}, MessagesDelta: true},
		{Text: "c", Role: "tool"},
	}}}}
	col := metrics.NewCollector()
	g, err := New(ts.URL, chat(true), ds, col)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Run(context.Background(), []Stage{{Limit: schedule.Constant(1), Count: 3}}); err != nil {
		t.Fatal(err)
	}
	col.Close()
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.lastBodies) != 3 {
		t.Fatalf("%d requests, want 3", len(srv.lastBodies))
	}
	var got []string
	for _, m := range srv.lastBodies[2]["messages"].([]any) {
		m := m.(map[string]any)
		got = append(got, fmt.Sprintf("%v:%v", m["role"], m["content"]))
	}
	want := []string{"developer:a", "assistant: tok0 tok1", "user:b", "assistant: tok0 tok1", "tool:c"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("third request's messages %v, want %v", got, want)
	}
	if m := srv.lastBodies[1]["messages"].([]any)[2].(map[string]any); m["name"] != "bob" {
		t.Errorf("dataset message sent as %v, want it as given", m)
	}
}
