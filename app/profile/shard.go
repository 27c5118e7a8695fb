package profile

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/metrics/merge"
)

// checkSharding refuses what cannot be split over the shards: a live
// session (its controls steer one host), and a concurrency or a user count
// below the number of shards (a shard needs at least one of each).
func (p *prepared) checkSharding(l load) error {
	c, n := &p.c, p.Shard.Count
	if p.Shard.Whole() {
		return nil
	}
	switch {
	case c.Search != nil:
		return cmdline.Usagef("--shard: surge search steers one host; run it unsharded")
	case c.ControlAddr != "":
		return cmdline.Usagef("--shard cannot be combined with --control-addr: live controls steer one host")
	case c.StopOn != "":
		return cmdline.Usagef("--shard cannot be combined with --stop-on: a stop condition would end one shard only")
	case c.NumUsers > 0 && c.NumUsers < n:
		return cmdline.Usagef("--num-users %d cannot be split over %d shards: each needs at least one user", c.NumUsers, n)
	}
	for _, k := range l.concs {
		if k < n {
			return cmdline.Usagef("--concurrency %d cannot be split over %d shards: each needs at least one request in flight", k, n)
		}
	}
	return nil
}

// shardInfo is run_info.shard: which part of the plan the export holds,
// and how late it started for --start-at.
func (p *prepared) shardInfo(late time.Duration) merge.ShardInfo {
	info := merge.ShardInfo{Index: p.Shard.Index, Count: max(p.Shard.Count, 1), LateMs: float64(late) / 1e6}
	if !p.StartAt.IsZero() {
		info.StartAt = p.StartAt.UTC().Format(time.RFC3339Nano)
	}
	return info
}

// lateWarnAfter is how late a shard may start for --start-at before it
// says so in the summary (its late_ms is always in run_info).
const lateWarnAfter = 10 * time.Millisecond

// waitForStart sleeps until --start-at (or until ctx ends: the run then
// starts and stops at once, writing its exports) and returns how late the
// run starts. A late start is said, not hidden: the schedule is not
// shifted to make up for it.
func (p *prepared) waitForStart(ctx context.Context, log io.Writer) time.Duration {
	if p.StartAt.IsZero() {
		return 0
	}
	if wait := time.Until(p.StartAt); wait > 0 {
		fmt.Fprintf(log, "%swaiting %s for --start-at %s\n", p.shardPrefix(), wait.Round(time.Millisecond), p.StartAt.UTC().Format(time.RFC3339Nano))
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return 0
		}
	}
	late := max(time.Since(p.StartAt), 0)
	if late > lateWarnAfter {
		fmt.Fprintf(log, "warning: %s\n", p.lateWarning(late))
	}
	return late
}

func (p *prepared) lateWarning(late time.Duration) string {
	return fmt.Sprintf("%sstarted %s late for --start-at %s: its schedule runs that much behind the other shards' (not shifted to hide it; run_info late_ms)",
		p.shardPrefix(), late.Round(time.Millisecond), p.StartAt.UTC().Format(time.RFC3339Nano))
}

// shardPrefix is "shard i/N: " for a shard's messages ("" unsharded).
func (p *prepared) shardPrefix() string {
	if p.Shard.Whole() {
		return ""
	}
	return "shard " + p.Shard.String() + ": "
}

// shardDir is the default artifact folder's suffix for a shard, so shards
// run on one machine do not share a folder.
func (p *prepared) shardDir() string {
	if p.Shard.Whole() {
		return ""
	}
	return fmt.Sprintf("-shard%dof%d", p.Shard.Index, p.Shard.Count)
}
