package profile

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/surgebench/surge/app/spec"
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
	// repeatSeed seeds every run when --random-seed is not given (AIPerf's
	// set_consistent_seed), so the runs send the same requests.
	repeatSeed = 42
)

// runRepeated runs the whole plan c.NumProfileRuns times, each into
// profile_runs/run_NNNN/ under the artifact folder with its own exports,
// the warmup before the first run only, every run seeded alike; waits
// --profile-run-cooldown-seconds between runs; then writes aggregate/
// (mean, std and a confidence interval per metric, AIPerf's files) and
// prints each headline metric with its interval, per value for a sweep. The result is the last
// run's, with the folder the aggregate's parent.
func runRepeated(ctx context.Context, s *spec.Spec, out, log io.Writer) (*Result, error) {
	rp := s.Load.Repeats
	switch {
	case s.SeedDrawn() && rp.SeedPerRun:
		fmt.Fprint(log, export.Wrap(fmt.Sprintf("note: --num-profile-runs %d with --no-set-consistent-seed: each run draws its own seed, so each sends other requests", rp.N), s.Columns, 2))
	case s.SeedDrawn():
		s = s.WithSeed(repeatSeed)
		fmt.Fprint(log, export.Wrap(fmt.Sprintf("note: --num-profile-runs %d without --random-seed: every run is seeded %d, so each sends the same requests", rp.N, repeatSeed), s.Columns, 2))
	}
	level := rp.Level
	base := s.Exports.Dir
	reps := export.Repeats{Level: level}
	// A repeated sweep: each value's summaries over the runs, by folder.
	var subs []string
	perValue := map[string]*export.Repeats{}
	var last *Result
	var errs []error
	var conv *convergence
	if rp.Converge != nil {
		conv = &convergence{c: rp.Converge, level: level, jsonl: s.Exports.Files.JSONL}
	}
	for i := range rp.N {
		if i > 0 && rp.Cooldown > 0 {
			fmt.Fprintf(log, "cooling down %s before run %d\n", rp.Cooldown, i+1)
			select {
			case <-ctx.Done():
			case <-time.After(rp.Cooldown):
			}
		}
		if ctx.Err() != nil {
			break
		}
		p, err := prepareCtx(ctx, repeatSpec(s, i), log)
		if err != nil {
			return last, err
		}
		defer p.closeAuth()
		if base == "" {
			base = filepath.Join("artifacts", p.artifactName())
		}
		label := fmt.Sprintf("run_%04d", i+1)
		p.s = p.s.WithArtifactDir(filepath.Join(base, FolderProfileRuns, label))
		o, err := p.execute(ctx, log)
		if err != nil {
			return last, err
		}
		// Each run's own console is its exports; the aggregate's is shown.
		res, err := p.report(o, io.Discard)
		fmt.Fprint(out, export.Wrap(fmt.Sprintf("%s: %d requests, %d errors → %s", label, int64(res.Summary.Run[metrics.RequestCount]),
			int64(res.Summary.Run[metrics.ErrorRequestCount]), p.s.Exports.Dir), p.s.Columns, 2))
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
		if conv != nil {
			conv.add(res.Summary, p.s.Exports.Dir)
			done, how, err := conv.converged()
			if err != nil {
				errs = append(errs, err)
				break
			}
			if done {
				fmt.Fprintf(out, "%s converged after %d of at most %d runs: %s\n", conv.c.Metric, i+1, rp.N, how)
				break
			}
			fmt.Fprintf(log, "%s not converged after %d runs: %s\n", conv.c.Metric, i+1, how)
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
	title := fmt.Sprintf("surge profile: %d runs of one plan", len(reps.Summaries))
	if len(stages) > 0 {
		// Per value: the pooled table would mix the values' loads.
		export.ConsoleRepeatStages(out, title, stages)
		fmt.Fprintf(out, "\nAggregate in %s, each value's in its folder there\n", filepath.Join(base, FolderAggregate))
	} else {
		export.ConsoleRepeats(out, title, reps)
		fmt.Fprintf(out, "\nAggregate in %s\n", filepath.Join(base, FolderAggregate))
	}
	if s.Exports.Report || s.Exports.Plots {
		errs = append(errs, writeRepeatsReport(out, base, reps.Labels, level, s.Exports))
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

// writeRepeatsReport writes report.html (--report) and plots/
// (--auto-plot) over the runs: the page `surge report` writes for the
// folder (runreport.BuildRepeats), of the runs this invocation made.
func writeRepeatsReport(out io.Writer, dir string, labels []string, level float64, e spec.Exports) error {
	runs, err := artifact.LoadRepeats(dir, labels)
	if err != nil {
		return fmt.Errorf("%s: %w", reportFlag(e), err)
	}
	return writeReportData(out, dir, e, runreport.BuildRepeats(runs, level))
}

// repeatSpec is run i's spec: the run of the plan (Spec.Repeat), seeded
// as the multi-run flags ask: a seed drawn for each run
// (--no-set-consistent-seed without --random-seed), or one derived from
// the run's seed and its number (--vary-seed-per-trial, AIPerf's SHA-256
// over them), else the run's own.
func repeatSpec(s *spec.Spec, i int) *spec.Spec {
	t := s.Repeat(i)
	rp := s.Load.Repeats
	switch {
	case rp.VarySeed:
		sum := sha256.Sum256([]byte(fmt.Sprintf("%d:%d", s.Seed(), i)))
		t = t.WithSeed(binary.BigEndian.Uint64(sum[:8]) >> 11) // below 2^53, exact in JSON
	case rp.SeedPerRun && s.SeedDrawn():
		t = t.WithSeed(rand.Uint64N(1 << 53))
	}
	return t
}
