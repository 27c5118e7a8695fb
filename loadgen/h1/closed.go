package h1

import (
	"errors"
	"io"
	"net"
	"syscall"
	"time"
)

// ClosedError reports an exchange on a reused (pooled) connection that
// the server had closed, or closed before any byte of its answer: the
// idle-close race of keep-alive, which a client resolves by sending again
// on a fresh connection. Whether that second send can be a duplicate
// depends on whether the server may have read the first, which it tells:
//
//   - Written false: not one byte of the request was written (the write
//     failed on a connection already reset): no server saw it;
//   - Unread true: the request was written, but the server's end reset the
//     connection on its bytes, which a TCP stack does when the bytes reach a
//     socket its application had closed, or one closed with them unread
//     (llama.cpp's server closes every streamed response's connection just
//     after it, announcing keep-alive): no server read it;
//   - otherwise the server closed the connection after the request was
//     written, and may have read it first.
type ClosedError struct {
	Written bool
	Unread  bool
	Err     error
}

// Error says what happened to the request.
func (e *ClosedError) Error() string {
	switch {
	case !e.Written:
		return "h1: the server had closed the reused connection; the request was not written: " + e.Err.Error()
	case e.Unread:
		return "h1: the server reset the reused connection on the request, unread: " + e.Err.Error()
	}
	return "h1: the server closed the reused connection after the request was written: " + e.Err.Error()
}

// Unwrap returns the connection's error (io.EOF, ECONNRESET, …).
func (e *ClosedError) Unwrap() error { return e.Err }

// Duplicate reports whether a second send may have been the server's
// second sight of the request.
func (e *ClosedError) Duplicate() bool { return e.Written && !e.Unread }

// closedBeforeAnswer reports whether err is the peer closing or resetting
// the connection (what the idle-close race looks like), not a timeout or a
// protocol error.
func closedBeforeAnswer(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED)
}

// classify makes err, which ended an exchange on a reused connection
// before its answer's first byte, a *ClosedError when it is the server
// closing; written says whether the request's bytes went out.
func classify(nc net.Conn, err error, written bool) error {
	if !closedBeforeAnswer(err) {
		return err
	}
	ce := &ClosedError{Written: written, Err: err}
	if written {
		// A reset is the server's TCP stack refusing the request's bytes;
		// a bare end of stream may still be followed by one.
		ce.Unread = errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || resetFollows(nc, resetWait)
	}
	return ce
}

// resetWait bounds how long classify waits for a reset behind an end of
// stream: the server's answer to the request's bytes takes one round trip,
// on the failure path only.
const resetWait = 2 * time.Millisecond
