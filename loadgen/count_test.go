package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// multiTurnDataset is n conversations s0…s{n-1} of k turns each; turn j of
// si says "si tj".
func multiTurnDataset(n, k int) *datasets.Dataset {
	ds := &datasets.Dataset{Name: "mt"}
	for i := range n {
		c := datasets.Conversation{ID: fmt.Sprintf("s%d", i)}
		for j := range k {
			c.Turns = append(c.Turns, datasets.Turn{Text: fmt.Sprintf("s%d t%d", i, j), MaxTokens: 2})
		}
		ds.Conversations = append(ds.Conversations, c)
	}
	return ds
}

// sentTurns runs ds under st against a streaming server and returns the
// turns the server received ("s0 t1"), in arrival order, by the session
// header's value, and the sink's records.
func sentTurns(t *testing.T, ds *datasets.Dataset, srv *streamServer, st Stage) (order []string, bySession map[string][]string, recs []*metrics.Record) {
	t.Helper()
	var mu sync.Mutex
	bySession = map[string][]string{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		if err := json.Unmarshal(b, &body); err != nil || len(body.Messages) == 0 {
			t.Errorf("body %q: %v", b, err)
			return
		}
		turn := body.Messages[len(body.Messages)-1].Content
		mu.Lock()
		order = append(order, turn)
		id := r.Header.Get("X-Session")
		bySession[id] = append(bySession[id], turn)
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		srv.ServeHTTP(w, r)
	}))
	defer ts.Close()
	sink := &collectSink{}
	col := metrics.NewCollector(metrics.WithSink(sink))
	g, err := New(ts.URL, chat(true), ds, col, WithSessionHeader("x-session"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Run(ctx, []Stage{st}); err != nil {
		t.Fatal(err)
	}
	col.Close()
	return order, bySession, sink.recs
}

// TestCountSendsWholeSessionsInOrder: a request count spends its requests
// on whole sessions. A new session never takes the budget of a later turn
// of a session already running (a 2×2 file with a count of 4 once sent
// s0t0, s0t1, s1t0, s0t0), whatever the concurrency.
func TestCountSendsWholeSessionsInOrder(t *testing.T) {
	t.Parallel()
	for _, conc := range []int{1, 2, 3, 8} {
		t.Run(fmt.Sprintf("concurrency%d", conc), func(t *testing.T) {
			t.Parallel()
			srv := &streamServer{ttft: time.Millisecond, itl: time.Millisecond, tokens: 2}
			order, bySession, recs := sentTurns(t, multiTurnDataset(2, 2), srv, Stage{Limit: schedule.Constant(conc), Count: 4})
			if len(order) != 4 || len(recs) != 4 {
				t.Fatalf("sent %v (%d records), want 4 requests", order, len(recs))
			}
			if conc == 1 {
				if want := []string{"s0 t0", "s0 t1", "s1 t0", "s1 t1"}; !slices.Equal(order, want) {
					t.Errorf("sent %v, want %v", order, want)
				}
			}
			var sessions []string
			for id, turns := range bySession {
				conv := strings.Fields(turns[0])[0]
				if want := []string{conv + " t0", conv + " t1"}; !slices.Equal(turns, want) {
					t.Errorf("session %s sent %v, want the whole conversation in order %v", id, turns, want)
				}
				sessions = append(sessions, conv)
			}
			slices.Sort(sessions)
			if !slices.Equal(sessions, []string{"s0", "s1"}) {
				t.Errorf("sessions %v, want s0 and s1 once each", sessions)
			}
		})
	}
}

// TestCountCutsOnlyTheLastSession: a count that ends inside a session sends
// every session before it whole; only the last one started is cut.
func TestCountCutsOnlyTheLastSession(t *testing.T) {
	t.Parallel()
	srv := &streamServer{ttft: time.Millisecond, itl: time.Millisecond, tokens: 2}
	order, _, _ := sentTurns(t, multiTurnDataset(3, 3), srv, Stage{Limit: schedule.Constant(1), Count: 7})
	want := []string{"s0 t0", "s0 t1", "s0 t2", "s1 t0", "s1 t1", "s1 t2", "s2 t0"}
	if !slices.Equal(order, want) {
		t.Errorf("sent %v, want %v", order, want)
	}
}
