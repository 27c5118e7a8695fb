package tui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
	"math"
	"time"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/telemetry"
)

var (
	runInfo = Info{Model: "Qwen/Qwen3-8B", URL: "http://127.0.0.1:8000", Endpoint: "chat", Mode: "concurrency", Target: "64", TotalRequests: 1000}
	// shardInfo is shard 1 of 3 of a plan: its own third of 3000 requests.
	shardInfo = Info{Model: "Qwen/Qwen3-8B", URL: "http://10.0.0.5:8000", Endpoint: "chat", Mode: "request_rate", Target: "300", TotalRequests: 1000, Shard: "1/3"}
	rampInfo  = Info{Model: "Qwen/Qwen3-8B", URL: "http://127.0.0.1:8000", Endpoint: "chat", Mode: "concurrency", Target: "sweep",
		Duration: 5 * time.Minute, Stages: []float64{1, 2, 4, 8, 16, 32, 64, 128}}
)

func q(p50, p90, p99 float64, n int64) metrics.Quantiles {
	return metrics.Quantiles{Count: n, Avg: p50 * 1.05, P50: p50, P90: p90, P99: p99}
}

func timeline(n int, tok, req float64) []metrics.Point {
	pts := make([]metrics.Point, n)
	for i := range pts {
		// A ramp up over the first seconds, then a steady wobble.
		f := min(1, float64(i+1)/10) * (1 + 0.15*math.Sin(float64(i)/3))
		pts[i] = metrics.Point{Second: i, OutputTokens: math.Round(tok * f), Requests: math.Round(req * f)}
	}
	return pts
}

func midRun() Frame {
	return Frame{Snapshot: metrics.Snapshot{
		Elapsed: 42 * time.Second, Started: 348, Finished: 340, Failed: 2, InFlight: 8, Concurrency: 64, OutputTokens: 87000,
		ReasoningSeen: true,
		Run: map[string]metrics.Quantiles{
			string(metrics.TTFT): q(21.3, 22.9, 24.0, 340), string(metrics.TTFO): q(180, 240, 310, 340),
			string(metrics.ITL): q(5.1, 5.6, 6.3, 338), string(metrics.RequestLatency): q(1320, 1610, 2050, 338),
		},
		Window: map[string]metrics.Quantiles{
			string(metrics.TTFT): q(22.0, 23.5, 25.1, 80), string(metrics.TTFO): q(190, 250, 320, 80),
			string(metrics.ITL): q(5.3, 5.8, 6.6, 80), string(metrics.RequestLatency): q(1350, 1650, 2100, 80),
		},
		Timeline:     timeline(42, 2150, 8),
		Errors:       map[string]int64{"http_503": 2},
		SchedulerLag: q(0.02, 0.09, 0.31, 348),
	},
		Server: []telemetry.ServerSample{{URL: "http://127.0.0.1:8000/metrics", Running: 8, Waiting: 0, KVCacheUsage: 0.42, PrefixCacheHitRate: math.NaN()}},
		// Three of the eight in flight wait for their first token, under a
		// prefill cap of four.
		InPrefill: 3, PrefillCap: 4,
	}
}

// withPrecision adds two precision targets to f, one of them met.
func withPrecision(f Frame) Frame {
	f.Precision = &metrics.PrecisionStatus{Requests: 338, Targets: []metrics.TargetStatus{
		{Target: metrics.Target{Metric: metrics.TTFT, P: 99, Bound: 0.05}, HalfWidth: 0.081},
		{Target: metrics.Target{Metric: metrics.OutputTokenThroughput, Bound: 0.05}, HalfWidth: 0.031, Met: true},
	}}
	return f
}

// withBreakdown adds where the time went: the server's queue and
// prefill from its spans, the network unknown for a quarter of the
// requests.
func withBreakdown(f Frame) Frame {
	part := func(src string, p50, share float64) metrics.PartSummary {
		return metrics.PartSummary{Count: 338, Source: src, P50: p50, Share: share}
	}
	f.TimeBreakdown = &metrics.TimeBreakdown{Requests: 338, Parts: [metrics.NumParts]metrics.PartSummary{
		part("client", 0.21, 0.004), part("mixed", 0.48, 0.01), part("otlp", 31.4, 0.55), part("otlp", 24.8, 0.43),
		part("otlp", 612, 0.998), part("otlp", 0.35, 0.002),
	}}
	return f
}

func stage(i int, v float64, knee bool) metrics.StageSummary {
	tok := 95 * v * math.Min(1, 40/v)
	return metrics.StageSummary{
		Index: i, Mode: "concurrency", Value: v, RequestCount: int64(20 * v), ErrorRequestCount: int64(max(0, v-40) / 10),
		TTFT:                  metrics.Distribution{P50: 20 + v, P99: 25 + v*1.5},
		ITL:                   metrics.Distribution{P50: 5 + v/8},
		Latency:               metrics.Distribution{P99: 1200 + v*20},
		OutputTokenThroughput: tok, RequestThroughput: tok / 250, DurationSec: 30, Knee: knee,
	}
}

func finishedRamp() Frame {
	s := midRun()
	s.Elapsed = 4*time.Minute + 50*time.Second
	s.Started, s.Finished, s.Failed, s.InFlight = 5100, 5100, 12, 0
	s.Errors = map[string]int64{"http_503": 9, "timeout": 3}
	s.Timeline = timeline(290, 3800, 15)
	for i, v := range rampInfo.Stages {
		s.Stages = append(s.Stages, stage(i, v, v == 32))
	}
	s.Stage = len(rampInfo.Stages)
	return s
}

func errorBurst() Frame {
	s := midRun()
	s.Finished, s.Failed = 600, 212
	s.Errors = map[string]int64{"http_503": 120, "timeout": 51, "connection_refused": 30, "http_429": 8, "stream_parse": 3}
	for i := 30; i < 42; i++ {
		s.Timeline[i].OutputTokens /= 4
	}
	s.SchedulerLag = q(3, 9, 14.2, 600)
	return s
}

// fullSnapshot is the heaviest frame: many stages, 8 GPUs, 10 error types,
// a 600-point timeline.
func fullSnapshot() Frame {
	s := midRun()
	s.Timeline = timeline(600, 4000, 16)
	s.Errors = map[string]int64{}
	for i := range 10 {
		s.Errors[fmt.Sprintf("error_type_%02d", i)] = int64(10 * (i + 1))
	}
	for i := range 24 {
		s.Stages = append(s.Stages, stage(i, float64(i+1)*4, i == 9))
	}
	s.Stage = 24
	for i := range 8 {
		s.GPUs = append(s.GPUs, telemetry.GPUSample{Source: "nvml", Index: i, Name: "NVIDIA H100 80GB HBM3", SMUtil: float64(60 + 4*i),
			MemUsed: uint64(70+i) << 30, MemTotal: 80 << 30, PowerW: float64(400 + 25*i)})
	}
	return s
}

// sweepInfo is a concurrency sweep of 1, 2, 4, 8 with 40 requests each.
var sweepInfo = Info{Model: "mock", URL: "http://127.0.0.1:8000", Endpoint: "chat", Mode: "concurrency", Target: "1,2,4,8",
	TotalRequests: 160, Stages: []float64{1, 2, 4, 8}}

// sweepFrames are snapshots of sweepInfo's run up to second at: a server
// of 0.5 s latency at every concurrency, so stage i takes 20/2^i s and
// its throughput doubles. Stage starts are seen as the dashboard would:
// one snapshot a second.
func sweepFrames(at int) []tea.Msg {
	ends := []int{20, 30, 35, 38} // stage i ends at ends[i] s
	var msgs []tea.Msg
	var f Frame
	for sec := 0; sec <= at; sec++ {
		f = midRun()
		f.Elapsed = time.Duration(sec) * time.Second
		f.Errors, f.Failed, f.Server = nil, 0, nil
		stage, done := 0, int64(0)
		for stage < 3 && sec >= ends[stage] {
			stage++
		}
		f.Stage = stage
		f.Stages = nil
		base := 0
		for i := range stage {
			f.Stages = append(f.Stages, stage0(i, sweepInfo.Stages[i], float64(ends[i]-base)))
			base = ends[i]
			done += 40
		}
		rate := 2 * sweepInfo.Stages[stage]
		done += min(40, int64(float64(sec-base)*rate))
		f.Finished, f.Started, f.InFlight = done, done+int64(sweepInfo.Stages[stage]), int64(sweepInfo.Stages[stage])
		f.Timeline = nil
		for s := range sec {
			k := 0
			for k < 3 && s >= ends[k] {
				k++
			}
			r := 2 * sweepInfo.Stages[k] * (1 + 0.05*math.Sin(float64(s)))
			f.Timeline = append(f.Timeline, metrics.Point{Second: s, OutputTokens: math.Round(r * 120), Requests: r})
		}
		msgs = append(msgs, snapshotMsg{f})
	}
	return msgs
}

// stage0 is a finished sweep stage of 40 requests in sec seconds.
func stage0(i int, v, sec float64) metrics.StageSummary {
	s := stage(i, v, false)
	s.RequestCount, s.ErrorRequestCount, s.DurationSec = 40, 0, sec
	s.RequestThroughput, s.OutputTokenThroughput = 40/sec, 40/sec*120
	return s
}

// liveInfo and liveFrame are a live run (the dashboard's keys steer it)
// at concurrency 16, its client lagging: the load panel's longest lines.
var liveInfo = Info{Model: "Qwen/Qwen3-8B", URL: "http://127.0.0.1:8000", Endpoint: "chat", Mode: "concurrency", Target: "16",
	Duration: 2 * time.Minute, Control: func(Action) (LiveState, error) { return LiveState{Mode: "concurrency", Value: 16}, nil }}

func liveFrame() Frame {
	f := midRun()
	f.Concurrency, f.InFlight, f.InPrefill, f.PrefillCap = 16, 16, 0, 0
	f.SchedulerLag = q(0.12, 4.1, 12.53, 348)
	f.ReadDelay = q(0.05, 0.9, 3.4, 9000)
	f.Live = &LiveState{Mode: "concurrency", Value: 16}
	return f
}
