package schedule

import (
	"strconv"
	"time"
)

// ConcurrencyRamp returns a Limit that rises linearly in integer steps from 1
// at the start to target at d (--concurrency-ramp-duration), then holds at
// target: at elapsed e < d the cap is 1 + ⌊(target−1)·e/d⌋, so each of the
// target−1 increments lands at an equal share of d. A target ≤ 1 or d ≤ 0
// gives Constant(target) (0 stays unlimited: there is nothing to ramp to).
func ConcurrencyRamp(target int, d time.Duration) Limit {
	if target <= 1 || d <= 0 {
		return Constant(target)
	}
	steps := float64(target - 1)
	ds := float64(d)
	return func(elapsed time.Duration) int {
		if elapsed >= d {
			return target
		}
		if elapsed <= 0 {
			return 1
		}
		return 1 + int(steps*float64(elapsed)/ds)
	}
}

// ValidateRamp checks a ramp's duration against the run's length: a ramp
// must be ≥ 0 and, when the run is bounded by time (run > 0), no longer than
// the run. The error is a *FieldError naming field, e.g. "ramp 60s is longer
// than the run's duration 30s". A run of 0 (bounded by request count) only
// checks the sign.
func ValidateRamp(field string, ramp, run time.Duration) error {
	if ramp < 0 {
		return fieldErrorf(field, "must be ≥ 0, got %s", seconds(ramp))
	}
	if run > 0 && ramp > run {
		return fieldErrorf(field, "%s is longer than the run's duration %s", seconds(ramp), seconds(run))
	}
	return nil
}

// seconds formats d the way the flags are written: "60s", "1.5s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}
