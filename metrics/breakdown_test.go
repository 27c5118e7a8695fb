package metrics

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// A request's parts are the client's stamps and the server's account,
// each from its source, and what neither gives is unknown.
func TestBreakdownOf(t *testing.T) {
	t.Parallel()
	const ms = int64(time.Millisecond)
	nan := math.NaN()
	// Intended at 100, issued at 101, on the wire at 103; first token at
	// 150 (kernel), read 0.5 later; last at 250, read 1 ms after it.
	stream := func(st ServerTiming) *Record {
		return &Record{Streamed: true, Scheduled: true, IntendedNs: 100 * ms, IssuedNs: 101 * ms, SentNs: 103 * ms, EndNs: 252 * ms,
			TokenNs: []int64{150 * ms, 200 * ms, 250 * ms}, KernelStamps: true, ReadDelayNs: []int32{int32(ms / 2), 0, int32(ms)}, Server: st}
	}
	full := ServerTiming{Source: TimingMock, Has: ServerQueue | ServerPrefill | ServerDecode, Queue: 10 * ms, Prefill: 35 * ms, Decode: 99 * ms}
	llama := ServerTiming{Source: TimingLlamaCpp, Has: ServerPrefill | ServerDecode, Prefill: 35 * ms, Decode: 99 * ms}
	otlp := ServerTiming{Source: TimingOTLP, Has: ServerQueue | ServerPrefill | ServerDecode | ServerFirstToken,
		Queue: 10 * ms, Prefill: 30 * ms, Decode: 99 * ms, FirstToken: 44 * ms}
	tgi := ServerTiming{Source: TimingTGI, Has: ServerQueue | ServerTotal, Queue: 12 * ms, Total: 140 * ms}
	for _, tc := range []struct {
		name   string
		rec    *Record
		always bool
		want   [NumParts]float64
		src    [NumParts]TimingSource
		total  float64
	}{
		{
			name: "the server's whole account: every part, the network what it leaves of TTFT",
			rec:  stream(full),
			// client 103−100; network 150−103−(10+35) = 2; delivery (251−150)−99 = 2.
			want:  [NumParts]float64{3, 2, 10, 35, 99, 2},
			src:   [NumParts]TimingSource{TimingClient, TimingMock, TimingMock, TimingMock, TimingMock, TimingMock},
			total: 151,
		},
		{
			name:  "llama.cpp gives no queue: the network is unknown too, never guessed",
			rec:   stream(llama),
			want:  [NumParts]float64{3, nan, nan, 35, 99, 2},
			src:   [NumParts]TimingSource{TimingClient, TimingUnknown, TimingUnknown, TimingLlamaCpp, TimingLlamaCpp, TimingLlamaCpp},
			total: 151,
		},
		{
			name:  "a span's own time to first token bounds the network",
			rec:   stream(otlp),
			want:  [NumParts]float64{3, 3, 10, 30, 99, 2},
			src:   [NumParts]TimingSource{TimingClient, TimingOTLP, TimingOTLP, TimingOTLP, TimingOTLP, TimingOTLP},
			total: 151,
		},
		{
			name: "read stamps: the read delay is taken out of the arrival, and the read is the stamp",
			rec: func() *Record {
				r := stream(full)
				r.KernelStamps = false
				r.TokenNs = []int64{150*ms + ms/2, 200 * ms, 251 * ms}
				return r
			}(),
			want:  [NumParts]float64{3, 2, 10, 35, 99, 2},
			src:   [NumParts]TimingSource{TimingClient, TimingMock, TimingMock, TimingMock, TimingMock, TimingMock},
			total: 151,
		},
		{
			name:  "a whole body: its trip back is network, there is no delivery",
			rec:   &Record{IssuedNs: 100 * ms, SentNs: 101 * ms, EndNs: 245 * ms, TokenNs: []int64{245 * ms}, Server: tgi},
			want:  [NumParts]float64{1, 4, 12, nan, nan, nan},
			src:   [NumParts]TimingSource{TimingClient, TimingTGI, TimingTGI, TimingUnknown, TimingUnknown, TimingUnknown},
			total: 145,
		},
		{
			name:   "no account, but asked for: the client part alone",
			rec:    stream(ServerTiming{}),
			always: true,
			want:   [NumParts]float64{3, nan, nan, nan, nan, nan},
			src:    [NumParts]TimingSource{TimingClient},
			total:  151,
		},
	} {
		got := BreakdownOf(tc.rec, tc.always)
		if !got.Has() {
			t.Errorf("%s: no breakdown", tc.name)
			continue
		}
		if d := cmp.Diff(tc.want, got.Ms, cmpopts.EquateNaNs(), cmpopts.EquateApprox(0, 1e-9)); d != "" {
			t.Errorf("%s: parts (-want +got)\n%s", tc.name, d)
		}
		if got.Source != tc.src {
			t.Errorf("%s: sources %v, want %v", tc.name, got.Source, tc.src)
		}
		if math.Abs(got.Total-tc.total) > 1e-9 {
			t.Errorf("%s: total %v, want %v", tc.name, got.Total, tc.total)
		}
	}
	if b := BreakdownOf(stream(ServerTiming{}), false); b.Has() {
		t.Error("a request whose server said nothing has a breakdown")
	}
	failed := stream(full)
	failed.Err = &Error{Type: "x"}
	if b := BreakdownOf(failed, true); b.Has() {
		t.Error("a failed request has a breakdown")
	}
}

// The summary gives each part's percentiles, its source (mixed when the
// requests' differ) and its share of its side of the first token.
func TestTimeBreakdownSummary(t *testing.T) {
	t.Parallel()
	a := newBreakdownAgg()
	for i := range 100 {
		b := noBreakdown
		b.Source = [NumParts]TimingSource{TimingClient, TimingMock, TimingMock, TimingMock, TimingMock, TimingMock}
		b.Ms = [NumParts]float64{1, 1, 20 + float64(i%10), 28, 100, 0.5}
		if i%4 == 0 {
			b.Source[PartQueue], b.Source[PartNetwork], b.Ms[PartQueue], b.Ms[PartNetwork] = TimingUnknown, TimingUnknown, nan(), nan()
			b.Source[PartPrefill], b.Source[PartDecode], b.Source[PartDelivery] = TimingLlamaCpp, TimingLlamaCpp, TimingLlamaCpp
		}
		b.ToFirst = 1 + 1 + (20 + float64(i%10)) + 28
		b.Total = b.ToFirst + 100.5
		a.add(&b)
	}
	tb := a.summary()
	if tb.Requests != 100 {
		t.Fatalf("requests %d", tb.Requests)
	}
	q := tb.Parts[PartQueue]
	if q.Count != 75 || q.Source != "mixed" || q.Sources["mock"] != 75 || q.Sources["unknown"] != 25 {
		t.Errorf("queue: count %d, source %q %v", q.Count, q.Source, q.Sources)
	}
	if c := tb.Parts[PartClient]; c.Source != "client" || math.Abs(c.P50-1) > 0.01 {
		t.Errorf("client: %q p50 %v", c.Source, c.P50)
	}
	if p := tb.Parts[PartPrefill]; p.Source != "mixed" || math.Abs(p.P50-28) > 0.2 || math.Abs(p.Share-28/(2+24.5+28)) > 0.01 {
		t.Errorf("prefill: %q p50 %v share %v", p.Source, p.P50, p.Share)
	}
	if d := tb.Parts[PartDecode]; math.Abs(d.Share-100/100.5) > 1e-6 || !(d.P50Lo <= d.P50 && d.P50 <= d.P50Hi) {
		t.Errorf("decode: share %v, p50 %v in [%v, %v]", d.Share, d.P50, d.P50Lo, d.P50Hi)
	}
	// A quarter of the requests had no queue and no network: theirs is
	// what no part covers before the first token.
	if u := tb.Unattributed[0]; u <= 0.05 || u >= 0.25 {
		t.Errorf("unattributed before the first token: %v", u)
	}
	js, err := tb.MarshalJSON()
	if err != nil || !strings.Contains(string(js), `"server_queue":{"count":75,"source":"mixed","sources":{"mock":75,"unknown":25}`) {
		t.Errorf("JSON %s (%v)", js, err)
	}
}

func nan() float64 { return math.NaN() }

// A closed loop whose slots sit idle between requests breaks Little's
// law, and says so; one that keeps them busy does not.
func TestLittlesLaw(t *testing.T) {
	t.Parallel()
	const ms = int64(time.Millisecond)
	run := func(gap int64) *Summary {
		c := NewCollector(WithShards(1))
		c.SetConcurrency(4)
		i := int64(0)
		for slot := range int64(4) {
			at := 10*ms + slot*ms
			for range 50 {
				c.Add(&Record{Index: i, SentNs: at, EndNs: at + 20*ms, Streamed: true, TokenNs: []int64{at + 5*ms, at + 20*ms},
					Usage: Usage{Present: true, CompletionTokens: 2}})
				i++
				at += 20*ms + gap
			}
		}
		return c.Close()
	}
	busy := run(0)
	if busy.Little == nil || busy.Little.Concurrency != 4 || busy.Little.Disagrees() {
		t.Fatalf("busy slots: %+v", busy.Little)
	}
	if math.Abs(busy.Little.InFlight-4) > 0.1 {
		t.Errorf("busy slots: %v in flight, want 4", busy.Little.InFlight)
	}
	idle := run(10 * ms) // a third of each slot's time idle
	if !idle.Little.Disagrees() {
		t.Fatalf("idle slots: %+v agrees", idle.Little)
	}
	if w := strings.Join(idle.Warnings, "\n"); !strings.Contains(w, "Little's law: rate × time in flight says 2.7 requests") || !strings.Contains(w, "idle 9.9 ms") {
		t.Errorf("warnings: %s", w)
	}
}

// Under a schedule, a wait before the send shows between the two views of
// the latencies, and the summary warns; without one it does not.
func TestCoordinatedOmission(t *testing.T) {
	t.Parallel()
	const ms = int64(time.Millisecond)
	run := func(late int64) *Summary {
		c := NewCollector(WithShards(2))
		for i := range int64(200) {
			intended := 100*ms + i*10*ms
			sent := intended + late*(i%2) // every other request waited
			c.Add(&Record{Index: i, Scheduled: true, IntendedNs: intended, SentNs: sent, EndNs: sent + 50*ms, Streamed: true,
				TokenNs: []int64{sent + 20*ms + (i%7)*ms/10, sent + 50*ms}, Usage: Usage{Present: true, CompletionTokens: 2}})
		}
		return c.Close()
	}
	if s := run(0); s.Omission == nil || s.Omission.Warning() != "" {
		t.Fatalf("on time: %+v %q", s.Omission, s.Omission.Warning())
	}
	s := run(40 * ms)
	w := s.Omission.Warning()
	// Half the requests waited 40 ms: the median moves by half of it (the
	// p99's interval is open with 200 requests).
	if !strings.Contains(w, "coordinated omission: from the schedule's intended start, Time to First Token p50 is 40.3 ms against 20.3 ms from the issue") {
		t.Errorf("warning %q", w)
	}
	if d := s.Metrics[EffectiveTTFT]; math.Abs(d.P99-60.6) > 0.5 {
		t.Errorf("effective TTFT p99 %v", d.P99)
	}
}

// BenchmarkBreakdown is what the time breakdown adds to a record's work
// in its shard: the parts computed, folded into the aggregate, and
// written into the record's JSONL line (0 allocations).
func BenchmarkBreakdown(b *testing.B) {
	const ms = int64(time.Millisecond)
	r := &Record{Streamed: true, Scheduled: true, IntendedNs: 100 * ms, IssuedNs: 101 * ms, SentNs: 103 * ms, EndNs: 252 * ms,
		KernelStamps: true, ReadDelayNs: make([]int32, 256), TokenNs: make([]int64, 256),
		Server: ServerTiming{Source: TimingMock, Has: ServerQueue | ServerPrefill | ServerDecode, Queue: 10 * ms, Prefill: 35 * ms, Decode: 99 * ms}}
	for i := range r.TokenNs {
		r.TokenNs[i] = 150*ms + int64(i)*ms/2
	}
	a := newBreakdownAgg()
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		bd := BreakdownOf(r, false)
		a.add(&bd)
		buf = bd.AppendJSON(buf[:0])
	}
}

// appendNum writes what strconv writes of the value rounded to 4 decimals.
func TestAppendNum(t *testing.T) {
	t.Parallel()
	for _, x := range []float64{0, 1, -1, 0.00004, 0.00005, -0.00005, 12.3456789, 1e-9, 123456.5, -0.5, 99.99999, 1e14, 3e15, 0.1 + 0.2} {
		want := strconv.AppendFloat(nil, math.Round(x*1e4)/1e4, 'f', -1, 64)
		if got := appendNum(nil, x); string(got) != string(want) && !(string(want) == "-0" && string(got) == "0") {
			t.Errorf("appendNum(%v) = %s, want %s", x, got, want)
		}
	}
	if got := string(appendNum(nil, math.NaN())); got != "null" {
		t.Errorf("NaN: %s", got)
	}
}
