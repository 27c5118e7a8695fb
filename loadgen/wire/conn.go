package wire

import (
	"context"
	"crypto/tls"
	"net"
	"sync/atomic"
	"syscall"
	"time"
)

// Conn is a TCP connection whose reads remember the kernel's receive time
// of the last segment each one delivered. It has net.Conn's method set and
// SyscallConn only (no ReadFrom/WriteTo), so every read goes through Read.
type Conn struct {
	net.Conn
	tc *net.TCPConn
	// last is the CLOCK_REALTIME ns of the last segment of the latest read
	// (0: none yet, or no kernel stamps). Written by whichever goroutine
	// reads (net/http reads headers on its own goroutine, bodies on the
	// caller's), read by the request's goroutine: atomic.
	last atomic.Int64
	// wrote is the CLOCK_REALTIME ns at which the write call that handed
	// the kernel the latest write's last byte began (0: none yet).
	wrote atomic.Int64

	kernel
}

// LastArrival returns the kernel's CLOCK_REALTIME receive time, in
// nanoseconds, of the last segment delivered by the latest read that
// returned data; 0 when the connection has no kernel stamps.
func (c *Conn) LastArrival() int64 { return c.last.Load() }

// LastWrite returns when the write call that handed the kernel the latest
// write's last byte began, in CLOCK_REALTIME nanoseconds (a request's send
// time: see Write); 0 before any write.
func (c *Conn) LastWrite() int64 { return c.wrote.Load() }

// Kernel reports whether reads on c carry kernel receive stamps.
func (c *Conn) Kernel() bool { return c.kernel.on }

// Wrap returns a *Conn for a TCP connection, with kernel receive stamps
// turned on where the system has them (stamps false, or a connection of
// another kind, returns it unwrapped).
func Wrap(nc net.Conn, stamps bool) net.Conn {
	tc, ok := nc.(*net.TCPConn)
	if !ok || !stamps {
		return nc
	}
	c := &Conn{Conn: tc, tc: tc}
	c.kernel.enable(c)
	if !c.kernel.on {
		return nc
	}
	return c
}

// Of finds the *Conn under nc (through TLS), or nil.
func Of(nc net.Conn) *Conn {
	for range 4 {
		switch c := nc.(type) {
		case *Conn:
			return c
		case *tls.Conn:
			nc = c.NetConn()
		case interface{ NetConn() net.Conn }:
			nc = c.NetConn()
		default:
			return nil
		}
	}
	return nil
}

// Dialer dials TCP connections that carry kernel receive stamps. Its
// DialContext fits http.Transport.DialContext; TLS, set up by the transport
// above it, keeps working (the stamps are taken under the TLS record layer,
// so a token's stamp is that of the segment that completed its record).
type Dialer struct {
	net.Dialer
	// Stamps turns kernel receive stamps on; false dials plain connections.
	Stamps bool
}

// DialContext dials and wraps the connection.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	nc, err := d.Dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return Wrap(nc, d.Stamps), nil
}

// NewDialer returns a Dialer with net/http's default timeouts.
func NewDialer(stamps bool) *Dialer {
	return &Dialer{Dialer: net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}, Stamps: stamps}
}

// Listener accepts connections that carry kernel receive stamps, for a
// server that wants the arrival time of each request (the mock's wire
// truth).
type Listener struct{ net.Listener }

// NewListener turns kernel receive stamps on for l's sockets (accepted
// ones inherit the option) and wraps what it accepts.
func NewListener(l net.Listener) *Listener {
	enableListener(l)
	return &Listener{Listener: l}
}

// Accept wraps each accepted TCP connection.
func (l *Listener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return Wrap(nc, true), nil
}

// SyscallConn returns the raw connection, for a pool that checks whether
// an idle connection is still open.
func (c *Conn) SyscallConn() (syscall.RawConn, error) { return c.tc.SyscallConn() }
