package loadgen

import "github.com/surgebench/surge/metrics"

// Recorder is where the generator reports what it does; metrics.Collector
// is the one the app uses. Live events (Started, FirstToken, Tokens,
// Reasoning) feed the dashboard while a request streams; Add hands over the
// finished request, which must never be dropped. Every method is called from
// many goroutines at once and must not block for long: it sits on the hot
// path.
type Recorder interface {
	// Started counts a request sent in phase p.
	Started(p metrics.Phase)
	// FirstToken reports request index's time to first token as it arrives.
	FirstToken(index int64, p metrics.Phase, ttftNs int64)
	// Tokens counts n output tokens of request index that arrived at atNs.
	Tokens(index int64, atNs int64, n int)
	// Reasoning notes that request index streamed reasoning content.
	Reasoning(index int64)
	// Add records a finished request.
	Add(r *metrics.Record)

	// SetPhase, SetStage and SetConcurrency tell the recorder where the run
	// is: the phase and profile stage now issuing, and the concurrency cap
	// now applied.
	SetPhase(p metrics.Phase)
	SetStage(i int)
	SetConcurrency(n int)
}

var _ Recorder = (*metrics.Collector)(nil)
