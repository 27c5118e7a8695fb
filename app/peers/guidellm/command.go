// Package guidellm is `surge guidellm`: GuideLLM's command lines as
// GuideLLM defines them — v0.6's `guidellm benchmark` (and `benchmark
// run`) and v0.7's `guidellm run`, which replaced it — run by surge's
// engine, one surge run per benchmark, with GuideLLM's report
// (benchmarks.json, .yaml, .csv) in the version's own schema (v0.6's
// args and metadata version 1; v0.7's config and version 2), its metrics
// computed as GuideLLM computes them from each request's timings.
package guidellm

import (
	"context"
	"os"
	"slices"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/urfave/cli/v2"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/peers"
)

const help = `surge guidellm benchmark [GuideLLM v0.6's flags]
surge guidellm run [GuideLLM v0.7's flags]

Runs a GuideLLM command line unchanged with surge's engine, one surge run per benchmark of the
profile (a sweep's rates from its synchronous and throughput benchmarks, as GuideLLM computes
them), and writes GuideLLM's report in the version's own schema: benchmarks.json (and .yaml,
.csv) with each benchmark's requests and metrics as GuideLLM defines them (its TPOT counts the
first token, its ITL the tokens after it; rates and concurrency weighted over time; warmup and
cooldown left out of the metrics). surge's own exports go beside it, one folder a benchmark (the
line before each run names the equivalent surge profile command). docs/comparability.md says
where the tools' numbers differ, and why.`

// Command is `surge guidellm`: benchmark (v0.6) or run (v0.7) and
// GuideLLM's flags; *code gets the exit code the run earns.
func Command(version string, code *int) *cli.Command {
	return &cli.Command{
		Name:            "guidellm",
		Usage:           "run a GuideLLM command line (benchmark: v0.6, run: v0.7)",
		SkipFlagParsing: true,
		Action: func(cc *cli.Context) error {
			env := Env{Version: version, Stdout: os.Stdout, Stderr: os.Stderr, TTY: term.IsTerminal(os.Stdout.Fd()), Now: time.Now}
			c, err := Main(cc.Context, cc.Args().Slice(), env)
			*code = c
			return err
		},
	}
}

// Main runs `surge guidellm ARGS`.
func Main(ctx context.Context, args []string, env Env) (int, error) {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		peers.WriteHelp(env.Stdout, help+"\n\nguidellm benchmark (v0.6):", benchmarkFlags)
		peers.WriteHelp(env.Stdout, "\nguidellm run (v0.7):", runFlags)
		return cmdline.ExitOK, nil
	}
	var parse func([]string) (*plan, error)
	rest := args[1:]
	switch args[0] {
	case "benchmark":
		if len(rest) > 0 && rest[0] == "run" {
			rest = rest[1:]
		} else if len(rest) > 0 && rest[0] == "from-file" {
			return cmdline.ExitUsage, cmdline.Usagef("guidellm benchmark from-file is refused: surge runs benchmarks; it re-exports none (surge report DIR reads surge's exports)")
		}
		parse = parseBenchmark
		if slices.Contains(rest, "--help") {
			peers.WriteHelp(env.Stdout, help+"\n\nguidellm benchmark (v0.6):", benchmarkFlags)
			return cmdline.ExitOK, nil
		}
	case "run":
		parse = parseRun
		if slices.Contains(rest, "--help") {
			peers.WriteHelp(env.Stdout, help+"\n\nguidellm run (v0.7):", runFlags)
			return cmdline.ExitOK, nil
		}
	default:
		return cmdline.ExitUsage, cmdline.Usagef("surge guidellm: unknown command %q: surge runs guidellm benchmark (v0.6) and guidellm run (v0.7)", args[0])
	}
	p, err := parse(rest)
	if err != nil {
		return cmdline.ExitUsage, err
	}
	return p.execute(ctx, env)
}
