// Command surge benchmarks OpenAI-compatible LLM inference servers.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/urfave/cli/v2"

	"github.com/surgebench/surge/app/calibrate"
	"github.com/surgebench/surge/app/cmdline"
	apphistory "github.com/surgebench/surge/app/history"
	"github.com/surgebench/surge/app/peers/guidellm"
	"github.com/surgebench/surge/app/peers/inferenceperf"
	"github.com/surgebench/surge/app/peers/vllmbench"
	"github.com/surgebench/surge/app/profile"
	"github.com/surgebench/surge/app/results"
	"github.com/surgebench/surge/app/search"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/datasets/tokenizer"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/internal/buildinfo"
	"github.com/surgebench/surge/internal/outbound"
	"github.com/surgebench/surge/internal/sanitize"
)

// A release stamps its tag, commit and date at build time:
// -ldflags "-X main.version=v1.2.0 -X main.commit=… -X main.date=…".
// Any other build names what the toolchain recorded (buildinfo).
var version, commit, date string

// build is the running binary's identity; version its version, as the
// exports and the user agent name it.
var build = buildinfo.Read(version, commit, date)

func init() { version = build.Version }

func main() {
	os.Exit(run(os.Args))
}

func run(args []string) int {
	code := cmdline.ExitOK
	outbound.SetVersion(version)
	// Flags in the order people set them, wrapped to the terminal.
	cli.HelpPrinter = cmdline.PrintHelp
	app := &cli.App{
		Name:    "surge",
		Usage:   "benchmark OpenAI-compatible LLM inference servers",
		Version: build.String(),
		Commands: []*cli.Command{
			profileCommand(&code),
			search.SearchCommand(version, &code),
			mockServerCommand(),
			calibrateCommand(),
			results.ReportCommand(),
			results.MergeCommand(),
			results.CompareCommand(),
			apphistory.Command(),
			apphistory.TrendCommand(),
			vllmbench.Command(version, &code),
			guidellm.Command(version, &code),
			inferenceperf.Command(version, &code),
		},
		OnUsageError: cmdline.OnUsageError,
		// urfave/cli would os.Exit(3) for `surge help nosuch`; run returns
		// every code itself.
		ExitErrHandler: func(*cli.Context, error) {},
	}
	args, err := cmdline.CommandArgs(args, app.Commands)
	if err == nil {
		err = app.Run(args)
	}
	if err != nil {
		// An error may quote a server's answer or name a file: its control
		// characters are shown escaped.
		fmt.Fprintln(os.Stderr, "surge:", sanitize.Text(err.Error()))
		var ue *cmdline.UsageError
		var ec cli.ExitCoder // only urfave/cli's own: "No help topic for …"
		var be *cmdline.BaselineError
		switch {
		case errors.As(err, &ue) || errors.As(err, &ec):
			return cmdline.ExitUsage
		case errors.As(err, &be):
			return cmdline.ExitNoBaseline
		}
		if code == cmdline.ExitOK {
			code = cmdline.ExitFailed
		}
	}
	return code
}

func profileCommand(code *int) *cli.Command {
	cfg := &cmdline.Config{Version: version}
	return &cli.Command{
		Name:         "profile",
		Usage:        "benchmark a server (no --url: the embedded mock server)",
		Flags:        cmdline.ProfileFlags(cfg),
		OnUsageError: cmdline.OnUsageError,
		Action: func(cc *cli.Context) error {
			if cc.Bool(cmdline.HelpAIPerfFlag) {
				return cmdline.WriteAIPerfHelp(os.Stdout)
			}
			if err := cfg.FromContext(cc); err != nil {
				return err
			}
			cfg.StdoutTTY = term.IsTerminal(os.Stdout.Fd())
			cfg.Columns = cmdline.TerminalColumns(os.Stdout)
			cfg.Signals = true
			cfg.JobIndex = os.Getenv(cmdline.JobIndexEnv)
			s, err := spec.Parse(*cfg)
			if err != nil {
				return err
			}
			c, err := profile.RunCommand(cc.Context, s, os.Stdout, os.Stderr)
			*code = c
			return err
		},
	}
}

func calibrateCommand() *cli.Command {
	c := calibrate.CalibrateConfig{}
	var noSave bool
	itls := cli.NewStringSlice("10ms", "5ms", "2ms")
	return &cli.Command{
		Name:  "calibrate",
		Usage: "find and keep the load this machine can time honestly",
		Description: "Searches the streaming load this machine's client can time honestly (read delay p99 < 1 ms, ≤ 1% of\n" +
			"first tokens read with the next) and keeps it, with the cores it measured with (GOMAXPROCS, CPUs),\n" +
			"for run_info: a run on other cores is warned.",
		OnUsageError: cmdline.OnUsageError,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "itl", Value: itls, Usage: "per-stream token gaps to try"},
			&cli.IntFlag{Name: "max-streams", Value: 1024, Usage: "largest stream count tried (doubling from 8)", Destination: &c.MaxStreams},
			&cli.IntFlag{Name: "tokens", Value: 40, Usage: "tokens per stream (a probe runs waves of streams until it read 2,000 tokens)", Destination: &c.Tokens},
			&cli.BoolFlag{Name: "no-save", Usage: "print the result only", Destination: &noSave},
		},
		Action: func(cc *cli.Context) error {
			for _, v := range cc.StringSlice("itl") {
				d, err := time.ParseDuration(v)
				if err != nil || d <= 0 {
					return &cmdline.UsageError{Err: fmt.Errorf("--itl %q: want a positive duration such as 5ms", v)}
				}
				c.ITLs = append(c.ITLs, d)
			}
			c.Save = !noSave
			ctx, stop := signal.NotifyContext(cc.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			_, err := calibrate.Calibrate(ctx, c, os.Stdout)
			return err
		},
	}
}

// listenAddr is --host and --port as one address: an IPv6 host as given
// (::1) or bracketed ([::1]) alike.
func listenAddr(host string, port int) string {
	return net.JoinHostPort(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), strconv.Itoa(port))
}

func mockServerCommand() *cli.Command {
	var (
		mc      mockserver.Config
		host    string
		port    int
		wireLog string
		aborts  bool
		sigv4   bool
	)
	return &cli.Command{
		Name:         "mock-server",
		Usage:        "serve the built-in OpenAI-compatible mock (no GPU, no model)",
		OnUsageError: cmdline.OnUsageError,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "port", Value: 8000, Usage: "port on 127.0.0.1", Destination: &port},
			&cli.StringFlag{Name: "host", Value: "127.0.0.1", Usage: "address to listen on (an IPv6 one as ::1 or [::1])", Destination: &host},
			&cli.StringFlag{Name: "hub", Usage: "also serve this folder as the Hugging Face Hub serves repositories (DIR/datasets/ORG/NAME, DIR/ORG/NAME): set HF_ENDPOINT to the mock's URL to read --hf-dataset and --public-dataset from it offline (docs/workloads.md)", Destination: &mc.Hub},
			&cli.DurationFlag{Name: "ttft", Value: mockserver.DefaultTTFT, Usage: "time to first token (before the prompt's prefill)", Destination: &mc.TTFT},
			&cli.DurationFlag{Name: "prefill-per-token", Value: mockserver.DefaultPrefillPerToken, Usage: "time added to TTFT per prompt token, as a server's prefill grows with the prompt (0: none)", Destination: &mc.PrefillPerToken},
			&cli.DurationFlag{Name: "itl", Value: mockserver.DefaultITL, Usage: "gap between tokens", Destination: &mc.ITL},
			&cli.DurationFlag{Name: "prefill-per-image", Usage: "time added to TTFT per image part (a vision encoder's)", Destination: &mc.PrefillPerImage},
			&cli.DurationFlag{Name: "prefill-per-audio-second", Usage: "time added to TTFT per second of audio", Destination: &mc.PrefillPerAudioSecond},
			&cli.IntFlag{Name: "reasoning-tokens", Usage: "first K output tokens are reasoning content", Destination: &mc.ReasoningTokens},
			&cli.Float64Flag{Name: "error-rate", Usage: "fraction of requests answered HTTP 500", Destination: &mc.ErrorRate},
			&cli.IntFlag{Name: "output-tokens", Value: 128, Usage: "output length when a request sets no max_tokens", Destination: &mc.DefaultOutputTokens},
			&cli.IntFlag{Name: "tokens-per-chunk", Value: 1, Usage: "tokens per SSE event", Destination: &mc.TokensPerChunk},
			&cli.IntFlag{Name: "max-running", Usage: "requests served at once; more wait in a queue (0: no limit)", Destination: &mc.MaxRunning},
			&cli.StringFlag{Name: "server-timings", Value: "none", Usage: "how the OpenAI routes report the mock's own queue, prefill and decode: none (as vLLM), llamacpp (llama.cpp's timings), mock (timings with the queue); its native TGI, SGLang and Ollama routes report theirs always", Destination: &mc.Timings},
			&cli.StringFlag{Name: "otlp-endpoint", Usage: "send a span per request, in vLLM's shape, to this OTLP/HTTP traces URL (surge profile --otlp-receiver's)", Destination: &mc.OTLPEndpoint},
			&cli.StringFlag{Name: "model", Value: "mock", Usage: "model name /v1/models reports", Destination: &mc.Model},
			&cli.Uint64Flag{Name: "seed", Usage: "seed for injected errors", Destination: &mc.Seed},
			&cli.Float64Flag{Name: "stream-error-rate", Usage: "fraction of streamed requests that fail inside their stream (after a 200), in --stream-error-shape's way", Destination: &mc.StreamErrorRate},
			&cli.StringFlag{Name: "stream-error-shape", Value: mockserver.ShapeVLLM, Usage: "the engine whose in-stream failure is sent: " + strings.Join(mockserver.StreamErrorShapes, ", "), Destination: &mc.StreamErrorShape},
			&cli.IntFlag{Name: "stream-error-after", Usage: "tokens a failing stream sends before its error", Destination: &mc.StreamErrorAfter},
			&cli.BoolFlag{Name: "ignore-max-completion-tokens", Usage: "ignore max_completion_tokens (honour only max_tokens), as some llama.cpp builds do", Destination: &mc.IgnoreMaxCompletionTokens},
			&cli.Float64Flag{Name: "tool-call-rate", Usage: "fraction of answers to requests that offer tools that call one", Destination: &mc.ToolCallRate},
			&cli.Float64Flag{Name: "bad-tool-args-rate", Usage: "fraction of its tool calls whose arguments are cut off (not JSON)", Destination: &mc.BadToolArgsRate},
			&cli.BoolFlag{Name: "prefix-cache", Usage: "report the prompt tokens of leading messages seen before as cached (usage's cached_tokens)", Destination: &mc.PrefixCache},
			&cli.IntFlag{Name: "max-model-len", Usage: "the model's window in tokens: a prompt and output cap past it is refused as vLLM refuses it (0: none)", Destination: &mc.MaxModelLen},
			&cli.IntFlag{Name: "context-tokens", Usage: "a slot's context: longer prompts are cut silently, as llama.cpp's server cuts them, and usage reports the cut length (0: no limit)", Destination: &mc.ContextTokens},
			&cli.BoolFlag{Name: "log-aborts", Usage: "print a line on stderr for each request whose client disconnected before its end (before its first token or mid-stream)", Destination: &aborts},
			&cli.StringFlag{Name: "wire-log", Usage: "write one JSON line per streamed request: kernel arrival time of its bytes and first-token flush time (the wire truth for TTFT)", Destination: &wireLog},
			&cli.BoolFlag{Name: "require-sigv4", Usage: "answer as AWS does (403) a request without an AWS SigV4 signature made with the credentials in the mock's AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN): docs/clouds.md", Destination: &sigv4},
			&cli.StringFlag{Name: "require-api-key", Usage: "answer 401 to a request without this key (in Authorization: Bearer, api-key, x-api-key or x-goog-api-key)", Destination: &mc.APIKey},
			&cli.BoolFlag{Name: "require-token", Usage: "answer 401 to a request without a bearer token the mock issued: its OAuth token endpoint (/token), Google's metadata server (GCE_METADATA_HOST) and Azure's managed identity endpoint (/msi/token, IDENTITY_ENDPOINT)", Destination: &mc.RequireToken},
		},
		Action: func(cc *cli.Context) error {
			if r := mc.ErrorRate; r < 0 || r > 1 {
				return &cmdline.UsageError{Err: fmt.Errorf("--error-rate must be between 0 and 1, got %g", r)}
			}
			if r := mc.StreamErrorRate; r < 0 || r > 1 {
				return &cmdline.UsageError{Err: fmt.Errorf("--stream-error-rate must be between 0 and 1, got %g", r)}
			}
			if !slices.Contains(mockserver.StreamErrorShapes, mc.StreamErrorShape) || mc.StreamErrorAfter < 0 {
				return &cmdline.UsageError{Err: fmt.Errorf("--stream-error-shape %q (want one of %s) and --stream-error-after %d (want ≥ 0)",
					mc.StreamErrorShape, strings.Join(mockserver.StreamErrorShapes, ", "), mc.StreamErrorAfter)}
			}
			for _, r := range []struct {
				flag string
				v    float64
			}{{"--tool-call-rate", mc.ToolCallRate}, {"--bad-tool-args-rate", mc.BadToolArgsRate}} {
				if !(r.v >= 0 && r.v <= 1) {
					return &cmdline.UsageError{Err: fmt.Errorf("%s must be between 0 and 1, got %g", r.flag, r.v)}
				}
			}
			if !slices.Contains(mockserver.TimingsFormats, mc.Timings) {
				return &cmdline.UsageError{Err: fmt.Errorf("--server-timings %q: want one of %s", mc.Timings, strings.Join(mockserver.TimingsFormats, ", "))}
			}
			if err := mc.Validate(); err != nil && mc.OTLPEndpoint != "" && strings.Contains(err.Error(), "OTLPEndpoint") {
				return &cmdline.UsageError{Err: fmt.Errorf("--otlp-endpoint %q: want an http(s) URL", mc.OTLPEndpoint)}
			}
			if mc.MaxModelLen < 0 {
				return &cmdline.UsageError{Err: fmt.Errorf("--max-model-len must not be negative, got %d", mc.MaxModelLen)}
			}
			if mc.PrefillPerToken < 0 {
				return &cmdline.UsageError{Err: fmt.Errorf("--prefill-per-token must not be negative, got %v", mc.PrefillPerToken)}
			}
			if sigv4 {
				mc.SigV4 = &mockserver.SigV4Credentials{AccessKeyID: os.Getenv("AWS_ACCESS_KEY_ID"), SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY"), SessionToken: os.Getenv("AWS_SESSION_TOKEN")}
				if mc.SigV4.AccessKeyID == "" || mc.SigV4.SecretAccessKey == "" {
					return &cmdline.UsageError{Err: errors.New("--require-sigv4 checks signatures with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: set both")}
				}
			}
			// Prompt tokens counted as surge's embedded tokenizer counts them
			// (the prompts surge builds for the mock are built with it).
			tok, err := tokenizer.Default()
			if err != nil {
				return err
			}
			mc.Tokenizer = tok
			if wireLog != "" {
				f, err := os.Create(wireLog)
				if err != nil {
					return &cmdline.UsageError{Err: fmt.Errorf("--wire-log: %w", err)}
				}
				defer f.Close()
				mc.WireLog = f
			}
			if aborts {
				mc.AbortLog = os.Stderr
			}
			ctx, stop := signal.NotifyContext(cc.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			if st, err := os.Stat(mc.Hub); mc.Hub != "" && (err != nil || !st.IsDir()) {
				return &cmdline.UsageError{Err: fmt.Errorf("--hub %s: not a folder", mc.Hub)}
			}
			srv, err := mockserver.Start(ctx, listenAddr(host, port), mc)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "mock server listening on %s (Ctrl-C to stop)\n", srv.URL())
			if mc.Hub != "" {
				fmt.Fprintf(os.Stderr, "serving %s as a Hugging Face Hub: HF_ENDPOINT=%s\n", mc.Hub, srv.URL())
			}
			<-ctx.Done()
			return srv.Close(context.Background())
		},
	}
}
