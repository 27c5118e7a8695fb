package metrics

import (
	"context"
	"sync"
	"testing"
	"time"
)

// fakeSpans is a span store the test fills.
type fakeSpans struct {
	mu   sync.Mutex
	m    map[[16]byte]ServerTiming
	seen uint64
}

func (f *fakeSpans) put(id string, t ServerTiming) {
	tid, _ := TraceID(id)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.m[tid] = t
	f.seen++
}

func (f *fakeSpans) Take(id [16]byte) (ServerTiming, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.m[id]
	delete(f.m, id)
	return t, ok
}

func (f *fakeSpans) Received() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seen
}

// Spans that come after their records are joined to them (the records
// wait), spans that never come leave the server's parts unknown once the
// wait ran out, and a record whose response had its own account does not
// wait.
func TestSpansJoinLate(t *testing.T) {
	t.Parallel()
	const ms = int64(time.Millisecond)
	spans := &fakeSpans{m: map[[16]byte]ServerTiming{}}
	sink := &countSink{}
	c := NewCollector(WithShards(2), WithServerSpans(spans, 300*time.Millisecond), WithSink(sink))
	id := func(i int) string {
		return "0123456789abcdef0123456789ab" + string(rune('a'+i/16)) + string("0123456789abcdef"[i%16]) + "00"
	}
	rec := func(i int) *Record {
		return &Record{Index: int64(i), RequestID: id(i), IssuedNs: 10 * ms, SentNs: 11 * ms, EndNs: 100 * ms, Streamed: true,
			TokenNs: []int64{50 * ms, 100 * ms}, Usage: Usage{Present: true, CompletionTokens: 2}}
	}
	span := ServerTiming{Source: TimingOTLP, Has: ServerQueue | ServerPrefill | ServerDecode, Queue: 5 * ms, Prefill: 30 * ms, Decode: 49 * ms}
	for i := range 10 {
		r := rec(i)
		if i == 9 {
			r.Server = ServerTiming{Source: TimingLlamaCpp, Has: ServerPrefill, Prefill: 30 * ms}
		}
		c.Add(r)
	}
	time.Sleep(20 * time.Millisecond)
	if n := sink.count(); n != 1 {
		t.Fatalf("%d records written before their spans came, want only the one with its own account", n)
	}
	for i := range 8 { // 8 never comes (9 had its own account)
		spans.put(id(i), span)
	}
	c.AwaitSpans(context.Background())
	s := c.Close()
	if sink.count() != 10 {
		t.Fatalf("%d records written, want 10", sink.count())
	}
	if j := s.SpanJoins; j == nil || j.Joined != 8 || j.Missed != 1 {
		t.Fatalf("joins %+v", s.SpanJoins)
	}
	q := s.TimeBreakdown.Parts[PartQueue]
	if q.Count != 8 || q.Sources["otlp"] != 8 || q.Sources["unknown"] != 2 {
		t.Errorf("queue: %d from %v", q.Count, q.Sources)
	}
}

type countSink struct {
	mu sync.Mutex
	n  int
}

func (s *countSink) WriteRecord(*Record, *Values, bool) {
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
}

func (s *countSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}
