package results

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/metrics/artifact"
	"github.com/surgebench/surge/metrics/compare"
	runreport "github.com/surgebench/surge/metrics/report"
	"github.com/surgebench/surge/metrics/stats"
)

// ReportCommand wires `surge report DIR...` to metrics/report.
func ReportCommand() *cli.Command {
	return &cli.Command{
		Name:         "report",
		Usage:        "write an HTML report (or PNG charts) of runs' folders",
		ArgsUsage:    "DIR...",
		OnUsageError: cmdline.OnUsageError,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "file (html) or folder (png) to write (default: report.html, or report-png/, in the first DIR)"},
			&cli.StringFlag{Name: "format", Value: runreport.FormatHTML, Usage: "html (one self-contained page) or png (one file per chart)"},
		},
		Action: func(cc *cli.Context) error {
			format := cc.String("format")
			if format != runreport.FormatHTML && format != runreport.FormatPNG {
				return &cmdline.UsageError{Err: fmt.Errorf("--format: want html or png, got %q", format)}
			}
			dirs, err := positional(cc)
			if err != nil {
				return err
			}
			d, dir, err := loadReport(dirs)
			if err != nil {
				return &cmdline.UsageError{Err: err}
			}
			out := cc.String("output")
			if out == "" {
				out = dir + "/report.html"
				if format == runreport.FormatPNG {
					out = dir + "/report-png"
				}
			}
			paths, err := runreport.WriteData(out, format, d)
			if err != nil {
				return err
			}
			for _, p := range paths {
				fmt.Fprintln(os.Stdout, p)
			}
			return nil
		},
	}
}

// loadReport reads the runs of dirs into the report's data, and the
// folder the report goes in by default (the first run's). A folder of
// repeated runs (--num-profile-runs) named alone gets the page `surge
// profile --report` wrote for it: its runs with their spread.
func loadReport(dirs []string) (runreport.Data, string, error) {
	if len(dirs) == 1 && artifact.RepeatLabels(dirs[0]) != nil {
		runs, err := artifact.LoadRepeats(dirs[0], nil)
		if err != nil {
			return runreport.Data{}, "", err
		}
		return runreport.BuildRepeats(runs, artifact.RepeatLevel(dirs[0])), dirs[0], nil
	}
	runs, err := artifact.LoadAll(dirs)
	if err != nil {
		return runreport.Data{}, "", err
	}
	dir := runs[0].Dir
	if artifact.RepeatLabels(dirs[0]) != nil {
		dir = dirs[0] // not its first run's folder
	}
	return runreport.Build(runs), dir, nil
}

// compareConfig is `surge compare`'s flags.
type compareConfig struct {
	JSON  bool
	Force bool
	// AllowUnjudged passes the --fail-on rules too few requests leave
	// unjudged (p99 needs 100 in each run) instead of failing them.
	AllowUnjudged bool
	FailOn        []string
	Metrics       []string
	Seed          uint64
	Samples       int
	Confidence    float64
	// Baseline is --baseline: a folder, or a run the history picks
	// (history:last-matching, history:label=NAME, history:id=N); History
	// is --history, the database it reads.
	Baseline, History string
}

// CompareCommand wires `surge compare A B [C…]` to metrics/compare.
func CompareCommand() *cli.Command {
	var c compareConfig
	return &cli.Command{
		Name:  "compare",
		Usage: "judge whether runs differ: intervals, a rank test, a verdict",
		Description: "Per metric, each run's value, the change from the first run, bootstrap intervals, a rank test and a\n" +
			"verdict.\n\nThe first folder is the baseline. Exit status: 0 no --fail-on rule failed; 1 a rule failed (a significant\n" +
			"change past its limit) or could not be judged (too few requests; --allow-unjudged passes it); 2 bad usage, or\n" +
			"runs whose workload fingerprints differ (without --force); 3 the history --baseline history:… reads could not\n" +
			"be read, or the baseline it names is missing.",
		ArgsUsage:    "BASELINE DIR...",
		OnUsageError: cmdline.OnUsageError,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "write the comparison as JSON (for CI)", Destination: &c.JSON},
			&cli.BoolFlag{Name: "force", Usage: "compare runs whose workload fingerprints differ", Destination: &c.Force},
			&cli.StringSliceFlag{Name: "fail-on", Usage: "exit 1 when a run's change passes a limit significantly, e.g. \"time_to_first_token.p99>+5%\" or \"output_token_throughput<-3%\" (repeatable), or when too few requests leave it unjudged (p99 needs 100 in each run)"},
			&cli.BoolFlag{Name: "allow-unjudged", Usage: "pass the rules too few requests leave unjudged instead of failing them (the verdict still names them)", Destination: &c.AllowUnjudged},
			&cli.StringSliceFlag{Name: "metrics", Usage: "per-request metrics to compare (default: " + strings.Join(compare.DefaultMetrics, ",") + ")"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the bootstrap (same seed and runs, same intervals)", Destination: &c.Seed},
			&cli.IntFlag{Name: "bootstrap-samples", Value: 2000, Usage: "bootstrap resamples per interval", Destination: &c.Samples},
			&cli.Float64Flag{Name: "confidence", Value: 0.95, Usage: "confidence level of the intervals and the rank test", Destination: &c.Confidence},
			&cli.StringFlag{Name: "baseline", Usage: "judge the runs against this baseline as a regression gate (--fail-on's rules, else TTFT, ITL and latency against +10%): a folder, or history:last-matching, history:label=NAME or history:id=N from the history (docs/history.md)", Destination: &c.Baseline},
			&cli.StringFlag{Name: "history", Usage: "the history database --baseline history:… reads (default $XDG_DATA_HOME/surge/history.db, else ~/.local/share/surge/history.db)", Destination: &c.History},
		},
		Action: func(cc *cli.Context) error {
			dirs, err := positional(cc)
			if err != nil {
				return err
			}
			c.FailOn, c.Metrics = cc.StringSlice("fail-on"), cc.StringSlice("metrics")
			if c.Baseline != "" {
				ctx := cc.Context
				if ctx == nil {
					ctx = context.Background()
				}
				return gateRuns(ctx, os.Stdout, dirs, c)
			}
			if c.History != "" {
				return cmdline.Usagef("--history is the database --baseline history:… reads: give --baseline too")
			}
			return compareRuns(os.Stdout, dirs, c)
		},
	}
}

// errRegression is a --fail-on rule that failed (exit 1).
var errRegression = errors.New("a --fail-on rule failed")

// compareRuns compares the runs in dirs (the first is the baseline) and
// writes the result to w.
func compareRuns(w io.Writer, dirs []string, c compareConfig) error {
	if len(dirs) < 2 {
		return &cmdline.UsageError{Err: fmt.Errorf("surge compare: name a baseline run folder and at least one more (got %d)", len(dirs))}
	}
	if err := c.checkBootstrap(); err != nil {
		return err
	}
	rules, err := compare.ParseRules(strings.Join(c.FailOn, ","))
	if err != nil {
		return &cmdline.UsageError{Err: fmt.Errorf("--fail-on %w", err)}
	}
	runs, err := artifact.LoadAll(dirs)
	if err != nil {
		return &cmdline.UsageError{Err: err}
	}
	metrics := c.Metrics
	if len(metrics) == 0 {
		metrics = compare.DefaultMetrics
	}
	ruleMetrics, ruleStats := compare.RuleMetrics(rules)
	for _, m := range ruleMetrics {
		if !slices.Contains(metrics, m) {
			metrics = append(slices.Clone(metrics), m)
		}
	}
	res, err := compare.Compare(runs, compare.Options{Metrics: metrics, Stats: ruleStats,
		Bootstrap: stats.Bootstrap{Iterations: c.Samples, Level: c.Confidence, Seed: c.Seed}})
	if err != nil {
		return &cmdline.UsageError{Err: err}
	}
	if !res.Check.Comparable && !c.Force {
		if c.JSON {
			_ = writeJSON(w, map[string]any{"check": res.Check, "runs": res.Runs})
		}
		return &cmdline.UsageError{Err: fmt.Errorf("the runs are not comparable: %s (--force compares them anyway)", strings.Join(res.Check.Reasons, "; "))}
	}
	outcomes, err := res.Evaluate(rules)
	if err != nil {
		return &cmdline.UsageError{Err: err}
	}
	if c.JSON {
		err = writeJSON(w, struct {
			*compare.Result
			FailOn []compare.Outcome `json:"fail_on"`
		}{res, nonNilOutcomes(outcomes)})
	} else {
		err = compare.WriteText(w, res, outcomes)
	}
	if err != nil {
		return err
	}
	var failed, unjudged []string
	for _, o := range outcomes {
		switch {
		case o.Failed:
			failed = append(failed, o.Detail)
		case o.Unjudged && !c.AllowUnjudged:
			unjudged = append(unjudged, o.Detail)
		}
	}
	switch {
	case len(failed) > 0:
		return fmt.Errorf("%w: %s", errRegression, strings.Join(failed, "; "))
	case len(unjudged) > 0:
		return fmt.Errorf("%w: %s (--allow-unjudged passes such rules)", errUnjudged, strings.Join(unjudged, "; "))
	}
	return nil
}

// errUnjudged is a --fail-on rule too few requests left unjudged (exit
// 1): a check that cannot judge does not pass.
var errUnjudged = errors.New("a --fail-on rule could not be judged")

func nonNilOutcomes(o []compare.Outcome) []compare.Outcome {
	if o == nil {
		return []compare.Outcome{}
	}
	return o
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// positional returns the command's folder arguments. The command line
// reaches here with its flags first (cmdline.CommandArgs), so a flag after
// the folders is read as a flag.
func positional(cc *cli.Context) ([]string, error) {
	args := cc.Args().Slice()
	if len(args) == 0 {
		return nil, &cmdline.UsageError{Err: fmt.Errorf("surge %s: name at least one run folder", cc.Command.Name)}
	}
	return args, nil
}

// checkBootstrap checks --bootstrap-samples and --confidence.
func (c compareConfig) checkBootstrap() error {
	switch {
	case c.Samples < 100:
		return &cmdline.UsageError{Err: fmt.Errorf("--bootstrap-samples must be ≥ 100, got %d", c.Samples)}
	case !(c.Confidence > 0.5 && c.Confidence < 1):
		return &cmdline.UsageError{Err: fmt.Errorf("--confidence must be between 0.5 and 1 (0.95 is 95%%), got %g", c.Confidence)}
	}
	return nil
}
