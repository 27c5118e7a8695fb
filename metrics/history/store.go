package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ncruces/go-sqlite3"
	_ "github.com/ncruces/go-sqlite3/driver" // the pure-Go "sqlite3" database/sql driver
)

// Store is an open history database. Its methods are safe for concurrent
// use; several processes may hold the same file open at once.
type Store struct {
	db   *sql.DB
	path string
	now  func() time.Time
}

// DefaultBusyTimeout is how long a write waits for another process's to
// finish before it gives up.
const DefaultBusyTimeout = 10 * time.Second

type openConfig struct {
	busy time.Duration
	now  func() time.Time
}

// Option configures Open.
type Option func(*openConfig)

// WithBusyTimeout sets how long a statement waits for another writer
// (default DefaultBusyTimeout).
func WithBusyTimeout(d time.Duration) Option { return func(c *openConfig) { c.busy = d } }

// WithClock sets the clock that dates the rows appended (default
// time.Now).
func WithClock(now func() time.Time) Option { return func(c *openConfig) { c.now = now } }

// Open opens the history at path, creating it (and its folder) when
// absent and migrating an older schema forward. A file that is not an
// SQLite database wraps ErrCorrupt, another application's database
// ErrNotHistory, one from a newer surge is a *SchemaError: each names the
// file, and none is changed. Nothing is written to a database before it
// has shown it is surge's (its application id, or no schema at all): the
// write-ahead log is switched on after that, not as the file opens.
// Waiting on another process's lock ends when ctx does.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	cfg := openConfig{busy: DefaultBusyTimeout, now: time.Now}
	for _, o := range opts {
		o(&cfg)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", cfg.busy.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	dsn := (&url.URL{Scheme: "file", Path: abs, RawQuery: q.Encode()}).String()
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	s := &Store{db: db, path: abs, now: cfg.now}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, s.interrupted(ctx, err)
	}
	if err := s.walMode(ctx); err != nil {
		db.Close()
		return nil, s.interrupted(ctx, err)
	}
	return s, nil
}

// interrupted names ctx's end as err's cause when ctx ended first (a
// statement waiting on another process's lock gives up when it does),
// so callers can tell an interrupt (errors.Is context.Canceled) from a
// failure.
func (s *Store) interrupted(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		return fmt.Errorf("history %s: %w (waiting on the database: %v)", s.path, ctx.Err(), err)
	}
	return err
}

// walMode switches the database to the write-ahead log (several processes
// append at once), which the file keeps; once is enough.
func (s *Store) walMode(ctx context.Context) error {
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return s.wrap(err)
	}
	if strings.EqualFold(mode, "wal") {
		return nil
	}
	return s.wrap(s.db.QueryRowContext(ctx, "PRAGMA journal_mode = wal").Scan(&mode))
}

// ErrNoRun is wrapped by the error for an id the history does not hold.
var ErrNoRun = errors.New("no run")

// Check reads the whole database and its indexes (SQLite's quick_check):
// damage a query would not see (a page of an index it did not use, which
// would make a baseline look absent) is an error wrapping ErrCorrupt.
func (s *Store) Check(ctx context.Context) error {
	rs, err := s.db.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return s.wrap(err)
	}
	defer rs.Close()
	var problems []string
	for rs.Next() {
		var line string
		if err := rs.Scan(&line); err != nil {
			return s.wrap(err)
		}
		for _, l := range strings.Split(line, "\n") {
			if l = strings.TrimSpace(l); l != "ok" && l != "" && !strings.HasPrefix(l, "***") && len(problems) < 3 {
				problems = append(problems, l)
			}
		}
	}
	if err := rs.Err(); err != nil {
		return s.wrap(err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("history %s: %w (%s): move it aside to start a new one", s.path, ErrCorrupt, strings.Join(problems, "; "))
	}
	return nil
}

// Path is the database file's absolute path.
func (s *Store) Path() string { return s.path }

// Close closes the database; the last process to close it folds the
// write-ahead log back into the file.
func (s *Store) Close() error { return s.db.Close() }

// wrap names the file in err and marks a damaged one.
func (s *Store) wrap(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sqlite3.NOTADB) || errors.Is(err, sqlite3.CORRUPT) {
		return fmt.Errorf("history %s: %w (%v): move it aside to start a new one", s.path, ErrCorrupt, err)
	}
	var se *SchemaError
	if errors.As(err, &se) || errors.Is(err, ErrNotHistory) {
		return err
	}
	return fmt.Errorf("history %s: %w", s.path, err)
}

// owner reads what says whose a database is: its schema version, its
// application id and how many schema entries it has. It only reads.
func owner(ctx context.Context, q interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}) (version, app, tables int, err error) {
	// One statement: one read, so another process's commit cannot fall
	// between the three (its tables without its id).
	err = q.QueryRowContext(ctx, "SELECT (SELECT user_version FROM pragma_user_version), "+
		"(SELECT application_id FROM pragma_application_id), (SELECT count(*) FROM sqlite_schema)").Scan(&version, &app, &tables)
	return
}

// mine refuses a database that is not surge's history, or one a newer
// surge wrote: another application's file (an application id of its
// own, or tables without surge's id) is left as it was.
func (s *Store) mine(version, app, tables int) error {
	switch {
	case app != 0 && app != applicationID, app == 0 && tables > 0:
		return fmt.Errorf("history %s: %w (another application's SQLite file, left unchanged): point --history at another file", s.path, ErrNotHistory)
	case version > len(migrations):
		return &SchemaError{Path: s.path, Have: version, Max: len(migrations)}
	}
	return nil
}

// migrate brings the schema to the newest version in one transaction, so
// two processes opening a new file at once create it once. Whose the
// database is, is read before the transaction, which takes the write
// lock, and again inside it.
func (s *Store) migrate(ctx context.Context) (err error) {
	version, app, tables, err := owner(ctx, s.db)
	if err != nil {
		return s.wrap(err)
	}
	if err := s.mine(version, app, tables); err != nil {
		return err
	}
	if version == len(migrations) {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap(err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if version, app, tables, err = owner(ctx, tx); err != nil {
		return s.wrap(err)
	}
	if err := s.mine(version, app, tables); err != nil {
		return err
	}
	if version == len(migrations) {
		return s.wrap(tx.Commit())
	}
	for i := version; i < len(migrations); i++ {
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return s.wrap(fmt.Errorf("migration %d: %w", i+1, err))
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d; PRAGMA application_id = %d", len(migrations), applicationID)); err != nil {
		return s.wrap(err)
	}
	return s.wrap(tx.Commit())
}

// Append stores rows in one transaction and returns how many were new: a
// row already recorded (the same run, repeat and stage) is left as it
// was, so importing a folder twice records it once. Rows are dated now
// where RecordedAt is zero; their IDs are set.
func (s *Store) Append(ctx context.Context, rows []Row) (added int, err error) {
	defer func() { err = s.interrupted(ctx, err) }()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, s.wrap(err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	now := s.now()
	for i := range rows {
		r := &rows[i]
		if r.RecordedAt.IsZero() {
			r.RecordedAt = now
		}
		if r.RunUID == "" || r.Dir == "" || (r.Kind != KindRun && r.Kind != KindStage) {
			return 0, fmt.Errorf("history: row %d has no run id, folder or kind", i)
		}
		res, err := tx.ExecContext(ctx, insertRun, r.values()...)
		if err != nil {
			return 0, s.wrap(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			err := tx.QueryRowContext(ctx, "SELECT id FROM runs WHERE run_uid = ? AND repeat_index = ? AND stage_index = ?",
				r.RunUID, r.Repeat, r.Stage).Scan(&r.ID)
			if err != nil {
				return 0, s.wrap(err)
			}
			continue
		}
		if r.ID, err = res.LastInsertId(); err != nil {
			return 0, s.wrap(err)
		}
		added++
		for _, m := range r.Metrics {
			if num(m.Value) == nil {
				continue
			}
			if _, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO run_metrics (run_id, metric, stat, value, unit) VALUES (?, ?, ?, ?, ?)",
				r.ID, m.Metric, m.Stat, m.Value, text(m.Unit)); err != nil {
				return 0, s.wrap(err)
			}
		}
	}
	return added, s.wrap(tx.Commit())
}

// Filter selects rows. Empty fields select everything.
type Filter struct {
	// Model and Server match part of the model name, and of the target,
	// engine, server version or GPU, ignoring case.
	Model, Server string
	// Label, Workload and LoadMode match exactly.
	Label, Workload, LoadMode string
	// LoadValue matches a run's (or stage's) load exactly (0: any).
	LoadValue float64
	// Kind is KindRun or KindStage ("": both).
	Kind string
	// Since and Until bound the runs' start (the row's recording time when
	// the run did not say).
	Since, Until time.Time
	// Last keeps only the newest Last rows (0: all).
	Last int
	// Metrics reads each row's statistics too (Row.Metrics).
	Metrics bool
}

// startOf is a row's time in SQL: its start, else when it was recorded.
const startOf = "coalesce(runs.started_at, runs.recorded_at)"

func (f Filter) where() (string, []any) {
	var conds []string
	var args []any
	like := func(cols []string, v string) {
		var ors []string
		for _, c := range cols {
			ors = append(ors, "instr(lower(coalesce("+c+", '')), lower(?)) > 0")
			args = append(args, v)
		}
		conds = append(conds, "("+strings.Join(ors, " OR ")+")")
	}
	if f.Model != "" {
		like([]string{"runs.model"}, f.Model)
	}
	if f.Server != "" {
		like([]string{"runs.target", "runs.engine", "runs.server_version", "runs.gpu"}, f.Server)
	}
	for _, eq := range []struct{ col, v string }{{"runs.label", f.Label}, {"runs.workload_hash", f.Workload},
		{"runs.load_mode", f.LoadMode}, {"runs.kind", f.Kind}} {
		if eq.v != "" {
			conds = append(conds, eq.col+" = ?")
			args = append(args, eq.v)
		}
	}
	if f.LoadValue != 0 {
		conds = append(conds, "runs.load_value = ?")
		args = append(args, f.LoadValue)
	}
	if !f.Since.IsZero() {
		conds = append(conds, startOf+" >= ?")
		args = append(args, formatTime(f.Since))
	}
	if !f.Until.IsZero() {
		conds = append(conds, startOf+" < ?")
		args = append(args, formatTime(f.Until))
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// List returns the rows f selects, oldest first.
func (s *Store) List(ctx context.Context, f Filter) ([]Row, error) {
	where, args := f.where()
	q := selectRuns + where + " ORDER BY " + startOf + ", runs.id"
	if f.Last > 0 {
		q = "SELECT * FROM (" + selectRuns + where + " ORDER BY " + startOf + " DESC, runs.id DESC LIMIT ?) AS runs ORDER BY " + startOf + ", runs.id"
		args = append(args, f.Last)
	}
	rows, err := s.query(ctx, q, args...)
	if err != nil || !f.Metrics {
		return rows, err
	}
	for i := range rows {
		if rows[i].Metrics, err = s.metrics(ctx, rows[i].ID); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// Get returns the row with id.
func (s *Store) Get(ctx context.Context, id int64) (Row, error) {
	rows, err := s.query(ctx, selectRuns+" WHERE runs.id = ?", id)
	if err != nil {
		return Row{}, err
	}
	if len(rows) == 0 {
		return Row{}, fmt.Errorf("history %s: %w with id %d", s.path, ErrNoRun, id)
	}
	rows[0].Metrics, err = s.metrics(ctx, id)
	return rows[0], err
}

func (s *Store) query(ctx context.Context, q string, args ...any) ([]Row, error) {
	rs, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rs.Close()
	var out []Row
	for rs.Next() {
		var r Row
		if err := rs.Scan(r.targets()...); err != nil {
			return nil, s.wrap(err)
		}
		out = append(out, r)
	}
	return out, s.wrap(rs.Err())
}

func (s *Store) metrics(ctx context.Context, id int64) ([]Metric, error) {
	rs, err := s.db.QueryContext(ctx, "SELECT metric, stat, value, unit FROM run_metrics WHERE run_id = ? ORDER BY metric, stat", id)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rs.Close()
	var out []Metric
	for rs.Next() {
		var m Metric
		if err := rs.Scan(&m.Metric, &m.Stat, nullFloat{&m.Value}, nullString{&m.Unit}); err != nil {
			return nil, s.wrap(err)
		}
		out = append(out, m)
	}
	return out, s.wrap(rs.Err())
}

// SetLabel names the run that row id belongs to (all its rows: stages,
// repeats); an empty label removes the name.
func (s *Store) SetLabel(ctx context.Context, id int64, label string) error {
	res, err := s.db.ExecContext(ctx, "UPDATE runs SET label = ? WHERE run_uid = (SELECT run_uid FROM runs WHERE id = ?)", text(label), id)
	if err != nil {
		return s.wrap(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("history %s: no run with id %d", s.path, id)
	}
	return nil
}
