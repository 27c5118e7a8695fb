package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/metrics/merge"
)

// JobIndexEnv is the variable a Kubernetes Indexed Job sets to each pod's
// completion index: with --shards N it is the shard's index.
const JobIndexEnv = "JOB_COMPLETION_INDEX"

// ShardConfig holds the flags that run one shard of a plan split over
// several load hosts.
type ShardConfig struct {
	Shard   string // --shard i/N
	Shards  int    // --shards N (the index from JOB_COMPLETION_INDEX)
	StartAt string // --start-at, RFC 3339
	// JobIndex is $JOB_COMPLETION_INDEX ("" when unset).
	JobIndex string
}

// shard resolves --shard, --shards and JOB_COMPLETION_INDEX into this
// host's part of the plan (the zero Shard without them).
func (c *ShardConfig) shard() (loadgen.Shard, error) {
	if c.Shards < 0 {
		return loadgen.Shard{}, usagef("--shards must be ≥ 1, got %d", c.Shards)
	}
	if c.Shard != "" {
		s, err := loadgen.ParseShard(c.Shard)
		if err != nil {
			return s, usagef("--shard %w", err)
		}
		if c.Shards > 0 && c.Shards != s.Count {
			return s, usagef("--shard %s and --shards %d disagree on the shard count", c.Shard, c.Shards)
		}
		return s, nil
	}
	if c.Shards == 0 {
		return loadgen.Shard{}, nil
	}
	if c.JobIndex == "" {
		return loadgen.Shard{}, usagef("--shards %d needs this host's index: --shard i/%d, or %s (set by a Kubernetes Indexed Job)", c.Shards, c.Shards, JobIndexEnv)
	}
	i, err := strconv.Atoi(strings.TrimSpace(c.JobIndex))
	if err != nil {
		return loadgen.Shard{}, usagef("--shards: %s=%q is not a shard index", JobIndexEnv, c.JobIndex)
	}
	s, err := loadgen.NewShard(i, c.Shards)
	if err != nil {
		return s, usagef("--shards %d with %s=%d: %w", c.Shards, JobIndexEnv, i, err)
	}
	return s, nil
}

// startAt parses --start-at: an instant after now (zero when unset).
func (c *ShardConfig) startAt(now time.Time) (time.Time, error) {
	if c.StartAt == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(c.StartAt))
	if err != nil {
		return t, usagef("--start-at %q is not an RFC 3339 time such as 2026-05-01T12:00:00Z", c.StartAt)
	}
	if !t.After(now) {
		return t, usagef("--start-at %s has passed (it is now %s): give every shard the same future instant, e.g. $(date -u -d '+2 min' +%%FT%%TZ)",
			t.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return t, nil
}

// checkSharding refuses what cannot be split over the shards: a live
// session (its controls steer one host), and a concurrency or a user count
// below the number of shards (a shard needs at least one of each).
func (p *prepared) checkSharding(l load) error {
	c, n := &p.c, p.shard.Count
	if p.shard.Whole() {
		return nil
	}
	switch {
	case c.Search != nil:
		return usagef("--shard: surge search steers one host; run it unsharded")
	case c.ControlAddr != "":
		return usagef("--shard cannot be combined with --control-addr: live controls steer one host")
	case c.StopOn != "":
		return usagef("--shard cannot be combined with --stop-on: a stop condition would end one shard only")
	case c.NumUsers > 0 && c.NumUsers < n:
		return usagef("--num-users %d cannot be split over %d shards: each needs at least one user", c.NumUsers, n)
	}
	for _, k := range l.concs {
		if k < n {
			return usagef("--concurrency %d cannot be split over %d shards: each needs at least one request in flight", k, n)
		}
	}
	return nil
}

// shardInfo is run_info.shard: which part of the plan the export holds,
// and how late it started for --start-at.
func (p *prepared) shardInfo(late time.Duration) merge.ShardInfo {
	info := merge.ShardInfo{Index: p.shard.Index, Count: max(p.shard.Count, 1), LateMs: float64(late) / 1e6}
	if !p.startAt.IsZero() {
		info.StartAt = p.startAt.UTC().Format(time.RFC3339Nano)
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
	if p.startAt.IsZero() {
		return 0
	}
	if wait := time.Until(p.startAt); wait > 0 {
		fmt.Fprintf(log, "%swaiting %s for --start-at %s\n", p.shardPrefix(), wait.Round(time.Millisecond), p.startAt.UTC().Format(time.RFC3339Nano))
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return 0
		}
	}
	late := max(time.Since(p.startAt), 0)
	if late > lateWarnAfter {
		fmt.Fprintf(log, "warning: %s\n", p.lateWarning(late))
	}
	return late
}

func (p *prepared) lateWarning(late time.Duration) string {
	return fmt.Sprintf("%sstarted %s late for --start-at %s: its schedule runs that much behind the other shards' (not shifted to hide it; run_info late_ms)",
		p.shardPrefix(), late.Round(time.Millisecond), p.startAt.UTC().Format(time.RFC3339Nano))
}

// shardPrefix is "shard i/N: " for a shard's messages ("" unsharded).
func (p *prepared) shardPrefix() string {
	if p.shard.Whole() {
		return ""
	}
	return "shard " + p.shard.String() + ": "
}

// shardDir is the default artifact folder's suffix for a shard, so shards
// run on one machine do not share a folder.
func (p *prepared) shardDir() string {
	if p.shard.Whole() {
		return ""
	}
	return fmt.Sprintf("-shard%dof%d", p.shard.Index, p.shard.Count)
}
