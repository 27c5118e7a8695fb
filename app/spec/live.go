package spec

import (
	"fmt"
	"slices"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/loadgen/controlport"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/search"
	"github.com/surgebench/surge/loadgen/stop"
	"github.com/surgebench/surge/metrics"
)

// Live is how a run is steered or watched while it runs: the control
// port, the stop conditions, a capacity search.
type Live struct {
	// ControlAddr serves live controls ("": none), asking for
	// ControlToken ("": a random one, printed at start).
	ControlAddr, ControlToken string
	// StopOn are --stop-on's conditions (none: the run follows its plan).
	StopOn []stop.Condition
	// Precision are --precision's targets: each stage keeps its load going
	// until all are reached (none: the plan's bounds alone end it).
	Precision []metrics.Target
	// Search, when set, makes the run a capacity search (surge search).
	Search *Search
	// Adaptive, when set, makes the run AIPerf's adaptive scale: a ramp
	// while every SLA holds, then the boundary sustained (adaptive.go).
	Adaptive *Adaptive
}

// Search is a capacity search: the highest load meeting Objectives.
type Search struct {
	Objectives []search.Objective
	// Max is --search-max (0: 1024 × the start), Resolution
	// --search-resolution, MaxProbes --max-probes.
	Max, Resolution float64
	MaxProbes       int
	// MinProbe and MaxProbe bound a probe's duration.
	MinProbe, MaxProbe time.Duration
	// AutoStart: a short pilot picks a request-rate search's start.
	AutoStart bool
	// Settle ends a probe once its requests settle its verdict.
	Settle bool
	// Lowest is the lowest rate a probe can judge (0: a concurrency
	// search); Start the first probe's value, raised to Lowest.
	Lowest, Start float64
	// Min is the lowest value probed (0: the search's default).
	Min float64
	// Recipe and Style name AIPerf's search recipe the search runs ("":
	// none), SLAs its filters as AIPerf writes them (search_history.json).
	Recipe, Style string
	SLAs          []search.SLA
}

// parseShard resolves --shard, --shards and JOB_COMPLETION_INDEX into this
// host's part of the plan, and --start-at.
func parseShard(s *Spec, c *cmdline.Config) (err error) {
	if s.Shard, err = c.HostShard(); err != nil {
		return err
	}
	s.StartAt, err = c.StartTime(time.Now())
	return err
}

// parseSharding refuses what cannot be split over the shards: a live
// session (its controls steer one host), and a concurrency or a user count
// below the number of shards (a shard needs at least one of each).
func parseSharding(s *Spec, c *cmdline.Config) error {
	n := s.Shard.Count
	if s.Shard.Whole() {
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
	for _, k := range s.Load.Concs {
		if k < n {
			return cmdline.Usagef("--concurrency %d cannot be split over %d shards: each needs at least one request in flight", k, n)
		}
	}
	return nil
}

// Steerable reports whether the load can be steered live: one stage of a
// constant concurrency or a request rate (a trace whose timestamps make a
// fixed schedule is found only once the dataset is read).
func (s *Spec) Steerable() bool {
	l := &s.Load
	return l.Sweep == nil && len(l.Concs) <= 1 && len(l.Rates) <= 1 && l.ConcurrencyRamp == 0 && l.RateRamp == 0 &&
		l.UserCentricRate == 0 && l.NumUsers == 0 && !l.Fixed.On
}

// parseLive checks the live flags: the stop conditions, the control
// address, and a search's objectives and bounds.
func parseLive(s *Spec, c *cmdline.Config) error {
	lv := &s.Live
	lv.ControlAddr, lv.ControlToken = c.ControlAddr, c.ControlToken
	if c.StopOn != "" {
		conds, err := stop.Parse("--stop-on", c.StopOn)
		if err != nil {
			return &cmdline.UsageError{Err: err}
		}
		lv.StopOn = conds
	}
	if c.ControlAddr != "" {
		if _, err := controlport.ListenAddr(c.ControlAddr); err != nil {
			return &cmdline.UsageError{Err: err}
		}
	}
	if err := parsePrecision(s, c); err != nil {
		return err
	}
	switch {
	case c.Search != nil && !s.Steerable():
		return cmdline.Usagef("surge search probes one --concurrency or --request-rate start value: no stage lists, ramps, traces or user-centric mode")
	case c.ControlAddr != "" && !s.Steerable():
		return cmdline.Usagef("--control-addr steers one --concurrency or --request-rate: not a sweep, ramp, trace replay or user-centric run")
	case c.Search == nil:
		return nil
	}
	f := c.Search
	var objs []search.Objective
	var slas []search.SLA
	if f.SLA != nil {
		for _, raw := range f.SLA {
			sla, o, err := search.ParseSLA("--search-sla", raw)
			if err != nil {
				return &cmdline.UsageError{Err: err}
			}
			slas, objs = append(slas, sla), append(objs, o)
		}
		if err := search.CheckSLAs("--search-recipe", objs); err != nil {
			return &cmdline.UsageError{Err: err}
		}
	} else {
		var err error
		if objs, err = search.ParseObjectives("--slo", f.SLO); err != nil {
			return &cmdline.UsageError{Err: err}
		}
	}
	if f.MinProbe < 0 || f.MaxProbe < 0 || (f.MaxProbe > 0 && f.MaxProbe < f.MinProbe) {
		return cmdline.Usagef("--probe-duration and --probe-max-duration must be ≥ 0, the maximum no shorter than the minimum")
	}
	sr := &Search{Objectives: objs, Max: f.Max, Resolution: f.Resolution, MaxProbes: f.MaxProbes,
		MinProbe: f.MinProbe, MaxProbe: f.MaxProbe, AutoStart: f.AutoStart, Settle: f.Settle,
		Recipe: f.Recipe, Style: f.Style, SLAs: slas, Min: f.Min}
	rate := len(s.Load.Rates) > 0
	if rate {
		sr.Start = s.Load.Rates[0]
	} else {
		sr.Start = 1
		if len(s.Load.Concs) > 0 {
			sr.Start = float64(s.Load.Concs[0])
		}
	}
	if rate {
		// Below this rate a probe cannot finish the requests a verdict
		// needs: the search would halve on, failing for want of samples,
		// into the controller's bound.
		j := search.Judging{MinDuration: f.MinProbe, MaxDuration: f.MaxProbe}
		sr.Lowest = j.LowestRate()
		if f.Max > 0 && f.Max < sr.Lowest {
			return cmdline.Usagef("--search-max %g is below %g/s, the lowest rate at which a probe finishes the requests a verdict needs within --probe-max-duration (a longer one allows lower rates)", f.Max, sr.Lowest)
		}
		if sr.Start < sr.Lowest && !f.AutoStart {
			s.Notes = append(s.Notes, fmt.Sprintf("search: --request-rate %g is below %g/s, the lowest rate at which a probe finishes the requests a verdict needs within --probe-max-duration: starting there (a longer --probe-max-duration allows lower rates)", sr.Start, sr.Lowest))
			sr.Start = sr.Lowest
		}
	}
	if f.Max > 0 && f.Max < sr.Start && !f.AutoStart {
		return cmdline.Usagef("--search-max %g is below the start value %g", f.Max, sr.Start)
	}
	lv.Search = sr
	return nil
}

// precisionCap bounds a run whose --precision targets are not reached,
// when no count or duration was given to bound it.
const precisionCap = 10 * time.Minute

// parsePrecision reads --precision: the targets, which then make the
// plan's bounds caps. A run given no bound gets precisionCap, said in a
// note and kept in input_config (the run's real bound).
func parsePrecision(s *Spec, c *cmdline.Config) error {
	if len(c.Precision) == 0 {
		return nil
	}
	targets, err := metrics.ParseTargets(c.Precision)
	if err != nil {
		return cmdline.Usagef("--precision: %w", err)
	}
	switch {
	case c.Search != nil || c.ControlAddr != "":
		return cmdline.Usagef("--precision ends a planned run's stages: not a search or a run steered live")
	case !c.Streaming || !s.Endpoint.Info().Streams:
		for _, t := range targets {
			if slices.Contains(streamedTags, t.Metric) {
				return cmdline.Usagef("--precision %s needs --streaming: TTFT and ITL are measured on streamed responses only", t)
			}
		}
	}
	s.Live.Precision = targets
	if c.RequestCount == 0 && c.Duration == 0 && c.ConversationNum == 0 && c.SweepLists["request-count"] == nil && c.SweepLists["benchmark-duration"] == nil {
		c.Duration, s.Load.Duration = precisionCap, precisionCap
		s.Notes = append(s.Notes, fmt.Sprintf("--precision: each stage runs until every target is reached, or for at most %s (give --request-count or --benchmark-duration for another cap)", precisionCap))
	}
	return nil
}

// streamedTags are the objectives only a streamed response measures.
var streamedTags = []metrics.Tag{metrics.TTFT, metrics.TTFTFromSend, metrics.TTFO, metrics.TTST,
	metrics.ITL, metrics.ICL, metrics.PerUser, metrics.PrefillPerUser, metrics.DecodeDuration}

// needsStreaming refuses, before anything is loaded or sent, a search
// whose objectives need token timing on a run that does not stream: every
// probe would fail for want of the metric.
func needsStreaming(slo string, streams bool, kind endpoint.Kind) error {
	objs, err := search.ParseObjectives("--slo", slo)
	if err != nil || streams {
		return nil // parseLive reports a bad --slo
	}
	for _, o := range objs {
		if slices.Contains(streamedTags, metrics.Tag(o.Tag)) {
			if kind.Info().Streams {
				return cmdline.Usagef("--slo %s needs --streaming: TTFT and ITL are measured on streamed responses only", o.Tag)
			}
			return cmdline.Usagef("--slo %s: endpoint type %s does not stream, so it has no TTFT or ITL: use request_latency or error_rate", o.Tag, kind)
		}
	}
	return nil
}
