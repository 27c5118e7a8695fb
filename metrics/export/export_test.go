package export

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/surgebench/surge/metrics"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const ms = int64(time.Millisecond)

// fixtureStart is the wall-clock time of the fixture's run clock zero.
var fixtureStart = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// fixture feeds a fixed set of records through a one-shard collector, so
// the digests and the JSONL order are deterministic.
func fixture(t *testing.T, sink metrics.RecordSink) *metrics.Summary {
	t.Helper()
	opts := []metrics.Option{metrics.WithShards(1), metrics.WithClock(func() int64 { return 0 }), metrics.WithOrigin(fixtureStart),
		metrics.WithSlices(50 * time.Millisecond), metrics.WithCostPerHour(2.5)}
	if sink != nil {
		opts = append(opts, metrics.WithSink(sink))
	}
	slos, err := metrics.ParseGoodput("time_to_first_token:25")
	if err != nil {
		t.Fatal(err)
	}
	c := metrics.NewCollector(append(opts, metrics.WithGoodput(slos))...)
	c.Add(&metrics.Record{Index: 0, RequestID: "w0", CorrelationID: "sw", ConversationID: "c-w", Phase: metrics.Warmup,
		IntendedNs: 1 * ms, SentNs: 1 * ms, AckNs: 15 * ms, EndNs: 30 * ms, Streamed: true, TokenNs: []int64{20 * ms, 30 * ms},
		FirstContentNs: 20 * ms, Usage: metrics.Usage{Present: true, PromptTokens: 10, CompletionTokens: 2, TotalTokens: 12, CacheReadTokens: 0,
			Fields: metrics.UsagePromptField | metrics.UsageCompletionField | metrics.UsageTotalField | metrics.UsageCacheReadField}})
	for i := range 10 {
		sent := int64(100+10*i) * ms
		n := 4 + i%3
		toks := make([]int64, n)
		delays := make([]int32, n)
		for k := range toks {
			toks[k] = sent + int64(20+i)*ms + int64(k)*5*ms
			delays[k] = int32(i*300+k*10) * 1000 // µs → ns: the late reads of a busy client
		}
		reused := i%2 == 1
		h := metrics.HTTPTiming{Traced: true, Reused: reused, Blocked: 50_000, Sending: 20_000,
			Waiting: int64(20+i) * ms, Receiving: int64(n-1)*5*ms + ms}
		if !reused {
			h.Connecting = 300_000
		}
		rec := &metrics.Record{
			Index: int64(i + 1), Session: int64(i + 1), RequestID: "r" + string(rune('a'+i)), CorrelationID: "s" + string(rune('a'+i)),
			ConversationID: "c" + string(rune('0'+i)),
			IntendedNs:     sent - int64(i%2)*ms, SentNs: sent, AckNs: sent + 19*ms, EndNs: toks[n-1] + ms, Streamed: true,
			TokenNs: toks, FirstContentNs: toks[0], InputTokens: 100 + i, RequestedOSL: n,
			Usage: metrics.Usage{Present: true, PromptTokens: 100 + i, CompletionTokens: n, TotalTokens: 100 + i + n,
				CacheReadTokens: 64, Fields: metrics.UsagePromptField | metrics.UsageCompletionField | metrics.UsageTotalField | metrics.UsageCacheReadField},
			HTTP: h, KernelStamps: true, ReadDelayNs: delays,
		}
		if i == 0 {
			rec.Raw = &metrics.RawExchange{Body: []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`),
				Status: 200, ContentType: "text/event-stream", Stream: true, Events: []metrics.RawEvent{
					{AtNs: toks[0], Data: []byte(`{"choices":[{"delta":{"content":"a"}}]}`)},
					{AtNs: toks[n-1] + ms, Data: []byte("[DONE]")}}}
		}
		if i == 2 {
			// Chosen to be cancelled 5 s after its send, it ended first.
			rec.CancelPlanned, rec.CancelAfterNs = true, 5000*ms
		}
		if i == 3 {
			// It waited for a prefill slot before it was sent.
			rec.PrefillWaitNs = 3 * ms
		}
		if i == 8 {
			// Its first token came in one read with the next (the flag
			// alone: the summary counts it and warns past 1%).
			rec.FirstTokenShared = true
		}
		// A draft model proposed 3 tokens a step; 2 steps accepted
		// n−2 of them (vLLM's per-request spec-decode metrics).
		rec.SpecDecode = metrics.SpecDecode{Engine: metrics.SpecVLLM, Steps: 2, Accepted: int32(n - 2), Drafted: 6, Buckets: 4}
		rec.SpecDecode.Hist[1]++
		rec.SpecDecode.Hist[n-3]++
		if i == 9 {
			// A reasoning answer: its first event is reasoning.
			rec.FirstContentNs, rec.ReasoningEvents = toks[1], 1
			rec.Usage.ReasoningTokens, rec.Usage.Fields = 1, rec.Usage.Fields|metrics.UsageReasoningField
		}
		c.Add(rec)
	}
	c.Add(&metrics.Record{Index: 11, Session: 11, RequestID: "rerr", CorrelationID: "serr", ConversationID: "c-err", IntendedNs: 200 * ms,
		SentNs: 200 * ms, EndNs: 201 * ms, InputTokens: 120,
		Err: &metrics.Error{Code: 500, Type: "server_error", Message: "mock: injected failure"}, RetryAfter: "2", ConnectionRetries: 1, RetryDuplicate: true,
		Raw: &metrics.RawExchange{Body: []byte(`{"model":"m"}`), Status: 500, ContentType: "application/json",
			Events: []metrics.RawEvent{{AtNs: 201 * ms, Data: []byte(`{"error":{"message":"mock: injected failure"}}`)}}}})
	c.Add(&metrics.Record{Index: 12, Session: 12, RequestID: "rcancel", CorrelationID: "scancel", ConversationID: "c-cancel",
		IntendedNs: 210 * ms, SentNs: 210 * ms, AckNs: 229 * ms, EndNs: 240 * ms, Cancelled: true, Streamed: true, InputTokens: 130,
		Err: &metrics.Error{Type: "cancelled", Message: "cancelled when the grace period ended"}})
	return c.Close()
}

// sinks hands each record to every one of its sinks.
type sinks []metrics.RecordSink

func (ss sinks) WriteRecord(r *metrics.Record, v *metrics.Values, good bool) {
	for _, s := range ss {
		s.WriteRecord(r, v, good)
	}
}

func (ss sinks) WriteHeld() {
	for _, s := range ss {
		if f, ok := s.(metrics.RecordFlusher); ok {
			f.WriteHeld()
		}
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./metrics/export -update)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs from golden (-want +got):\n%s", name, d)
	}
}

func TestGoldenExports(t *testing.T) {
	var jsonl, raw bytes.Buffer
	start := fixtureStart
	sink := NewJSONL(&jsonl, start, WithWorkerID("test"))
	s := fixture(t, sinks{sink, NewRawJSONL(&raw, start, WithWorkerID("test"))})
	golden(t, "profile_export_raw.jsonl", raw.Bytes())

	var js bytes.Buffer
	run := Run{SurgeVersion: "test", BenchmarkID: "3f1c2a9e-0b4d-4e57-9a61-5c2d7e8f9a10", Start: start, End: start.Add(time.Second),
		InputConfig: map[string]any{"model": "m", "api_key": "<redacted>"}, RunInfo: map[string]any{"target_url": "http://127.0.0.1:1"}}
	if err := JSON(&js, s, run); err != nil {
		t.Fatal(err)
	}
	golden(t, "profile_export_aiperf.json", js.Bytes())

	var csv bytes.Buffer
	if err := CSV(&csv, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "profile_export_aiperf.csv", csv.Bytes())
	golden(t, "profile_export.jsonl", jsonl.Bytes())

	var tsJSON, tsCSV bytes.Buffer
	if err := TimeslicesJSON(&tsJSON, s, run.InputConfig); err != nil {
		t.Fatal(err)
	}
	golden(t, "profile_export_aiperf_timeslices.json", tsJSON.Bytes())
	if err := TimeslicesCSV(&tsCSV, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "profile_export_aiperf_timeslices.csv", tsCSV.Bytes())

	var con bytes.Buffer
	Console(&con, "surge profile: m", s, Wide(true))
	golden(t, "console_wide.txt", con.Bytes())
	con.Reset()
	Console(&con, "surge profile: m", s)
	golden(t, "console.txt", con.Bytes())
	fitsWidth(t, con.String(), DefaultWidth)
}

func TestJSONShape(t *testing.T) {
	s := fixture(t, nil)
	var b bytes.Buffer
	if err := JSON(&b, s, Run{}); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	ttft := doc["time_to_first_token"].(map[string]any)
	for _, k := range []string{"unit", "avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std", "count", "sum"} {
		if _, ok := ttft[k]; !ok {
			t.Errorf("time_to_first_token lacks %q", k)
		}
	}
	if ttft["unit"] != "ms" || ttft["count"].(float64) != 10 || ttft["min"].(float64) != 20 || ttft["max"].(float64) != 29 || ttft["sum"].(float64) != 245 {
		t.Errorf("time_to_first_token = %v", ttft)
	}
	if got := doc["request_count"].(map[string]any)["avg"]; got != 10.0 {
		t.Errorf("request_count = %v, want 10 (warmup and failures excluded)", got)
	}
	if got := doc["error_request_count"].(map[string]any)["avg"]; got != 2.0 {
		t.Errorf("error_request_count = %v, want 2", got)
	}
	// Time to the second token is the gap after the first (AIPerf): 5 ms.
	if got := doc["time_to_second_token"].(map[string]any)["max"]; got != 5.0 {
		t.Errorf("time_to_second_token max = %v, want 5", got)
	}
	// total_output_tokens leaves the reasoning token out; total_osl has it.
	for tag, want := range map[string]float64{"total_output_tokens": 48, "total_reasoning_tokens": 1, "total_osl": 49, "total_isl": 1045,
		"total_error_isl": 250, "request_error_rate": 100 * 2.0 / 12, "good_request_fraction": 0.5,
		"min_request_timestamp":                float64(fixtureStart.Add(100 * time.Millisecond).UnixNano()),
		"max_response_timestamp":               float64(fixtureStart.Add(240 * time.Millisecond).UnixNano()),
		"total_usage_prompt_cache_read_tokens": 640} {
		m, ok := doc[tag].(map[string]any)
		if !ok {
			t.Errorf("%s missing", tag)
			continue
		}
		if got := m["avg"].(float64); math.Abs(got-want) > 1e-6*math.Abs(want) {
			t.Errorf("%s = %v, want %v", tag, got, want)
		}
		if _, has := m["count"]; has {
			t.Errorf("%s, a run-level metric, has a count (AIPerf leaves it out)", tag)
		}
	}
	// TTFT 20..29 ms against an SLO of 25 ms: 6 of 10 are good.
	if got := doc["good_request_count"].(map[string]any)["avg"]; got != 6.0 {
		t.Errorf("good_request_count = %v, want 6", got)
	}
	if _, ok := doc["warmup_metrics"].(map[string]any)["time_to_first_token"]; !ok {
		t.Error("warmup_metrics lacks the warmup request's TTFT")
	}
	es := doc["error_summary"].([]any)
	if len(es) != 2 || !strings.Contains(b.String(), `"error_details"`) {
		t.Errorf("error_summary = %v", es)
	}
}

func TestJSONLOneLinePerRecord(t *testing.T) {
	var b bytes.Buffer
	fixture(t, NewJSONL(&b, time.Unix(0, 0)))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 13 {
		t.Fatalf("%d lines, want 13 (1 warmup + 10 ok + 2 failed)", len(lines))
	}
	var failed int
	for _, l := range lines {
		var rec struct {
			Metadata map[string]any `json:"metadata"`
			Surge    map[string]any `json:"surge"`
			Error    *metrics.Error `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("bad line %q: %v", l, err)
		}
		if rec.Error != nil {
			failed++
			switch rec.Error.Type {
			case "server_error":
				if rec.Error.Code != 500 || rec.Surge["retry_after"] != "2" || rec.Metadata["was_cancelled"] != false {
					t.Errorf("failed record %s", l)
				}
			case "cancelled":
				if rec.Metadata["was_cancelled"] != true || rec.Metadata["cancellation_time_ns"] == nil || !strings.Contains(l, `"code":null`) {
					t.Errorf("cancelled record %s", l)
				}
			default:
				t.Errorf("unexpected failure %s", l)
			}
		}
	}
	if failed != 2 {
		t.Errorf("%d failed lines, want 2", failed)
	}
}
