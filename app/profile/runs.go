package profile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/artifact"
	runreport "github.com/surgebench/surge/metrics/report"

	"github.com/surgebench/surge/metrics/export"
)

// Repeated runs (--num-profile-runs), laid out as AIPerf lays them out.
const (
	// FolderProfileRuns holds one folder per run, run_0001 on.
	FolderProfileRuns = artifact.ProfileRunsDir
	// FolderAggregate holds the statistics over the runs.
	FolderAggregate = artifact.AggregateDir
	// maxProfileRuns is AIPerf's bound on --num-profile-runs.
	maxProfileRuns = 10
	// repeatSeed seeds every run when --random-seed is not given (AIPerf's
	// set_consistent_seed), so the runs send the same requests.
	repeatSeed = 42
)

// validateRepeats checks the repeated-run flags (and --sweep-mode, given
// without a list to combine).
func (c *config) validateRepeats() error {
	switch {
	case c.NumProfileRuns < 0 || c.NumProfileRuns > maxProfileRuns:
		return cmdline.Usagef("--num-profile-runs must be between 1 and %d, got %d", maxProfileRuns, c.NumProfileRuns)
	case c.ProfileRunCooldown < 0:
		return cmdline.Usagef("--profile-run-cooldown-seconds must be ≥ 0, got %s", c.ProfileRunCooldown)
	case c.ConfidenceLevel != 0 && (c.ConfidenceLevel <= 0 || c.ConfidenceLevel >= 1):
		return cmdline.Usagef("--confidence-level must be between 0 and 1 (exclusive), got %g", c.ConfidenceLevel)
	case c.SweepMode != "" && c.SweepMode != cmdline.SweepGrid && c.SweepMode != cmdline.SweepZip:
		return cmdline.Usagef("--sweep-mode %q: want grid or zip", c.SweepMode)
	case c.NumProfileRuns > 1 && (c.Search != nil || c.ControlAddr != ""):
		return cmdline.Usagef("--num-profile-runs repeats a planned run: not with a live or search session")
	}
	return nil
}

// runRepeated runs the whole plan c.NumProfileRuns times, each into
// profile_runs/run_NNNN/ under the artifact folder with its own exports,
// the warmup before the first run only, every run seeded alike; waits
// --profile-run-cooldown-seconds between runs; then writes aggregate/
// (mean, std and a confidence interval per metric, AIPerf's files) and
// prints each headline metric with its interval, per value for a sweep. The result is the last
// run's, with the folder the aggregate's parent.
func runRepeated(ctx context.Context, cc cmdline.Config, out, log io.Writer) (*Result, error) {
	c := config{cc}
	if err := c.validateRepeats(); err != nil {
		return nil, err
	}
	if c.SeedDrawn {
		c.Seed, c.SeedDrawn = repeatSeed, false
		fmt.Fprintf(log, "note: --num-profile-runs %d without --random-seed: every run is seeded %d, so each sends the same requests\n", c.NumProfileRuns, repeatSeed)
	}
	level := c.ConfidenceLevel
	if level == 0 {
		level = 0.95
	}
	base := c.ArtifactDir
	reps := export.Repeats{Level: level}
	// A repeated sweep: each value's summaries over the runs, by folder.
	var subs []string
	perValue := map[string]*export.Repeats{}
	var last *Result
	var errs []error
	for i := range c.NumProfileRuns {
		if i > 0 && c.ProfileRunCooldown > 0 {
			fmt.Fprintf(log, "cooling down %s before run %d\n", c.ProfileRunCooldown, i+1)
			select {
			case <-ctx.Done():
			case <-time.After(c.ProfileRunCooldown):
			}
		}
		if ctx.Err() != nil {
			break
		}
		rc := c.Config
		rc.NumProfileRuns = 1
		if i > 0 {
			rc.WarmupCount = 0 // AIPerf's profile_run_disable_warmup_after_first
		}
		p, err := prepareCtx(ctx, rc, log)
		if err != nil {
			return last, err
		}
		if base == "" {
			base = filepath.Join("artifacts", p.artifactName())
		}
		label := fmt.Sprintf("run_%04d", i+1)
		p.c.ArtifactDir = filepath.Join(base, FolderProfileRuns, label)
		p.c.Report = false
		o, err := p.execute(ctx, log)
		if err != nil {
			return last, err
		}
		// Each run's own console is its exports; the aggregate's is shown.
		res, err := p.report(o, io.Discard)
		fmt.Fprintf(out, "%s: %d requests, %d errors → %s\n", label, int64(res.Summary.Run[metrics.RequestCount]),
			int64(res.Summary.Run[metrics.ErrorRequestCount]), p.c.ArtifactDir)
		reps.Labels, reps.Summaries = append(reps.Labels, label), append(reps.Summaries, res.Summary)
		subs = p.stageFolders()
		for j, sub := range subs {
			r := perValue[sub]
			if r == nil {
				r = &export.Repeats{Level: level}
				perValue[sub] = r
			}
			r.Labels, r.Summaries = append(r.Labels, label), append(r.Summaries, o.state.Stage(j).Summary())
		}
		last = res
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", label, err))
		}
		if res.Cancelled || res.Aborted || res.WriteFault != nil {
			break
		}
	}
	if last == nil {
		return nil, errors.Join(append(errs, ctx.Err())...)
	}
	errs = append(errs, writeAggregate(filepath.Join(base, FolderAggregate), reps))
	var stages []export.RepeatStage
	for j, sub := range subs {
		errs = append(errs, writeAggregate(filepath.Join(base, FolderAggregate, sub), *perValue[sub]))
		st := export.RepeatStage{Repeats: *perValue[sub]}
		if j < len(last.Summary.Stages) {
			ss := last.Summary.Stages[j]
			st.Mode, st.Value, st.Label = ss.Mode, ss.Value, ss.Label
		}
		stages = append(stages, st)
	}
	title := fmt.Sprintf("surge profile: %d runs of one plan", c.NumProfileRuns)
	if len(stages) > 0 {
		// Per value: the pooled table would mix the values' loads.
		export.ConsoleRepeatStages(out, title, stages)
		fmt.Fprintf(out, "\nAggregate in %s, each value's in its folder there\n", filepath.Join(base, FolderAggregate))
	} else {
		export.ConsoleRepeats(out, title, reps)
		fmt.Fprintf(out, "\nAggregate in %s\n", filepath.Join(base, FolderAggregate))
	}
	if c.Report {
		errs = append(errs, writeRepeatsReport(out, base, reps.Labels, level))
	}
	res := *last
	res.Dir = base
	return &res, errors.Join(errs...)
}

// writeAggregate writes reps' aggregate files into agg: the artifact
// folder's aggregate/, or aggregate/<value folder>/ for each value of a
// repeated sweep (AIPerf's layout).
func writeAggregate(agg string, reps export.Repeats) error {
	if err := os.MkdirAll(agg, 0o755); err != nil {
		return err
	}
	return errors.Join(
		WriteFile(filepath.Join(agg, export.AggregateJSONFile), func(w io.Writer) error { return export.AggregateJSON(w, reps) }),
		WriteFile(filepath.Join(agg, export.AggregateCSVFile), func(w io.Writer) error { return export.AggregateCSV(w, reps) }))
}

// writeRepeatsReport writes report.html over the runs (--report): the
// page `surge report` writes for the folder (runreport.BuildRepeats), of
// the runs this invocation made.
func writeRepeatsReport(out io.Writer, dir string, labels []string, level float64) error {
	runs, err := artifact.LoadRepeats(dir, labels)
	if err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	d := runreport.BuildRepeats(runs, level)
	path := filepath.Join(dir, "report.html")
	if err := WriteFile(path, func(w io.Writer) error { return runreport.WriteHTML(w, d) }); err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	fmt.Fprintf(out, "  %s\n", path)
	return nil
}
