// Command surge benchmarks OpenAI-compatible LLM inference servers.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen/profile"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

// Exit codes (design §2).
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 130
)

func main() {
	os.Exit(run(os.Args))
}

func run(args []string) int {
	code := exitOK
	app := &cli.App{
		Name:    "surge",
		Usage:   "benchmark OpenAI-compatible LLM inference servers",
		Version: version,
		Commands: []*cli.Command{
			profileCommand(&code),
			mockServerCommand(),
		},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return &profile.UsageError{Err: err}
		},
	}
	if err := app.Run(args); err != nil {
		fmt.Fprintln(os.Stderr, "surge:", err)
		var ue *profile.UsageError
		if errors.As(err, &ue) || isFlagError(err) {
			return exitUsage
		}
		if code == exitOK {
			code = exitFailed
		}
	}
	return code
}

// isFlagError recognises urfave/cli's own parse failures (unknown flag, bad
// number), which it returns as plain errors.
func isFlagError(err error) bool {
	msg := err.Error()
	for _, s := range []string{"flag provided but not defined", "invalid value", "flag needs an argument", "Required flag"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func profileCommand(code *int) *cli.Command {
	return &cli.Command{
		Name:  "profile",
		Usage: "run a benchmark against a server (default: the embedded mock server)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Value: "mock", Usage: "model name sent in every request"},
			&cli.StringFlag{Name: "url", Aliases: []string{"u"}, Usage: "server URL, scheme optional (empty or \"mock\": start the embedded mock server)"},
			&cli.StringFlag{Name: "endpoint-type", Value: "chat", Usage: "chat or completions"},
			&cli.BoolFlag{Name: "streaming", Usage: "stream responses over SSE (needed for TTFT and ITL)"},
			&cli.IntFlag{Name: "concurrency", Usage: "requests in flight at once (closed loop; default 1 without --request-rate)"},
			&cli.Float64Flag{Name: "request-rate", Usage: "requests per second (open loop)"},
			&cli.IntFlag{Name: "request-count", Usage: "requests to profile (default 10 unless --benchmark-duration is set)"},
			&cli.Float64Flag{Name: "benchmark-duration", Usage: "stop issuing after this many seconds"},
			&cli.Float64Flag{Name: "benchmark-grace-period", Value: 30, Usage: "seconds in-flight requests may finish after issuing stops"},
			&cli.IntFlag{Name: "warmup-request-count", Usage: "requests sent before profiling (reported under warmup_metrics)"},
			&cli.IntFlag{Name: "isl", Aliases: []string{"synthetic-input-tokens-mean"}, Value: 550, Usage: "synthetic prompt length in tokens (mean)"},
			&cli.IntFlag{Name: "isl-stddev", Aliases: []string{"synthetic-input-tokens-stddev"}, Usage: "synthetic prompt length standard deviation"},
			&cli.IntFlag{Name: "osl", Aliases: []string{"output-tokens-mean"}, Usage: "output token cap (mean; 0: no cap)"},
			&cli.IntFlag{Name: "osl-stddev", Aliases: []string{"output-tokens-stddev"}, Usage: "output token cap standard deviation"},
			&cli.Uint64Flag{Name: "random-seed", Usage: "seed for prompts and arrival times (same seed, same requests)"},
			&cli.StringSliceFlag{Name: "extra-inputs", Usage: "extra request body field key:value (JSON values parsed), repeatable"},
			&cli.StringSliceFlag{Name: "header", Aliases: []string{"H"}, Usage: "extra HTTP header \"Name: value\", repeatable"},
			&cli.StringFlag{Name: "api-key", EnvVars: []string{"OPENAI_API_KEY"}, Usage: "sent as Authorization: Bearer (never exported or logged)"},
			&cli.Float64Flag{Name: "request-timeout-seconds", Value: 600, Usage: "per-request limit, the whole stream included"},
			&cli.StringFlag{Name: "goodput", Usage: "SLOs, e.g. \"time_to_first_token:200 inter_token_latency:20\" (ms)"},
			&cli.StringFlag{Name: "ui", Value: "none", Usage: "dashboard, simple or none"},
			&cli.StringFlag{Name: "output-artifact-dir", Usage: "export folder (default artifacts/<model>-<endpoint>-<mode><value>)"},
		},
		Action: func(cc *cli.Context) error {
			cfg := profile.Config{
				Model: cc.String("model"), URL: cc.String("url"), EndpointType: cc.String("endpoint-type"),
				Streaming: cc.Bool("streaming"), Concurrency: cc.Int("concurrency"), RequestRate: cc.Float64("request-rate"),
				RequestCount: cc.Int("request-count"), Duration: seconds(cc.Float64("benchmark-duration")),
				Grace: seconds(cc.Float64("benchmark-grace-period")), WarmupCount: cc.Int("warmup-request-count"),
				ISL: cc.Int("isl"), ISLStddev: cc.Int("isl-stddev"), OSL: cc.Int("osl"), OSLStddev: cc.Int("osl-stddev"),
				Seed: cc.Uint64("random-seed"), ExtraInputs: cc.StringSlice("extra-inputs"), Headers: cc.StringSlice("header"),
				APIKey: cc.String("api-key"), Timeout: seconds(cc.Float64("request-timeout-seconds")), Goodput: cc.String("goodput"),
				UI: cc.String("ui"), ArtifactDir: cc.String("output-artifact-dir"), Version: version,
			}
			ctx, stop := signal.NotifyContext(cc.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			res, err := profile.Run(ctx, cfg, os.Stdout, os.Stderr)
			switch {
			case res == nil:
				return err
			case res.Cancelled:
				*code = exitInterrupted
			case res.AllFailed():
				*code = exitFailed
				fmt.Fprintln(os.Stderr, "surge: every request failed (see the error summary above)")
			}
			return err
		},
	}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func mockServerCommand() *cli.Command {
	return &cli.Command{
		Name:  "mock-server",
		Usage: "serve the built-in OpenAI-compatible mock (no GPU, no model)",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "port", Value: 8000, Usage: "port on 127.0.0.1"},
			&cli.StringFlag{Name: "host", Value: "127.0.0.1", Usage: "address to listen on"},
			&cli.DurationFlag{Name: "ttft", Value: 20 * time.Millisecond, Usage: "time to first token"},
			&cli.DurationFlag{Name: "itl", Value: 5 * time.Millisecond, Usage: "gap between tokens"},
			&cli.IntFlag{Name: "reasoning-tokens", Usage: "first K output tokens are reasoning content"},
			&cli.Float64Flag{Name: "error-rate", Usage: "fraction of requests answered HTTP 500"},
			&cli.IntFlag{Name: "output-tokens", Value: 128, Usage: "output length when a request sets no max_tokens"},
			&cli.IntFlag{Name: "tokens-per-chunk", Value: 1, Usage: "tokens per SSE event"},
			&cli.IntFlag{Name: "max-running", Usage: "requests served at once; more wait in a queue (0: no limit)"},
			&cli.StringFlag{Name: "model", Value: "mock", Usage: "model name /v1/models reports"},
			&cli.Uint64Flag{Name: "seed", Usage: "seed for injected errors"},
		},
		Action: func(cc *cli.Context) error {
			if r := cc.Float64("error-rate"); r < 0 || r > 1 {
				return &profile.UsageError{Err: fmt.Errorf("--error-rate must be between 0 and 1, got %g", r)}
			}
			ctx, stop := signal.NotifyContext(cc.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			addr := fmt.Sprintf("%s:%d", cc.String("host"), cc.Int("port"))
			srv, err := mockserver.Start(ctx, addr, mockserver.Config{
				TTFT: cc.Duration("ttft"), ITL: cc.Duration("itl"), ReasoningTokens: cc.Int("reasoning-tokens"),
				ErrorRate: cc.Float64("error-rate"), DefaultOutputTokens: cc.Int("output-tokens"),
				TokensPerChunk: cc.Int("tokens-per-chunk"), MaxRunning: cc.Int("max-running"),
				Model: cc.String("model"), Seed: cc.Uint64("seed"),
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "mock server listening on %s (Ctrl-C to stop)\n", srv.URL())
			<-ctx.Done()
			return srv.Close(context.Background())
		},
	}
}
