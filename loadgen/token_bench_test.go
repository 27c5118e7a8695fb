package loadgen

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

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

// BenchmarkReadStreamOneTokenPerRead is the client's per-token work past
// the socket: one Read per token, SSE parsing, chunk decoding, the
// timestamp and the record's token slices, the live counters. It reports
// ns and allocations per token (the syscall and the netpoller's wake-up
// come on top: see bench/README.md).
func BenchmarkReadStreamOneTokenPerRead(b *testing.B) {
	const tokens = 256
	events := [][]byte{[]byte("data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n")}
	for i := range tokens {
		events = append(events, fmt.Appendf(nil, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"mock\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" w%d\"}}]}\n\n", i))
	}
	events = append(events, []byte("data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\n"), []byte("data: [DONE]\n\n"))
	col := metrics.NewCollector(metrics.WithShards(1))
	defer col.Close()
	g, err := New("127.0.0.1:1", chat(true), testDataset(b, 1), col, WithStart(time.Now()))
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
		g.readStream(ctx, ctx, body, rec)
		if len(rec.TokenNs) != tokens || rec.Err != nil {
			b.Fatalf("%d tokens, %v", len(rec.TokenNs), rec.Err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tokens), "ns/token")
}
