// Package history keeps a local record of every run: one row per run (and
// per sweep stage and repeated run) in an SQLite database, with what the
// run measured (its fingerprint: model, server, endpoint, workload, load,
// surge's version, the client's cores), its headline numbers with their
// intervals, its cost, and the artifact folder that holds the rest. Rows
// come from artifact folders (FromArtifacts), so a run appends itself when
// it ends and old runs are imported the same way.
//
// The database is plain SQLite (docs/history.md documents the schema for
// the sqlite3 CLI and DuckDB), written through a pure-Go driver so a
// static build keeps it, in WAL mode with a busy timeout so two surge
// processes appending at once both land. Its schema is versioned
// (PRAGMA user_version) and migrated forward; a database from a newer
// surge, or a file that is not one, is an error the caller prints while
// the run's own artifacts stand.
package history

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"
)

// Kinds of rows.
const (
	// KindRun is a whole run (a sweep pooled; one of repeated runs).
	KindRun = "run"
	// KindStage is one stage (value) of a sweep.
	KindStage = "stage"
)

// Row is one run, or one stage of a sweep, as the history keeps it.
type Row struct {
	// ID is the row's key in the database (0 until stored).
	ID int64
	// RunUID names the run the row belongs to: its benchmark_id, else a
	// hash of its folder and start. A run's rows (stages, repeats) share
	// it; a run imported twice is recorded once.
	RunUID string
	// BenchmarkID is the run's own benchmark_id ("" for older exports).
	BenchmarkID string
	Kind        string
	// Repeat is the run's number among repeated runs (1, 2, …); 0 when the
	// plan ran once.
	Repeat int
	// Stage is the sweep stage's index; -1 for a whole run.
	Stage int
	// RecordedAt is when the row was written; StartedAt and EndedAt bound
	// the run (zero when its export does not say).
	RecordedAt, StartedAt, EndedAt time.Time
	// Label is the user's name for the run ("baseline", "v0.7-rc1").
	Label string
	// Dir is the artifact folder (absolute): the records, the exports.
	Dir string
	Fingerprint
	Headline
	// Metrics are every statistic the row's summary gave, for trends.
	Metrics []Metric
}

// Fingerprint is what a run measured and with what.
type Fingerprint struct {
	// Model is the model name(s) sent, comma-separated.
	Model        string
	EndpointType string
	// Endpoint is the URL path requests went to.
	Endpoint string
	// Target is the server's scheme://host:port (credentials, path and
	// query left out).
	Target string
	// Engine, ServerVersion and GPU are what the server said of itself
	// (run_info.server), when it did.
	Engine, ServerVersion, GPU string
	// ServerHash hashes the server's account of itself (its model list
	// and metric families).
	ServerHash string
	// Workload, Config, Dataset and Tokenizer are the fingerprint's
	// hashes: runs with one Workload sent the same requests.
	Workload, Config, Dataset, Tokenizer string
	// LoadMode is concurrency, request_rate, …; LoadValue the stage's
	// value (the only one of a run that is not a sweep; NaN for a sweep's
	// whole-run row).
	LoadMode  string
	LoadValue float64
	// SurgeVersion is the version of the surge (or AIPerf) that measured.
	SurgeVersion string
	// ClientCPUs and ClientGOMAXPROCS are the load generator's cores.
	ClientCPUs, ClientGOMAXPROCS int
}

// Headline are the numbers people compare runs by, in the exports' units
// (ms, tokens/s, USD); NaN where the run did not have them. Intervals are
// nil where none could be given.
type Headline struct {
	Requests, Errors      int64
	DurationSec           float64
	RequestThroughput     float64
	OutputTokenThroughput float64
	// OutputTokenThroughputCI is at metrics.KneeLevel.
	OutputTokenThroughputCI   *Interval
	TotalTokenThroughput      float64
	TTFTP50, TTFTP95, TTFTP99 float64
	// TTFTP95CI and LatencyP95CI are distribution-free intervals at
	// metrics.KneeLevel.
	TTFTP95CI                          *Interval
	ITLP50, ITLP99                     float64
	LatencyP50, LatencyP95, LatencyP99 float64
	LatencyP95CI                       *Interval
	// CostPerHour is the server's price the run was given; the costs per
	// million tokens follow from it and the throughputs.
	CostPerHour, CostPerMOutputTokens, CostPerMTotalTokens float64
	// Cancelled is set when the run was interrupted.
	Cancelled bool
}

// Interval is a confidence interval.
type Interval struct{ Lo, Hi float64 }

// Metric is one statistic of one metric of a row: ("time_to_first_token",
// "p99", 41.2, "ms"); a run-level metric's stat is "avg".
type Metric struct {
	Metric, Stat string
	Value        float64
	Unit         string
}

// Value returns the row's statistic stat of metric, and whether it has it.
func (r *Row) Value(metric, stat string) (float64, bool) {
	for _, m := range r.Metrics {
		if m.Metric == metric && m.Stat == stat {
			return m.Value, true
		}
	}
	return math.NaN(), false
}

// ErrCorrupt is wrapped by the error for a history file that is not an
// SQLite database, or a damaged one.
var ErrCorrupt = errors.New("the history database is damaged or not a database")

// ErrNotHistory is wrapped by the error for an SQLite database that is
// not surge's history (another application's).
var ErrNotHistory = errors.New("not a surge history database")

// SchemaError is the error for a database whose schema is newer than this
// surge knows: written by a later surge, it is left alone.
type SchemaError struct {
	Path      string
	Have, Max int
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("%s: history schema version %d is newer than this surge reads (%d): upgrade surge, or point --history at another file", e.Path, e.Have, e.Max)
}

// DefaultPath is where the history lives unless told otherwise:
// $XDG_DATA_HOME/surge/history.db, else ~/.local/share/surge/history.db.
func DefaultPath() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "surge", "history.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("history: no home folder for the default database (%w): name one with --history", err)
	}
	return filepath.Join(home, ".local", "share", "surge", "history.db"), nil
}
