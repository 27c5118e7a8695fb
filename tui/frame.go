package tui

import (
	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/telemetry"
)

// Frame is what one redraw shows: the collector's snapshot and, for the GPU
// and server panels, the latest telemetry readings. The app assembles it;
// the telemetry part is for display only and never reaches metrics.
type Frame struct {
	metrics.Snapshot
	// GPUs holds the latest reading per GPU; Server the latest scrape per
	// server metrics endpoint.
	GPUs   []telemetry.GPUSample
	Server []telemetry.ServerSample
	// Live is a live session's setting and search progress (nil: the run
	// is not live).
	Live *LiveState
	// InPrefill is the requests sent and not yet past their first token
	// (the generator's count); PrefillCap the cap on them (0: none).
	InPrefill  int64
	PrefillCap int
	// Precision is the newest judgement of the run's precision targets
	// (metrics.Checker; nil: the run has none), shown in its panel.
	Precision *metrics.PrecisionStatus
}
