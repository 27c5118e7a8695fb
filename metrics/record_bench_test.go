package metrics_test

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/export"
)

// benchRecords builds n distinct finished streaming records shaped like a
// real run's: 256 token events 2 ms apart after a 20 ms TTFT (exactly, as
// the mock sends them, or with jitter of up to ±0.5 ms, as a real server
// does), the text they carried, optionally server usage, and every tenth
// request failed with a 429.
func benchRecords(n int, withUsage, jitter bool) []*metrics.Record {
	const tokens = 256
	recs := make([]*metrics.Record, n)
	text := make([]byte, 0, tokens*5)
	for i := range tokens {
		text = fmt.Appendf(text, " w%03d", i)
	}
	for i := range recs {
		sent := int64(time.Millisecond) * int64(i+1)
		r := &metrics.Record{
			Index: int64(i), RequestID: fmt.Sprintf("%032x", i), ConversationID: fmt.Sprintf("c%d", i),
			IntendedNs: sent - 20_000, SentNs: sent, Streamed: true, InputTokens: 550,
		}
		if i%10 == 9 {
			r.EndNs = sent + int64(3*time.Millisecond)
			r.RetryAfter = "1"
			r.Err = &metrics.Error{Code: 429, Type: "rate_limit_exceeded", Message: "Rate limit reached"}
			recs[i] = r
			continue
		}
		r.TokenNs = make([]int64, tokens)
		for j := range r.TokenNs {
			r.TokenNs[j] = sent + int64(20*time.Millisecond) + int64(j)*int64(2*time.Millisecond)
			if jitter && j > 0 {
				// A cheap deterministic hash in [-0.5, 0.5) ms.
				h := uint64(i*tokens+j) * 0x9E3779B97F4A7C15
				r.TokenNs[j] += int64(h>>44)%int64(time.Millisecond) - int64(500*time.Microsecond)
			}
		}
		r.FirstContentNs = r.TokenNs[0]
		r.EndNs = r.TokenNs[tokens-1] + 1000
		r.Text = string(text)
		if withUsage {
			r.Usage = metrics.Usage{PromptTokens: 550, CompletionTokens: tokens, Present: true}
		}
		recs[i] = r
	}
	return recs
}

// BenchmarkRecordToDigest measures the record path end to end: a worker's
// Collector.Add, the shard's Compute, the t-digest updates and (in the
// jsonl case) the JSONL line, through Close, which waits for every record.
// ns/op is the cost per record. The shards only read a record, so a fixed
// set of distinct records is handed over again and again.
func BenchmarkRecordToDigest(b *testing.B) {
	cases := []struct {
		name          string
		usage, jitter bool
		sink          bool
		// server gives each record its server's account (the time
		// breakdown: computed, aggregated and written with the line).
		server bool
	}{
		{"sse_events", false, false, false, false},
		{"sse_events+jitter", false, true, false, false},
		{"usage", true, false, false, false},
		{"usage+jitter+jsonl", true, true, true, false},
		{"usage+jitter+jsonl+breakdown", true, true, true, true},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			recs := benchRecords(4096, bc.usage, bc.jitter)
			if bc.server {
				for _, r := range recs {
					r.Server = metrics.ServerTiming{Source: metrics.TimingMock, Has: metrics.ServerQueue | metrics.ServerPrefill | metrics.ServerDecode,
						Queue: int64(time.Millisecond), Prefill: int64(18 * time.Millisecond), Decode: int64(510 * time.Millisecond)}
				}
			}
			start := time.Now()
			opts := []metrics.Option{metrics.WithClock(func() int64 { return int64(time.Since(start)) })}
			if bc.sink {
				opts = append(opts, metrics.WithSink(export.NewJSONL(io.Discard, start)))
			}
			b.ReportAllocs()
			b.ResetTimer()
			col := metrics.NewCollector(opts...)
			for i := 0; i < b.N; i++ {
				col.Add(recs[i%len(recs)])
			}
			s := col.Close()
			b.StopTimer()
			if got := s.Run[metrics.RequestCount] + s.Run[metrics.ErrorRequestCount]; got != float64(b.N) {
				b.Fatalf("summary counts %v records, want %d", got, b.N)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/record")
		})
	}
}
