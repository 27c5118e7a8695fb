//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/surgebench/surge/internal/outbound"
	"github.com/surgebench/surge/loadgen/wire"
)

// bare is the reference the burst scenario compares surge with: the
// smallest Go client that streams chat completions in a closed loop and
// stamps first tokens with the kernel's receive time. It does nothing else
// per token (no parsing beyond "is this line an event", no metrics, no
// records until the end), so what it shows is what this machine allows:
// when it too reads first tokens together with the next, no client could
// have done better here.
//
// Each request writes one line ttfterr reads: x_request_id and
// time_to_first_token (kernel arrival of the first event − the start of the
// write that sent the request's last byte, in ms), plus whether the first
// event came in one read with the second.
func bare(argv []string) error {
	fs := flag.NewFlagSet("bare", flag.ExitOnError)
	url := fs.String("url", "", "the server's base URL (http only)")
	conc := fs.Int("concurrency", 256, "streams open at once")
	count := fs.Int("n", 2048, "requests in all")
	osl := fs.Int("osl", 64, "max_completion_tokens of every request")
	out := fs.String("o", "", "write the JSONL records here (default: stdout)")
	_ = fs.Parse(argv)
	if *url == "" || *conc < 1 || *count < 1 || fs.NArg() != 0 {
		return fmt.Errorf("usage: benchtool bare -url URL [-concurrency N] [-n N] [-osl N] [-o FILE]")
	}
	// net/http's own transport, as the outbound policy builds one, and no
	// redirect followed: the reference surge's own transport is measured
	// against.
	tr := outbound.NewTransport(outbound.TransportOptions{Dial: wire.NewDialer(true).DialContext, MaxIdlePerHost: *conc})
	client := outbound.NewClient(outbound.WithTransport(tr), outbound.NoRedirects())
	body := fmt.Appendf(nil, `{"model":"mock","messages":[{"role":"user","content":"Say something."}],"stream":true,"max_completion_tokens":%d}`, *osl)

	lines := make([][]byte, *count)
	var next atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	for range *conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= *count {
					return
				}
				line, err := bareRequest(client, *url+"/v1/chat/completions", body, "bare-"+strconv.Itoa(i))
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				lines[i] = line
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	w := io.Writer(os.Stdout)
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriter(w)
	for _, l := range lines {
		_, _ = bw.Write(l)
	}
	return bw.Flush()
}

var dataPrefix, contentKey = []byte("data: {"), []byte(`"content":"`)

// bareRequest sends one streaming request and returns its record line.
func bareRequest(client *http.Client, url string, body []byte, id string) ([]byte, error) {
	var conn *wire.Conn
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { conn = wire.Of(info.Conn) }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", id)
	req.Header.Set("User-Agent", outbound.UserAgent()) // set here: the client copies no request to add it
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", id, resp.Status)
	}
	if conn == nil || !conn.Kernel() {
		return nil, fmt.Errorf("%s: no kernel receive stamps on this connection", id)
	}
	sent := conn.LastWrite()
	var first, second int64
	br := bufio.NewReader(resp.Body)
	for second == 0 {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return nil, fmt.Errorf("%s: stream ended before two events: %w", id, err)
		}
		if !bytes.HasPrefix(line, dataPrefix) || !bytes.Contains(line, contentKey) {
			continue // not an event, or the role-only chunk that goes with the first token
		}
		if first == 0 {
			first = conn.LastArrival()
		} else {
			second = conn.LastArrival()
		}
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	rec := map[string]any{
		"metadata": map[string]any{"x_request_id": id, "benchmark_phase": "profiling", "first_token_shared_read": first == second},
		"metrics":  map[string]any{"time_to_first_token": map[string]any{"value": float64(first-sent) / 1e6, "unit": "ms"}},
	}
	b, err := json.Marshal(rec)
	return append(b, '\n'), err
}
