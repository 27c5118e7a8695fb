// Package netrtt measures the network round trip to a run's servers the
// way AIPerf's --network-latency-automatic does: a fresh TCP connection
// to each server every interval, its handshake timed (the SYN to the
// SYN-ACK: one round trip, no server work), each probe written as a JSON
// line and the successful ones summarised.
package netrtt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	mstats "github.com/surgebench/surge/metrics/stats"
)

// Sample is one probe, as AIPerf's NetworkLatencySample writes it.
type Sample struct {
	TimestampNs int64   `json:"timestamp_ns"`
	TargetURL   string  `json:"target_url"`
	TargetHost  string  `json:"target_host"`
	TargetPort  int     `json:"target_port"`
	ProbeType   string  `json:"probe_type"`
	RTTNs       *int64  `json:"rtt_ns"`
	Success     bool    `json:"success"`
	Error       *string `json:"error"`
}

// Result summarises the successful probes (ns; NaN without one).
type Result struct {
	Count, Success, Failure int
	Min, Mean, Median       float64
	P90, P99, Std           float64
}

// target is one server to probe.
type target struct {
	url, host string
	port      int
}

// Prober probes its targets until Stop.
type Prober struct {
	targets  []target
	interval time.Duration
	keep     func() bool
	out      io.Writer

	mu      sync.Mutex
	rtts    []float64
	samples int
	failed  int
	err     error

	cancel context.CancelFunc
	done   chan struct{}
}

// Start probes every server (base URLs; each host:port once) at once and
// then every interval, until Stop. keep, when set, says whether a probe's
// result counts (the profile's, not the warmup's); w, when set, receives
// every counted probe as a JSON line.
func Start(ctx context.Context, servers []string, interval time.Duration, keep func() bool, w io.Writer) (*Prober, error) {
	if interval <= 0 {
		return nil, errors.New("the probe interval must be > 0")
	}
	p := &Prober{interval: interval, keep: keep, out: w, done: make(chan struct{})}
	for _, s := range servers {
		t, err := parseTarget(s)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(p.targets, func(o target) bool { return o.host == t.host && o.port == t.port }) {
			p.targets = append(p.targets, t)
		}
	}
	ctx, p.cancel = context.WithCancel(ctx)
	go p.loop(ctx)
	return p, nil
}

// parseTarget is a server URL's host and port (the scheme's default port
// when it names none), with the URL kept without credentials.
func parseTarget(raw string) (target, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return target{}, fmt.Errorf("network probe: %q is not a server URL", raw)
	}
	port := 80
	if u.Scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return target{}, fmt.Errorf("network probe: %q: bad port", raw)
		}
	}
	u.User = nil
	return target{url: u.String(), host: u.Hostname(), port: port}, nil
}

func (p *Prober) loop(ctx context.Context) {
	defer close(p.done)
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		for _, tg := range p.targets {
			p.probe(ctx, tg)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// probe times one TCP handshake to tg.
func (p *Prober) probe(ctx context.Context, tg target) {
	s := Sample{TimestampNs: time.Now().UnixNano(), TargetURL: tg.url, TargetHost: tg.host, TargetPort: tg.port, ProbeType: "tcp_connect"}
	d := net.Dialer{Timeout: min(p.interval, 5*time.Second)}
	start := time.Now()
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(tg.host, strconv.Itoa(tg.port)))
	rtt := time.Since(start)
	if ctx.Err() != nil {
		if conn != nil {
			conn.Close()
		}
		return // stopped mid-probe: not a failure of the network
	}
	if err != nil {
		msg := err.Error()
		s.Error = &msg
	} else {
		conn.Close()
		ns := rtt.Nanoseconds()
		s.RTTNs, s.Success = &ns, true
	}
	if p.keep != nil && !p.keep() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.samples++
	if s.Success {
		p.rtts = append(p.rtts, float64(*s.RTTNs))
	} else {
		p.failed++
	}
	if p.out != nil && p.err == nil {
		b, _ := json.Marshal(s)
		_, p.err = p.out.Write(append(b, '\n'))
	}
}

// Stop ends the probes and summarises them; err is the first write
// error.
func (p *Prober) Stop() (Result, error) {
	p.cancel()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	r := Result{Count: p.samples, Success: len(p.rtts), Failure: p.failed,
		Min: math.NaN(), Mean: math.NaN(), Median: math.NaN(), P90: math.NaN(), P99: math.NaN(), Std: math.NaN()}
	if len(p.rtts) > 0 {
		sorted := mstats.Sorted(p.rtts)
		mean, variance := mstats.MeanVar(sorted)
		r.Min, r.Mean, r.Std = sorted[0], mean, math.Sqrt(variance)
		r.Median, r.P90, r.P99 = mstats.Quantile(sorted, 0.5), mstats.Quantile(sorted, 0.9), mstats.Quantile(sorted, 0.99)
	}
	return r, p.err
}
