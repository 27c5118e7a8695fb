package cmdline

import (
	"strconv"
	"strings"
	"time"

	"github.com/surgebench/surge/loadgen"
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

// HostShard resolves --shard, --shards and JOB_COMPLETION_INDEX into this
// host's part of the plan (the zero Shard without them).
func (c *ShardConfig) HostShard() (loadgen.Shard, error) {
	if c.Shards < 0 {
		return loadgen.Shard{}, Usagef("--shards must be ≥ 1, got %d", c.Shards)
	}
	if c.Shard != "" {
		s, err := loadgen.ParseShard(c.Shard)
		if err != nil {
			return s, Usagef("--shard %w", err)
		}
		if c.Shards > 0 && c.Shards != s.Count {
			return s, Usagef("--shard %s and --shards %d disagree on the shard count", c.Shard, c.Shards)
		}
		return s, nil
	}
	if c.Shards == 0 {
		return loadgen.Shard{}, nil
	}
	if c.JobIndex == "" {
		return loadgen.Shard{}, Usagef("--shards %d needs this host's index: --shard i/%d, or %s (set by a Kubernetes Indexed Job)", c.Shards, c.Shards, JobIndexEnv)
	}
	i, err := strconv.Atoi(strings.TrimSpace(c.JobIndex))
	if err != nil {
		return loadgen.Shard{}, Usagef("--shards: %s=%q is not a shard index", JobIndexEnv, c.JobIndex)
	}
	s, err := loadgen.NewShard(i, c.Shards)
	if err != nil {
		return s, Usagef("--shards %d with %s=%d: %w", c.Shards, JobIndexEnv, i, err)
	}
	return s, nil
}

// StartTime parses --start-at: an instant after now (zero when unset).
func (c *ShardConfig) StartTime(now time.Time) (time.Time, error) {
	if c.StartAt == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(c.StartAt))
	if err != nil {
		return t, Usagef("--start-at %q is not an RFC 3339 time such as 2026-05-01T12:00:00Z", c.StartAt)
	}
	if !t.After(now) {
		return t, Usagef("--start-at %s has passed (it is now %s): give every shard the same future instant, e.g. $(date -u -d '+2 min' +%%FT%%TZ)",
			t.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return t, nil
}
