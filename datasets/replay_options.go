package datasets

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"
)

// ReplayOptions reshape how a trace replays: its clock, its think times,
// which of its sessions run, and what its rows add to the requests
// (AIPerf's trace replay flags). The zero value replays the trace as
// recorded.
type ReplayOptions struct {
	// Speedup divides every timestamp and think time (10: ten times
	// faster than recorded); 0 or 1 replays in real time.
	Speedup float64
	// ClosedLoop (Baseten) sends a session's later turns a think time
	// after the previous reply (the recorded start-to-start gap less the
	// recorded duration) instead of at their own recorded times.
	ClosedLoop bool
	// Strict (Baseten, open loop) sends every row as a session of its own
	// at its recorded time.
	Strict bool
	// DelayCap, when DelayCapSet, bounds every think time.
	DelayCap    time.Duration
	DelayCapSet bool
	// IdleGapCap (> 0) shortens every gap between consecutive timed sends
	// of the whole trace to at most this, after Speedup.
	IdleGapCap time.Duration
	// IgnoreDelays drops every timestamp and think time: the trace's
	// turns go back to back under the run's own load.
	IgnoreDelays bool
	// SessionSample (0 < r < 1) keeps each session with probability r,
	// whole, drawn from the seed; at least one is kept. 0 or 1 keeps all.
	SessionSample float64
	// MaxContext (WEKA, > 0) drops every trace whose largest call context
	// (its input plus output tokens) exceeds it.
	MaxContext int
	// ThinkTimeOnly (WEKA) waits each call's recorded think_time before
	// it instead of the idle gap from the previous call's end (the gap
	// where think_time is not recorded).
	ThinkTimeOnly bool
	// TraceIdleGapCap, when TraceIdleGapCapSet (WEKA), shortens every gap
	// between consecutive call starts within one trace (its subagents'
	// calls included) to at most this before the think times are taken
	// from the shortened timeline; DelayCap is then not applied.
	TraceIdleGapCap    time.Duration
	TraceIdleGapCapSet bool
	// OmitKVHints (Baseten) sends no hash_ids and block_size with the
	// rows that record them.
	OmitKVHints bool
	// NoMinTokens (Baseten) sends no min_tokens: generations end at EOS
	// (or their cap) instead of the recorded length.
	NoMinTokens bool
}

// traceTypes are the dataset types ReplayOptions apply to.
var traceTypes = map[string]bool{TypeMooncake: true, TypeAzure: true, TypeBailian: true, TypeBurstGPT: true,
	TypeBaseten: true, TypeWeka: true}

// IsTrace reports whether a dataset type is a recorded trace: its rows
// carry arrival times that the replay options reshape.
func IsTrace(kind string) bool { return traceTypes[kind] }

// Check refuses options that do not apply to kind (a setting that would
// change nothing must not pass for one that did) and out-of-range values.
func (r *ReplayOptions) Check(kind string) error {
	switch {
	case r.Speedup < 0 || math.IsNaN(r.Speedup) || math.IsInf(r.Speedup, 0):
		return optionErrorf("Replay.Speedup", "must be > 0, got %g", r.Speedup)
	case r.SessionSample < 0 || r.SessionSample > 1 || math.IsNaN(r.SessionSample):
		return optionErrorf("Replay.SessionSample", "must be in (0, 1], got %g", r.SessionSample)
	case r.DelayCap < 0:
		return optionErrorf("Replay.DelayCap", "must be ≥ 0, got %s", r.DelayCap)
	case r.IdleGapCap < 0:
		return optionErrorf("Replay.IdleGapCap", "must be > 0, got %s", r.IdleGapCap)
	case r.TraceIdleGapCap < 0:
		return optionErrorf("Replay.TraceIdleGapCap", "must be ≥ 0, got %s", r.TraceIdleGapCap)
	case r.MaxContext < 0:
		return optionErrorf("Replay.MaxContext", "must be ≥ 1, got %d", r.MaxContext)
	case r.Strict && r.ClosedLoop:
		return optionErrorf("Replay.Strict", "sends every row at its recorded time: not with ClosedLoop")
	}
	type only struct {
		field string
		set   bool
		kinds map[string]bool
		what  string
	}
	traces := traceTypes
	baseten := map[string]bool{TypeBaseten: true}
	weka := map[string]bool{TypeWeka: true}
	for _, o := range []only{
		{"Replay.Speedup", r.Speedup != 0 && r.Speedup != 1, traces, "trace types"},
		{"Replay.DelayCap", r.DelayCapSet, traces, "trace types"},
		{"Replay.IdleGapCap", r.IdleGapCap > 0, traces, "trace types"},
		{"Replay.IgnoreDelays", r.IgnoreDelays, traces, "trace types"},
		{"Replay.SessionSample", r.SessionSample != 0 && r.SessionSample != 1, traces, "trace types"},
		{"Replay.ClosedLoop", r.ClosedLoop, baseten, TypeBaseten},
		{"Replay.Strict", r.Strict, baseten, TypeBaseten},
		{"Replay.OmitKVHints", r.OmitKVHints, baseten, TypeBaseten},
		{"Replay.NoMinTokens", r.NoMinTokens, baseten, TypeBaseten},
		{"Replay.MaxContext", r.MaxContext > 0, weka, TypeWeka},
		{"Replay.ThinkTimeOnly", r.ThinkTimeOnly, weka, TypeWeka},
		{"Replay.TraceIdleGapCap", r.TraceIdleGapCapSet, weka, TypeWeka},
	} {
		if o.set && !o.kinds[kind] {
			if kind == "" {
				kind = TypeSynthetic
			}
			return optionErrorf(o.field, "applies to %s only, not to a %s dataset", o.what, kind)
		}
	}
	return nil
}

// any reports whether r changes the replay at all: a trace read on
// demand is then read whole, for applyReplay reshapes its conversations.
func (r *ReplayOptions) any() bool { return *r != ReplayOptions{} }

// speedup is the divisor of the trace's clock (1: real time).
func (r *ReplayOptions) speedup() float64 {
	if r.Speedup == 0 {
		return 1
	}
	return r.Speedup
}

// applyReplay reshapes a loaded trace's timing as r asks, in AIPerf's
// order: whole sessions sampled, the clock compressed, think times capped,
// idle gaps between timed sends collapsed; or every time dropped. It
// returns the report's lines.
func applyReplay(d *Dataset, r *ReplayOptions, seed uint64) []string {
	var lines []string
	if s := r.SessionSample; s > 0 && s < 1 {
		n := len(d.Conversations)
		d.Conversations = sampleSessions(d.Conversations, s, seed)
		lines = append(lines, fmt.Sprintf("replay: kept %d of %d sessions (--trace-session-sample-ratio %g, seed %d)", len(d.Conversations), n, s, seed))
	}
	if f := r.speedup(); f != 1 {
		scaleTimes(d, 1/f)
		lines = append(lines, fmt.Sprintf("replay: timestamps and think times divided by %g", f))
	}
	if r.DelayCapSet && !r.TraceIdleGapCapSet {
		if n := capDelays(d, r.DelayCap); n > 0 {
			lines = append(lines, fmt.Sprintf("replay: %d think times cut to %s", n, r.DelayCap))
		}
	}
	if r.IdleGapCap > 0 {
		if n := reflowIdleGaps(d, r.IdleGapCap); n > 0 {
			lines = append(lines, fmt.Sprintf("replay: %d idle gaps between sends shortened to %s", n, r.IdleGapCap))
		}
	}
	if r.IgnoreDelays {
		for i := range d.Conversations {
			d.Conversations[i].OpenLoop = false
			for j := range d.Conversations[i].Turns {
				t := &d.Conversations[i].Turns[j]
				t.Timestamp, t.HasTimestamp, t.Delay = 0, false, 0
			}
		}
		lines = append(lines, "replay: timestamps and think times dropped: the turns go back to back at the run's load")
	}
	return lines
}

// sampleSessions keeps each conversation with probability ratio, whole, in
// their order, drawn from seed as AIPerf draws them (one uniform number a
// session); when none is kept one is picked, so the replay is never empty.
func sampleSessions(convs []Conversation, ratio float64, seed uint64) []Conversation {
	rng := rand.New(rand.NewPCG(seed, 0x73616d706c65)) // "sample"
	var kept []Conversation
	for _, c := range convs {
		if rng.Float64() < ratio {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 && len(convs) > 0 {
		kept = append(kept, convs[rng.IntN(len(convs))])
	}
	return kept
}

// scaleTimes multiplies every timestamp and think time by f.
func scaleTimes(d *Dataset, f float64) {
	for i := range d.Conversations {
		for j := range d.Conversations[i].Turns {
			t := &d.Conversations[i].Turns[j]
			t.Timestamp = time.Duration(math.Round(float64(t.Timestamp) * f))
			t.Delay = time.Duration(math.Round(float64(t.Delay) * f))
		}
	}
}

// capDelays bounds every think time by c and counts those it cut.
func capDelays(d *Dataset, c time.Duration) int {
	n := 0
	for i := range d.Conversations {
		for j := range d.Conversations[i].Turns {
			if t := &d.Conversations[i].Turns[j]; t.Delay > c {
				t.Delay = c
				n++
			}
		}
	}
	return n
}

// reflowIdleGaps shortens every gap between consecutive timed sends to at
// most c, walking them in time order (ties in their order), as AIPerf's
// reflow_idle_gaps does: the first send keeps its time, the spacing under
// c is kept. The timed sends are every turn of an open-loop conversation
// and the first turn of any other (its later turns follow their replies).
// It counts the gaps it shortened.
func reflowIdleGaps(d *Dataset, c time.Duration) int {
	var timed []*Turn
	for i := range d.Conversations {
		conv := &d.Conversations[i]
		for j := range conv.Turns {
			if j > 0 && !conv.OpenLoop {
				break
			}
			if conv.Turns[j].HasTimestamp {
				timed = append(timed, &conv.Turns[j])
			}
		}
	}
	if len(timed) < 2 {
		return 0
	}
	sort.SliceStable(timed, func(a, b int) bool { return timed[a].Timestamp < timed[b].Timestamp })
	n := 0
	prevOld, prevNew := timed[0].Timestamp, timed[0].Timestamp
	for _, t := range timed[1:] {
		gap := t.Timestamp - prevOld
		if gap > c {
			gap = c
			n++
		}
		prevOld = t.Timestamp
		prevNew += gap
		t.Timestamp = prevNew
	}
	return n
}
