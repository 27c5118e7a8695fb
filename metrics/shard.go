package metrics

import (
	"math"
	"slices"
	"sync/atomic"
	"time"
)

type msgKind uint8

const (
	msgRecord msgKind = iota
	msgSnapshot
	msgSample
	// msgLook asks the shard to look for its parked records' spans.
	msgLook
)

// msg is what workers and the collector send a shard.
type msg struct {
	kind  msgKind
	rec   *Record
	value int64
	reply chan *view
	// sample receives a msgSample's rows.
	sample chan sampleReply
}

// shardQueue is deep enough that bursts of completions never block a
// worker for long; a full queue blocks (records are never dropped).
const shardQueue = 4096

// aggKey identifies one aggregate: a phase and a stage.
type aggKey struct {
	phase Phase
	stage int
}

// sample is one windowed value for the dashboard's last-10-s quantiles.
type sample struct {
	at  int64
	tag Tag
	v   float64
}

// shard owns its aggregates: only its goroutine touches them.
type shard struct {
	c  *Collector
	in chan msg

	aggs map[aggKey]*aggregate
	// slices holds the profile requests by wall-clock window, with
	// --slice-duration.
	slices   map[int64]*sliceAgg
	liveTTFT *dist
	recent   []sample
	// pruneAt is the length of recent at which a record prunes it (prune).
	pruneAt int
	// finishedBySec counts completions per second for the timeline.
	finishedBySec map[int64]int64
	finished      int64 // profile phase
	finishedAll   int64 // every phase, for the in-flight count
	failed        int64
	errTypes      map[string]int64

	// Written by workers directly: atomics, one per shard.
	tokens      [timelineSlots]tokenSlot
	totalTokens atomic.Int64
	reasoning   atomic.Bool

	// firsts are first-token times workers reported and the shard has not
	// taken in yet. It takes them in with its next message (a record or a
	// snapshot, 4 a second while anything shows them) instead of waking
	// for each: one wake-up less per request.
	firsts firstRing

	// keep holds the successful profile requests' exact headline values.
	keep *rowKeeper

	// parked are the records waiting for their server spans (spans.go);
	// spansSeen the spans received at the last look.
	parked    []parked
	spansSeen uint64

	// held is the run's first record with usage, held back until the
	// judge has a second to compare it with, so that its counts follow
	// the verdict (nil: none held).
	held *heldRecord
}

// heldRecord is a record held back for the judge, its output counted.
type heldRecord struct {
	r  *Record
	tc tokCounts
}

func newShard(c *Collector) *shard {
	s := &shard{
		c: c, in: make(chan msg, shardQueue),
		aggs: map[aggKey]*aggregate{}, slices: map[int64]*sliceAgg{}, liveTTFT: newDist(),
		finishedBySec: map[int64]int64{}, errTypes: map[string]int64{},
		keep: newRowKeeper(maxRows / len(c.shards)),
	}
	s.firsts.init()
	s.pruneAt = pruneEvery
	return s
}

func (s *shard) run() {
	defer s.release()
	for m := range s.in {
		s.takeFirsts()
		if s.held != nil && s.c.judge.settled() {
			s.release()
		}
		switch m.kind {
		case msgRecord:
			s.record(m.rec)
		case msgSnapshot:
			m.reply <- s.view(m.value)
		case msgSample:
			m.sample <- s.sample()
		}
		s.lookParked(false)
	}
	s.lookParked(true)
}

// firstToken queues a request's time to first token for the live TTFT,
// without waiting: on a full queue the live sample is dropped (the record
// brings the exact one).
func (s *shard) firstToken(at, ttftNs int64) { s.firsts.put(at, ttftNs) }

// takeFirsts takes in the queued first tokens.
func (s *shard) takeFirsts() {
	for {
		at, ttft, ok := s.firsts.take()
		if !ok {
			return
		}
		v := float64(ttft) / nsPerMs
		s.liveTTFT.add(v)
		s.recent = append(s.recent, sample{at: at, tag: TTFT, v: v})
	}
}

func (s *shard) agg(k aggKey) *aggregate {
	a := s.aggs[k]
	if a == nil {
		a = newAggregate()
		s.aggs[k] = a
	}
	return a
}

// record takes a finished request: joined to its server span, or parked
// until the span comes (spans.go), then processed.
func (s *shard) record(r *Record) {
	if s.joinSpan(r) {
		s.process(r)
	}
}

// process judges a record's usage and takes it in, or holds it back: the
// run's first record with usage waits (in its shard) for the judge to
// compare it with a second.
func (s *shard) process(r *Record) {
	var tc tokCounts
	var distrust *UsageDistrust
	if r.Err == nil {
		tc = countOutput(r, s.c.tok)
		o, ok := s.c.judge.observe(r, tc, s.c.tok)
		switch {
		case !ok && r.Usage.Present:
			distrust = s.c.judge.distrust()
		case ok:
			var settled bool
			distrust, settled = s.c.judge.judge(&o)
			if !settled && s.held == nil {
				s.held = &heldRecord{r, tc}
				return
			}
		}
	}
	s.release()
	s.take(r, tc, distrust)
}

// release takes in the held record, if any, under the verdict so far.
func (s *shard) release() {
	if h := s.held; h != nil {
		s.held = nil
		s.take(h.r, h.tc, s.c.judge.distrust())
	}
}

// take computes a record's values, its output counted (tc), its usage
// judged (distrust), and folds it into the shard's aggregates, windows
// and sinks.
func (s *shard) take(r *Record, tc tokCounts, distrust *UsageDistrust) {
	var v Values
	good := false
	if r.Err == nil {
		v = compute(r, s.c.tok, s.c.counting, tc, distrust)
		v.Parts = BreakdownOf(r, s.c.breakdownAll)
		good = Good(&v, s.c.slos)
		if distrust == nil && r.UsageOverrun != "" {
			s.c.usageOverrun(r.UsageOverrun)
		}
	} else {
		v = ComputeFailed(r, s.c.tok)
	}
	a := s.agg(aggKey{r.Phase, r.Stage})
	a.little.noteCap(s.c.limit.Load())
	a.add(r, &v, good)
	if r.Err == nil {
		if r.Phase == Profile {
			s.keep.add(rowOf(r, &v))
		}
		a.checks.add(r, &v, s.c.tok)
		if v.Truncated && r.Phase == Profile {
			s.c.truncatedLive(sentLength(r, s.c.tok), float64(r.Usage.PromptTokens))
		}
	}
	if s.c.slice > 0 && r.Phase == Profile {
		k := s.c.sliceOf(r.SentNs)
		a := s.slices[k]
		if a == nil {
			a = newSliceAgg()
			s.slices[k] = a
		}
		a.add(r, &v, good)
	}
	s.finishedAll++
	if len(s.recent) >= s.pruneAt {
		s.prune(s.c.now())
	}
	if r.Phase == Profile {
		s.c.sessions.add(r, &v)
	}
	for _, sink := range s.c.sinks {
		sink.WriteRecord(r, &v, good)
	}
	if r.Phase != Profile {
		return
	}
	s.finished++
	s.finishedBySec[r.EndNs/int64(time.Second)]++
	if r.Err != nil {
		s.failed++
		s.errTypes[r.Err.Type]++
		return
	}
	for _, t := range liveTags {
		if t == TTFT {
			continue // windowed at first token
		}
		if x := v.Get(t); !math.IsNaN(x) {
			s.recent = append(s.recent, sample{at: r.EndNs, tag: t, v: x})
		}
	}
}

// view is a shard's contribution to a snapshot: copies, never references
// to state the shard goroutine keeps changing.
type view struct {
	run         map[Tag]*dist
	lag         *dist
	readDelay   *hist
	window      map[Tag][]float64
	reqPerSec   map[int64]int64
	errors      map[string]int64
	stages      map[int]*aggregate
	breakdown   *breakdownAgg // the profile's, copied (nil: none yet)
	finished    int64
	finishedAll int64
	failed      int64
}

func (s *shard) view(now int64) *view {
	v := &view{
		run: map[Tag]*dist{}, lag: newDist(), readDelay: newHist(), window: map[Tag][]float64{},
		reqPerSec: make(map[int64]int64, len(s.finishedBySec)),
		errors:    make(map[string]int64, len(s.errTypes)),
		stages:    map[int]*aggregate{},
		finished:  s.finished, finishedAll: s.finishedAll, failed: s.failed,
	}
	v.run[TTFT] = s.liveTTFT.clone()
	for k, a := range s.aggs {
		if k.phase != Profile {
			continue
		}
		for _, t := range liveTags {
			if t == TTFT {
				continue
			}
			if d := a.dists[t]; d != nil {
				if v.run[t] == nil {
					v.run[t] = newDist()
				}
				v.run[t].merge(d)
			}
		}
		if d := a.dists[lagTag]; d != nil {
			v.lag.merge(d)
		}
		v.readDelay.merge(a.readDelay)
		if a.breakdown != nil {
			if v.breakdown == nil {
				v.breakdown = newBreakdownAgg()
			}
			v.breakdown.merge(a.breakdown)
		}
		if k.stage < int(s.c.stage.Load()) {
			c := newAggregate()
			c.merge(a)
			v.stages[k.stage] = c
		}
	}
	s.prune(now)
	// A live view needs no more than a few thousand samples per metric:
	// beyond that, take an even stride (sorting every one of 2,000 req/s ×
	// 10 s four times a second would cost the run more than the dashboard).
	counts := map[Tag]int{}
	for _, x := range s.recent {
		counts[x.tag]++
	}
	seen := map[Tag]int{}
	for _, x := range s.recent {
		stride := (counts[x.tag] + windowSamples - 1) / windowSamples
		if seen[x.tag]%stride == 0 {
			v.window[x.tag] = append(v.window[x.tag], x.v)
		}
		seen[x.tag]++
	}
	for sec, n := range s.finishedBySec {
		v.reqPerSec[sec] = n
	}
	for t, n := range s.errTypes {
		v.errors[t] = n
	}
	return v
}

// prune drops the windowed samples older than the window, and sets when
// a record prunes next: pruneEvery samples later, so that at any rate the
// cost is a binary search and a copy every pruneEvery samples, never one
// a record (the window holds 10 s of samples: at 2,000 req/s, 80,000).
// recent is appended in roughly time order, so a binary search finds the
// cut.
func (s *shard) prune(now int64) {
	cut := now - int64(window)
	i, _ := slices.BinarySearchFunc(s.recent, cut, func(x sample, t int64) int {
		switch {
		case x.at < t:
			return -1
		case x.at > t:
			return 1
		}
		return 0
	})
	if i > 0 {
		s.recent = append(s.recent[:0], s.recent[i:]...)
	}
	s.pruneAt = len(s.recent) + pruneEvery
}

// windowSamples caps each metric's windowed samples per shard in a view.
const windowSamples = 1024

// pruneEvery is how many windowed samples a shard gains between prunes
// when no one takes snapshots (--ui none).
const pruneEvery = 1 << 14

// tokenSlot counts one second's live output tokens in a ring that wraps
// after timelineSlots seconds: the slot remembers its second, and the first
// worker into a new second resets it (a race there can drop a few counts:
// live counters may be approximate, records never are).
type tokenSlot struct {
	sec atomic.Int64
	n   atomic.Int64
}

func (s *tokenSlot) add(sec, n int64) {
	if s.sec.Load() != sec && s.sec.Swap(sec) != sec {
		s.n.Store(0)
	}
	s.n.Add(n)
}

func (s *tokenSlot) get(sec int64) int64 {
	if s.sec.Load() != sec {
		return 0
	}
	return s.n.Load()
}

// exactQuantiles summarises a small window of values exactly.
func exactQuantiles(xs []float64) Quantiles {
	if len(xs) == 0 {
		return Quantiles{}
	}
	slices.Sort(xs)
	var sum float64
	for _, x := range xs {
		sum += x
	}
	q := func(p float64) float64 { return xs[int(math.Ceil(p*float64(len(xs))))-1] }
	return Quantiles{Count: int64(len(xs)), Avg: sum / float64(len(xs)), P50: q(0.5), P90: q(0.9), P99: q(0.99)}
}
