package schedule

import (
	"fmt"
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

// ValidateRamp checks a ramp-duration flag against the run's length: a ramp
// must be ≥ 0 and, when the run is bounded by time (run > 0, the
// --benchmark-duration), no longer than the run. The error names both flags,
// e.g. "--concurrency-ramp-duration 60s is longer than --benchmark-duration
// 30s". A run of 0 (bounded by request count) only checks the sign.
func ValidateRamp(flag string, ramp, run time.Duration) error {
	if ramp < 0 {
		return fmt.Errorf("%s must be ≥ 0, got %s", flag, seconds(ramp))
	}
	if run > 0 && ramp > run {
		return fmt.Errorf("%s %s is longer than --benchmark-duration %s", flag, seconds(ramp), seconds(run))
	}
	return nil
}

// seconds formats d the way the flags are written: "60s", "1.5s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}
