//go:build !unix

package h1

import "net"

// closedByPeer cannot look without reading here: a closed connection fails
// its next request with EOF, for the caller to retry.
func closedByPeer(net.Conn) bool { return false }
