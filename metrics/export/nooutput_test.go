package export

import (
	"bytes"
	"testing"
	"time"

	"github.com/surgebench/surge/metrics"
)

// TestGoldenRankingsExports pins what a type that generates no tokens
// (here rankings: three passages per query) exports: latency and ISL, its
// throughput in inputs and input tokens per second, and no output token
// metrics.
func TestGoldenRankingsExports(t *testing.T) {
	c := metrics.NewCollector(metrics.WithShards(1), metrics.WithClock(func() int64 { return 0 }))
	for i := range 8 {
		sent := int64(100+10*i) * ms
		c.Add(&metrics.Record{Index: int64(i), Session: int64(i), RequestID: "q" + string(rune('a'+i)), ConversationID: "c" + string(rune('0'+i)),
			SentNs: sent, EndNs: sent + int64(15+i)*ms, NoOutput: true, Inputs: 3 + i%2, InputTokens: 400 + 10*i,
			Usage: metrics.Usage{Present: true, PromptTokens: 400 + 10*i}})
	}
	c.Add(&metrics.Record{Index: 8, Session: 8, RequestID: "qerr", ConversationID: "c-err", SentNs: 200 * ms, EndNs: 201 * ms,
		NoOutput: true, Inputs: 3, Err: &metrics.Error{Code: 500, Type: "server_error", Message: "mock: injected failure"}})
	s := c.Close()

	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var js bytes.Buffer
	run := Run{SurgeVersion: "test", Start: start, End: start.Add(time.Second),
		InputConfig: map[string]any{"model": "m", "endpoint_type": "cohere_rankings"}}
	if err := JSON(&js, s, run); err != nil {
		t.Fatal(err)
	}
	golden(t, "rankings_profile_export_aiperf.json", js.Bytes())
	var csv bytes.Buffer
	if err := CSV(&csv, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "rankings_profile_export_aiperf.csv", csv.Bytes())
	var con bytes.Buffer
	Console(&con, "surge profile: m", s)
	golden(t, "rankings_console.txt", con.Bytes())
}
