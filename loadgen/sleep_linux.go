//go:build linux

package loadgen

import (
	"context"
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// fdSleeper sleeps on a timerfd read through the netpoller: the kernel's
// high-resolution timer makes the fd readable, which wakes the poller at
// once whatever its own timeout, and the goroutine parks meanwhile like any
// reader (no thread is held).
type fdSleeper struct {
	f    *os.File
	stop func() bool
	buf  [8]byte
}

// newSleeper returns a timerfd sleeper, or a timer one when the system
// has no timerfd.
func newSleeper(ctx context.Context) sleeper {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return newTimerSleeper(ctx)
	}
	s := &fdSleeper{f: os.NewFile(uintptr(fd), "timerfd")}
	// An ended context cuts a sleep short through the read deadline.
	s.stop = context.AfterFunc(ctx, func() { _ = s.f.SetReadDeadline(time.Unix(1, 0)) })
	return s
}

func (s *fdSleeper) sleep(d time.Duration) bool {
	d = max(d, 1) // a zero it_value would disarm the timer
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(int(s.f.Fd()), 0, &spec, nil); err != nil {
		return false
	}
	for {
		_, err := s.f.Read(s.buf[:])
		switch {
		case err == nil:
			return true
		case errors.Is(err, os.ErrDeadlineExceeded):
			return false
		case !errors.Is(err, unix.EINTR):
			return false
		}
	}
}

// early: the timerfd wakes within tens of microseconds; the last stretch
// is yielded away so that sends stay on time on a busy machine too.
func (s *fdSleeper) early() time.Duration { return 20 * time.Microsecond }

func (s *fdSleeper) close() {
	s.stop()
	_ = s.f.Close()
}
