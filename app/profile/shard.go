package profile

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/surgebench/surge/metrics/merge"
)

// shardInfo is run_info.shard: which part of the plan the export holds,
// and how late it started for --start-at.
func (p *prepared) shardInfo(late time.Duration) merge.ShardInfo {
	sh, at := p.s.Shard, p.s.StartAt
	info := merge.ShardInfo{Index: sh.Index, Count: max(sh.Count, 1), LateMs: float64(late) / 1e6}
	if !at.IsZero() {
		info.StartAt = at.UTC().Format(time.RFC3339Nano)
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
	at := p.s.StartAt
	if at.IsZero() {
		return 0
	}
	if wait := time.Until(at); wait > 0 {
		fmt.Fprintf(log, "%swaiting %s for --start-at %s\n", p.shardPrefix(), wait.Round(time.Millisecond), at.UTC().Format(time.RFC3339Nano))
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return 0
		}
	}
	// A late start is a warning of the summary's (report).
	return max(time.Since(at), 0)
}

func (p *prepared) lateWarning(late time.Duration) string {
	return fmt.Sprintf("%sstarted %s late for --start-at %s: its schedule runs that much behind the other shards' (not shifted to hide it; run_info late_ms)",
		p.shardPrefix(), late.Round(time.Millisecond), p.s.StartAt.UTC().Format(time.RFC3339Nano))
}

// shardPrefix is "shard i/N: " for a shard's messages ("" unsharded).
func (p *prepared) shardPrefix() string {
	if p.s.Shard.Whole() {
		return ""
	}
	return "shard " + p.s.Shard.String() + ": "
}

// shardDir is the default artifact folder's suffix for a shard, so shards
// run on one machine do not share a folder.
func (p *prepared) shardDir() string {
	if sh := p.s.Shard; !sh.Whole() {
		return fmt.Sprintf("-shard%dof%d", sh.Index, sh.Count)
	}
	return ""
}
