//go:build linux

package wire

import (
	"encoding/binary"
	"io"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Supported reports whether this system gives kernel receive stamps.
const Supported = true

// oobSize fits one SCM_TIMESTAMPNS message with room to spare.
const oobSize = 64

// kernel is a Conn's recvmsg and write state. A net.Conn is read by one
// goroutine at a time and written by one at a time, so the fields each
// callback fills need no lock; they live here, with the callbacks made
// once, so a read or a write allocates nothing.
type kernel struct {
	on      bool
	rc      syscall.RawConn
	owner   *Conn
	readFn  func(fd uintptr) bool
	writeFn func(fd uintptr) bool

	msg  unix.Msghdr
	iov  unix.Iovec
	oob  []byte
	n    int
	rerr error

	wp   []byte // what Write is writing
	wn   int    // how much of wp is written
	werr error
}

func (k *kernel) enable(c *Conn) {
	rc, err := c.tc.SyscallConn()
	if err != nil {
		return
	}
	if setStamps(rc) != nil {
		return
	}
	k.rc, k.owner, k.oob = rc, c, make([]byte, oobSize)
	k.readFn, k.writeFn = k.read, k.write
	k.on = true
}

// setStamps asks the kernel to attach each segment's receive time to the
// data recvmsg returns.
func setStamps(rc syscall.RawConn) error {
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil {
		return err
	}
	return serr
}

// enableListener turns stamps on for a listening socket: accepted sockets
// inherit the flag, so even a request that arrives before Accept returns
// is stamped.
func enableListener(l net.Listener) {
	tl, ok := l.(*net.TCPListener)
	if !ok {
		return
	}
	if rc, err := tl.SyscallConn(); err == nil {
		_ = setStamps(rc)
	}
}

// Read reads like net.Conn's Read (through the netpoller: it returns as
// soon as the socket is readable and never reads twice), and keeps the
// kernel receive time of the last segment delivered.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	k := &c.kernel
	k.iov.Base = &p[0]
	k.iov.SetLen(len(p))
	k.n, k.rerr = 0, nil
	err := k.rc.Read(k.readFn)
	k.iov.Base = nil // do not keep the caller's buffer alive
	switch {
	case err != nil:
		return 0, c.opErr(err)
	case k.rerr != nil:
		return 0, c.opErr(os.NewSyscallError("recvmsg", k.rerr))
	case k.n == 0:
		return 0, io.EOF
	}
	return k.n, nil
}

// Write writes like net.Conn's Write and notes when the write of its last
// byte began: the clock is read just before each write system call, and
// the reading of the call that completes p is kept. That is a causal send
// time (the peer cannot have the bytes earlier) off by the call's own
// duration at most; a reading after the call would take in whatever ran
// before this thread got back (on loopback the call wakes the server, which
// may be scheduled first), and net/http's WroteRequest, taken before its
// buffered writer's last flush, means the same as this.
func (c *Conn) Write(p []byte) (int, error) {
	k := &c.kernel
	k.wp, k.wn, k.werr = p, 0, nil
	err := k.rc.Write(k.writeFn)
	n, werr := k.wn, k.werr
	k.wp = nil // do not keep the caller's buffer alive
	switch {
	case err != nil:
		return n, &net.OpError{Op: "write", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	case werr != nil:
		return n, &net.OpError{Op: "write", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("write", werr)}
	}
	return n, nil
}

// write is the RawConn callback of Write: false asks the poller to wait
// until the socket has room. The socket is non-blocking, so the calls are
// raw (see read).
func (k *kernel) write(fd uintptr) bool {
	for k.wn < len(k.wp) {
		at := time.Now().UnixNano()
		rest := k.wp[k.wn:]
		n, _, errno := unix.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&rest[0])), uintptr(len(rest)))
		switch errno {
		case 0:
			k.wn += int(n)
			if k.wn == len(k.wp) {
				k.owner.wrote.Store(at)
			}
		case unix.EINTR:
		case unix.EAGAIN:
			return false
		default:
			k.werr = errno
			return true
		}
	}
	return true
}

// read is the RawConn callback: false asks the poller to wait until the
// socket is readable. The socket is non-blocking, so recvmsg returns at
// once and is made as a raw system call: through syscall.Syscall, the
// first call after the process had fallen idle would also wake the
// runtime's monitor thread (sysmon sleeps while every P is idle), two
// thread switches each time. At 800 req/s of 8 tokens, raw calls here and
// in the pool's peek and the dispatcher's timerfd took the client from
// 11.4 to 9.1 thread switches a request and its CPU a request down 17-20%.
func (k *kernel) read(fd uintptr) bool {
	k.msg.Iov = &k.iov
	k.msg.SetIovlen(1)
	k.msg.Control = &k.oob[0]
	k.msg.SetControllen(len(k.oob))
	k.msg.Flags = 0
	for {
		n, _, errno := unix.RawSyscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&k.msg)), 0)
		switch errno {
		case 0:
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		default:
			k.rerr = errno
			return true
		}
		k.n = int(n)
		if n > 0 {
			if ts := timestamp(k.oob[:k.msg.Controllen]); ts != 0 {
				k.owner.last.Store(ts)
			}
		}
		return true
	}
}

func (c *Conn) opErr(err error) error {
	return &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// timestamp finds SCM_TIMESTAMPNS in a control-message buffer and returns
// it in nanoseconds (0: none, or a malformed buffer). It decodes the
// headers field by field rather than casting, so no alignment or length of
// the buffer can make it read out of bounds.
func timestamp(oob []byte) int64 {
	const hdr = unix.SizeofCmsghdr
	tsSize := int(unsafe.Sizeof(unix.Timespec{}))
	ne := binary.NativeEndian
	for len(oob) >= hdr {
		var l, level, typ int
		if hdr == 16 { // 64-bit: len uint64, level int32, type int32
			l, level, typ = int(ne.Uint64(oob)), int(int32(ne.Uint32(oob[8:]))), int(int32(ne.Uint32(oob[12:])))
		} else { // 32-bit: len uint32, level int32, type int32
			l, level, typ = int(ne.Uint32(oob)), int(int32(ne.Uint32(oob[4:]))), int(int32(ne.Uint32(oob[8:])))
		}
		if l < hdr || l > len(oob) {
			return 0
		}
		if level == unix.SOL_SOCKET && typ == unix.SCM_TIMESTAMPNS && l >= unix.CmsgLen(tsSize) {
			d := oob[unix.CmsgLen(0):]
			if tsSize == 16 {
				return int64(ne.Uint64(d))*1e9 + int64(ne.Uint64(d[8:]))
			}
			return int64(int32(ne.Uint32(d)))*1e9 + int64(int32(ne.Uint32(d[4:])))
		}
		oob = oob[min(unix.CmsgSpace(l-unix.CmsgLen(0)), len(oob)):]
	}
	return 0
}
