package profile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/loadgen/search"
	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/history"
)

// rememberTimeout bounds recording a run: another process's write holds
// the database for history.DefaultBusyTimeout at most.
const rememberTimeout = history.DefaultBusyTimeout + 20*time.Second

// Remember appends the finished run in dir (a run, a sweep, a folder of
// repeated runs) to the history h names, once, after every export is
// written: what a run does as it ends, and what surge merge does for the
// shards it merged. Nothing with --no-history. It never fails the run: an
// error (a damaged history, one a newer surge wrote) and the history's
// size warning are printed on log, and the run's artifacts and exit status
// stand. note takes the line saying where the run was recorded.
func Remember(ctx context.Context, h spec.History, dir string, log io.Writer, note func(format string, args ...any)) {
	record(ctx, h, dir, false, log, note, false)
}

// record is Remember. The run is recorded under ctx: a signal (which ends
// the command's ctx) stops a wait on another process's lock at once, and
// one that came after the run ended leaves it unrecorded. A run that ctx
// stopped (cancelled) is still recorded (the row says it was
// interrupted); with signals a further SIGINT or SIGTERM stops that wait.
func record(ctx context.Context, h spec.History, dir string, cancelled bool, log io.Writer, note func(format string, args ...any), signals bool) {
	if h.Off || dir == "" {
		return
	}
	path := h.Path
	if path == "" {
		var err error
		if path, err = history.DefaultPath(); err != nil {
			fmt.Fprintf(log, "surge: the run is not in the history: %v (--no-history records none)\n", err)
			return
		}
	}
	if cancelled && ctx.Err() != nil {
		ctx = context.WithoutCancel(ctx)
		if signals {
			var stop context.CancelFunc
			ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
		}
	}
	ctx, cancel := context.WithTimeout(ctx, rememberTimeout)
	defer cancel()
	rec, err := history.AppendRun(ctx, path, dir, history.WithLabel(h.Label))
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(log, "surge: the run is not in the history %s: interrupted (its artifacts in %s stand)\n", path, dir)
		return
	case err != nil:
		fmt.Fprintf(log, "surge: the run is not in the history: %v (its artifacts in %s stand)\n", err, dir)
		return
	}
	if len(rec.Rows) > 0 {
		note("history: %s recorded as run %d in %s", dir, rec.Rows[0].ID, rec.Path)
	}
	if rec.Warning != "" {
		fmt.Fprintf(log, "warning: %s\n", rec.Warning)
	}
}

// remember is Remember for a run of s that wrote into dir (cancelled:
// stopped by hand): a shard is left to surge merge, which records the
// merged run.
func remember(ctx context.Context, s *spec.Spec, dir string, cancelled bool, log io.Writer) {
	if !s.Shard.Whole() {
		return
	}
	record(ctx, s.History, dir, cancelled, log, s.Logger(log).Notef, s.Signals)
}

// capacityCost prices the capacity a search found: a million output
// tokens at the passing probe's throughput, with the interval its
// throughput interval gives (nil: no price, or no capacity found).
func (ls *liveSession) capacityCost(usdPerHour float64, s *metrics.Summary) *metrics.Cost {
	if ls == nil || ls.result == nil || usdPerHour <= 0 || ls.result.Capacity <= 0 {
		return nil
	}
	var st *metrics.StageSummary
	for _, pr := range ls.result.Probes {
		if pr.Value != ls.result.Capacity || pr.Verdict != search.Pass {
			continue
		}
		for i := range s.Stages {
			if s.Stages[i].Index == pr.Stage {
				st = &s.Stages[i]
			}
		}
	}
	if st == nil && len(s.Stages) == 0 && len(ls.result.Probes) == 1 {
		// One probe is the whole run: no stage table.
		st = &metrics.StageSummary{OutputTokenThroughput: s.Run[metrics.OutputTokenThroughput]}
	}
	if st == nil {
		return nil
	}
	c, ok := metrics.CostAt(usdPerHour, *st)
	if !ok {
		return nil
	}
	return &c
}

// writeCost prints the capacity's cost under the search's result.
func writeCost(out io.Writer, c *metrics.Cost) {
	if c == nil {
		return
	}
	line := fmt.Sprintf("cost at the capacity: $%s per 1M output tokens", money(c.PerMOutputTokens))
	if c.CI != nil {
		hi := "unbounded"
		if h := float64(c.CI.Hi); !math.IsInf(h, 0) && !math.IsNaN(h) {
			hi = "$" + money(h)
		}
		line += fmt.Sprintf(" (%.0f%% CI $%s to %s)", 100*c.Level, money(float64(c.CI.Lo)), hi)
	}
	fmt.Fprintf(out, "%s, at $%s an hour (--cost-per-hour)\n", line, money(c.USDPerHour))
}

// money writes dollars with cents, more digits below a cent.
func money(v float64) string {
	if v != 0 && math.Abs(v) < 0.01 {
		return fmt.Sprintf("%.3g", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// historyInfo adds what the history reads from run_info: the label, so a
// later `surge history import` of the folder keeps it.
func historyInfo(s *spec.Spec, info map[string]any) {
	if s.History.Label != "" {
		info["history_label"] = s.History.Label
	}
}
