package h1

import (
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// tcpClose is the TCP_CLOSE state (include/net/tcp_states.h).
const tcpClose = 7

// resetFollows reports whether the peer resets nc within wait (or up to
// two of its round trips, if longer, to at most 50 ms): after an end of
// stream, a reset tells that the bytes sent after the peer's close reached
// a closed socket. TCP_INFO's state is CLOSE once a reset came; CLOSE_WAIT
// while only the peer's FIN did.
func resetFollows(nc net.Conn, wait time.Duration) bool {
	rc, ok := rawConn(nc)
	if !ok {
		return false
	}
	info := func() *unix.TCPInfo {
		var ti *unix.TCPInfo
		_ = rc.Control(func(fd uintptr) {
			ti, _ = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		})
		return ti
	}
	ti := info()
	if ti == nil {
		return false
	}
	wait = min(max(wait, 2*time.Duration(ti.Rtt)*time.Microsecond), 50*time.Millisecond)
	for deadline := time.Now().Add(wait); ; {
		if ti.State == tcpClose {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Microsecond)
		if ti = info(); ti == nil {
			return false
		}
	}
}
