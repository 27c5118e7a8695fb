package netrtt

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// TestProber: probes of a listening loopback port succeed, each a JSON
// line, their mean a small positive round trip; a closed port's fail with
// the error; probes the filter does not keep are not counted.
func TestProber(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	var out bytes.Buffer
	p, err := Start(context.Background(), []string{"http://user:pw@" + ln.Addr().String() + "/v1", "http://" + ln.Addr().String()}, 20*time.Millisecond, nil, &out)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond)
	r, err := p.Stop()
	if err != nil || r.Success < 3 || r.Failure != 0 || r.Count != r.Success || !(r.Mean > 0 && r.Mean < float64(200*time.Millisecond)) || r.Min > r.Mean || r.P99 < r.Median {
		t.Fatalf("result %+v, %v", r, err)
	}
	sc := bufio.NewScanner(&out)
	lines := 0
	for sc.Scan() {
		var s Sample
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil || !s.Success || s.ProbeType != "tcp_connect" || s.TargetHost != "127.0.0.1" || s.RTTNs == nil || bytes.Contains(sc.Bytes(), []byte("pw")) {
			t.Errorf("sample %s (%v)", sc.Bytes(), err)
		}
		lines++
	}
	if lines != r.Count {
		t.Errorf("%d lines for %d probes", lines, r.Count)
	}

	closed := ln.Addr().String()
	ln.Close()
	p, _ = Start(context.Background(), []string{"http://" + closed}, 20*time.Millisecond, nil, nil)
	time.Sleep(60 * time.Millisecond)
	if r, _ := p.Stop(); r.Failure == 0 || r.Success != 0 || r.Mean == r.Mean {
		t.Errorf("closed port: %+v", r)
	}
	p, _ = Start(context.Background(), []string{"http://" + closed}, 20*time.Millisecond, func() bool { return false }, nil)
	time.Sleep(50 * time.Millisecond)
	if r, _ := p.Stop(); r.Count != 0 {
		t.Errorf("probes counted though the filter kept none: %+v", r)
	}
	if _, err := Start(context.Background(), []string{"::bad"}, time.Second, nil, nil); err == nil {
		t.Errorf("a bad URL was taken")
	}
}
