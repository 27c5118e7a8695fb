package export

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/surgebench/surge/metrics"
)

// benchLines computes the values of n streamed records of the given
// length, as a shard hands them to the JSONL sink.
func benchLines(n, tokens int) ([]*metrics.Record, []metrics.Values) {
	recs := make([]*metrics.Record, n)
	vals := make([]metrics.Values, n)
	for i := range recs {
		sent := int64(i+1) * ms
		r := &metrics.Record{Index: int64(i), RequestID: "0123456789abcdef0123456789abcdef", ConversationID: "synthetic-1",
			IntendedNs: sent - 30_000, SentNs: sent, Streamed: true, InputTokens: 128, RequestedOSL: tokens, KernelStamps: true,
			Usage: metrics.Usage{Present: true, PromptTokens: 128, CompletionTokens: tokens},
			HTTP:  metrics.HTTPTiming{Traced: true, Reused: true, Blocked: 20_000, Sending: 15_000, Waiting: 20 * ms, Receiving: int64(tokens) * 5 * ms}}
		for k := range tokens {
			r.TokenNs = append(r.TokenNs, sent+20*ms+int64(k)*5*ms+int64(k*7919%1000)*1000)
			r.ReadDelayNs = append(r.ReadDelayNs, int32(k*131%50_000))
		}
		r.FirstContentNs = r.TokenNs[0]
		r.EndNs = r.TokenNs[tokens-1] + 1000
		recs[i] = r
		vals[i] = metrics.Compute(r, nil)
	}
	return recs, vals
}

// BenchmarkJSONLWriteRecord is the JSONL sink's cost per record: encoding
// the line and writing it, to io.Discard (the encoding alone) and to a
// file (a write per 64 KiB of lines, as a burst is written).
func BenchmarkJSONLWriteRecord(b *testing.B) {
	for _, tokens := range []int{8, 256} {
		recs, vals := benchLines(64, tokens)
		for _, dst := range []string{"discard", "file"} {
			b.Run(dst+"/"+map[int]string{8: "8tokens", 256: "256tokens"}[tokens], func(b *testing.B) {
				var w io.Writer = io.Discard
				if dst == "file" {
					f, err := os.Create(filepath.Join(b.TempDir(), "profile_export.jsonl"))
					if err != nil {
						b.Fatal(err)
					}
					defer f.Close()
					w = f
				}
				j := NewJSONL(w, time.Unix(1_800_000_000, 0))
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					j.WriteRecord(recs[i%len(recs)], &vals[i%len(vals)], true)
					i++
				}
				if err := j.Err(); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
