package cmdline

import (
	"net/http"

	"github.com/urfave/cli/v2"
)

// NativeConfig is flags of AIPerf's native engine (v0.12 on) that shape
// how AIPerf computes, each taken as surge computes the same.
type NativeConfig struct {
	// Cells is --cells: AIPerf's worker processes (cells) whose results it
	// merges into one run's; surge is one process, so every count gives
	// the numbers AIPerf merges (0: not given).
	Cells int
	// SketchMetrics is --sketch-metrics: AIPerf's bounded-memory
	// t-digests instead of kept values. surge's digests bound its memory
	// always, and it keeps each request's headline values exactly where
	// the intervals need them.
	SketchMetrics bool
	// SynthesisIdleGapCap is --synthesis-idle-gap-cap as given: the cap on
	// a recorded trace's idle gaps (seconds; "null" or "none": no cap);
	// --trace-idle-gap-cap-seconds wins over it, as in AIPerf.
	SynthesisIdleGapCap string
}

// nativeOptions are the rows of those flags (flags.go's options holds
// them with the rest).
func nativeOptions() []option {
	return []option{
		{flag: &cli.IntFlag{Category: catAdaptive, Hidden: true, Name: "cells", Usage: "AIPerf's worker processes whose results it merges into one run's: surge runs one process, so the numbers are the merged run's at any count"}, path: "runtime.cells",
			field: func(c *Config) any { return &c.Cells }},
		{flag: &cli.BoolFlag{Category: catAdaptive, Hidden: true, Name: "sketch-metrics", Usage: "AIPerf's bounded-memory metrics: surge's t-digests bound its memory always, and it keeps each request's headline values exactly for their intervals"}, path: "metrics.sketch",
			field: func(c *Config) any { return &c.SketchMetrics }},
		{flag: &cli.StringFlag{Category: catTrace, Hidden: true, Name: "synthesis-idle-gap-cap", Usage: "recorded traces (weka): shorten every gap between a trace's call starts to at most this many seconds (null: none); --trace-idle-gap-cap-seconds wins"}, path: "input.synthesis.idle_gap_cap_seconds",
			field: func(c *Config) any { return &c.SynthesisIdleGapCap }, export: func(c *Config, _ http.Header) any {
				if isNull(c.SynthesisIdleGapCap) {
					return nil
				}
				return optionalNumber(c.SynthesisIdleGapCap)
			}},
	}
}

// isNull reports whether a value says "none", as AIPerf's YAML null.
func isNull(v string) bool { return v == "null" || v == "none" || v == "None" }
