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

	"github.com/charmbracelet/x/term"
	"github.com/urfave/cli/v2"

	"github.com/surgebench/surge/examples/mockserver"
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
			return &UsageError{Err: err}
		},
	}
	if err := app.Run(args); err != nil {
		// The flag package names flags with one dash; ours take two.
		msg := strings.NewReplacer("flag -", "flag --", "defined: -", "defined: --").Replace(err.Error())
		fmt.Fprintln(os.Stderr, "surge:", msg)
		var ue *UsageError
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
		Flags: profileFlags(),
		Action: func(cc *cli.Context) error {
			cfg := Config{
				Model: cc.String("model"), URL: cc.String("url"), EndpointType: cc.String("endpoint-type"),
				Streaming: cc.Bool("streaming"),

				Concurrency: cc.String("concurrency"), RequestRate: cc.String("request-rate"),
				ArrivalPattern: cc.String("arrival-pattern"), Smoothness: cc.Float64("arrival-smoothness"),
				SmoothnessSet:   cc.IsSet("arrival-smoothness"),
				ConcurrencyRamp: seconds(cc.Float64("concurrency-ramp-duration")), RateRamp: seconds(cc.Float64("request-rate-ramp-duration")),
				KneeFactor:    cc.Float64("knee-factor"),
				FixedSchedule: cc.Bool("fixed-schedule"), AutoOffset: cc.Bool("fixed-schedule-auto-offset"),
				StartOffset: millis(cc.Float64("fixed-schedule-start-offset")), EndOffset: millis(cc.Float64("fixed-schedule-end-offset")),
				UserCentricRate: cc.Float64("user-centric-rate"), NumUsers: cc.Int("num-users"),
				TurnDelayMean: millis(cc.Float64("conversation-turn-delay-mean")), TurnDelayStd: millis(cc.Float64("conversation-turn-delay-stddev")),

				RequestCount: cc.Int("request-count"), Duration: seconds(cc.Float64("benchmark-duration")),
				Grace: seconds(cc.Float64("benchmark-grace-period")), WarmupCount: cc.Int("warmup-request-count"),
				FailedThreshold: cc.Float64("failed-request-threshold"),

				InputFile: cc.String("input-file"), CustomDatasetType: cc.String("custom-dataset-type"),
				PublicDataset: cc.String("public-dataset"), ISLBlockSize: cc.Int("isl-block-size"),
				ISL: cc.Int("isl"), ISLStddev: cc.Int("isl-stddev"), OSL: cc.Int("osl"), OSLStddev: cc.Int("osl-stddev"),
				PrefixPoolSize: cc.Int("prompt-prefix-pool-size"), PrefixLength: cc.Int("prompt-prefix-length"),
				SharedSystemPromptLength: cc.Int("shared-system-prompt-length"),
				Tokenizer:                cc.String("tokenizer"), Seed: cc.Uint64("random-seed"),

				ExtraInputs: cc.StringSlice("extra-inputs"), Headers: cc.StringSlice("header"),
				APIKey: cc.String("api-key"), Timeout: seconds(cc.Float64("request-timeout-seconds")), Goodput: cc.String("goodput"),

				NoGPUTelemetry: cc.Bool("no-gpu-telemetry"), GPUTelemetryURLs: cc.StringSlice("gpu-telemetry"),
				GPUInterval:       seconds(cc.Float64("gpu-telemetry-interval")),
				ServerMetricsURLs: cc.StringSlice("server-metrics"), NoServerMetrics: cc.Bool("no-server-metrics"),

				UI: cc.String("ui"), StdoutTTY: term.IsTerminal(os.Stdout.Fd()),
				ArtifactDir: cc.String("output-artifact-dir"), Version: version,
			}
			ctx, stop := signal.NotifyContext(cc.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			res, err := Run(ctx, cfg, os.Stdout, os.Stderr)
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

func millis(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

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
				return &UsageError{Err: fmt.Errorf("--error-rate must be between 0 and 1, got %g", r)}
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
