package results

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/metrics/artifact"
	"github.com/surgebench/surge/metrics/compare"
	"github.com/surgebench/surge/metrics/history"
	"github.com/surgebench/surge/metrics/stats"
)

// errGate is a regression gate that failed (exit 1): its verdict says why.
var errGate = errors.New("the regression gate failed (the verdict above says why)")

// gateRuns is `surge compare --baseline SPEC DIR...`: the baseline (a
// folder, or the run the history picks for the first of dirs) judged
// against every run of dirs by the --fail-on rules (or compare's default
// gate rules), the comparison and a one-paragraph verdict written to w.
// A history with no baseline yet (a first run, history:last-matching) is
// said and passes: there is nothing to judge. A history that cannot be
// read (damaged, another application's, a newer surge's), a baseline it
// names that is not there (history:id=N, history:label=NAME) or whose
// folder is gone is a *cmdline.BaselineError: the gate does not pass on
// what it could not read.
func gateRuns(ctx context.Context, w io.Writer, dirs []string, c compareConfig) error {
	if err := c.checkBootstrap(); err != nil {
		return err
	}
	rules, err := compare.ParseRules(strings.Join(c.FailOn, ","))
	if err != nil {
		return &cmdline.UsageError{Err: fmt.Errorf("--fail-on %w", err)}
	}
	sel, fromHistory, err := history.ParseSelector(c.Baseline)
	switch {
	case err != nil:
		return &cmdline.UsageError{Err: fmt.Errorf("--baseline %w", err)}
	case !fromHistory && c.History != "":
		return cmdline.Usagef("--history is read for a --baseline history:…, not a folder (%s)", c.Baseline)
	}
	runs, err := artifact.LoadAll(dirs)
	if err != nil {
		return &cmdline.UsageError{Err: err}
	}
	path := c.History
	if fromHistory && path == "" {
		if path, err = history.DefaultPath(); err != nil {
			return err
		}
	}
	if _, err := os.Stat(path); fromHistory && errors.Is(err, fs.ErrNotExist) {
		// Not a first run: no run was recorded there at all (the wrong
		// --history?), and a gate that passes on it would hide that.
		return cmdline.Usagef("--baseline %s: there is no history %s (surge profile --history FILE writes one)", c.Baseline, path)
	}
	dir, row, err := history.ResolveBaseline(ctx, path, c.Baseline, dirs[0])
	switch {
	case errors.Is(err, history.ErrNoBaseline) && sel.LastMatching:
		// A first run: the history is sound and holds no earlier run of
		// this workload.
		fmt.Fprintf(w, "no baseline: %v; nothing to judge yet, so the gate passes\n", err)
		return nil
	case err != nil:
		// The history could not be read, or the baseline it names is not
		// there: the gate cannot judge, so it does not pass.
		return &cmdline.BaselineError{Err: fmt.Errorf("--baseline %s: %w", c.Baseline, err)}
	}
	base, err := artifact.Load(dir)
	if err != nil {
		if !fromHistory {
			return &cmdline.UsageError{Err: fmt.Errorf("--baseline %w", err)}
		}
		return &cmdline.BaselineError{Err: fmt.Errorf("--baseline %s picked %s: %w", c.Baseline, dir, err)}
	}
	if row != nil && !c.JSON {
		label := ""
		if row.Label != "" {
			label = fmt.Sprintf(", labelled %q", row.Label)
		}
		fmt.Fprintf(w, "baseline (%s): history run %d%s, %s\n", c.Baseline, row.ID, label, dir)
	}
	opts := compare.GateOptions{Rules: rules, Force: c.Force, AllowUnjudged: c.AllowUnjudged,
		Options: compare.Options{Metrics: c.Metrics, Bootstrap: stats.Bootstrap{Iterations: c.Samples, Level: c.Confidence, Seed: c.Seed}}}
	if len(c.Metrics) == 0 {
		opts.Metrics = nil // compare's defaults
	}
	g, err := compare.RunGate(append([]*artifact.Run{base}, runs...), opts)
	var incomparable *compare.IncomparableError
	switch {
	case errors.As(err, &incomparable):
		if c.JSON {
			_ = writeJSON(w, map[string]any{"check": incomparable.Check, "runs": g.Result.Runs})
		}
		return &cmdline.UsageError{Err: fmt.Errorf("%w (--force compares them anyway)", err)}
	case err != nil:
		return &cmdline.UsageError{Err: err}
	}
	if c.JSON {
		err = writeJSON(w, g)
	} else {
		if err = compare.WriteText(w, g.Result, g.Outcomes); err == nil {
			_, err = fmt.Fprintf(w, "\n%s\n", g.Verdict)
		}
	}
	if err != nil {
		return err
	}
	if g.Failed {
		if !slices.ContainsFunc(g.Outcomes, func(o compare.Outcome) bool { return o.Failed }) {
			return fmt.Errorf("%w (--allow-unjudged passes the rules too few requests leave unjudged)", errGate)
		}
		return errGate
	}
	return nil
}
