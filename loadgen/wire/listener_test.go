package wire

import (
	"net"
	"testing"
	"time"
)

// TestListenerStampsAccepted: a server's accepted connections carry the
// arrival time of what the client sent (kernel stamps where the platform
// has them, the read time otherwise).
func TestListenerStampsAccepted(t *testing.T) {
	t.Parallel()
	ln := stampedListener(t)
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = c.Write([]byte("hello"))
		time.Sleep(100 * time.Millisecond)
	}()
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := Of(nc)
	if c == nil {
		t.Fatalf("Accept returned a %T, not a stamped connection", nc)
	}
	buf := make([]byte, 5)
	if _, err := nc.Read(buf); err != nil || string(buf) != "hello" {
		t.Fatalf("read %q, %v", buf, err)
	}
	if c.LastArrival() == 0 {
		t.Error("no arrival time after a read")
	}
}

// stampedListener listens on 127.0.0.1 with kernel receive stamps; it
// closes with the test.
func stampedListener(t *testing.T) *Listener {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := NewListener(inner)
	t.Cleanup(func() { ln.Close() })
	return ln
}
