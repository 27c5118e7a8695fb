//go:build linux

package wire

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// TestWriteStamp: a write's stamp is read just before the system call that
// completes it. For a request-sized write (one call) it falls after the
// writer's own reading before Write and before the server's kernel stamped
// the bytes' arrival (loopback delivers, and stamps, inside the sender's
// call; a stamp read after the call can come after it, by as much as the
// woken server runs first). A write larger than the socket takes in one
// call is stamped at its last call: that case checks the writer's bracket
// and that every byte arrives.
func TestWriteStamp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		size          int
		beforeArrival bool
	}{
		{"request-sized", 4 << 10, true},
		{"larger than the socket buffers", 8 << 20, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ln := stampedListener(t)
			arrivals := make(chan int64, 1)
			msg := bytes.Repeat([]byte("x"), tc.size)
			go func() {
				nc, err := ln.Accept()
				if err != nil {
					arrivals <- 0
					return
				}
				defer nc.Close()
				buf := make([]byte, len(msg))
				if _, err := io.ReadFull(nc, buf); err != nil {
					arrivals <- 0
					return
				}
				arrivals <- Of(nc).LastArrival()
			}()
			nc, err := NewDialer(true).DialContext(context.Background(), "tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			c := Of(nc)
			if c.LastWrite() != 0 {
				t.Fatal("a write stamp before any write")
			}
			before := time.Now().UnixNano()
			if n, err := nc.Write(msg); n != len(msg) || err != nil {
				t.Fatalf("wrote %d of %d: %v", n, len(msg), err)
			}
			after := time.Now().UnixNano()
			wrote := c.LastWrite()
			arrived := <-arrivals
			if arrived == 0 {
				t.Fatal("the server did not read every byte, or read no stamp")
			}
			if !(before <= wrote && wrote <= after) {
				t.Fatalf("write stamp %d outside the writer's own readings %d..%d", wrote, before, after)
			}
			if tc.beforeArrival && wrote > arrived {
				t.Fatalf("write stamp %d after the server's kernel saw the bytes at %d (by %d ns)", wrote, arrived, wrote-arrived)
			}
		})
	}
}

// TestWriteInterruptedByDeadline: a deadline in the past ends a write that
// waits for room, as net.Conn's does.
func TestWriteInterruptedByDeadline(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			defer c.Close()
			time.Sleep(5 * time.Second) // never reads
		}
	}()
	nc, err := NewDialer(true).DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	_, err = nc.Write(make([]byte, 64<<20)) // far more than the socket buffers hold
	var ne net.Error
	if err == nil || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("write past its deadline: %v, want a timeout", err)
	}
}

// TestWriteAllocatesNothing: a request's write is on the hot path.
func TestWriteAllocatesNothing(t *testing.T) {
	ln := stampedListener(t)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		_, _ = io.Copy(io.Discard, nc)
	}()
	nc, err := NewDialer(true).DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	msg := bytes.Repeat([]byte("x"), 1024)
	if n := testing.AllocsPerRun(200, func() { _, _ = nc.Write(msg) }); n != 0 {
		t.Errorf("%v allocations a write, want 0", n)
	}
}
