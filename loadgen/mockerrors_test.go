package loadgen

import (
	"net/http/httptest"
	"testing"

	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// TestMockStreamErrors runs against the mock failing a seeded share of
// its streams in each engine's way: the run has exactly as many error
// records as the mock failed streams, each of the shape's type, and the
// other requests succeed.
func TestMockStreamErrors(t *testing.T) {
	t.Parallel()
	types := map[string]string{
		mockserver.ShapeVLLM: "InternalServerError", mockserver.ShapeLlamaCpp: "server_error", mockserver.ShapeSGLang: "SERVICE_UNAVAILABLE",
		mockserver.ShapeTGI: endpoint.ErrStreamResponse, mockserver.ShapeAbort: endpoint.ErrFinishAbort, mockserver.ShapeOllama: ErrStream,
		mockserver.ShapeEmpty: metrics.ErrEmptyResponse,
	}
	for _, shape := range mockserver.StreamErrorShapes {
		t.Run(shape, func(t *testing.T) {
			t.Parallel()
			mock := mockserver.New(mockserver.Config{StreamErrorRate: 0.4, StreamErrorShape: shape, StreamErrorAfter: 3, Seed: 11})
			ts := httptest.NewServer(mock)
			defer ts.Close()
			s, sink := runOnce(t, ts.URL, chat(true), []Stage{{Limit: schedule.Constant(4), Count: 40}})
			failed := mock.Stats().StreamErrors
			if failed == 0 || failed == 40 || s.Run[metrics.ErrorRequestCount] != float64(failed) || s.Run[metrics.RequestCount] != float64(40-failed) {
				t.Fatalf("mock failed %d streams; run: %v errors, %v successes", failed, s.Run[metrics.ErrorRequestCount], s.Run[metrics.RequestCount])
			}
			for _, r := range sink.recs {
				if r.Err != nil && r.Err.Type != types[shape] {
					t.Errorf("error %+v, want type %q", r.Err, types[shape])
				}
				if r.Err == nil && len(r.TokenNs) != 8 {
					t.Errorf("a success with %d tokens, want 8", len(r.TokenNs))
				}
			}
		})
	}
}
