package h1

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// peek looks at the socket's next byte without taking it or waiting. The
// call is raw: it cannot block, and a call through syscall.Syscall would
// wake the runtime's monitor thread whenever the process had been idle
// (two thread switches on a request's path).
func peek(fd uintptr, b []byte) (int, error) {
	n, _, errno := unix.RawSyscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)),
		unix.MSG_PEEK|unix.MSG_DONTWAIT, 0, 0)
	if errno != 0 {
		return int(n), errno
	}
	return int(n), nil
}
