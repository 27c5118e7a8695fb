//go:build !linux

package wire

import "net"

// Supported reports whether this system gives kernel receive stamps.
const Supported = false

// kernel is empty where the system has no SO_TIMESTAMPNS: connections
// stay unwrapped and callers use the time of each read.
type kernel struct{ on bool }

func (k *kernel) enable(*Conn) {}

func enableListener(net.Listener) {}

// timestamp has nothing to parse here.
func timestamp([]byte) int64 { return 0 }
