package loadgen

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/loadgen/wire"
	"github.com/surgebench/surge/metrics"
)

// stampServer streams tokens far apart and records, on the run's clock,
// its own clock readings around each token's write: the truth the client's
// token times are judged against.
type stampServer struct {
	start  time.Time
	tokens int
	gap    time.Duration
	first  time.Duration // before the first token (0: gap)
	mu     sync.Mutex
	writes map[string][][2]int64 // request id → per token [before, after]
}

func (s *stampServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n")
	fl.Flush()
	var stamps [][2]int64
	for i := range s.tokens {
		if i == 0 && s.first > 0 {
			time.Sleep(s.first)
		} else {
			time.Sleep(s.gap)
		}
		before := int64(time.Since(s.start))
		fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\" tok%d\"}}]}\n\n", i)
		fl.Flush()
		stamps = append(stamps, [2]int64{before, int64(time.Since(s.start))})
	}
	s.mu.Lock() // before the stream ends: the client looks once it has
	s.writes[r.Header.Get("X-Request-ID")] = stamps
	s.mu.Unlock()
	fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n")
	fl.Flush()
}

// lateTransport makes the client a late reader: each body read returns
// its bytes only some time after they arrived, as a goroutine on a busy
// machine would.
type lateTransport struct {
	rt   http.RoundTripper
	late time.Duration
}

func (t lateTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(r)
	if err == nil {
		resp.Body = lateBody{resp.Body, t.late}
	}
	return resp, err
}

type lateBody struct {
	io.ReadCloser
	late time.Duration
}

func (b lateBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	time.Sleep(b.late)
	return n, err
}

// TestKernelStampsIgnoreALateReader reads every token 25 ms after it
// arrived. With kernel stamps the token times stay at the server's writes
// and the read delay shows the 25 ms; with read stamps the times carry it.
func TestKernelStampsIgnoreALateReader(t *testing.T) {
	if !wire.Supported {
		t.Skip("no kernel receive stamps on this system")
	}
	t.Parallel()
	const late = 25 * time.Millisecond
	for _, mode := range []Timestamps{KernelTimestamps, ReadTimestamps} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			srv := &stampServer{start: start, tokens: 3, gap: 60 * time.Millisecond, writes: map[string][][2]int64{}}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			tr := lateTransport{NewTransport(2), late}
			s, sink := runOnceAt(t, start, ts.URL, chat(true), []Stage{{Limit: schedule.Constant(2), Count: 4}},
				WithTransport(tr), WithTimestamps(mode))
			if want := mode.String(); s.TimestampSource != want {
				t.Errorf("timestamp_source %q, want %q", s.TimestampSource, want)
			}
			if d, ok := s.Metrics[metrics.ClientReadDelay]; !ok || d.P50 < 20 {
				t.Errorf("client_read_delay %+v: want p50 ≥ 20 ms for a reader %v late", d, late)
			}
			// A loaded machine can defer one segment's delivery (softirq
			// work pushed to ksoftirqd) or one late read: judge the share
			// of tokens, not every one.
			var tokens, bad int
			for _, r := range sink.recs {
				if r.Err != nil {
					t.Fatalf("request failed: %+v", r.Err)
				}
				if !r.HTTP.Traced || r.SentNs < r.IssuedNs {
					t.Errorf("send %d before issue %d, or no trace", r.SentNs, r.IssuedNs)
				}
				srv.mu.Lock()
				writes := srv.writes[r.RequestID]
				srv.mu.Unlock()
				if len(r.TokenNs) != len(writes) || len(r.ReadDelayNs) != len(writes) {
					t.Fatalf("%d tokens, %d delays, server wrote %d", len(r.TokenNs), len(r.ReadDelayNs), len(writes))
				}
				for k, w := range writes {
					tokens++
					at, slack := r.TokenNs[k], int64(10*time.Millisecond)
					ok := time.Duration(r.ReadDelayNs[k]) >= late-time.Millisecond
					switch mode {
					case KernelTimestamps:
						ok = ok && at >= w[0]-int64(time.Millisecond) && at <= w[1]+slack
					case ReadTimestamps:
						ok = ok && at >= w[1]+int64(late)-int64(time.Millisecond)
					}
					if !ok {
						bad++
						t.Logf("token %d at %v (read delay %v), server wrote it in [%v, %v]", k, time.Duration(at),
							time.Duration(r.ReadDelayNs[k]), time.Duration(w[0]), time.Duration(w[1]))
					}
				}
			}
			if bad*5 > tokens {
				t.Errorf("%d of %d tokens off (see log): kernel stamps should sit at the server's writes, read stamps %v later", bad, tokens, late)
			}
		})
	}
}

// TestFirstTokenSharedRead: a first token the client reads together with
// the next carries the later arrival (a read's stamp is its last
// segment's), and the record and summary say so; one read on its own does
// not. The late reader sleeps 300 ms after the role chunk while the
// tokens come 100 ms after it, 5 ms apart (a busy machine may wake the
// reader late, but not 100 ms late, so the role chunk is read alone); the
// prompt one has 200 ms between tokens.
func TestFirstTokenSharedRead(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name             string
		first, gap, late time.Duration
		wantShared       bool
	}{
		{"late reader", 100 * time.Millisecond, 5 * time.Millisecond, 300 * time.Millisecond, true},
		{"prompt reader", 0, 200 * time.Millisecond, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			srv := &stampServer{start: start, tokens: 2, first: tc.first, gap: tc.gap, writes: map[string][][2]int64{}}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			tr := lateTransport{NewTransport(2), tc.late}
			s, sink := runOnceAt(t, start, ts.URL, chat(true), []Stage{{Limit: schedule.Constant(2), Count: 2}}, WithTransport(tr))
			for _, r := range sink.recs {
				if r.Err != nil || len(r.TokenNs) != 2 {
					t.Fatalf("request: %+v, %d tokens; want 2 tokens", r.Err, len(r.TokenNs))
				}
				if r.FirstTokenShared != tc.wantShared {
					t.Errorf("FirstTokenShared %v with tokens at %v, want %v", r.FirstTokenShared, r.TokenNs, tc.wantShared)
				}
				if tc.wantShared && r.TokenNs[0] != r.TokenNs[1] {
					t.Errorf("tokens read together at %v: want one time", r.TokenNs)
				}
			}
			want := int64(0)
			if tc.wantShared {
				want = 2
			}
			warned := slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, "read together with the next token") })
			if s.FirstTokenShared != want || s.Streamed != 2 || warned != tc.wantShared {
				t.Errorf("summary: %d of %d first tokens shared, warned %v; want %d of 2, %v", s.FirstTokenShared, s.Streamed, warned, want, tc.wantShared)
			}
		})
	}
}
