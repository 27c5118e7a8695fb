//go:build linux

package loadgen

import (
	"context"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fdSleeper sleeps on a timerfd read through the netpoller: the kernel's
// high-resolution timer makes the fd readable, which wakes the poller at
// once whatever its own timeout, and the goroutine parks meanwhile like any
// reader (no thread is held). Arming and reading the timerfd cannot block,
// so both are raw system calls: one through syscall.Syscall would wake the
// runtime's monitor thread whenever the process had been idle (two thread
// switches a request; see wire.Conn.Read).
type fdSleeper struct {
	f    *os.File
	rc   syscall.RawConn
	stop func() bool

	spec   unix.ItimerSpec
	errno  unix.Errno
	armFn  func(fd uintptr)
	readFn func(fd uintptr) bool // built once: no allocation a sleep
	buf    [8]byte
}

// newSleeper returns a timerfd sleeper, or a timer one when the system
// has no timerfd.
func newSleeper(ctx context.Context) sleeper {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return newTimerSleeper(ctx)
	}
	s := &fdSleeper{f: os.NewFile(uintptr(fd), "timerfd")}
	if s.rc, err = s.f.SyscallConn(); err != nil {
		_ = s.f.Close()
		return newTimerSleeper(ctx)
	}
	s.armFn, s.readFn = s.arm, s.read
	// An ended context cuts a sleep short through the read deadline.
	s.stop = context.AfterFunc(ctx, func() { _ = s.f.SetReadDeadline(time.Unix(1, 0)) })
	return s
}

func (s *fdSleeper) sleep(d time.Duration) bool {
	s.spec.Value = unix.NsecToTimespec(int64(max(d, 1))) // a zero it_value would disarm the timer
	s.errno = 0
	if err := s.rc.Control(s.armFn); err != nil || s.errno != 0 {
		return false
	}
	return s.rc.Read(s.readFn) == nil && s.errno == 0
}

func (s *fdSleeper) arm(fd uintptr) {
	_, _, s.errno = unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&s.spec)), 0, 0, 0)
}

// read takes the expiration count; false (nothing yet) waits in the poller.
func (s *fdSleeper) read(fd uintptr) bool {
	for {
		_, _, s.errno = unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&s.buf[0])), uintptr(len(s.buf)))
		if s.errno != unix.EINTR {
			return s.errno != unix.EAGAIN
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
