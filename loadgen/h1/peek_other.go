//go:build unix && !linux

package h1

import "golang.org/x/sys/unix"

// peek looks at the socket's next byte without taking it or waiting.
func peek(fd uintptr, b []byte) (int, error) {
	n, _, err := unix.Recvfrom(int(fd), b, unix.MSG_PEEK|unix.MSG_DONTWAIT)
	return n, err
}
