package profile

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/datasets/tokenizer"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/metrics"
)

// The time breakdown against the mock, whose every part is known: a
// time to first token and a prefill per prompt token, a gap between
// tokens, and --max-running half the concurrency, so every request after
// the first wave waits one service time in the queue. Each part's p50 is
// what the mock was told, within 5% or 1 ms (the bar), whichever
// way the mock reports it: its own timings (with the queue), llama.cpp's
// (no queue: the network unknown too), or spans in vLLM's shape sent to
// surge's OTLP receiver.
func TestBreakdownMatchesTheMock(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three profiles against the mock")
	}
	const (
		ttft     = 20 * time.Millisecond
		perToken = 20 * time.Microsecond
		itl      = 4 * time.Millisecond
		osl      = 16
		isl      = 250
	)
	tok, err := tokenizer.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, timings string
		otlp          bool
		source        string
		queueKnown    bool
	}{
		{name: "the mock's own timings", timings: mockserver.TimingsMock, source: "mock", queueKnown: true},
		{name: "llama.cpp's timings", timings: mockserver.TimingsLlamaCpp, source: "llamacpp-timings"},
		{name: "vLLM's spans over OTLP", otlp: true, source: "otlp", queueKnown: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			c := cmdline.Config{
				Model: "mock", EndpointType: "chat", Streaming: true, Concurrency: "4", RequestCount: 24,
				ISL: isl, OSL: osl, UI: "none", ArtifactDir: t.TempDir(), Version: "test", Tokenizer: "builtin",
				NoGPUTelemetry: true, NoServerMetrics: true, SkipPreflight: true, Grace: 10 * time.Second, Timeout: 30 * time.Second,
				HistoryConfig: cmdline.HistoryConfig{NoHistory: true},
			}
			cfg := mockserver.Config{TTFT: ttft, PrefillPerToken: perToken, ITL: itl, MaxRunning: 2, Tokenizer: tok, Timings: tc.timings}
			if tc.otlp {
				// The receiver's port, taken now so the mock can send to it.
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				addr := ln.Addr().String()
				ln.Close()
				c.OTLPReceiver, c.OTLPWait = addr, 10*time.Second
				cfg.OTLPEndpoint = "http://" + addr + "/v1/traces"
			}
			mock, err := mockserver.Start(ctx, "127.0.0.1:0", cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer mock.Close(ctx)
			c.URLs = []string{mock.URL()}
			res, err := runConfig(ctx, c, io.Discard, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			s := res.Summary
			tb := s.TimeBreakdown
			if tb == nil || tb.Requests != 24 {
				t.Fatalf("breakdown %+v", tb)
			}
			prompt := s.Metrics[metrics.UsagePrompt].Avg // the mock's own count
			prefill := ms(ttft) + prompt*ms(perToken)
			decode := float64(osl-1) * ms(itl)
			want := map[metrics.Part]float64{
				metrics.PartClient: 0, metrics.PartNetwork: 0, metrics.PartPrefill: prefill, metrics.PartDecode: decode,
				metrics.PartDelivery: 0,
				// Every request after the first wave waits one service time.
				metrics.PartQueue: prefill + decode,
			}
			for p := range metrics.NumParts {
				ps := tb.Parts[p]
				known := tc.queueKnown || p != metrics.PartQueue && p != metrics.PartNetwork
				if !known {
					if ps.Count != 0 || ps.Source != "unknown" {
						t.Errorf("%s: %d values from %s; the server did not give it", p, ps.Count, ps.Source)
					}
					continue
				}
				src := tc.source
				if p == metrics.PartClient {
					src = "client"
				}
				if ps.Source != src || ps.Count != 24 {
					t.Errorf("%s: %d values from %q, want 24 from %q", p, ps.Count, ps.Source, src)
				}
				tol := math.Max(0.05*want[p], 1)
				if raceEnabled {
					// The race detector on a loaded machine makes the mock
					// oversleep its timers (a 25 ms prefill took 26.7): what
					// it was told drifts from what it did, not surge.
					tol *= 2
				}
				if math.Abs(ps.P50-want[p]) > tol {
					t.Errorf("%s: p50 %.3f ms, told %.3f ms (±%.2f)", p, ps.P50, want[p], tol)
				} else {
					t.Logf("%s: p50 %.3f ms, told %.3f ms (%s)", p, ps.P50, want[p], ps.Source)
				}
			}
			if tc.otlp && (s.SpanJoins == nil || s.SpanJoins.Joined != 24) {
				t.Errorf("span joins %+v", s.SpanJoins)
			}
		})
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// --koboldcpp-perf asks koboldcpp's /api/extra/perf after each request,
// one at a time: its decode is the pace per token times the tokens, and a
// perf whose count of generations did not move by one (another client's,
// or none) is not believed.
func TestKoboldPerf(t *testing.T) {
	mock := mockserver.New(mockserver.Config{})
	var gens atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/extra/perf" {
			if r.URL.Path == "/v1/chat/completions" && gens.Add(1) == 3 {
				gens.Add(1) // another client's generation: the third's perf is not its own
			}
			mock.ServeHTTP(w, r)
			return
		}
		fmt.Fprintf(w, `{"last_process": 0.5, "last_eval": 2.5, "last_token_count": 8, "total_gens": %d, "queue": 0, "idle": 1}`, gens.Load())
	}))
	defer srv.Close()
	c := cmdline.Config{
		Model: "mock", URLs: []string{srv.URL}, EndpointType: "chat", Concurrency: "1", RequestCount: 6, ISL: 16, OSL: 8,
		UI: "none", ArtifactDir: t.TempDir(), Version: "test", Tokenizer: "builtin", NoGPUTelemetry: true, NoServerMetrics: true,
		SkipPreflight: true, HistoryConfig: cmdline.HistoryConfig{NoHistory: true}, Grace: 5 * time.Second, Timeout: 10 * time.Second,
		BreakdownConfig: cmdline.BreakdownConfig{KoboldPerf: true, MockTimings: "none"},
	}
	res, err := runConfig(context.Background(), c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// The third request's server said nothing believable: it has no
	// breakdown.
	d := res.Summary.TimeBreakdown.Parts[metrics.PartDecode]
	if res.Summary.TimeBreakdown.Requests != 5 || d.Count != 5 || d.Source != "koboldcpp-perf" || math.Abs(d.P50-20) > 0.01 {
		t.Errorf("decode: %d values from %s, p50 %v; want 5 of 20 ms (the third's perf was another's)", d.Count, d.Source, d.P50)
	}
	if p := res.Summary.TimeBreakdown.Parts[metrics.PartPrefill]; p.Count != 0 {
		t.Errorf("prefill known: %+v (koboldcpp gives no prompt length)", p)
	}
}
