package loadgen

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// cannedStream answers every request at once, in memory, with a short
// stream of chat chunks: what is left of a request's cost is the client's
// own (the plan, the lookahead, the dispatcher, the worker, the record).
type cannedStream struct{}

const cannedBody = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n" +
	"data: {\"choices\":[{\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\n\n" +
	"data: [DONE]\n\n"

// WritesUserAgent: as the run's h1 transport, this one needs no request
// copied to carry the User-Agent (the client adds none).
func (cannedStream) WritesUserAgent() bool { return true }

func (cannedStream) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}},
		Body:    io.NopCloser(strings.NewReader(cannedBody)),
		Request: r}, nil
}

// discard is a Recorder that keeps nothing.
type discard struct{}

func (discard) Started(metrics.Phase)                  {}
func (discard) FirstToken(int64, metrics.Phase, int64) {}
func (discard) Tokens(int64, int64, int)               {}
func (discard) Reasoning(int64)                        {}
func (discard) Add(*metrics.Record)                    {}
func (discard) SetPhase(metrics.Phase)                 {}
func (discard) SetStage(int)                           {}
func (discard) SetConcurrency(int)                     {}

// BenchmarkDispatch is the client's whole cost of one request apart from
// the network: planning its session, preparing its body ahead, waiting
// for a slot, handing it to a worker, reading a canned two-token stream
// and recording it (discarded), at concurrency 8 (ns and allocations per
// request).
func BenchmarkDispatch(b *testing.B) {
	g, err := New("http://127.0.0.1:1", chat(true), testDataset(b, 64), discard{},
		WithTransport(cannedStream{}))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	if err := g.Run(context.Background(), []Stage{{Phase: metrics.Profile, Limit: schedule.Constant(8), Count: b.N}}); err != nil {
		b.Fatal(err)
	}
}
