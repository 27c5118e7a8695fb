// Package inferenceperf is `surge inference-perf`: kubernetes-sigs'
// inference-perf config (--config_file, and its --section.key overrides)
// as inference-perf defines it, its load stages run one surge run each,
// with inference-perf's report files (summary_lifecycle_metrics.json,
// stage_N_lifecycle_metrics.json, per_request_lifecycle_metrics.json,
// config.yaml) computed as its reportgen computes them.
package inferenceperf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/urfave/cli/v2"
	"go.yaml.in/yaml/v3"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/peers"
)

// Env is where a config runs.
type Env struct {
	Version        string
	Stdout, Stderr io.Writer
	TTY            bool
	Now            func() time.Time
	// Sleep waits between stages (load.interval); nil: time.Sleep under
	// ctx.
	Sleep func(ctx context.Context, d time.Duration)
}

// flags are inference-perf's own flags; every other --section.key flag
// overrides that key of the config, as inference-perf's CLI does.
var flags = []peers.Flag{
	{Name: "config_file", Aliases: []string{"c", "config-file"}, Kind: peers.Value, Usage: "the YAML config (load, api, server, tokenizer, data, report, storage)"},
	{Name: "log-level", Kind: peers.Value, Usage: "no effect on the run: surge's log lines are its own (DEBUG, INFO, WARNING, ERROR, CRITICAL accepted)"},
	{Name: "analyze", Aliases: []string{"a"}, Kind: peers.Many, Refused: "surge analyses runs with surge report and surge compare"},
	{Name: "unified_analysis_dir", Aliases: []string{"u"}, Kind: peers.Value, Refused: "surge analyses runs with surge report and surge compare"},
}

const help = `surge inference-perf --config_file FILE [--section.key VALUE …]

Runs an inference-perf config unchanged with surge's engine: each load stage (constant or poisson
at a rate for a duration, or concurrent requests) is one surge run, the data's lengths drawn as
inference-perf draws them, and inference-perf's reports are written into storage.local_storage.path
(default reports-TIMESTAMP): summary_lifecycle_metrics.json, stage_N_lifecycle_metrics.json,
per_request_lifecycle_metrics.json and config.yaml, computed as its reportgen computes them (TPOT
from the first token to the last over the tokens after the first, every token of a chunk at the
chunk's time). surge's own exports go into PATH/surge/stage_N. Keys surge cannot honour are refused
with their reason: the metrics section (surge scrapes the server's /metrics itself), sweeps and
trace replays, the shareGPT and Hub data types, circuit breakers, cloud storage.`

// Command is `surge inference-perf`; *code gets the exit code the run
// earns.
func Command(version string, code *int) *cli.Command {
	return &cli.Command{
		Name:            "inference-perf",
		Usage:           "run an inference-perf config (--config_file FILE)",
		SkipFlagParsing: true,
		Action: func(cc *cli.Context) error {
			env := Env{Version: version, Stdout: os.Stdout, Stderr: os.Stderr, TTY: term.IsTerminal(os.Stdout.Fd()), Now: time.Now}
			c, err := Main(cc.Context, cc.Args().Slice(), env)
			*code = c
			return err
		},
	}
}

// Main runs `surge inference-perf ARGS`.
func Main(ctx context.Context, args []string, env Env) (int, error) {
	if slices.Contains(args, "--help") || slices.Contains(args, "-h") {
		peers.WriteHelp(env.Stdout, help, flags)
		fmt.Fprintln(env.Stdout, "  --SECTION.KEY V\n      sets that key of the config (JSON or YAML values: --load.stages '[{\"rate\": 10, \"duration\": 60}]')")
		return cmdline.ExitOK, nil
	}
	// Split inference-perf's own flags from the --section.key overrides.
	var own []string
	type override struct{ key, value string }
	var overrides []override
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "--") && strings.Contains(name, ".") {
			if !hasValue {
				if i+1 >= len(args) {
					return cmdline.ExitUsage, cmdline.Usagef("%s: --%s needs a value", tool, name)
				}
				value = args[i+1]
				i++
			}
			overrides = append(overrides, override{name, value})
			continue
		}
		own = append(own, a)
	}
	a, err := peers.Parse(own, flags, peers.Dialect{Tool: tool})
	if err != nil {
		return cmdline.ExitUsage, err
	}
	if lvl, ok := a.Value("log-level"); ok && !slices.Contains([]string{"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}, lvl) {
		return cmdline.ExitUsage, cmdline.Usagef("%s: --log-level %q: choose from DEBUG, INFO, WARNING, ERROR, CRITICAL", tool, lvl)
	}
	cfg := map[string]any{}
	if path, ok := a.Value("config_file"); ok {
		if cfg, err = readConfig(ctx, path); err != nil {
			return cmdline.ExitUsage, err
		}
	} else if len(overrides) == 0 {
		return cmdline.ExitUsage, cmdline.Usagef("%s: give --config_file FILE (or the config as --section.key flags; --help)", tool)
	}
	for _, o := range overrides {
		if err := setPath(cfg, o.key, cliValue(o.value)); err != nil {
			return cmdline.ExitUsage, err
		}
	}
	p, err := buildPlan(cfg, env.Now())
	if err != nil {
		return cmdline.ExitUsage, err
	}
	return p.execute(ctx, env)
}

// execute runs every stage, one surge run each, waiting load.interval
// between them, then writes the reports from what finished.
func (p *plan) execute(ctx context.Context, env Env) (int, error) {
	// An interrupt between stages (load.interval) ends the run and still
	// writes the reports of the stages done; within a stage the surge run
	// takes it (it drains, then stops).
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := os.MkdirAll(p.storagePath, 0o755); err != nil {
		return cmdline.ExitFailed, err
	}
	work := filepath.Join(p.storagePath, "surge")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return cmdline.ExitFailed, err
	}
	dataArgs, err := p.dataArgs(work)
	if err != nil {
		return cmdline.ExitFailed, err
	}
	runner := peers.Runner{Version: env.Version, Log: env.Stderr, TTY: env.TTY}
	sleep := env.Sleep
	if sleep == nil {
		sleep = func(ctx context.Context, d time.Duration) {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-ctx.Done():
			case <-t.C:
			}
		}
	}
	var all []lifecycle
	byStage := map[int][]lifecycle{}
	code := cmdline.ExitOK
	var runErr error
	for i := range p.stages {
		if i > 0 && p.interval > 0 {
			sleep(ctx, time.Duration(p.interval*float64(time.Second)))
		}
		if ctx.Err() != nil {
			break
		}
		dir := filepath.Join(work, fmt.Sprintf("stage_%d", i))
		code, runErr = runner.Run(ctx, p.surgeArgs(i, dir, dataArgs))
		if _, err := os.Stat(filepath.Join(dir, "profile_export_aiperf.json")); err != nil {
			break
		}
		f, err := peers.Load(ctx, dir, p.perRequest)
		if err != nil {
			return max(code, cmdline.ExitFailed), errors.Join(runErr, err)
		}
		var bodyOf map[string][]string
		if p.perRequest || p.summary || p.perStage {
			if bodyOf, err = bodies(ctx, dir); err != nil {
				return max(code, cmdline.ExitFailed), errors.Join(runErr, err)
			}
		}
		for _, r := range f.Requests {
			l := newLifecycle(r, i, p.streaming)
			if b := bodyOf[r.Conversation]; r.Turn < len(b) {
				l.requestBody = b[r.Turn]
			}
			all = append(all, l)
			byStage[i] = append(byStage[i], l)
		}
		fmt.Fprintf(env.Stdout, "Stage %d: %d requests, %d failed\n", i, len(byStage[i]), countFailed(byStage[i]))
		if code != cmdline.ExitOK || runErr != nil {
			break
		}
	}
	if err := p.writeReports(all, byStage, env); err != nil {
		return max(code, cmdline.ExitFailed), errors.Join(runErr, err)
	}
	if ctx.Err() != nil && code == cmdline.ExitOK {
		code = cmdline.ExitInterrupted
	}
	return code, runErr
}

func countFailed(ls []lifecycle) int {
	n := 0
	for _, l := range ls {
		if l.failed {
			n++
		}
	}
	return n
}

// writeReports writes inference-perf's report files into the storage
// path: json.dumps(…, indent=2), and config.yaml.
func (p *plan) writeReports(all []lifecycle, byStage map[int][]lifecycle, env Env) error {
	write := func(name string, v any) error {
		var b []byte
		var err error
		switch x := v.(type) {
		case *peers.Object:
			b, err = x.MarshalJSON()
		default:
			b, err = json.Marshal(v)
		}
		if err != nil {
			return err
		}
		var out bytes.Buffer
		if err := json.Indent(&out, b, "", "  "); err != nil {
			return err
		}
		path := filepath.Join(p.storagePath, p.prefix+name)
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "surge: inference-perf's report: %s\n", path)
		return nil
	}
	if p.summary && len(all) > 0 {
		if err := write("summary_lifecycle_metrics.json", p.summarizeRequests(all, nil, nil)); err != nil {
			return err
		}
	}
	if p.perStage {
		for i := range p.stages {
			ls := byStage[i]
			if len(ls) == 0 {
				continue
			}
			g := p.stages[i]
			rate := g.rate
			if p.loadType == "concurrent" {
				// inference-perf sets a concurrent stage's rate at run time:
				// its requests over its send duration.
				rate = float64(len(ls))
				if d := sendDuration(ls); d > 0 {
					rate /= d
				}
				c := g.concurrency
				if err := write(fmt.Sprintf("stage_%d_lifecycle_metrics.json", i), p.summarizeRequests(ls, &rate, &c)); err != nil {
					return err
				}
				continue
			}
			if err := write(fmt.Sprintf("stage_%d_lifecycle_metrics.json", i), p.summarizeRequests(ls, &rate, nil)); err != nil {
				return err
			}
		}
	}
	if p.perRequest {
		list := make([]any, len(all))
		for i, l := range all {
			list[i] = l.perRequest(p.streaming)
		}
		if err := write("per_request_lifecycle_metrics.json", list); err != nil {
			return err
		}
	}
	y, err := yaml.Marshal(p.config)
	if err != nil {
		return err
	}
	path := filepath.Join(p.storagePath, p.prefix+"config.yaml")
	if err := os.WriteFile(path, y, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "surge: surge's exports: %s\n", filepath.Join(p.storagePath, "surge"))
	return nil
}

func sendDuration(ls []lifecycle) float64 {
	lo, hi := ls[0].start, ls[0].start
	for _, l := range ls {
		lo, hi = min(lo, l.start), max(hi, l.start)
	}
	return hi - lo
}
