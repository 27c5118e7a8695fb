//go:build !linux

package h1

import (
	"net"
	"time"
)

// resetFollows cannot see the connection's TCP state here: a written
// request the server closed on counts as possibly read.
func resetFollows(net.Conn, time.Duration) bool { return false }
