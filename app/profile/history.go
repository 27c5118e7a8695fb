package profile

import (
	"context"
	"fmt"
	"io"
	"math"
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
	// Recorded even when the run was interrupted (the row says so); an
	// interrupt does not cut the append short.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rememberTimeout)
	defer cancel()
	rec, err := history.AppendRun(ctx, path, dir, history.WithLabel(h.Label))
	if err != nil {
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

// remember is Remember for a run of s that wrote into dir: a shard is
// left to surge merge, which records the merged run.
func remember(ctx context.Context, s *spec.Spec, dir string, log io.Writer) {
	if !s.Shard.Whole() {
		return
	}
	Remember(ctx, s.History, dir, log, s.Logger(log).Notef)
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
