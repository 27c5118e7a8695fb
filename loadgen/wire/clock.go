package wire

import (
	"sync"
	"time"
)

// Clock maps kernel receive stamps (CLOCK_REALTIME nanoseconds) onto a
// run's clock (monotonic nanoseconds since its start). The offset between
// the two clocks is taken once, when the Clock is made: NTP slews both
// clocks alike, so only a step of the wall clock (settimeofday, an NTP
// step) moves it, and Drift reports that.
type Clock struct {
	start  time.Time
	offset int64 // run ns − realtime ns

	mu       sync.Mutex
	maxDrift int64
}

// NewClock maps onto the clock that counts from start (which must carry a
// monotonic reading, as time.Now's does).
func NewClock(start time.Time) *Clock {
	c := &Clock{start: start}
	c.offset = c.sample()
	return c
}

// sample reads both clocks at once: time.Now takes its wall and monotonic
// readings in the same call, nanoseconds apart.
func (c *Clock) sample() int64 {
	now := time.Now()
	return int64(now.Sub(c.start)) - now.UnixNano()
}

// Run converts a realtime stamp to run nanoseconds; 0 stays 0 (no stamp).
func (c *Clock) Run(realNs int64) int64 {
	if realNs == 0 {
		return 0
	}
	return realNs + c.offset
}

// Now is the run clock: monotonic nanoseconds since start.
func (c *Clock) Now() int64 { return int64(time.Since(c.start)) }

// Check re-reads the offset and returns how far it moved since the Clock
// was made (the largest movement seen by any Check). A drift of more than
// a millisecond means the wall clock was stepped during the run and kernel
// stamps taken after the step are off by that much.
func (c *Clock) Check() time.Duration {
	d := c.sample() - c.offset
	if d < 0 {
		d = -d
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.maxDrift = max(c.maxDrift, d)
	return time.Duration(c.maxDrift)
}
