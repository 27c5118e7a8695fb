package schedule

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"
)

// ErrNoTimestamps is wrapped by the errors for a trace that cannot be
// replayed on a fixed schedule because rows lack timestamps.
var ErrNoTimestamps = errors.New("trace has no timestamps")

// FixedOption configures Fixed.
type FixedOption func(*fixedConfig)

type fixedConfig struct {
	auto             bool
	start, end       time.Duration
	startSet, endSet bool
}

// AutoOffset makes the first replayed timestamp offset 0
// (--fixed-schedule-auto-offset), so a trace recorded at wall-clock
// milliseconds starts at once.
func AutoOffset() FixedOption { return func(c *fixedConfig) { c.auto = true } }

// StartOffset drops rows whose trace timestamp is before d
// (--fixed-schedule-start-offset, in the trace's own time) and, unless
// AutoOffset is also given, makes d the run's offset 0.
func StartOffset(d time.Duration) FixedOption {
	return func(c *fixedConfig) { c.start, c.startSet = d, true }
}

// EndOffset drops rows whose trace timestamp is after d
// (--fixed-schedule-end-offset, in the trace's own time; inclusive).
func EndOffset(d time.Duration) FixedOption {
	return func(c *fixedConfig) { c.end, c.endSet = d, true }
}

// Replay is a fixed schedule replaying trace timestamps (--fixed-schedule).
// Slot i of the schedule (the i-th offset Next yields) sends trace row
// Row(i). It is used by one goroutine; Rows and Offsets may be read at any
// time.
type Replay struct {
	at   []time.Duration
	rows []int
	next int
}

// Fixed builds a replay of trace timestamps: offsets[i] is row i's
// timestamp as a duration from the trace's zero. Rows are replayed in
// timestamp order, sorted stably (equal timestamps keep file order), as
// AIPerf does, and Rows maps every slot back to its row.
//
// Windowing and zero, in this order: StartOffset/EndOffset keep the rows
// with start ≤ timestamp ≤ end in trace time; then offset 0 of the run is
// the first kept timestamp with AutoOffset, else the start offset when one
// is given, else the trace's zero. A row before the run's zero (a negative
// timestamp without AutoOffset) is due at once, offset 0.
//
// Bad input is a *FieldError: "trace" for no rows at all (wrapping
// ErrNoTimestamps), "end offset" before the start, a negative "start
// offset", or a "window" that keeps no rows.
func Fixed(offsets []time.Duration, opts ...FixedOption) (*Replay, error) {
	var c fixedConfig
	for _, o := range opts {
		o(&c)
	}
	if len(offsets) == 0 {
		return nil, &FieldError{Field: "trace", Reason: "has no rows to replay", Err: ErrNoTimestamps}
	}
	if c.startSet && c.start < 0 {
		return nil, fieldErrorf("start offset", "must be ≥ 0, got %s", millis(c.start))
	}
	if c.startSet && c.endSet && c.end < c.start {
		return nil, fieldErrorf("end offset", "%s is before the start offset %s", millis(c.end), millis(c.start))
	}
	rows := make([]int, 0, len(offsets))
	for i, ts := range offsets {
		if c.startSet && ts < c.start || c.endSet && ts > c.end {
			continue
		}
		rows = append(rows, i)
	}
	if len(rows) == 0 {
		return nil, fieldErrorf("window", "keeps no rows: no trace rows between %s and %s",
			windowEdge(c.startSet, c.start, "the start"), windowEdge(c.endSet, c.end, "the end"))
	}
	sort.SliceStable(rows, func(a, b int) bool { return offsets[rows[a]] < offsets[rows[b]] })
	var zero time.Duration
	switch {
	case c.auto:
		zero = offsets[rows[0]]
	case c.startSet:
		zero = c.start
	}
	at := make([]time.Duration, len(rows))
	for i, r := range rows {
		at[i] = max(offsets[r]-zero, 0)
	}
	return &Replay{at: at, rows: rows}, nil
}

// TraceOffsets collects the timestamps of n trace rows for Fixed, where
// ts(i) returns row i's timestamp and whether it has one. A row without one
// is a *FieldError on "trace" naming the row (1-based), wrapping
// ErrNoTimestamps.
func TraceOffsets(n int, ts func(i int) (time.Duration, bool)) ([]time.Duration, error) {
	out := make([]time.Duration, n)
	for i := range n {
		d, ok := ts(i)
		if !ok {
			return nil, &FieldError{Field: "trace", Reason: fmt.Sprintf("needs a timestamp on every row: row %d has none", i+1), Err: ErrNoTimestamps}
		}
		out[i] = d
	}
	return out, nil
}

// Next implements Schedule.
func (r *Replay) Next() (time.Duration, bool) {
	if r.next >= len(r.at) {
		return 0, false
	}
	at := r.at[r.next]
	r.next++
	return at, true
}

// Len is the number of slots, the request count of the replay.
func (r *Replay) Len() int { return len(r.at) }

// Row returns the trace row sent in slot i.
func (r *Replay) Row(i int) int { return r.rows[i] }

// Rows returns a copy of the slot → trace row mapping.
func (r *Replay) Rows() []int { return slices.Clone(r.rows) }

// Offsets returns a copy of every slot's intended offset.
func (r *Replay) Offsets() []time.Duration { return slices.Clone(r.at) }

// millis formats d as the ms flags are written: "1500ms".
func millis(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64) + "ms"
}

func windowEdge(set bool, d time.Duration, unset string) string {
	if !set {
		return unset
	}
	return millis(d)
}
