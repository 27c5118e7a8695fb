// Package tui is surge's live view of a run: the full-screen dashboard
// (Bubble Tea), a one-line-per-second progress printer (simple), a short
// line every 10 seconds for pipes and CI (progress), or nothing.
//
// The dashboard is one root model that lays out one component per panel
// (header, latency, throughput, load, failures, stages, gpu, server); each
// component is its own package with its own messages. Snapshots reach it as
// messages at most 10 times a second; the producer never waits on rendering.
package tui

import (
	"fmt"
	"strings"
	"time"
)

// Mode is how a run is shown.
type Mode int

// The --ui modes. They carry a Mode prefix because Simple names the
// progress printer.
const (
	// ModeDashboard is the full-screen live dashboard (see Run).
	ModeDashboard Mode = iota
	// ModeSimple prints one progress line per second (see Simple).
	ModeSimple
	// ModeNone shows nothing while the run goes.
	ModeNone
	// ModeProgress prints a short line every ProgressEvery (see Progress):
	// the default when stdout is no terminal.
	ModeProgress
)

// String returns the mode as --ui spells it.
func (m Mode) String() string {
	switch m {
	case ModeDashboard:
		return "dashboard"
	case ModeSimple:
		return "simple"
	case ModeNone:
		return "none"
	case ModeProgress:
		return "progress"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode reads a UI name: dashboard, simple, progress or none. An empty
// name means ModeDashboard when stdout is a terminal and ModeProgress
// otherwise (a pipe, CI: a line every 10 s shows the run is alive). The
// error names the value and the choices; the caller says where it came
// from.
func ParseMode(name string, stdoutIsTTY bool) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "":
		if stdoutIsTTY {
			return ModeDashboard, nil
		}
		return ModeProgress, nil
	case "progress":
		return ModeProgress, nil
	case "dashboard":
		return ModeDashboard, nil
	case "simple":
		return ModeSimple, nil
	case "none":
		return ModeNone, nil
	}
	return ModeNone, fmt.Errorf("%q: want dashboard, simple, progress or none", name)
}

// Info describes the run for the header.
type Info struct {
	Model, URL, Endpoint, Mode string
	// Target is the mode's value as the user gave it, e.g. "64" or "10.5".
	Target string
	// TotalRequests and Duration bound the run (0: unbounded); progress
	// goes by request count when both are set.
	TotalRequests int
	Duration      time.Duration
	// Stages lists the sweep values; nil without a sweep.
	Stages []float64
	// StageRequests is each stage's planned request count, for the ETA
	// (nil: TotalRequests split evenly). Duration bounds each stage.
	StageRequests []int
	// StageLabels name the stages of a sweep over several parameters
	// (nil: Stages name them).
	StageLabels []string
	// Shard is "i/N" when the run is shard i of a plan split over N load
	// hosts ("" for a whole run): the header says so.
	Shard string
	// Control, when set, makes the run live: the +/-/]/[/p/r keys call it
	// (from a command) and the load panel shows the setting it returns.
	Control Control
}
