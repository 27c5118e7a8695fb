package loadgen

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/export"
)

// rawRecorder keeps every request body byte for byte before the stream
// server answers it.
type rawRecorder struct {
	next   http.Handler
	mu     sync.Mutex
	bodies [][]byte
}

func (r *rawRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.bodies = append(r.bodies, b)
	r.mu.Unlock()
	req.Body = io.NopCloser(bytes.NewReader(b))
	r.next.ServeHTTP(w, req)
}

// inputsSink writes a run's bodies to inputs.json, as the app does.
type inputsSink struct{ in *export.Inputs }

func (s inputsSink) Body(session int64, _ int, conv string, turn int, body []byte) {
	s.in.Body(session, conv, turn, body)
}
func (s inputsSink) EndSession(session int64, _ int) { s.in.EndSession(session) }

// TestInputsJSONRoundTrip: a multi-turn run's inputs.json, replayed as an
// inputs_json dataset, puts the same bodies on the wire, byte for byte,
// the history of the first run's replies included.
func TestInputsJSONRoundTrip(t *testing.T) {
	t.Parallel()
	run := func(ds *datasets.Dataset, sink BodySink) [][]byte {
		rec := &rawRecorder{next: &streamServer{ttft: time.Millisecond, itl: time.Millisecond, tokens: 3}}
		ts := httptest.NewServer(rec)
		defer ts.Close()
		var opts []Option
		if sink != nil {
			opts = append(opts, WithBodySink(sink))
		}
		col := metrics.NewCollector()
		g, err := New(ts.URL, chat(true), ds, col, opts...)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		turns := 0
		for _, c := range ds.Conversations {
			turns += len(c.Turns)
		}
		if err := g.Run(ctx, []Stage{{Limit: schedule.Constant(1), Count: turns}}); err != nil {
			t.Fatal(err)
		}
		if s := col.Close(); len(s.Errors) > 0 {
			t.Fatalf("errors: %v", s.Errors)
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if len(rec.bodies) != turns {
			t.Fatalf("%d requests, want %d", len(rec.bodies), turns)
		}
		return rec.bodies
	}
	first := &datasets.Dataset{Name: "chat", Conversations: []datasets.Conversation{
		{ID: "a", SystemPrompt: "be brief", Turns: []datasets.Turn{{Text: "one", MaxTokens: 5}, {Text: "two", MaxTokens: 6}, {Text: "three"}}},
		{ID: "b", Turns: []datasets.Turn{{Text: "alone", MaxTokens: 2, Extra: map[string]any{"temperature": 0.25}}}},
	}}
	path := filepath.Join(t.TempDir(), "inputs.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	in := export.NewInputs(f)
	sent := run(first, inputsSink{in})
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	d, rep, err := datasets.Load(datasets.Options{InputFile: path})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Type != datasets.TypeInputsJSON || rep.Rows != 4 || len(d.Conversations) != 2 {
		t.Fatalf("replay dataset: %v", rep.Lines)
	}
	again := run(d, nil)
	// Concurrency 1 sends the conversations in order, both times.
	for i := range sent {
		if !bytes.Equal(sent[i], again[i]) {
			t.Errorf("request %d:\nfirst  %s\nreplay %s", i, sent[i], again[i])
		}
	}
	// The replayed third turn carries the first run's replies, not the
	// replay's (it is sent as recorded).
	if !bytes.Contains(again[2], []byte(`"assistant"`)) || len(again) != len(sent) {
		t.Errorf("third body %s", again[2])
	}
}

// TestRawBodyAndStandalone: a turn's Body goes out byte for byte whatever
// the endpoint builds; a standalone turn is sent without its history.
func TestRawBodyAndStandalone(t *testing.T) {
	t.Parallel()
	rec := &rawRecorder{next: &streamServer{ttft: time.Millisecond, itl: time.Millisecond, tokens: 2}}
	ts := httptest.NewServer(rec)
	defer ts.Close()
	body := []byte(`{"model":"x","messages":[{"role":"user","content":"verbatim"}],  "stream":true, "n": 1.50}`)
	ds := &datasets.Dataset{Name: "raw", Conversations: []datasets.Conversation{{ID: "r", Turns: []datasets.Turn{
		{Text: "first"}, {Body: body}, {Text: "whole context", Standalone: true},
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
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.bodies) != 3 || !bytes.Equal(rec.bodies[1], body) {
		t.Fatalf("bodies %q", rec.bodies)
	}
	if bytes.Contains(rec.bodies[2], []byte("first")) || !bytes.Contains(rec.bodies[2], []byte("whole context")) {
		t.Errorf("standalone turn sent with history: %s", rec.bodies[2])
	}
}
