package history

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// Stats is the size of the history.
type Stats struct {
	Path string
	// Bytes is the database's size on disk, its write-ahead log included.
	Bytes int64
	// Runs counts runs (a sweep or a set of repeated runs is one); Rows
	// counts rows (its stages and repeats each one).
	Runs, Rows int
	// Oldest and Newest bound the runs' starts.
	Oldest, Newest time.Time
}

// Limits past which Stats.Warning speaks up.
const (
	WarnBytes = 256 << 20
	WarnRuns  = 10000
)

// Warning says, when the history has grown past WarnBytes or WarnRuns,
// how big it is and how to trim it; "" otherwise.
func (st Stats) Warning() string {
	if st.Bytes < WarnBytes && st.Runs < WarnRuns {
		return ""
	}
	return fmt.Sprintf("history %s holds %d runs in %s: surge history --prune-older-than 90d (or --prune-keep N) trims it", st.Path, st.Runs, MiB(st.Bytes))
}

// MiB writes a size for people.
func MiB(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// Stats measures the history.
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	st := Stats{Path: s.path}
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(s.path + suffix); err == nil {
			st.Bytes += fi.Size()
		}
	}
	var oldest, newest string
	err := s.db.QueryRowContext(ctx, "SELECT count(DISTINCT run_uid), count(*), coalesce(min("+startOf+"), ''), coalesce(max("+startOf+"), '') FROM runs").
		Scan(&st.Runs, &st.Rows, &oldest, &newest)
	if err != nil {
		return st, s.wrap(err)
	}
	if err := (nullTime{&st.Oldest}).Scan(oldest); err != nil {
		return st, s.wrap(err)
	}
	return st, s.wrap((nullTime{&st.Newest}).Scan(newest))
}

// Prune says what to remove: runs that started before Before, and all but
// the newest Keep runs. A zero field removes nothing by it.
type Prune struct {
	Before time.Time
	Keep   int
}

// Pruned is what a prune removed, and the history's size after it.
type Pruned struct {
	Runs, Rows int
	After      Stats
}

// Prune removes whole runs (their stages and repeats with them) and gives
// the space back to the file system.
func (s *Store) Prune(ctx context.Context, p Prune) (Pruned, error) {
	var conds []string
	var args []any
	// A run's time is its newest row's.
	const runs = "SELECT run_uid, max(" + startOf + ") AS at FROM runs GROUP BY run_uid"
	if !p.Before.IsZero() {
		conds = append(conds, "run_uid IN (SELECT run_uid FROM ("+runs+") WHERE at < ?)")
		args = append(args, formatTime(p.Before))
	}
	if p.Keep > 0 {
		conds = append(conds, "run_uid NOT IN (SELECT run_uid FROM ("+runs+") ORDER BY at DESC LIMIT ?)")
		args = append(args, p.Keep)
	}
	var out Pruned
	if len(conds) == 0 {
		var err error
		out.After, err = s.Stats(ctx)
		return out, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return out, s.wrap(err)
	}
	defer func() { _ = tx.Rollback() }()
	where := " WHERE " + strings.Join(conds, " OR ")
	if err := tx.QueryRowContext(ctx, "SELECT count(DISTINCT run_uid), count(*) FROM runs"+where, args...).Scan(&out.Runs, &out.Rows); err != nil {
		return out, s.wrap(err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM run_metrics WHERE run_id IN (SELECT id FROM runs"+where+")", args...); err != nil {
		return out, s.wrap(err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM runs"+where, args...); err != nil {
		return out, s.wrap(err)
	}
	if err := tx.Commit(); err != nil {
		return out, s.wrap(err)
	}
	if out.Rows > 0 {
		// The freed pages go back to the file system, and the log with
		// them.
		if _, err := s.db.ExecContext(ctx, "VACUUM"); err != nil {
			return out, s.wrap(err)
		}
		if _, err := s.db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			return out, s.wrap(err)
		}
	}
	out.After, err = s.Stats(ctx)
	return out, err
}
