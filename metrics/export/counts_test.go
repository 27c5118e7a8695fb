package export

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/metrics"
)

// TestCountsSourcesExported: a run whose server's usage was not believed,
// and whose tokens came in batches, says so in every summary export: the
// JSON (server_usage, itl_batched, tokens_per_event), the CSV's Counts
// section and the console; a run with neither adds nothing.
func TestCountsSourcesExported(t *testing.T) {
	t.Parallel()
	s := &metrics.Summary{Run: map[metrics.Tag]float64{metrics.RequestCount: 3}, TokenSource: metrics.SourceTokenizer, InputTokenSource: metrics.InputFromDataset,
		UsageDistrust: &metrics.UsageDistrust{Sign: metrics.SignOverCap, Detail: "request r asked for at most 16 output tokens and its usage says 100"}, UsageIgnored: 3,
		TokensPerEvent: &metrics.TokensPerEvent{Batched: 3, Counted: 3, Single: 1, Mean: 2.5, Max: 9, FirstShare: 0.6,
			Hist: []int64{4, 0, 1, 0, 1, 0, 0}, Buckets: []string{"1", "2", "3-4", "5-8", "9-16", "17-32", "33+"}}}
	var b bytes.Buffer
	if err := JSON(&b, s, Run{Start: time.Unix(0, 0), End: time.Unix(1, 0)}); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	usage, _ := m["server_usage"].(map[string]any)
	tpe, _ := m["tokens_per_event"].(map[string]any)
	if usage["believed"] != false || usage["sign"] != metrics.SignOverCap || usage["requests_counted_without_it"] != 3.0 ||
		m["itl_batched"] != true || tpe["batched_requests"] != 3.0 || tpe["single_event_requests"] != 1.0 || tpe["max"] != 9.0 ||
		tpe["events_by_tokens"].(map[string]any)["9-16"] != 1.0 {
		t.Errorf("JSON: server_usage %v, itl_batched %v, tokens_per_event %v", usage, m["itl_batched"], tpe)
	}
	b.Reset()
	if err := CSV(&b, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Counts,Source", "Output Token Counts,tokenizer", "Input Token Counts,dataset",
		"Server Usage,not believable (over_cap): 3 requests counted without it", "Inter Token Latency,\"the server's delivery cadence"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("CSV does not say %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	Console(&b, "t", s)
	for _, want := range []string{"the server's usage not believed (over_cap)", "Inter token latency: the server's delivery cadence"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("console does not say %q:\n%s", want, b.String())
		}
	}
	// Neither: nothing added.
	plain := &metrics.Summary{Run: map[metrics.Tag]float64{metrics.RequestCount: 3}, TokenSource: metrics.SourceUsage}
	b.Reset()
	if err := CSV(&b, plain); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Counts,Source") {
		t.Errorf("a run with believed usage and a token an event has a Counts section:\n%s", b.String())
	}
}

// TestCountsSourcesPerRecord: each JSONL line says where its counts came
// from, the sign that made the usage not believed, and whether its ITL is
// a batched delivery cadence.
func TestCountsSourcesPerRecord(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	j := NewJSONL(&b, time.Unix(0, 0), WithHold(0))
	r := &metrics.Record{RequestID: "r", SentNs: 1, EndNs: 2, Streamed: true, TokenNs: []int64{2}}
	v := metrics.Values{Source: metrics.SourceTokenizer, InputSource: metrics.InputFromDataset,
		Distrust: &metrics.UsageDistrust{Sign: metrics.SignSameUsage}, Batched: true,
		Events: metrics.EventTokens{Counted: true, First: 7, Max: 7, Total: 7}}
	j.WriteRecord(r, &v, true)
	if err := j.Err(); err != nil {
		t.Fatal(err)
	}
	var line struct {
		Surge map[string]any `json:"surge"`
	}
	if err := json.Unmarshal(b.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	sg := line.Surge
	if sg["token_count_source"] != "tokenizer" || sg["input_token_count_source"] != "dataset" || sg["usage_ignored"] != "same_usage" ||
		sg["itl_batched"] != true || sg["first_event_tokens"] != 7.0 || sg["max_event_tokens"] != 7.0 {
		t.Errorf("the line's surge fields: %v", sg)
	}
}
