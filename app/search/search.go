package search

import (
	"context"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/profile"
	"github.com/surgebench/surge/app/spec"
	"github.com/urfave/cli/v2"
)

// searchOptions are `surge search`'s flags beyond profile's (which it
// takes too: the target, the workload, the start value as --concurrency or
// --request-rate).
func searchOptions(s *cmdline.SearchConfig) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Category: cmdline.CatSearch, Name: "slo", Destination: &s.SLO,
			Usage: "required (on the command line or in -f's file): objectives every probe must meet, --goodput's syntax with a percentile: \"time_to_first_token:p95:200 inter_token_latency:p99:30 error_rate:0.01\" (default p95)"},
		&cli.Float64Flag{Category: cmdline.CatSearch, Name: "search-max", Destination: &s.Max, Usage: "highest value probed (default 1024 × the start)"},
		&cli.Float64Flag{Category: cmdline.CatSearch, Name: "search-resolution", Value: 0.05, Destination: &s.Resolution, Usage: "stop once the lowest failing value is within this fraction of the highest passing one"},
		cmdline.NewValueFlag(cli.GenericFlag{Category: cmdline.CatSearch, Name: "probe-duration", Value: cmdline.SecondsFlagValue(&s.MinProbe), Usage: "seconds each probe runs at least (default 5)"}),
		cmdline.NewValueFlag(cli.GenericFlag{Category: cmdline.CatSearch, Name: "probe-max-duration", Value: cmdline.SecondsFlagValue(&s.MaxProbe), Usage: "seconds a noisy probe may be extended to (default 4 × --probe-duration)"}),
		&cli.IntFlag{Category: cmdline.CatSearch, Name: "max-probes", Value: 24, Destination: &s.MaxProbes, Usage: "most probes the search makes"},
		&cli.BoolFlag{Category: cmdline.CatSearch, Name: "settle", Value: true, Destination: &s.Settle, Usage: "end a probe as soon as its requests settle the verdict (each objective's 95% interval clear of its limit), before --probe-duration; --settle=false runs every probe its full time"},
	}
}

// SearchCommand is `surge search`: the highest request rate (from
// --request-rate START, or from a start a short pilot picks when no start
// is given) or concurrency (--concurrency START) the server sustains
// within --slo, by probes that each become a stage of the exports.
func SearchCommand(version string, code *int) *cli.Command {
	return command(version, func(ctx context.Context, s *spec.Spec) error {
		c, err := profile.RunCommand(ctx, s, os.Stdout, os.Stderr)
		*code = c
		return err
	})
}

// command is `surge search` with the run it ends in: the flags read, a
// search's defaults applied, the spec parsed, then run.
func command(version string, run func(context.Context, *spec.Spec) error) *cli.Command {
	cfg := &cmdline.Config{Version: version}
	cfg.Search = &cmdline.SearchConfig{}
	return &cli.Command{
		Name:  "search",
		Usage: "find the highest load a server sustains within --slo",
		Description: "Finds the highest request rate (--request-rate START; none: a short pilot picks it) or concurrency\n" +
			"(--concurrency START) the server sustains within --slo: each probe is a stage of the exports.",
		Flags:        append(cmdline.SearchFlags(cfg), searchOptions(cfg.Search)...),
		OnUsageError: cmdline.OnUsageError,
		Action: func(cc *cli.Context) error {
			if cc.Bool(cmdline.HelpAIPerfFlag) {
				return cmdline.WriteAIPerfHelp(os.Stdout)
			}
			if err := cfg.FromContext(cc); err != nil {
				return err
			}
			if cfg.Search.SLO == "" {
				// Not urfave's Required: a config file may give it.
				return cmdline.Usagef("--slo is required: the objectives every probe must meet")
			}
			cfg.StdoutTTY = term.IsTerminal(os.Stdout.Fd())
			cfg.Columns = cmdline.TerminalColumns(os.Stdout)
			cfg.Signals = true
			if strings.TrimSpace(cfg.Concurrency) == "" && strings.TrimSpace(cfg.RequestRate) == "" {
				// No start given: a request-rate search whose start a
				// short pilot picks (the rate here is its placeholder).
				cfg.Search.AutoStart, cfg.RequestRate = true, "1"
			}
			if !cc.IsSet("arrival-pattern") && !cfg.SmoothnessSet && cfg.RequestRate != "" {
				// Poisson bursts at a probe's start read as queueing; a
				// capacity is a steady rate unless asked otherwise.
				cfg.ArrivalPattern = "constant"
			}
			if cfg.RequestCount == 0 {
				cfg.RequestCount = 2000 // distinct prompts to cycle through, not a bound
			}
			s, err := spec.Parse(*cfg)
			if err != nil {
				return err
			}
			return run(cc.Context, s)
		},
	}
}
