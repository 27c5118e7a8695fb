package calibrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/calibrate"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/heapfloor"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/loadgen/wire"
	"github.com/surgebench/surge/metrics"
)

// CalibrateConfig is what `surge calibrate` was asked to do.
type CalibrateConfig struct {
	ITLs       []time.Duration // --itl
	MaxStreams int             // --max-streams
	Tokens     int             // --tokens, per request
	Save       bool            // not --no-save
}

// Calibrate measures, against the embedded mock, the highest stream count ×
// token rate at which this client's read delay p99 stays under 1 ms,
// prints each step and the result, and keeps it for later exports'
// run_info.
func Calibrate(ctx context.Context, c CalibrateConfig, out io.Writer) (*calibrate.Result, error) {
	if !wire.Supported {
		return nil, errors.New("calibrate needs kernel receive timestamps (Linux): the read delay cannot be measured here")
	}
	if c.Tokens < 2 {
		return nil, &cmdline.UsageError{Err: fmt.Errorf("--tokens %d: want at least 2", c.Tokens)}
	}
	defer heapfloor.Hold(heapfloor.Default)() // as a run does: the client measured is the one that runs
	fmt.Fprintf(out, "surge calibrate: read delay p99 < %.0f ms and ≤ %.0f%% of first tokens read with the next, %d tokens per stream, all streams started together, at least %d tokens a probe, the median of %d probes a step; measuring with %v\n",
		calibrate.LimitMs, calibrate.SharedLimitPct, c.Tokens, minProbeEvents, calibrateRounds, calibrate.CurrentCores())
	fmt.Fprintf(out, "%8s %8s %12s %14s %14s\n", "streams", "ITL ms", "tokens/s", "delay p99 ms", "shared first")
	r, err := calibrate.Search(ctx, func(ctx context.Context, streams int, itl time.Duration) (calibrate.Measure, error) {
		return probe(ctx, streams, itl, c.Tokens)
	}, calibrate.Options{ITLs: c.ITLs, MaxStreams: c.MaxStreams, Rounds: calibrateRounds, Log: func(s calibrate.Step) {
		verdict := "ok"
		if !s.OK {
			verdict = "over"
		}
		fmt.Fprintf(out, "%8d %8.1f %12.0f %14.3f %13.1f%%  %s\n", s.Streams, s.ITLms, s.TokensPerSec, s.ReadDelayP99ms, s.SharedFirstPct, verdict)
	}})
	if err != nil {
		return nil, err
	}
	if r.Streams == 0 {
		fmt.Fprintln(out, "\nno load passed: even the smallest step kept the client late by more than 1 ms (p99), or read more than 1% of first tokens with the next")
	} else {
		fmt.Fprintf(out, "\ntrustworthy up to %d streams at ITL %.1f ms: %.0f tokens/s with read delay p99 %.3f ms, %.1f%% of first tokens read with the next\n",
			r.Streams, r.ITLms, r.TokensPerSec, r.ReadDelayP99ms, r.SharedFirstPct)
	}
	fmt.Fprintf(out, "measured with %v: a run whose client has other cores is warned that this does not judge it\n", r.Cores)
	if c.Save {
		f, err := calibrate.Save(r)
		if err != nil {
			return r, fmt.Errorf("keeping the calibration: %w", err)
		}
		fmt.Fprintf(out, "kept in %s (later exports report it in run_info.client_calibration)\n", f)
	}
	return r, nil
}

// minProbeEvents is the fewest token events a probe measures: a p99 of
// 320 events (8 streams of 40 tokens) is the 4th largest, one stall's worth.
const minProbeEvents = 2000

// calibrateRounds is how many probes decide a step (their median).
const calibrateRounds = 3

// probe runs streams requests at once against a fresh mock with the given
// ITL, in as many waves as it takes to read minProbeEvents tokens, and
// returns the client's read delay p99 in ms and the share of first tokens
// it read together with the next.
func probe(ctx context.Context, streams int, itl time.Duration, tokens int) (calibrate.Measure, error) {
	var m calibrate.Measure
	mock, err := mockserver.Start(ctx, "127.0.0.1:0", mockserver.Config{TTFT: itl, ITL: itl})
	if err != nil {
		return m, err
	}
	defer func() { _ = mock.Close(context.Background()) }()
	ds := &datasets.Dataset{Name: "calibrate"}
	for i := range streams {
		ds.Conversations = append(ds.Conversations, datasets.Conversation{ID: fmt.Sprint(i),
			Turns: []datasets.Turn{{Text: "calibrate", InputTokens: 1, MaxTokens: tokens}}})
	}
	start := time.Now()
	col := metrics.NewCollector(metrics.WithClock(func() int64 { return int64(time.Since(start)) }))
	tr := loadgen.NewTransport(streams)
	defer tr.CloseIdleConnections() // a calibration's probes would otherwise keep thousands of sockets
	gen, err := loadgen.New(mock.URL(), &endpoint.Endpoint{Kind: endpoint.Chat, Model: "mock", Streaming: true}, ds, col,
		loadgen.WithStart(start), loadgen.WithTransport(tr))
	if err != nil {
		col.Close()
		return m, err
	}
	waves := (minProbeEvents + streams*tokens - 1) / (streams * tokens)
	runErr := gen.Run(ctx, []loadgen.Stage{{Limit: schedule.Constant(streams), Count: streams * waves}})
	s := col.Close()
	if runErr != nil {
		return m, runErr
	}
	if n := s.Run[metrics.ErrorRequestCount]; n > 0 {
		return m, fmt.Errorf("%v of %d requests failed against the mock", n, streams*waves)
	}
	d, ok := s.Metrics[metrics.ClientReadDelay]
	if !ok {
		return m, errors.New("no read delay measured (no kernel timestamps on these connections)")
	}
	m.ReadDelayP99ms = d.P99
	if s.Streamed > 0 {
		m.SharedFirstPct = 100 * float64(s.FirstTokenShared) / float64(s.Streamed)
	}
	return m, nil
}
