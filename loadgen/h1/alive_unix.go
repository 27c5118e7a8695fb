//go:build unix

package h1

import (
	"crypto/tls"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// closedByPeer reports whether an idle connection is unfit to send on: its
// peer closed it (llama.cpp's server closes keep-alive connections after a
// few requests), reset it, or sent bytes nobody asked for. One peek that
// does not wait; net/http learns the same from the read goroutine it
// keeps on every idle connection.
// Under TLS it looks at the TCP connection below: a close_notify alert or
// any record the client did not ask for is a byte to peek.
func closedByPeer(nc net.Conn) bool {
	rc, ok := rawConn(nc)
	if !ok {
		return false
	}
	var buf [1]byte
	dead := false
	err := rc.Read(func(fd uintptr) bool {
		for {
			n, err := peek(fd, buf[:])
			if err == unix.EINTR {
				continue
			}
			dead = err != unix.EAGAIN || n > 0
			return true
		}
	})
	return dead || err != nil
}

// rawConn is the socket under nc, under TLS the TCP connection's.
func rawConn(nc net.Conn) (syscall.RawConn, bool) {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil, false
	}
	rc, err := sc.SyscallConn()
	return rc, err == nil
}
