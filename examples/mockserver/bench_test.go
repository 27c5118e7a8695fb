package mockserver

import (
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkStream256 is one streamed 256-token chat request with ITL 0
// over loopback HTTP: the mock's own cost per request, and per token as
// ns/token.
func BenchmarkStream256(b *testing.B) {
	for _, k := range []int{1, 16} {
		b.Run("tokens_per_chunk="+strconv.Itoa(k), func(b *testing.B) {
			_, ts := newTestServer(b, Config{TokensPerChunk: k})
			body := `{"messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":256,"stream_options":{"include_usage":true}}`
			client := ts.Client()
			b.ReportAllocs()
			for b.Loop() {
				resp, err := client.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatal(resp.Status)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/256, "ns/token")
		})
	}
}

// BenchmarkServeStream is the handler alone (no sockets) for one streamed
// 256-token request: the allocations the mock itself makes.
func BenchmarkServeStream(b *testing.B) {
	s := New(Config{})
	body := `{"messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":256}`
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		r, _ := http.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
		clear(w.h)
		s.ServeHTTP(w, r)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/256, "ns/token")
}

// discardWriter is a flushing ResponseWriter that keeps nothing.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Flush()                      {}

// TestNoPerTokenAllocs holds the streaming hot path to zero allocations
// per token: a 256-token stream allocates what a 1-token one does.
func TestNoPerTokenAllocs(t *testing.T) {
	s := New(Config{ReasoningTokens: 3})
	allocs := func(tokens int) float64 {
		body := `{"messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":` +
			strconv.Itoa(tokens) + `}`
		w := &discardWriter{h: http.Header{}}
		return testing.AllocsPerRun(50, func() {
			r, _ := http.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
			clear(w.h)
			s.ServeHTTP(w, r)
		})
	}
	// AllocsPerRun counts the whole process's allocations, so a goroutine
	// an earlier test left behind can add a few: the least of three
	// differences is the handler's own (a per-token allocation adds 255).
	diff := math.Inf(1)
	for range 3 {
		one, many := allocs(1), allocs(256)
		diff = min(diff, many-one)
	}
	if diff > 1 {
		t.Errorf("256 tokens make %.0f more allocations than 1 token: the difference is per-token allocation", diff)
	}
}

// BenchmarkStreamTiming reports how far the mock's timing lies from its
// configuration (TTFT 20 ms, ITL 5 ms, 20 tokens), as a client sees it:
// the tight figures TestTimingMatchesConfig only bounds loosely. Run it
// on an idle machine.
func BenchmarkStreamTiming(b *testing.B) {
	const ttft, itl, tokens = 20 * time.Millisecond, 5 * time.Millisecond, 20
	_, ts := newTestServer(b, Config{TTFT: ttft, ITL: itl})
	var ttfts, itls []time.Duration
	for b.Loop() {
		sent, evs := streamEvents(b, ts.URL+"/v1/chat/completions",
			`{"messages":[{"role":"user","content":"x"}],"stream":true,"max_tokens":20}`)
		first, last := evs[1].at, evs[tokens].at
		ttfts = append(ttfts, first.Sub(sent))
		itls = append(itls, last.Sub(first)/(tokens-1))
	}
	b.ReportMetric(float64((median(ttfts) - ttft).Microseconds()), "ttft-over-config-µs")
	b.ReportMetric(float64((median(itls) - itl).Microseconds()), "itl-over-config-µs")
}
