package metrics

import (
	"fmt"
	"math"
	"strings"
)

// EventEnd is how much text a stream had carried once one of its text
// events was read (Record.EventEnds): Text's length and ReasoningText's,
// packed in one int64 so the generator keeps one slice beside TokenNs.
func EventEnd(text, reasoning int) int64 {
	return int64(uint32(reasoning))<<32 | int64(uint32(text))
}

// eventEnd unpacks an EventEnd.
func eventEnd(e int64) (text, reasoning int) {
	return int(uint32(e)), int(uint32(e >> 32))
}

// eventBuckets bound the tokens-per-event histogram's buckets: 1, 2, 3–4,
// 5–8, 9–16, 17–32, 33 and more.
var eventBuckets = [...]int{1, 2, 4, 8, 16, 32}

// eventHistLen is the histogram's length: one bucket past the last bound.
const eventHistLen = len(eventBuckets) + 1

// eventBucket is the histogram bucket of an event of n tokens.
func eventBucket(n int) int {
	for i, b := range eventBuckets {
		if n <= b {
			return i
		}
	}
	return len(eventBuckets)
}

// eventBucketName names bucket i ("1", "2", "3-4", …, "33+").
func eventBucketName(i int) string {
	switch {
	case i == 0:
		return "1"
	case i == len(eventBuckets):
		return fmt.Sprintf("%d+", eventBuckets[i-1]+1)
	case eventBuckets[i-1]+1 == eventBuckets[i]:
		return fmt.Sprint(eventBuckets[i])
	}
	return fmt.Sprintf("%d-%d", eventBuckets[i-1]+1, eventBuckets[i])
}

// EventTokens is what a streamed answer's events carried: how many tokens
// each, by the tokenizer's count of each event's text. Set only where the
// answer had more tokens than text events (else every event was one
// token) and a tokenizer was loaded; a server's per-chunk usage says it
// on its own (Record.FirstChunkTokens).
type EventTokens struct {
	// Counted is set when the events were counted.
	Counted bool
	// First and Max are the first event's tokens and the most any event
	// carried; Total the sum (the events counted one by one, which can
	// differ from OSL by a few tokens).
	First, Max, Total int
	// Hist counts the events by tokens carried (eventBuckets).
	Hist [eventHistLen]int32
}

// countEvents counts the tokens of each of r's text events with tok.
func countEvents(r *Record, tok TokenCounter) EventTokens {
	var et EventTokens
	if tok == nil || len(r.EventEnds) != len(r.TokenNs) || len(r.EventEnds) == 0 {
		return et
	}
	et.Counted = true
	var t0, r0 int
	for i, e := range r.EventEnds {
		t1, r1 := eventEnd(e)
		t1, r1 = min(max(t1, t0), len(r.Text)), min(max(r1, r0), len(r.ReasoningText))
		n := 0
		if t1 > t0 {
			n += tok.Count(r.Text[t0:t1])
		}
		if r1 > r0 {
			n += tok.Count(r.ReasoningText[r0:r1])
		}
		n = max(n, 1) // a text event carried something
		t0, r0 = t1, r1
		if i == 0 {
			et.First = n
		}
		et.Max = max(et.Max, n)
		et.Total += n
		et.Hist[eventBucket(n)]++
	}
	return et
}

// batchedFirst is how many tokens a first event carries that the server
// held back: it delivered its first token with batchedFirst − 1 more,
// decoded after it (koboldcpp sleeps 350 ms before its first event). A
// token held back until the next completed its UTF-8 character makes two.
const batchedFirst = 4

// batched reports whether an answer came in batches: its first event
// carried most of it or several tokens (batchedFirst), or its events
// carried two tokens or more on average. Its TTFT is then when the first
// batch came and its ITL the server's delivery cadence, not its decode
// time. osl is the answer's OSL, events its text events, first the first
// event's tokens.
func batched(osl float64, events int, first float64) bool {
	if events == 0 || math.IsNaN(osl) || osl < 2 {
		return false
	}
	return first > osl/2 || first >= batchedFirst || osl >= 2*float64(events)
}

// batchChecks is what the tokens-per-event checks found over the streamed
// answers: how many came in batches, and how many tokens their events
// carried.
type batchChecks struct {
	// Counted counts the streamed answers whose events were counted
	// (EventTokens.Counted), or that had no more tokens than events (one
	// each); Batched those that came in batches, Single those that came in
	// one event of several tokens (no ITL).
	Counted int64 `json:"counted,omitempty"`
	Batched int64 `json:"batched,omitempty"`
	Single  int64 `json:"single_event,omitempty"`
	// Events and Tokens total the events and their tokens; FirstShare
	// sums each batched answer's first-event share of its tokens.
	Events     int64   `json:"events,omitempty"`
	Tokens     int64   `json:"tokens,omitempty"`
	FirstShare float64 `json:"first_share,omitempty"`
	// Max is the most tokens one event carried.
	Max int64 `json:"max,omitempty"`
	// Hist counts the events by tokens carried (eventBuckets).
	Hist [eventHistLen]int64 `json:"hist"`
}

// add folds one successful streamed record's values in.
func (b *batchChecks) add(r *Record, v *Values) {
	if !r.Streamed || len(r.TokenNs) == 0 || math.IsNaN(v.OSL) || r.UsageChunks > 0 {
		return
	}
	et := &v.Events
	if !et.Counted {
		if v.OSL > float64(len(r.TokenNs)) {
			return // more tokens than events, and nothing counted them
		}
		// One token an event.
		b.Counted++
		n := int64(len(r.TokenNs))
		b.Events += n
		b.Tokens += n
		b.Hist[0] += n
		b.Max = max(b.Max, 1)
		return
	}
	b.Counted++
	b.Events += int64(len(r.TokenNs))
	b.Tokens += int64(et.Total)
	b.Max = max(b.Max, int64(et.Max))
	for i, n := range et.Hist {
		b.Hist[i] += int64(n)
	}
	if v.Batched {
		b.Batched++
		b.FirstShare += float64(et.First) / float64(et.Total)
		if len(r.TokenNs) == 1 {
			b.Single++
		}
	}
}

// merge folds o in.
func (b *batchChecks) merge(o *batchChecks) {
	b.Counted += o.Counted
	b.Batched += o.Batched
	b.Single += o.Single
	b.Events += o.Events
	b.Tokens += o.Tokens
	b.FirstShare += o.FirstShare
	b.Max = max(b.Max, o.Max)
	for i := range b.Hist {
		b.Hist[i] += o.Hist[i]
	}
}

// valid checks counts read from outside.
func (b *batchChecks) valid() error {
	counts := []int64{b.Counted, b.Batched, b.Single, b.Events, b.Tokens, b.Max}
	counts = append(counts, b.Hist[:]...)
	for _, n := range counts {
		if n < 0 || n > maxCount {
			return fmt.Errorf("batch checks: a count of %d", n)
		}
	}
	if b.Batched > b.Counted || b.Single > b.Batched || math.IsNaN(b.FirstShare) || b.FirstShare < 0 || b.FirstShare > float64(b.Batched) {
		return fmt.Errorf("batch checks: %d batched, %d single of %d, first share %g", b.Batched, b.Single, b.Counted, b.FirstShare)
	}
	return nil
}

// isBatched reports whether the server batched its tokens: at least half
// of the answers counted came in batches.
func (b *batchChecks) isBatched() bool {
	return b.Batched > 0 && 2*b.Batched >= b.Counted
}

// TokensPerEvent is the tokens-per-event distribution of a run whose
// server sent its tokens in batches: the exports mark its ITL as the
// server's delivery cadence with it.
type TokensPerEvent struct {
	// Batched and Counted: the answers that came in batches, of those whose
	// events were counted; Single those that came in one event (no ITL).
	Batched, Counted, Single int64
	// Mean is tokens per event over all the events; Max the most one
	// carried; FirstShare the first event's share of a batched answer's
	// tokens, on average (0–1).
	Mean       float64
	Max        int64
	FirstShare float64
	// Hist counts the events by tokens carried: Buckets names them.
	Hist    []int64
	Buckets []string
}

// tokensPerEvent is the run's TokensPerEvent, nil unless the server
// batched.
func (b *batchChecks) tokensPerEvent() *TokensPerEvent {
	if !b.isBatched() {
		return nil
	}
	t := &TokensPerEvent{Batched: b.Batched, Counted: b.Counted, Single: b.Single, Max: b.Max,
		FirstShare: b.FirstShare / float64(b.Batched), Hist: b.Hist[:]}
	if b.Events > 0 {
		t.Mean = float64(b.Tokens) / float64(b.Events)
	}
	for i := range b.Hist {
		t.Buckets = append(t.Buckets, eventBucketName(i))
	}
	return t
}

// BatchedWarning is the caveat for a server that sends its tokens in
// batches: what TTFT and ITL mean for it, with the tokens-per-event
// distribution.
func BatchedWarning(t *TokensPerEvent) string {
	var hist []string
	for i, n := range t.Hist {
		if n > 0 {
			hist = append(hist, fmt.Sprintf("%s: %d", t.Buckets[i], n))
		}
	}
	msg := fmt.Sprintf("the server sends its tokens in batches: %d of %d streamed answers came several tokens an event "+
		"(%.1f tokens an event on average, up to %d; the first event carried %.0f%% of an answer on average; events by tokens carried: %s): "+
		"TTFT is when the first batch was delivered and ITL the server's delivery cadence ((request_latency − TTFT) over the tokens after the first event), not its time per token",
		t.Batched, t.Counted, t.Mean, t.Max, 100*t.FirstShare, strings.Join(hist, ", "))
	switch {
	case t.Single == 1:
		msg += "; 1 answer came in one event and has no ITL"
	case t.Single > 1:
		msg += fmt.Sprintf("; %d answers came in one event and have no ITL", t.Single)
	}
	return msg
}
