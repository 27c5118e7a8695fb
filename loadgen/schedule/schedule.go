// Package schedule decides when requests are sent: arrival processes that
// produce absolute intended send times, and concurrency limits over time.
//
// Everything here is pure and deterministic given --random-seed: Arrival
// (constant, Poisson and gamma processes, optionally ramped with RampUp),
// Fixed (trace replay), Users (user-centric pacing) and ConcurrencyRamp
// build what a run consumes; ParseStages, ValidateRate and ValidateRamp check
// input. Errors name the parameter at fault (a *FieldError, or the name the
// caller passed), never a flag: the app maps them to its flags. The load
// generator sleeps until each intended offset, then waits for a slot under
// the Limit in force, and records both.
package schedule

import "time"

// Schedule yields the intended send offset of each successive request,
// measured from the run's start (absolute, never relative to the last send,
// so errors do not accumulate). ok is false when the schedule is exhausted.
// A Schedule is used by one goroutine.
type Schedule interface {
	Next() (at time.Duration, ok bool)
}

// Func adapts a function to Schedule.
type Func func() (time.Duration, bool)

// Next calls f.
func (f Func) Next() (time.Duration, bool) { return f() }

// Limit gives the concurrency cap in force at a given offset from the start
// of the run (a ramp or a constant). A cap of 0 means unlimited.
type Limit func(elapsed time.Duration) int

// Constant returns a Limit that is n at all times.
func Constant(n int) Limit { return func(time.Duration) int { return n } }
