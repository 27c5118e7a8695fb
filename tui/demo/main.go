// Command demo runs the dashboard on synthetic snapshots, so it can be
// looked at (and screenshotted) without a server:
//
//	go run ./tui/demo [-simple] [-sweep=false] [-seconds 60]
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"time"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/telemetry"
	"github.com/surgebench/surge/tui"
)

func main() {
	simple := flag.Bool("simple", false, "print progress lines instead of the dashboard")
	sweep := flag.Bool("sweep", true, "show a concurrency sweep with stages")
	seconds := flag.Int("seconds", 60, "length of the synthetic run")
	flag.Parse()

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	info := tui.Info{Model: "Qwen/Qwen3-8B", URL: "http://127.0.0.1:8000", Endpoint: "chat", Mode: "concurrency", Target: "64",
		Duration: time.Duration(*seconds) * time.Second}
	if *sweep {
		info.Target, info.Stages = "sweep", []float64{1, 2, 4, 8, 16, 32, 64, 128}
	}
	snaps := make(chan tui.Frame)
	stopc := make(chan struct{})
	go produce(info, snaps, stopc)
	stop := func() { close(stopc) }
	var err error
	if *simple {
		err = tui.Simple(ctx, os.Stdout, info, snaps)
	} else {
		err = tui.Run(ctx, info, snaps, stop)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
	fmt.Println("demo finished: the real run would print its summary here")
}

// produce sends a snapshot every 250 ms (the metrics package's rate) until
// the synthetic duration ends or stop closes, then drains for two seconds.
func produce(info tui.Info, snaps chan<- tui.Frame, stopc <-chan struct{}) {
	defer close(snaps)
	r := rand.New(rand.NewPCG(1, 2))
	start := time.Now()
	var tl []metrics.Point
	var s tui.Frame
	var stopAt time.Time
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for now := range t.C {
		el := now.Sub(start)
		select {
		case <-stopc:
			if stopAt.IsZero() {
				stopAt = now
			}
		default:
		}
		draining := !stopAt.IsZero() || el >= info.Duration
		if draining && stopAt.IsZero() {
			stopAt = now
		}
		if draining && now.Sub(stopAt) > 2*time.Second {
			return
		}
		stage := 0
		if n := len(info.Stages); n > 0 {
			stage = min(n-1, int(el*time.Duration(n)/info.Duration))
		}
		conc := 64.0
		if len(info.Stages) > 0 {
			conc = info.Stages[stage]
		}
		tok := 95 * conc * math.Min(1, 40/conc) * (0.9 + 0.2*r.Float64())
		for len(tl) < int(el/time.Second) {
			tl = append(tl, metrics.Point{Second: len(tl), OutputTokens: math.Round(tok), Requests: math.Round(tok / 25)})
		}
		inflight := int64(conc)
		if draining {
			inflight = max(0, int64(conc*(1-now.Sub(stopAt).Seconds()/2)))
		}
		fin := s.Finished + int64(tok/25/4)
		failed := s.Failed
		errs := map[string]int64{}
		for k, v := range s.Errors {
			errs[k] = v
		}
		if conc > 40 && r.Float64() < 0.3 {
			failed++
			errs[[]string{"http_503", "timeout", "http_429"}[r.IntN(3)]]++
		}
		ttft := 20 + conc*0.8
		s = tui.Frame{Snapshot: metrics.Snapshot{
			Elapsed: el, Started: fin + inflight, Finished: fin, Failed: failed, InFlight: inflight, Concurrency: int(conc),
			ReasoningSeen: true, Stage: stage, Errors: errs, Timeline: tl,
			Run: map[string]metrics.Quantiles{
				string(metrics.TTFT):           {Count: fin, P50: ttft, P90: ttft * 1.2, P99: ttft * 1.5},
				string(metrics.TTFO):           {Count: fin, P50: ttft * 8, P90: ttft * 10, P99: ttft * 13},
				string(metrics.ITL):            {Count: fin, P50: 5 + conc/16, P90: 6 + conc/14, P99: 7 + conc/12},
				string(metrics.RequestLatency): {Count: fin, P50: 1200 + conc*12, P90: 1400 + conc*14, P99: 1800 + conc*18},
			},
			SchedulerLag: metrics.Quantiles{P50: 0.02, P90: 0.08, P99: 0.3},
		},
			Server: []telemetry.ServerSample{{URL: "http://127.0.0.1:8000/metrics", Running: float64(inflight), Waiting: math.Max(0, conc-48), KVCacheUsage: math.Min(1, conc/90)}},
		}
		s.Window = s.Run
		for i := range 2 {
			s.GPUs = append(s.GPUs, telemetry.GPUSample{Index: i, Name: "NVIDIA H100 80GB HBM3", SMUtil: math.Min(100, 20+conc), MemUsed: 70 << 30, MemTotal: 80 << 30, PowerW: 300 + 3*conc})
		}
		for i := range stage {
			v := info.Stages[i]
			tk := 95 * v * math.Min(1, 40/v)
			s.Stages = append(s.Stages, metrics.StageSummary{Index: i, Mode: "concurrency", Value: v, RequestCount: int64(20 * v),
				TTFT: metrics.Distribution{P99: 25 + v*1.2}, ITL: metrics.Distribution{P50: 5 + v/16}, Latency: metrics.Distribution{P99: 1800 + v*18},
				OutputTokenThroughput: tk, RequestThroughput: tk / 25, DurationSec: 30, Knee: v == 32})
		}
		snaps <- s
	}
}
