package metrics

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// window is how far back the dashboard's "last 10 s" quantiles look.
const window = 10 * time.Second

// timelineSlots bounds the per-second live token counters (a ring: runs
// longer than this keep the most recent slots).
const timelineSlots = 1 << 14

// liveTags are the latency metrics the dashboard shows.
var liveTags = []Tag{TTFT, TTFO, ITL, RequestLatency}

// RecordSink receives every record with its computed values, from the
// shard goroutines (concurrently: it must be safe for that). The per-request
// JSONL export is one.
type RecordSink interface {
	WriteRecord(r *Record, v *Values, good bool)
}

// RecordFlusher is a RecordSink that may hold records back to write many
// at once, each for a bound of its own (the JSONL's hold), so a SIGKILL
// loses the records in flight and at most that bound's. Close calls
// WriteHeld once every shard has ended: it returns with every record
// written.
type RecordFlusher interface {
	RecordSink
	WriteHeld()
}

// Collector owns the metric shards. Workers hand it records; each record
// goes to one shard goroutine by request index, so no lock is shared by
// all workers and each digest has one owner.
type Collector struct {
	shards []*shard
	wg     sync.WaitGroup

	tok      TokenCounter
	counting Counting
	// modelTokenizer: tok is the model's own (WithModelTokenizer).
	modelTokenizer bool
	slos           []SLO
	sinks          []RecordSink
	now            func() int64

	started  [2]atomic.Int64 // by phase
	stage    atomic.Int64
	phase    atomic.Int32
	limit    atomic.Int64
	stageMu  sync.Mutex // guards stageDef: live sessions define stages as they go
	stageDef []StageSummary

	warnMu   sync.Mutex
	warnings []string
	// cut is set once a prompt the server cut was warned of.
	cut atomic.Bool
	// onWarn sees the caveats the collector finds itself (nil: none).
	onWarn func(msg string)
	// load reads the machine's CPU use over the run, for the saturation
	// warning (nil: not measured).
	load func() (MachineLoad, error)

	// final is the state at Close.
	final *State
	// origin is the wall-clock time of the run clock's zero (zero: unknown).
	origin time.Time
	// slice is --slice-duration (0: no timeslices).
	slice time.Duration
	// trim is what the summary's headline numbers cover (WithTrim).
	trim Trim
	// costPerHour is the server's price (0: none), WithCostPerHour.
	costPerHour float64
	// sessions follows the profile's sessions (sessions.go).
	sessions *sessionTracker
	// judge decides whether the server's usage is believable.
	judge *usageJudge
	// overran is set once a response whose believed usage ran past its
	// cap was warned of (Record.UsageOverrun).
	overran atomic.Bool
	// breakdownAll breaks down every successful request's time, its
	// server's parts unknown where it said nothing (WithServerSpans: a
	// run that expects spans shows the requests they missed).
	breakdownAll bool
	// spans, when set, are the server's spans the shards join records to,
	// waiting up to spanWait (spans.go); parkedNow counts the records
	// waiting, joins how they fared; stopLook stops the looking.
	spans     ServerSpans
	spanWait  time.Duration
	parkedNow atomic.Int64
	joins     struct{ Joined, Missed, Unwaited atomic.Int64 }
	stopLook  chan struct{}
	lookDone  chan struct{}
}

// Option configures a Collector.
type Option func(*Collector)

// WithTokenizer counts ISL/OSL with tok instead of usage or SSE events.
func WithTokenizer(tok TokenCounter) Option { return func(c *Collector) { c.tok = tok } }

// WithModelTokenizer says that the tokenizer given to WithTokenizer is
// the model's own (found from the model's name, or named by it), so a gap
// between its counts and the server's is not a wrong tokenizer and the
// summary does not suggest one.
func WithModelTokenizer() Option { return func(c *Collector) { c.modelTokenizer = true } }

// WithGoodput sets the objectives that make a request good.
func WithGoodput(slos []SLO) Option { return func(c *Collector) { c.slos = slos } }

// WithSink adds a sink that sees every record as it completes.
func WithSink(s RecordSink) Option { return func(c *Collector) { c.sinks = append(c.sinks, s) } }

// WithClock sets the run clock (monotonic ns since the run's start) used to
// date snapshots; the load generator shares the same clock.
func WithClock(now func() int64) Option { return func(c *Collector) { c.now = now } }

// WithOrigin gives the wall-clock time of the run clock's zero, so the
// summary can date the profile phase (min_request_timestamp,
// max_response_timestamp) and the state can be merged with others.
func WithOrigin(t time.Time) Option { return func(c *Collector) { c.origin = t } }

// WithShards overrides the shard count (default GOMAXPROCS).
func WithShards(n int) Option {
	return func(c *Collector) {
		if n > 0 {
			c.shards = make([]*shard, n)
		}
	}
}

// WithStages names the stages of a sweep or ramp: mode ("concurrency" or
// "request_rate") and each stage's target.
func WithStages(mode string, values []float64) Option {
	return func(c *Collector) {
		c.stageDef = make([]StageSummary, len(values))
		for i, v := range values {
			c.stageDef[i] = StageSummary{Index: i, Mode: mode, Value: v}
		}
	}
}

// WithStageLabels names the stages WithStages defined (a sweep over
// several parameters: "isl=128, concurrency=4"); give it after WithStages.
func WithStageLabels(labels []string) Option {
	return func(c *Collector) {
		for i := range min(len(labels), len(c.stageDef)) {
			c.stageDef[i].Label = labels[i]
		}
	}
}

// NewCollector starts the shard goroutines. Close stops them.
func NewCollector(opts ...Option) *Collector {
	c := &Collector{sessions: newSessionTracker(), judge: newUsageJudge()}
	for _, o := range opts {
		o(c)
	}
	if c.shards == nil {
		c.shards = make([]*shard, runtime.GOMAXPROCS(0))
	}
	if c.now == nil {
		start := time.Now()
		c.now = func() int64 { return int64(time.Since(start)) }
	}
	for i := range c.shards {
		s := newShard(c)
		c.shards[i] = s
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			s.run()
		}()
	}
	if c.spans != nil {
		c.stopLook, c.lookDone = make(chan struct{}), make(chan struct{})
		go func() {
			defer close(c.lookDone)
			c.lookSpans(c.stopLook)
		}()
	}
	return c
}

func (c *Collector) shard(index int64) *shard {
	return c.shards[uint64(index)%uint64(len(c.shards))]
}

// Started counts a request sent in phase.
func (c *Collector) Started(p Phase) { c.started[p].Add(1) }

// SetPhase tells snapshots which phase is being issued.
func (c *Collector) SetPhase(p Phase) { c.phase.Store(int32(p)) }

// Phase is the phase being issued now.
func (c *Collector) Phase() Phase { return Phase(c.phase.Load()) }

// SetStage tells snapshots which stage is in progress.
func (c *Collector) SetStage(i int) { c.stage.Store(int64(i)) }

// Stage is the stage in progress (SetStage's).
func (c *Collector) Stage() int { return int(c.stage.Load()) }

// SetConcurrency reports the concurrency cap in force (0: unlimited).
func (c *Collector) SetConcurrency(n int) { c.limit.Store(int64(n)) }

// FirstToken reports a request's first token at once, so the live TTFT does
// not wait for a long generation to finish.
func (c *Collector) FirstToken(index int64, p Phase, ttftNs int64) {
	if p != Profile {
		return
	}
	c.shard(index).firstToken(c.now(), ttftNs)
}

// Tokens counts n output tokens (or events) that arrived at atNs, for the
// live throughput chart.
func (c *Collector) Tokens(index int64, atNs int64, n int) {
	s := c.shard(index)
	sec := atNs / int64(time.Second)
	s.tokens[sec%timelineSlots].add(sec, int64(n))
	s.totalTokens.Add(int64(n))
}

// Reasoning notes that reasoning content was seen (the dashboard then shows
// TTFO next to TTFT).
func (c *Collector) Reasoning(index int64) { c.shard(index).reasoning.Store(true) }

// Add hands over a finished record. The collector owns r from now on.
func (c *Collector) Add(r *Record) { c.shard(r.Index).in <- msg{kind: msgRecord, rec: r} }

// Snapshot merges the shards' live state. It is safe to call from any
// goroutine while records flow.
func (c *Collector) Snapshot() Snapshot {
	now := c.now()
	views := make([]*view, len(c.shards))
	for i, s := range c.shards {
		reply := make(chan *view, 1)
		s.in <- msg{kind: msgSnapshot, value: now, reply: reply}
		views[i] = <-reply
	}
	snap := Snapshot{
		Elapsed:     time.Duration(now),
		Phase:       Phase(c.phase.Load()),
		Started:     c.started[Profile].Load(),
		Concurrency: int(c.limit.Load()),
		Stage:       int(c.stage.Load()),
		Run:         map[string]Quantiles{},
		Window:      map[string]Quantiles{},
		Errors:      map[string]int64{},
	}
	run := map[Tag]*dist{}
	win := map[Tag][]float64{}
	reqPerSec := map[int64]int64{}
	lag := newDist()
	readDelay := newHist()
	stages := map[int]*aggregate{}
	var breakdown *breakdownAgg
	var finishedAll int64
	for i, v := range views {
		snap.Finished += v.finished
		finishedAll += v.finishedAll
		snap.Failed += v.failed
		snap.ReasoningSeen = snap.ReasoningSeen || c.shards[i].reasoning.Load()
		for t, d := range v.run {
			if run[t] == nil {
				run[t] = newDist()
			}
			run[t].merge(d)
		}
		for t, xs := range v.window {
			win[t] = append(win[t], xs...)
		}
		for s, n := range v.reqPerSec {
			reqPerSec[s] += n
		}
		for typ, n := range v.errors {
			snap.Errors[typ] += n
		}
		lag.merge(v.lag)
		readDelay.merge(v.readDelay)
		if v.breakdown != nil {
			if breakdown == nil {
				breakdown = v.breakdown
			} else {
				breakdown.merge(v.breakdown)
			}
		}
		for i, a := range v.stages {
			if stages[i] == nil {
				stages[i] = newAggregate()
			}
			stages[i].merge(a)
		}
	}
	snap.InFlight = c.started[Profile].Load() + c.started[Warmup].Load() - finishedAll
	for t, d := range run {
		snap.Run[string(t)] = d.quantiles()
	}
	for t, xs := range win {
		snap.Window[string(t)] = exactQuantiles(xs)
	}
	snap.SchedulerLag = lag.quantiles()
	if readDelay.n > 0 {
		snap.ReadDelay = Quantiles{Count: readDelay.n, Avg: readDelay.mean,
			P50: readDelay.quantile(0.5), P90: readDelay.quantile(0.9), P99: readDelay.quantile(0.99)}
		snap.ReadDelayMax = readDelay.max
	}
	snap.Timeline = c.timeline(now, reqPerSec)
	snap.TimeBreakdown = breakdown.summary()
	for _, i := range slices.Sorted(maps.Keys(stages)) {
		if i < snap.Stage {
			snap.Stages = append(snap.Stages, c.stageSummary(i, stages[i]))
		}
	}
	for _, s := range c.shards {
		snap.OutputTokens += s.totalTokens.Load()
	}
	c.warnMu.Lock()
	snap.Warnings = slices.Clone(c.warnings)
	c.warnMu.Unlock()
	return snap
}

// Warn adds a caveat found while the run goes on (a server running past
// the requested output cap): live snapshots carry it from now on, and the
// summary's Warnings repeat it. A message already given is ignored. Safe
// for concurrent use; not for the hot path (callers warn once).
func (c *Collector) Warn(msg string) {
	c.warnMu.Lock()
	defer c.warnMu.Unlock()
	if !slices.Contains(c.warnings, msg) {
		c.warnings = append(c.warnings, msg)
	}
}

// cutPromptWarning starts the live warning of a prompt the server cut.
const cutPromptWarning = "the server cut a prompt:"

// truncatedLive warns, once per run and while it goes on, that the server
// cut a prompt (the summary counts them all).
func (c *Collector) truncatedLive(sent, server float64) {
	if c.cut.CompareAndSwap(false, true) {
		msg := fmt.Sprintf(cutPromptWarning+" it counted %.0f prompt tokens (usage.prompt_tokens) where surge sent %.0f; the likely cause is its context length (the summary counts such requests)", server, sent)
		c.Warn(msg)
		if c.onWarn != nil {
			c.onWarn(msg)
		}
	}
}

// usageOverrun gives, once per run, the generator's warning that a
// response's usage ran past its cap, once that usage is believed.
func (c *Collector) usageOverrun(msg string) {
	if c.overran.CompareAndSwap(false, true) {
		c.Warn(msg)
		if c.onWarn != nil {
			c.onWarn(msg)
		}
	}
}

// maxTimeline bounds the points a snapshot carries.
const maxTimeline = 600

func (c *Collector) timeline(now int64, reqPerSec map[int64]int64) []Point {
	last := now / int64(time.Second) // the second in progress is partial: leave it out
	first := max(0, last-maxTimeline)
	first = max(first, last-timelineSlots+1)
	pts := make([]Point, 0, last-first)
	for sec := first; sec < last; sec++ {
		var toks int64
		for _, s := range c.shards {
			toks += s.tokens[sec%timelineSlots].get(sec)
		}
		pts = append(pts, Point{Second: int(sec), OutputTokens: float64(toks), Requests: float64(reqPerSec[sec])})
	}
	return pts
}

func (c *Collector) stageSummary(i int, a *aggregate) StageSummary {
	return stageSummary(c.stageDefAt(i), a, nil)
}

// stageSummary fills a stage's definition (index, mode, value) with the
// statistics of its records.
func stageSummary(s StageSummary, a *aggregate, e *rowSet) StageSummary {
	s.RequestCount = a.count
	s.ErrorRequestCount = a.errors
	s.TTFT = a.dist(TTFT).distribution("ms")
	s.ITL = a.dist(ITL).distribution("ms")
	s.Latency = a.dist(RequestLatency).distribution("ms")
	s.DurationSec = a.durationSec()
	if s.DurationSec > 0 {
		s.OutputTokenThroughput = a.outputTokens / s.DurationSec
		s.RequestThroughput = float64(a.count) / s.DurationSec
	}
	stageIntervals(&s, a, e)
	s.TimeBreakdown = a.breakdown.summary()
	s.Little = littleOf(a, s.Latency.P99, s.TimeBreakdown, s.RequestThroughput)
	return s
}

// Close waits for every record handed over so far, stops the shards and
// returns the final summary. No method may be called after Close.
func (c *Collector) Close() *Summary {
	if c.stopLook != nil {
		close(c.stopLook)
		<-c.lookDone // it sends to the shards: done before they close
	}
	for _, s := range c.shards {
		close(s.in)
	}
	c.wg.Wait()
	for _, sink := range c.sinks {
		if f, ok := sink.(RecordFlusher); ok {
			f.WriteHeld()
		}
	}
	c.final = c.collect()
	s := c.final.Summary()
	s.Timeslices = c.timeslices()
	s.Sessions = c.sessions.summary()
	if c.spans != nil {
		s.SpanJoins = &SpanJoins{Joined: c.joins.Joined.Load(), Missed: c.joins.Missed.Load(), Unwaited: c.joins.Unwaited.Load()}
	}
	if c.load != nil {
		if l, err := c.load(); err == nil {
			s.AttributeLoad(l)
		}
	}
	c.warnMu.Lock()
	live := slices.Clone(c.warnings)
	c.warnMu.Unlock()
	if s.UsageDistrust != nil {
		// A prompt cut was the server's usage talking.
		live = slices.DeleteFunc(live, func(w string) bool { return strings.HasPrefix(w, cutPromptWarning) })
	}
	s.Warnings = append(live, s.Warnings...)
	return s
}
