// Package spec turns the command line's settings (cmdline.Config) into
// one typed, validated run Spec: what `surge profile` and `surge search`
// execute. Every usage error is found here, before anything else happens
// (no network, no dataset load; only the files a flag names are read, such
// as --system-prompt-file and --endpoint-template @file), and names its
// flag.
package spec

import (
	"cmp"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/export"
	"github.com/surgebench/surge/tui"
)

// Spec is one run as the command line asked for it, parsed and checked.
// A run reads it and never changes it: the few things a run learns (the
// model a server names, a repeat's seed) make a new Spec (With*).
type Spec struct {
	// Version is surge's version for the exports.
	Version string

	Target Target
	// Cloud is the hosted endpoint's credentials and SageMaker endpoint
	// (--auth-type, --aws-*, --sagemaker-*).
	Cloud Cloud
	// Endpoint builds and reads every request: type, path, model, body
	// options (its Model is the first of Target.Models).
	Endpoint *endpoint.Endpoint
	// Streaming is --streaming as given (the endpoint streams only when
	// its type can: Endpoint.Streams).
	Streaming bool
	Request   Request
	Load      Load
	Dataset   Dataset
	Tokenizer Tokenizer
	// Goodput is --goodput's SLOs (none: every successful request is
	// good).
	Goodput   []metrics.SLO
	Exports   Exports
	Telemetry Telemetry
	// Hooks are the server control calls around each profile stage.
	Hooks Hooks
	Live  Live
	// Agentic is the agent workload: tool loop, session arrivals, agentic
	// replay, scenario (agentic.go).
	Agentic Agentic
	// Breakdown is the time breakdown's sources beyond the responses
	// (breakdown.go).
	Breakdown Breakdown
	// History is where the finished run is remembered; CostPerHour is the
	// server's price in US dollars an hour (0: not priced).
	History     History
	CostPerHour float64
	// Backends are where the results go beside the files: an
	// OpenTelemetry collector, an MLflow tracking server (backends.go).
	Backends Backends
	// Shard is this host's part of the plan (the zero Shard: all of it),
	// StartAt the instant to start issuing (zero: at once).
	Shard   loadgen.Shard
	StartAt time.Time

	// UI is the run's interface; LogLevel an index into AIPerf's levels
	// (Logger).
	UI       tui.Mode
	LogLevel int
	// ProgressEvery is how often --ui progress prints its line (0: every
	// tui.ProgressEvery).
	ProgressEvery time.Duration
	// Columns is the width the console summary fits (0: 80 columns); Wide
	// prints AIPerf's whole table instead of the headline (--wide).
	Columns int
	Wide    bool
	// Signals makes the run take SIGINT and SIGTERM itself (the first
	// drains, the second cancels in-flight requests).
	Signals bool
	// Notes are INFO lines for the start of the run (AIPerf flags surge
	// does not implement, a start raised to what a search can judge);
	// Warnings are printed whatever the log level.
	Notes, Warnings []string
	// Secrets are every credential the run was given, replaced wherever
	// text is copied out (bodies, server messages, the command line).
	Secrets []string

	// given is the command line's Config, kept for input_config: the
	// exports show what was asked for, in the flags' own terms.
	given cmdline.Config
}

// Parse checks every setting of c and returns the run it describes. Its
// errors are *cmdline.UsageError (exit code 2) naming the flag at fault.
// c is as the command line filled it (defaults included), or a literal
// whose zero values mean the defaults.
func Parse(c cmdline.Config) (*Spec, error) {
	s := &Spec{Version: c.Version, Signals: c.Signals, given: c}
	steps := []func(*Spec, *cmdline.Config) error{
		parseLog, parseCloud, parseTarget, parseModels, parseEndpointKind, parseRecipe, parseBounds, parseRepeats, parseEdges, parseMedia,
		parseShard, parseExports, parseHistory, parseBackends, parseRequest, parseTelemetry, parseUI, parseEndpoint, parseCloudHeaders, parseGoodput,
		parseTokenizer, parseLoad, parseRateSeries, parseLoadControl, parseSharding, parseSweep, checkConvergenceSweep, parsePlan, parseDataset, parseTrace, parseNative, parseSynthesis, parseHooks, parseAgentic, parseLive, parseAdaptive, parseBreakdown,
	}
	for _, step := range steps {
		if err := step(s, &c); err != nil {
			return nil, err
		}
	}
	s.given = c
	s.Secrets = c.SecretValues(s.Request.Headers)
	return s, nil
}

// parseLog reads the log level and judges AIPerf's flags surge does not
// implement (refused, or one note each). A verbose run on a terminal shows
// --ui simple, as AIPerf's does, so its lines are not hidden under the
// dashboard.
func parseLog(s *Spec, c *cmdline.Config) error {
	lvl, err := c.Level()
	if err != nil {
		return err
	}
	s.LogLevel = lvl
	if (cmdline.Logger{Level: lvl}).Enabled("DEBUG") && c.UI == "" && c.StdoutTTY {
		c.UI = "simple"
	}
	s.Notes, err = c.ForeignNotes()
	return err
}

func parseUI(s *Spec, c *cmdline.Config) (err error) {
	if s.UI, err = tui.ParseMode(c.UI, c.StdoutTTY); err != nil {
		return cmdline.Usagef("--ui %w", err)
	}
	s.Columns, s.Wide = c.Columns, c.Wide
	s.ProgressEvery = c.ProgressEvery
	return nil
}

func parseGoodput(s *Spec, c *cmdline.Config) (err error) {
	if s.Goodput, err = metrics.ParseGoodput(c.Goodput); err != nil {
		return cmdline.Usagef("--goodput: %w", err)
	}
	return nil
}

// Logger writes the run's notes and debug lines to w as --log-level
// allows.
func (s *Spec) Logger(w io.Writer) cmdline.Logger {
	return cmdline.Logger{W: w, Level: s.LogLevel, Width: cmp.Or(s.Columns, export.DefaultWidth)}
}

// InputConfig is the configuration as the exports show it (AIPerf's
// input_config), secrets redacted, the headers as sent.
func (s *Spec) InputConfig() map[string]any { return s.given.InputConfig(s.Request.Headers) }

// ModelLabel names the models for titles: "a" or "a,b".
func (s *Spec) ModelLabel() string { return s.given.ModelLabel() }

// ValueSeed is the seed of a sweep's value i: --random-seed + i, as AIPerf
// seeds a sweep's values, or --random-seed alone with
// --parameter-sweep-same-seed.
func (s *Spec) ValueSeed(i int) uint64 { return s.given.ValueSeed(i) }

// Seed is --random-seed (drawn for the run when not given: SeedDrawn).
func (s *Spec) Seed() uint64 { return s.given.Seed }

// SeedDrawn reports whether the seed was drawn for this run rather than
// given.
func (s *Spec) SeedDrawn() bool { return s.given.SeedDrawn }

// WithModel is s sending model name: the one a server named when no
// --model was given.
func (s *Spec) WithModel(name string) *Spec {
	t := s.clone()
	t.given.Model, t.given.Models = name, []string{name}
	t.Target.Models = []string{name}
	t.Endpoint.Model = name
	if !t.Tokenizer.Explicit {
		t.Tokenizer.Name = name // the model's own tokenizer builds the prompts
	}
	return t
}

// WithLegacyMaxTokens is s sending its output cap as max_tokens (or not):
// what a preflight learnt of a server that ignores the newer field.
func (s *Spec) WithLegacyMaxTokens(legacy bool) *Spec {
	t := s.clone()
	t.Endpoint.LegacyMaxTokens = legacy
	t.given.UseLegacyMaxTokens = legacy
	return t
}

// WithSecrets is s redacting more: credentials the run loaded (a cloud's
// secret key, session token or first token).
func (s *Spec) WithSecrets(more ...string) *Spec {
	t := s.clone()
	t.Secrets = append(slices.Clip(s.Secrets), slices.DeleteFunc(slices.Clone(more), func(v string) bool { return len(v) < 4 })...)
	return t
}

// WithSeed is s seeded seed, as if --random-seed had given it.
func (s *Spec) WithSeed(seed uint64) *Spec {
	t := s.clone()
	t.given.Seed, t.given.SeedDrawn = seed, false
	return t
}

// Repeat is the spec of run i (from 0) of --num-profile-runs: one run of
// the plan, the warmup before the first only (AIPerf's
// profile_run_disable_warmup_after_first) unless WarmupEveryRun.
func (s *Spec) Repeat(i int) *Spec {
	t := s.clone()
	t.given.NumProfileRuns, t.Load.Repeats.N = 1, 1
	if i > 0 && !s.Load.Repeats.WarmupEveryRun {
		t.given.WarmupCount, t.given.WarmupDuration, t.given.WarmupSessions = 0, 0, 0
		t.Load.Warmup = Warmup{}
	}
	return t
}

// WithArtifactDir is s writing its exports into dir, without the report
// or the plots (a repeat's folder: they are drawn over all the runs).
func (s *Spec) WithArtifactDir(dir string) *Spec {
	t := s.clone()
	t.Exports.Dir, t.Exports.Report, t.Exports.Plots = dir, false, false
	return t
}

// clone copies s deeply enough that a With* change leaves s as it was.
func (s *Spec) clone() *Spec {
	t := *s
	ep := *s.Endpoint
	t.Endpoint = &ep
	t.Request.Headers = s.Request.Headers.Clone()
	if t.Request.Headers == nil {
		t.Request.Headers = http.Header{}
	}
	return &t
}
