// Package history is `surge history` (list, import, label and prune the
// runs the local history holds) and `surge trend` (one statistic across
// them, its changes tested), over metrics/history.
package history

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/internal/sanitize"
	"github.com/surgebench/surge/metrics/history"
	runreport "github.com/surgebench/surge/metrics/report"
	"github.com/surgebench/surge/metrics/stats"
)

// filters are the flags that select runs, shared by history and trend.
type filters struct {
	path, model, server, label, since, until string
	last                                     int
	stages                                   bool
}

func (f *filters) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "history", Usage: "the history database (default $XDG_DATA_HOME/surge/history.db, else ~/.local/share/surge/history.db)", Destination: &f.path},
		&cli.StringFlag{Name: "model", Usage: "runs whose model name contains this (any case)", Destination: &f.model},
		&cli.StringFlag{Name: "server", Usage: "runs whose server address, engine, version or GPU contains this (any case)", Destination: &f.server},
		&cli.StringFlag{Name: "label", Usage: "runs with this label (surge history import: the label to give)", Destination: &f.label},
		&cli.StringFlag{Name: "since", Usage: "runs started at or after this: a date (2026-05-01), an RFC 3339 time, or an age (7d, 12h)", Destination: &f.since},
		&cli.StringFlag{Name: "until", Usage: "runs started before this (as --since)", Destination: &f.until},
		&cli.IntFlag{Name: "last", Usage: "the newest N runs only (all when left out)", Destination: &f.last},
		&cli.BoolFlag{Name: "stages", Usage: "the stages of sweeps too (surge trend: the stages instead of whole runs)", Destination: &f.stages},
	}
}

// numbers are the Limits of history's and trend's numeric flags: a count
// given as 0 is refused, not read as "all" or "nothing".
var numbers = map[string]cmdline.Limits{
	"last":       {Lo: 1, Hi: math.MaxInt32},
	"prune-keep": {Lo: 1, Hi: math.MaxInt32},
	"load":       {Lo: 0, LoOpen: true, Hi: cmdline.MaxConcurrency},
}

// filter reads the flags into a history.Filter; now dates the ages.
func (f *filters) filter(now time.Time) (history.Filter, error) {
	out := history.Filter{Model: f.model, Server: f.server, Label: f.label, Last: f.last, Kind: history.KindRun}
	if f.stages {
		out.Kind = ""
	}
	if f.last < 0 {
		return out, cmdline.Usagef("--last must be ≥ 0, got %d", f.last)
	}
	var err error
	if out.Since, err = instant("--since", f.since, now); err != nil {
		return out, err
	}
	if out.Until, err = instant("--until", f.until, now); err != nil {
		return out, err
	}
	return out, nil
}

func (f *filters) open(ctx context.Context) (*history.Store, error) {
	path := f.path
	if path == "" {
		var err error
		if path, err = history.DefaultPath(); err != nil {
			return nil, err
		}
	}
	return history.Open(ctx, path)
}

// instant reads a point in time: a date, an RFC 3339 time, or an age
// before now ("7d", "12h", "90m").
func instant(flag, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	if d, err := age(s); err == nil {
		return now.Add(-d), nil
	}
	return time.Time{}, cmdline.Usagef("%s %q: want a date (2026-05-01), an RFC 3339 time (2026-05-01T12:00:00Z) or an age (7d, 12h)", flag, s)
}

// age reads a duration with days: "90d", "36h", "1d12h".
func age(s string) (time.Duration, error) {
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bad days %q", s[:i])
		}
		days, s = time.Duration(n)*24*time.Hour, s[i+1:]
		if s == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("bad age %q", s)
	}
	return days + d, nil
}

// Command is `surge history`: list the runs (filtered), import artifact
// folders, label a run, or prune old runs.
func Command() *cli.Command {
	var f filters
	var asJSON, asJSONL, wide bool
	var pruneOlder string
	var pruneKeep int
	return &cli.Command{
		Name:      "history",
		Usage:     "list, import, label or prune the runs the local history holds",
		ArgsUsage: "[import DIR... | label ID NAME]",
		Description: "Every surge profile run appends a row (docs/history.md). surge history lists them, oldest first;\n" +
			"surge history import DIR... records older artifact folders (surge's or AIPerf's), --label naming them;\n" +
			"surge history label ID NAME names a run; --prune-older-than 90d and --prune-keep N remove whole runs.",
		OnUsageError: cmdline.OnUsageError,
		Flags: append(f.flags(),
			&cli.BoolFlag{Name: "json", Usage: "write the runs as one JSON array (the database's column names)", Destination: &asJSON},
			&cli.BoolFlag{Name: "jsonl", Usage: "write the runs as JSON Lines, one object a line", Destination: &asJSONL},
			&cli.BoolFlag{Name: "wide", Usage: "every column (the server, the folder, the cost), however wide; the default fits the terminal", Destination: &wide},
			&cli.StringFlag{Name: "prune-older-than", Usage: "remove the runs started longer ago than this (90d, 36h)", Destination: &pruneOlder},
			&cli.IntFlag{Name: "prune-keep", Usage: "remove all but the newest N runs", Destination: &pruneKeep},
		),
		Action: func(cc *cli.Context) error {
			ctx := cc.Context
			if ctx == nil {
				ctx = context.Background()
			}
			if err := cmdline.CheckNumbers(cc, numbers); err != nil {
				return err
			}
			args := cc.Args().Slice()
			if asJSON && asJSONL {
				return cmdline.Usagef("--json and --jsonl: give one (an array, or a line per run)")
			}
			c := listConfig{json: asJSON, jsonl: asJSONL, wide: wide, width: columns(cc.App.Writer), pruneOlder: pruneOlder, pruneKeep: pruneKeep}
			return run(ctx, cc.App.Writer, &f, args, c, time.Now())
		},
	}
}

type listConfig struct {
	json, jsonl bool
	// wide prints every column; otherwise the list fits width (0: 80).
	wide       bool
	width      int
	pruneOlder string
	pruneKeep  int
}

// run is `surge history`'s action.
func run(ctx context.Context, w io.Writer, f *filters, args []string, c listConfig, now time.Time) error {
	prune := c.pruneOlder != "" || c.pruneKeep != 0
	switch {
	case len(args) > 0 && args[0] == "import":
		if len(args) == 1 {
			return cmdline.Usagef("surge history import: name the artifact folders to record")
		}
		return importDirs(ctx, w, f, args[1:])
	case len(args) > 0 && args[0] == "label":
		if len(args) != 3 {
			return cmdline.Usagef("surge history label: want an ID (surge history's first column) and a label")
		}
		id, err := strconv.ParseInt(args[1], 10, 64)
		if err != nil || id <= 0 {
			return cmdline.Usagef("surge history label: %q is not a run's ID", args[1])
		}
		s, err := f.open(ctx)
		if err != nil {
			return err
		}
		defer s.Close()
		if err := s.SetLabel(ctx, id, args[2]); err != nil {
			return &cmdline.UsageError{Err: err}
		}
		fmt.Fprintf(w, "run %d labelled %q\n", id, args[2])
		return nil
	case len(args) > 0:
		return cmdline.Usagef("surge history: unknown %q: want import DIR..., label ID NAME, or no argument to list", args[0])
	case prune:
		return pruneRuns(ctx, w, f, c, now)
	}
	filter, err := f.filter(now)
	if err != nil {
		return err
	}
	s, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	filter.Metrics = c.json || c.jsonl
	rows, err := s.List(ctx, filter)
	if err != nil {
		return err
	}
	switch {
	case c.json:
		if rows == nil {
			rows = []history.Row{}
		}
		b, err := json.MarshalIndent(rows, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	case c.jsonl:
		enc := json.NewEncoder(w)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	if err := history.WriteList(w, rows, c.width, c.wide); err != nil {
		return err
	}
	st, err := s.Stats(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%d of %s shown; %s, %s\n", len(rows), count(st.Runs, "run"), st.Path, history.MiB(st.Bytes))
	if warn := st.Warning(); warn != "" {
		fmt.Fprintln(w, sanitize.Line(warn))
	}
	return nil
}

func importDirs(ctx context.Context, w io.Writer, f *filters, dirs []string) error {
	var all [][]history.Row
	for _, d := range dirs {
		rows, err := history.FromArtifacts(d, history.WithLabel(f.label))
		if err != nil {
			return &cmdline.UsageError{Err: err}
		}
		all = append(all, rows)
	}
	s, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	for i, rows := range all {
		n, err := s.Append(ctx, rows)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s: %s, %d new (ids %d–%d)\n", sanitize.Line(dirs[i]), count(len(rows), "row"), n, rows[0].ID, rows[len(rows)-1].ID)
	}
	return nil
}

func pruneRuns(ctx context.Context, w io.Writer, f *filters, c listConfig, now time.Time) error {
	var p history.Prune
	if c.pruneOlder != "" {
		d, err := age(c.pruneOlder)
		if err != nil || d <= 0 {
			return cmdline.Usagef("--prune-older-than %q: want an age such as 90d or 36h", c.pruneOlder)
		}
		p.Before = now.Add(-d)
	}
	if c.pruneKeep < 0 {
		return cmdline.Usagef("--prune-keep must be ≥ 1, got %d", c.pruneKeep)
	}
	p.Keep = c.pruneKeep
	s, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	out, err := s.Prune(ctx, p)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "removed %s (%s); %s left in %s, %s (their artifact folders are untouched)\n",
		count(out.Runs, "run"), count(out.Rows, "row"), count(out.After.Runs, "run"), out.After.Path, history.MiB(out.After.Bytes))
	return nil
}

// count is "1 run", "2 runs".
func count[N int | int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(int64(n), 10) + " " + noun + "s"
}

// columns is the width the list and the trend fit: w's terminal's, or 0
// (80) when it is none.
func columns(w io.Writer) int {
	f, _ := w.(*os.File)
	return cmdline.TerminalColumns(f)
}

// TrendCommand is `surge trend METRIC[.STAT]`: the statistic across the
// matching runs, drawn in the terminal (and with --html as a page), each
// change tested.
func TrendCommand() *cli.Command {
	var f filters
	var c trendConfig
	return &cli.Command{
		Name:      "trend",
		Usage:     "chart a metric across runs, marking its significant changes",
		ArgsUsage: "METRIC[.STAT]",
		Description: "METRIC is a metric tag (time_to_first_token, output_token_throughput, cost_per_1m_output_tokens), STAT\n" +
			"avg or pN (default p50 for a per-request metric). Each change from the run before is tested: per-request\n" +
			"statistics by a bootstrap interval from both runs' records (as surge compare), run-level values by their\n" +
			"intervals; ▲ worse, ▼ better, ? not judged. The trend follows the newest run's workload unless --any-workload.",
		OnUsageError: cmdline.OnUsageError,
		Flags: append(f.flags(),
			&cli.StringFlag{Name: "html", Usage: "also write the trend as an HTML page (surge report's renderer) to this file", Destination: &c.html},
			&cli.BoolFlag{Name: "any-workload", Usage: "keep runs of every workload (their numbers may not compare)", Destination: &c.anyWorkload},
			&cli.BoolFlag{Name: "wide", Usage: "every column (the server, full start times), however wide; the default fits the terminal", Destination: &c.wide},
			&cli.Float64Flag{Name: "load", Usage: "with --stages: the stages at this load (concurrency or rate)", Destination: &c.load},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the bootstrap", Destination: &c.seed},
			&cli.IntFlag{Name: "bootstrap-samples", Value: 1000, Usage: "bootstrap resamples per test", Destination: &c.samples},
			&cli.Float64Flag{Name: "confidence", Value: 0.95, Usage: "confidence level of the tests", Destination: &c.confidence},
			&cli.Float64Flag{Name: "min-change", Value: 5, Usage: "smallest change (%) marked ▲/▼: a significant change below it is marked · (real, but small)", Destination: &c.minChange},
		),
		Action: func(cc *cli.Context) error {
			ctx := cc.Context
			if ctx == nil {
				ctx = context.Background()
			}
			if err := cmdline.CheckNumbers(cc, numbers); err != nil {
				return err
			}
			if cc.NArg() != 1 {
				return cmdline.Usagef("surge trend: name one metric, e.g. surge trend time_to_first_token.p99 (got %d arguments)", cc.NArg())
			}
			c.width = columns(cc.App.Writer)
			return trend(ctx, cc.App.Writer, &f, cc.Args().First(), c, time.Now())
		},
	}
}

type trendConfig struct {
	html        string
	anyWorkload bool
	wide        bool
	width       int
	load        float64
	seed        uint64
	samples     int
	confidence  float64
	minChange   float64
}

func trend(ctx context.Context, w io.Writer, f *filters, metric string, c trendConfig, now time.Time) error {
	switch {
	case c.samples < 100:
		return cmdline.Usagef("--bootstrap-samples must be ≥ 100, got %d", c.samples)
	case !(c.confidence > 0.5 && c.confidence < 1):
		return cmdline.Usagef("--confidence must be between 0.5 and 1 (0.95 is 95%%), got %g", c.confidence)
	case !(c.minChange >= 0 && c.minChange < 1000):
		return cmdline.Usagef("--min-change is a percentage ≥ 0, got %g", c.minChange)
	case c.load != 0 && !f.stages:
		return cmdline.Usagef("--load picks sweep stages: give --stages too")
	}
	m, stat, err := history.ParseMetric(metric)
	if err != nil {
		return &cmdline.UsageError{Err: err}
	}
	filter, err := f.filter(now)
	if err != nil {
		return err
	}
	if f.stages {
		filter.Kind = history.KindStage
	}
	filter.LoadValue = c.load
	s, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	t, err := s.Trend(ctx, history.TrendQuery{Filter: filter, Metric: m, Stat: stat, AnyWorkload: c.anyWorkload,
		Bootstrap: stats.Bootstrap{Iterations: c.samples, Level: c.confidence, Seed: c.seed}, MinChange: c.minChange / 100})
	if err != nil {
		return &cmdline.UsageError{Err: err}
	}
	if err := t.WriteText(w, c.width, c.wide); err != nil {
		return err
	}
	if c.html == "" {
		return nil
	}
	paths, err := runreport.WriteData(c.html, runreport.FormatHTML, t.Report())
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s\n", strings.Join(paths, ", "))
	return nil
}
