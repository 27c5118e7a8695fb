//go:build !linux

package loadgen

import "context"

// newSleeper returns a timer sleeper: only Linux has timerfd.
func newSleeper(ctx context.Context) sleeper { return newTimerSleeper(ctx) }
