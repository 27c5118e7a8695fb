package loadgen

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/metrics"
)

// oneEventReader hands out one SSE event per Read, as a socket does when each
// token arrives in its own segment and the client keeps up.
type oneEventReader struct {
	events [][]byte
	i      int
}

func (r *oneEventReader) Read(p []byte) (int, error) {
	if r.i >= len(r.events) {
		return 0, io.EOF
	}
	n := copy(p, r.events[r.i])
	r.i++
	return n, nil
}

// mockEvents asks the mock for one streamed answer of n tokens to ep's
// request and splits the body into its SSE events, as the mock flushed
// them.
func mockEvents(tb testing.TB, ep *endpoint.Endpoint, n int) [][]byte {
	tb.Helper()
	return mockEventsWith(tb, mockserver.Config{}, ep, n)
}

// mockEventsWith is mockEvents from a mock configured as cfg.
func mockEventsWith(tb testing.TB, cfg mockserver.Config, ep *endpoint.Endpoint, n int) [][]byte {
	tb.Helper()
	ts := httptest.NewServer(mockserver.New(cfg))
	defer ts.Close()
	body, err := ep.Body("", nil, &datasets.Turn{Text: "a prompt", MaxTokens: n})
	if err != nil {
		tb.Fatal(err)
	}
	u, err := RequestURL(ts.URL, ep.Path())
	if err != nil {
		tb.Fatal(err)
	}
	resp, err := http.Post(u, "application/json", bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	all, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		tb.Fatalf("%s: HTTP %d, %v: %s", ep.Kind, resp.StatusCode, err, all)
	}
	var events [][]byte
	for len(all) > 0 {
		i := bytes.Index(all, []byte("\n\n"))
		if i < 0 {
			tb.Fatalf("%s: stream ends inside an event: %q", ep.Kind, all)
		}
		events = append(events, all[:i+2])
		all = all[i+2:]
	}
	return events
}

// BenchmarkReadStreamOneTokenPerRead is the client's per-token work past
// the socket, for every endpoint type that streams tokens: one Read per
// event (the mock's own stream of 256 tokens), SSE parsing, chunk
// decoding, the timestamp and the record's token slices, the live
// counters. It reports ns per token and allocations per stream (a stream
// needs two: its token times and its text; the syscall and the netpoller's
// wake-up come on top: see BenchmarkReadStreamLoopback).
func BenchmarkReadStreamOneTokenPerRead(b *testing.B) {
	const tokens = 256
	for _, kind := range []endpoint.Kind{endpoint.Chat, endpoint.Completions, endpoint.Responses, endpoint.Messages, endpoint.HuggingFaceGenerate} {
		b.Run(string(kind), func(b *testing.B) {
			ep := &endpoint.Endpoint{Kind: kind, Model: "m", Streaming: true}
			events := mockEvents(b, ep, tokens)
			col := metrics.NewCollector(metrics.WithShards(1))
			defer col.Close()
			// A capped prefill slot, given back at the first token, is part
			// of every stream's path.
			g, err := New("127.0.0.1:1", ep, testDataset(b, 1), col, WithStart(time.Now()), WithPrefillConcurrency(1))
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			src := &oneEventReader{events: events}
			body := &stampedBody{ReadCloser: io.NopCloser(src), g: g}
			b.ReportAllocs()
			for b.Loop() {
				src.i = 0
				rec := &metrics.Record{Streamed: true, RequestedOSL: tokens}
				var pf prefillSlot
				g.enterPrefill(ctx, metrics.Profile, &pf)
				g.readStream(ctx, ctx, body, "text/event-stream", rec, &pf)
				if len(rec.TokenNs) != tokens || rec.Err != nil || pf.held {
					b.Fatalf("%d tokens, %v", len(rec.TokenNs), rec.Err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tokens), "ns/token")
		})
	}
}
