// Package loadgen drives load: it issues requests when a schedule and a
// concurrency cap allow, one goroutine per in-flight request, times every
// streamed event as it is read, and hands finished records to the metrics
// collector.
package loadgen

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/internal/outbound"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/h1"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/loadgen/wire"
	"github.com/surgebench/surge/metrics"
)

// Stage is one consecutive part of a run: a warmup, a single profile, or
// one step of a sweep.
type Stage struct {
	Phase metrics.Phase
	// Limit caps requests in flight over the stage's elapsed time (nil or
	// 0: unlimited, which needs a Schedule).
	Limit schedule.Limit
	// Schedule gives intended send times from the stage's start; nil sends
	// whenever the cap allows (closed loop).
	Schedule schedule.Schedule
	// Count stops issuing after this many requests (0: no count limit).
	Count int
	// Duration stops issuing after this long (0: no time limit).
	Duration time.Duration
	// Conversation picks the conversation for the stage's i-th credit; nil
	// takes the dataset's conversations round-robin across the run.
	Conversation func(i int) int
	// Pick, when set (and Conversation is not), maps the run's i-th session
	// (counted across its stages, as round robin counts them) to a
	// conversation: a dataset sampling strategy.
	Pick func(i int) int
	// SessionCount stops issuing after this many sessions (0: no session
	// limit), each sent whole unless Count ends it first.
	SessionCount int
	// Users, when set, replaces Schedule and Limit: each of its users runs
	// multi-turn sessions back to back on the plan's pacing (user-centric
	// mode).
	Users *schedule.UserPlan
	// Replay marks a trace replay on the trace's own clock: the later
	// turns of an open-loop conversation (datasets.Conversation.OpenLoop)
	// keep their recorded spacing from its first turn.
	Replay bool
	// Drain makes the next stage wait for a warmup's requests, each given
	// up to DrainGrace after issuing ended before it is cancelled (a
	// warmup otherwise flows into the stage after it).
	Drain      bool
	DrainGrace time.Duration
	// Admission makes Limit an admission ceiling for Schedule's session
	// starts (session arrivals): a start that finds it reached is turned
	// away and counted (RejectedSessions), not queued.
	Admission bool
	// Lanes, when set, replaces the other ways of issuing: agentic
	// replay's lanes (lanes.go).
	Lanes *LanePart
}

// Generator runs stages against one endpoint.
type Generator struct {
	// endStage ends the profile stage issuing now (EndStage).
	endStage atomic.Pointer[context.CancelFunc]
	urls     []string // request i goes to urls[i mod len]
	// afterResponse sees each successful record before the Recorder
	// (WithAfterResponse; nil: none).
	afterResponse func(ctx context.Context, rec *metrics.Record)
	more          []string // WithTargets' servers, resolved by New
	ep            *endpoint.Endpoint
	ds            *datasets.Dataset
	plan          *turnTable // the dataset's turn counts, for planning
	col           Recorder
	transport     http.RoundTripper
	client        *http.Client
	fresh         *http.Client // client without keep-alives, for connection retries
	headers       http.Header
	timeout       time.Duration
	grace         time.Duration
	hardStop      context.Context // done: in-flight requests are cancelled at once (nil: never)
	bodies        BodySink
	raw           bool // capture requests and responses (WithRawCapture)
	chatISL       bool // records carry the chat messages (WithChatMessages)
	onWarn        func(msg string)
	// overran is set once a response ran past its output cap (warned).
	overran atomic.Bool
	secrets []string
	// noCapGuard lets responses run past CapGuardFactor × their cap.
	noCapGuard bool
	// follow follows redirects (the outbound policy's rule); redirected
	// is set once one left the origin (warned).
	follow     bool
	redirected atomic.Bool
	// noRetry turns off send's retry on a fresh connection; resent counts
	// the retries.
	noRetry bool
	resent  atomic.Int64
	// maxResponse bounds a response body's bytes.
	maxResponse int64
	start       time.Time
	now         func() int64
	// stamps is the token timestamp source; clock maps kernel stamps onto
	// the run clock.
	stamps Timestamps
	clock  *wire.Clock

	// failThreshold aborts the run once this fraction of at least
	// failMinRecords finished requests failed (0: never).
	failThreshold  float64
	failMinRecords int64
	finished       atomic.Int64
	failed         atomic.Int64
	abort          context.CancelFunc
	aborted        atomic.Bool

	nextIndex atomic.Int64 // request index across the run
	// ahead is the bytes of the bodies the lookahead built and the
	// dispatcher has not handed out yet.
	ahead atomic.Int64
	// nextSession numbers the conversation runs as they start (session_num).
	nextSession atomic.Int64
	// issued counts requests handed to their goroutines; nextIndex lags it
	// until each goroutine runs, so session counts read this one.
	issued atomic.Int64
	// nextConv is where a live session's next stage starts in the dataset
	// (planned stages start where the plan says: firstConversations).
	nextConv      atomic.Int64
	shard         Shard
	inFlight      atomic.Int64
	released      chan struct{} // a slot freed (capacity 1: a wake-up, not a count)
	reuse         ConnectionReuse
	sessionHeader string // canonical; "" sends none
	// cancel chooses the requests cancelled on purpose (nil: none).
	cancel *cancelPlan
	// prefill holds a slot per request not yet past its first token
	// (nil: no cap); inPrefill counts those requests, capped or not.
	prefill chan struct{}
	// warmPrefill, when set, caps the warmup's requests in prefill
	// instead of prefill.
	warmPrefill chan struct{}
	// prefillRamp, when set, opens prefill's held slots over the ramp; it
	// starts with the profile (rampOnce).
	prefillRamp func(ctx context.Context)
	rampOnce    sync.Once
	// warmRamp, when set, opens warmPrefill's held slots as the warmup
	// goes (warmOnce).
	warmRamp func(ctx context.Context)
	warmOnce sync.Once
	hooks    StageHooks
	// perSession, when set, gives each session its conversation
	// (WithSessionConversation); curStage is the stage being issued.
	perSession func(c *datasets.Conversation, key string) *datasets.Conversation
	curStage   atomic.Int64
	inPrefill  atomic.Int64
	// streams reuses what reading a response needs (the SSE reader and its
	// 64 KiB buffer, the decoder, the text buffers) across requests.
	streams sync.Pool
	// agentic is the tool loop's and session arrivals' state (tools.go);
	// limits bound what a session may grow to (sessionlimits.go).
	agentic agentic
	// auth, when set, gives each request its credentials (credentials.go).
	auth   Authorizer
	limits SessionLimits
}

// Option configures a Generator.
type Option func(*Generator)

// WithTransport sets the transport requests go through (default:
// NewTransport's). The client over it is the outbound policy's, with the
// generator's redirect settings.
func WithTransport(rt http.RoundTripper) Option { return func(g *Generator) { g.transport = rt } }

// WithHeaders adds headers to every request (API keys included: they are
// never logged or exported).
func WithHeaders(h http.Header) Option { return func(g *Generator) { g.headers = h } }

// WithRequestTimeout bounds each request, the whole stream included.
func WithRequestTimeout(d time.Duration) Option { return func(g *Generator) { g.timeout = d } }

// WithGracePeriod is how long in-flight requests may finish once issuing
// stopped (duration reached or interrupted) before they are cancelled.
func WithGracePeriod(d time.Duration) Option { return func(g *Generator) { g.grace = d } }

// WithAbort cuts the grace period short: once ctx is done, in-flight
// requests are cancelled at once (a second Ctrl-C), and still become
// records. Cancelling Run's own context only stops issuing.
func WithAbort(ctx context.Context) Option { return func(g *Generator) { g.hardStop = ctx } }

// BodySink sees every request body a run sends, session by session (for
// inputs.json). Its methods are called from worker goroutines; the calls
// of one session come from one goroutine, in turn order.
type BodySink interface {
	// Body is the request body of the session's turn-th request (its
	// turn of conversation, or past it when a tool loop answered calls
	// with requests of its own), sent in session (the run's sessions are
	// numbered from 0 as they start) of profile stage stage (a warmup's
	// sessions count as stage 0's).
	Body(session int64, stage int, conversation string, turn int, body []byte)
	// EndSession says session, of stage, sends nothing more.
	EndSession(session int64, stage int)
}

// WithBodySink sends every request body to s.
func WithBodySink(s BodySink) Option { return func(g *Generator) { g.bodies = s } }

// WithRawCapture keeps each request's body and every event of its
// response in its record (metrics.Record.Raw), for --export-level raw.
func WithRawCapture() Option { return func(g *Generator) { g.raw = true } }

// WithWarning sees caveats the generator finds while the run goes on, once
// each: a server running past the requested output cap. It is called from
// worker goroutines.
func WithWarning(f func(msg string)) Option { return func(g *Generator) { g.onWarn = f } }

// WithFailureThreshold stops issuing (as an interrupt would) once more
// than frac of the finished requests failed, counted only after minRecords
// finished. Run then returns ErrFailureThreshold.
func WithFailureThreshold(frac float64, minRecords int) Option {
	return func(g *Generator) { g.failThreshold, g.failMinRecords = frac, int64(minRecords) }
}

// ErrFailureThreshold reports a run stopped by --failed-request-threshold.
var ErrFailureThreshold = errors.New("failed-request threshold crossed")

// WithSecrets names values (API keys, auth headers) that must never reach
// a record: a server that echoes one in an error message has it replaced
// by "<redacted>".
func WithSecrets(secrets ...string) Option {
	return func(g *Generator) {
		for _, s := range secrets {
			if len(s) >= 4 { // shorter ones would redact ordinary words
				g.secrets = append(g.secrets, s)
			}
		}
	}
}

// WithTargets spreads the requests over more servers, round-robin as
// AIPerf's --url list does: request i (warmup included) goes to the i-th
// of New's base followed by these, modulo their number.
func WithTargets(bases ...string) Option { return func(g *Generator) { g.more = bases } }

// WithAfterResponse calls f with each successful request's record once
// its response ended, on the request's goroutine, before the record goes
// to the Recorder: a server whose account of the request is asked apart
// (koboldcpp's /api/extra/perf, one request at a time) fills
// rec.Server there. f may take its time: the request's slot is held.
func WithAfterResponse(f func(ctx context.Context, rec *metrics.Record)) Option {
	return func(g *Generator) { g.afterResponse = f }
}

// WithStart sets the run's time origin (default: when New is called); the
// collector must use the same clock.
func WithStart(t time.Time) Option { return func(g *Generator) { g.start = t } }

// New prepares a generator for base, a server URL with or without scheme
// and path ("127.0.0.1:8000", "http://host/v1"), that reports to col.
func New(base string, ep *endpoint.Endpoint, ds *datasets.Dataset, col Recorder, opts ...Option) (*Generator, error) {
	u, err := RequestURL(base, ep.Path())
	if err != nil {
		return nil, err
	}
	if ds == nil || ds.Len() == 0 {
		return nil, errors.New("dataset has no conversations")
	}
	g := &Generator{urls: []string{u}, ep: ep, ds: ds, col: col, timeout: 10 * time.Minute, grace: 30 * time.Second,
		released: make(chan struct{}, 1), start: time.Now(), maxResponse: DefaultMaxResponseBytes,
		limits: DefaultSessionLimits()}
	for _, o := range opts {
		o(g)
	}
	for _, b := range g.more {
		u, err := RequestURL(b, ep.Path())
		if err != nil {
			return nil, err
		}
		g.urls = append(g.urls, u)
	}
	if g.transport == nil {
		g.transport = NewTransport(0)
	}
	g.client = g.newClient(g.transport)
	g.fresh = g.freshClient()
	if g.reuse == ReuseNever {
		g.client = g.fresh
	}
	g.plan = newTurnTable(ds)
	start := g.start
	g.now = func() int64 { return int64(time.Since(start)) }
	g.clock = wire.NewClock(start)
	return g, nil
}

// ClockDrift reports how far the wall clock moved against the run clock
// since the run started (a step would shift kernel stamps by as much).
func (g *Generator) ClockDrift() time.Duration { return g.clock.Check() }

// Now returns the run clock: monotonic nanoseconds since the start.
func (g *Generator) Now() int64 { return g.now() }

// NewTransport returns the shared transport: keep-alive connections for
// every concurrent stream (the default of 2 idle per host reconnects
// constantly), connections dialled through wire, whose reads carry the
// kernel's receive time, and each exchange on its request's own goroutine
// (h1: no hand-offs between net/http's per-connection goroutines). With
// --timestamps read the stamps still measure the client's read delay; they
// just do not time the tokens. https is h1's too (TLS sits above the
// stamped connection and keeps working): net/http's transport closes a
// connection whose body was closed before its end, which a stream read to
// [DONE] is when the chunked terminator comes in a later TLS record, so
// every request paid a handshake. Proxied requests go through the outbound
// policy's *http.Transport dialling the same way (no transparent gzip: it
// would hide when bytes arrive; HTTP/1.1 only). Every request carries
// surge's User-Agent, written by h1 with the other headers.
func NewTransport(concurrency int) *h1.Transport {
	dial := wire.NewDialer(true).DialContext
	idle := max(concurrency, 1024)
	fb := outbound.NewTransport(outbound.TransportOptions{Dial: dial, MaxIdlePerHost: idle})
	return &h1.Transport{Dial: dial, MaxIdlePerHost: idle, Proxy: http.ProxyFromEnvironment, Fallback: fb,
		TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12}, UserAgent: outbound.UserAgent()}
}

// RequestURL joins a --url value and the endpoint's path (Endpoint.Path).
// A URL that already ends in the path is kept; one ending in /v1 gets the
// rest of a /v1/... path. A query string in either stays a query string
// (Azure's ?api-version=…), the endpoint's after the URL's, and escapes in
// either path are kept as they were written (a Bedrock model id's %3A).
func RequestURL(base, full string) (string, error) {
	u, err := BaseURL(base)
	if err != nil {
		return "", err
	}
	full, query, _ := strings.Cut(full, "?")
	path := strings.TrimRight(u.EscapedPath(), "/")
	switch {
	case strings.HasSuffix(path, full):
	case strings.HasSuffix(path, "/v1") && strings.HasPrefix(full, "/v1/"):
		path += strings.TrimPrefix(full, "/v1")
	default:
		path += full
	}
	plain, err := url.PathUnescape(path)
	if err != nil {
		return "", fmt.Errorf("request path %q: %w", path, err)
	}
	u.Path, u.RawPath = plain, path
	switch {
	case query == "" || u.RawQuery == query || strings.HasSuffix(u.RawQuery, "&"+query):
	case u.RawQuery == "":
		u.RawQuery = query
	default:
		u.RawQuery += "&" + query
	}
	return u.String(), nil
}

// Run issues the stages one after another. Cancelling ctx stops issuing;
// in-flight requests then get the grace period before they are cancelled.
// Run returns once every issued request has become a record.
func (g *Generator) Run(ctx context.Context, stages []Stage) error {
	ctx, g.abort = context.WithCancel(ctx)
	defer g.abort()
	// Requests run under their own context so an interrupt can drain them
	// instead of cutting them off. A warmup flows straight into the stage
	// after it (that is what warming up is for: the profile starts in the
	// steady state, not with every slot opening at once), so the two share
	// one drain.
	var grp *drainGroup
	var hookErrs []error
	firsts := g.plan.firsts(stages)
	for i, st := range stages {
		if ctx.Err() != nil {
			break
		}
		profileStage := 0
		if st.Phase == metrics.Profile {
			profileStage = i - countWarmup(stages[:i])
			if err := g.beforeStage(ctx, profileStage); err != nil {
				hookErrs = append(hookErrs, err)
				break
			}
		}
		if grp == nil {
			grp = newDrainGroup(ctx)
		}
		if st.Phase == metrics.Profile {
			g.startPrefillRamp(ctx)
		} else {
			g.startWarmupRamp(ctx)
		}
		g.col.SetPhase(st.Phase)
		g.col.SetStage(profileStage)
		var stopped bool
		if st.Lanes != nil {
			stopped = g.issueLanes(ctx, grp.ctx, &grp.wg, st, profileStage)
		} else if st.Users != nil {
			stopped = g.issueUsers(ctx, grp.ctx, &grp.wg, st, profileStage, firsts[i])
		} else {
			stopped = g.issue(ctx, grp.ctx, &grp.wg, st, profileStage, firsts[i])
		}
		// A warmup its own duration ended flows on too; an interrupt drains.
		if st.Phase == metrics.Warmup && (!stopped || ctx.Err() == nil) && i+1 < len(stages) {
			drain, grace := g.warmupDrain(st)
			if !drain {
				continue
			}
			g.drainWithin(ctx, grp, grace)
			grp.cancel()
			grp = nil
			continue
		}
		// Each profile stage drains before the next so its statistics are
		// its own.
		g.drain(ctx, &grp.wg, grp.cancel, stopped)
		grp.cancel()
		grp = nil
		if st.Phase == metrics.Profile {
			if err := g.afterStage(ctx, profileStage); err != nil {
				hookErrs = append(hookErrs, err)
			}
		}
	}
	if grp != nil { // interrupted right after a warmup
		g.drain(ctx, &grp.wg, grp.cancel, true)
		grp.cancel()
	}
	g.col.SetStage(len(stages) - countWarmup(stages))
	if g.aborted.Load() {
		return errors.Join(append([]error{fmt.Errorf("%w: %d of %d finished requests failed (more than %.0f%%)",
			ErrFailureThreshold, g.failed.Load(), g.finished.Load(), 100*g.failThreshold)}, hookErrs...)...)
	}
	return errors.Join(hookErrs...)
}

// count tallies a finished request and aborts the run when failures cross
// the threshold.
func (g *Generator) count(failed bool) {
	n := g.finished.Add(1)
	f := g.failed.Load()
	if failed {
		f = g.failed.Add(1)
	}
	if g.failThreshold > 0 && n >= g.failMinRecords && float64(f) > g.failThreshold*float64(n) && !g.aborted.Swap(true) {
		g.abort()
	}
}

// drainGroup is the requests of the stages that drain together, under one
// context that outlives an interrupt by the grace period.
type drainGroup struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newDrainGroup(parent context.Context) *drainGroup {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	return &drainGroup{ctx: ctx, cancel: cancel}
}

func countWarmup(st []Stage) int {
	n := 0
	for _, s := range st {
		if s.Phase == metrics.Warmup {
			n++
		}
	}
	return n
}

// drain waits for in-flight requests. Once issuing was cut short (or is
// interrupted while draining) they get the grace period, then are cancelled.
func (g *Generator) drain(ctx context.Context, wg *sync.WaitGroup, cancel context.CancelFunc, stopped bool) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	if !stopped {
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
	}
	var abort <-chan struct{} // nil: never
	if g.hardStop != nil {
		abort = g.hardStop.Done()
	}
	t := time.NewTimer(g.grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		cancel()
		<-done
	case <-abort:
		cancel()
		<-done
	}
}

// startStage is how every stage begins: its clock origin and a context
// that ends with the stage's duration or EndStage (cancel releases it).
func (g *Generator) startStage(ctx context.Context, st Stage) (stageCtx context.Context, cancel context.CancelFunc, start int64) {
	start = g.now()
	if st.Duration > 0 {
		ctx, cancel = context.WithTimeout(ctx, st.Duration)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	if st.Phase == metrics.Profile {
		g.endStage.Store(&cancel)
	}
	return ctx, cancel, start
}

// EndStage ends the profile stage under way as its duration would: it
// stops issuing, and its requests in flight finish within the grace
// period before the next stage starts (a stop condition met, such as the
// precision a run asked for). It does nothing between stages.
func (g *Generator) EndStage() {
	if end := g.endStage.Load(); end != nil {
		(*end)()
	}
}

// issue runs one stage's dispatch loop: wait for the intended time, then
// for a slot, then start the session's goroutine. first is the stage's
// first conversation when it takes them round robin. It reports whether
// issuing was cut short (interrupt or the stage's duration).
func (g *Generator) issue(ctx, reqCtx context.Context, wg *sync.WaitGroup, st Stage, stage, first int) (stopped bool) {
	g.curStage.Store(int64(stage))
	ctx, cancel, stageStart := g.startStage(ctx, st)
	defer cancel()
	defer func() { stopped = ctx.Err() != nil }()
	wake := newSleeper(ctx)
	defer wake.close()
	workers := newWorkers()
	defer workers.stop()
	prepCtx, stopPrep := context.WithCancel(ctx)
	defer stopPrep()
	limit := g.shard.limit(st.Limit)
	// acquire's wake-up, made at its first wait and kept for the stage:
	// at saturation every request waits for a slot.
	var tick *time.Ticker
	defer func() {
		if tick != nil {
			tick.Stop()
		}
	}()
	// The plan's request count is spent by the sessions as they are
	// planned (Stage.Sessions), each reserving its turns.
	for next := range g.lookahead(prepCtx, st, first) {
		intended := g.now()
		if st.Schedule != nil {
			intended = stageStart + int64(next.At)
			if !g.waitUntil(ctx, wake, intended) {
				return
			}
		}
		slotStart := g.now()
		if st.Admission {
			if !g.admit(limit, stageStart) {
				continue
			}
		} else if !g.acquire(ctx, limit, stageStart, &tick) {
			return
		}
		slotWait := g.now() - slotStart
		if st.Schedule == nil {
			// Closed loop: the request is due the moment a slot frees.
			intended = g.now()
		}
		g.nextConv.Store(int64(first + next.Index + 1))
		conv := next.conv
		g.issued.Add(1)
		wg.Add(1)
		workers.run(func() {
			defer wg.Done()
			defer g.release()
			pace := func(ti int, _ int64) (slot, bool) {
				if ti == 0 {
					return slot{intended: intended, slotWait: slotWait, scheduled: st.Schedule != nil, body: next.body}, true
				}
				// Later turns follow the reply, after the turn's think time.
				if ti >= next.Turns {
					return slot{}, false
				}
				if d := conv.Turns[ti].Delay; d > 0 && !Sleep(reqCtx, d) {
					return slot{}, false
				}
				at := g.now()
				if st.Replay && conv.OpenLoop {
					// At the first turn's time plus the recorded gap, or
					// now if the reply came after that.
					due := intended + int64(conv.Turns[ti].Timestamp-conv.Turns[0].Timestamp)
					if due > at && !Sleep(reqCtx, time.Duration(due-at)) {
						return slot{}, false
					}
					at = max(due, at)
				}
				g.issued.Add(1)
				return slot{intended: at}, true
			}
			g.session(reqCtx, conv, st.Phase, stage, next.Index, pace)
		})
		if ctx.Err() != nil {
			return
		}
	}
	return
}

// waitUntil returns at the run clock's time at (or at once if it passed),
// or false when ctx (the sleeper's) ends first.
func (g *Generator) waitUntil(ctx context.Context, s sleeper, at int64) bool {
	if wait := time.Duration(at-g.now()) - s.early(); wait > 0 && !s.sleep(wait) {
		return false
	}
	for g.now() < at {
		runtime.Gosched()
	}
	return ctx.Err() == nil
}

// credit is one upcoming session start, prepared ahead of its time.
type credit struct {
	Session
	conv *datasets.Conversation
	// body is the first turn's request body, built ahead so that a large
	// prompt's encoding is not paid between its intended and its actual
	// send; nil when building failed (the request then reports why).
	body []byte
}

// lookaheadDepth is how many session starts are prepared ahead. They
// travel in batches of up to lookaheadBatch, so the preparing goroutine is
// woken once a batch rather than once a request (a wake-up of an idle
// goroutine costs a thread wake-up on an idle machine, the handful a
// request needs are most of its client CPU).
const (
	lookaheadDepth = 64
	lookaheadBatch = 16
)

// LookaheadBytes bounds the request bodies the dispatcher's lookahead
// builds ahead of their send time (and one more): past it, a start's body
// is built by its worker. With the requests in flight, it is what the
// plan's prompts cost a run in memory, whatever the plan's size.
const LookaheadBytes = 64 << 20

// lookahead prepares the stage's session starts (this shard's) in order,
// ahead of the dispatcher, until the plan ends or ctx is done. A batch goes
// out early when the dispatcher has nothing left (at the start, or when
// preparing is slower than sending), so it never waits for a whole batch.
// Bodies are built ahead while those not yet sent hold less than
// LookaheadBytes.
func (g *Generator) lookahead(ctx context.Context, st Stage, first int) iter.Seq[credit] {
	ch := make(chan []credit, lookaheadDepth/lookaheadBatch)
	ahead := &g.ahead
	go func() {
		defer close(ch)
		var batch []credit
		send := func() bool {
			select {
			case ch <- batch:
			case <-ctx.Done():
				return false
			}
			batch = make([]credit, 0, lookaheadBatch)
			return true
		}
		for s := range st.Sessions(g.shard, g.ds, first) {
			c := credit{Session: s, conv: g.sessionConv(g.ds.Conversation(s.Conversation), st.Phase, s.Index)}
			if ahead.Load() < LookaheadBytes {
				c.body, _ = g.ep.Body(c.conv.SystemPrompt, contextHistory(c.conv), &c.conv.Turns[0])
				ahead.Add(int64(len(c.body)))
			}
			if batch = append(batch, c); (len(batch) == lookaheadBatch || len(ch) == 0) && !send() {
				return
			}
		}
		if len(batch) > 0 {
			send()
		}
	}()
	return func(yield func(credit) bool) {
		for batch := range ch {
			for i := range batch {
				c := batch[i]
				batch[i] = credit{} // the worker holds it from here
				if c.body != nil {
					ahead.Add(-int64(len(c.body)))
				}
				if !yield(c) {
					return
				}
			}
		}
	}
}

// issueUsers runs user-centric load: each user goroutine (this shard's
// users) sends its turns at the plan's slots (or later, when its previous
// reply and think time end after the slot), one conversation after
// another, until its share of the stage's count (the turns of its slots
// among the first Count) or the stage's duration is spent. User u's j-th
// session sends the plan's session u + j·N (N users), counted from first.
func (g *Generator) issueUsers(ctx, reqCtx context.Context, wg *sync.WaitGroup, st Stage, stage, first int) (stopped bool) {
	g.curStage.Store(int64(stage))
	ctx, cancel, stageStart := g.startStage(ctx, st)
	defer cancel()
	plan := st.Users
	n := plan.N()
	var users sync.WaitGroup
	for u := range n {
		if u%1024 == 0 && ctx.Err() != nil {
			break // a million users start in the time of an interrupt
		}
		if !g.shard.owns(u) {
			continue
		}
		left := 1 << 62
		if st.Count > 0 {
			if left = userTurns(st.Count, u, n); left == 0 {
				continue
			}
		}
		users.Add(1)
		wg.Add(1)
		go func() {
			defer users.Done()
			defer wg.Done()
			turns := 0 // the user's turns so far, across its sessions
			pace := func(_ int, prevEnd int64) (slot, bool) {
				if left <= 0 {
					return slot{}, false
				}
				left--
				at := plan.TurnAt(u, 0)
				if turns > 0 {
					at = plan.NextTurnAt(u, turns, time.Duration(prevEnd-stageStart))
				}
				turns++
				intended := stageStart + int64(at)
				// Sleeping on the stage context stops issuing at the duration
				// or an interrupt; the request itself runs on reqCtx.
				if wait := time.Duration(intended - g.now()); wait > 0 && !Sleep(ctx, wait) {
					return slot{}, false
				}
				g.issued.Add(1)
				return slot{intended: intended, scheduled: true}, ctx.Err() == nil
			}
			for j := 0; ctx.Err() == nil && left > 0; j++ {
				conv := g.sessionConv(g.ds.Conversation(st.conversation(u+j*n, first, g.ds.Len())), st.Phase, u+j*n)
				// The plan's session u + j·N, as its conversation counts it.
				g.session(reqCtx, conv, st.Phase, stage, u+j*n, pace)
			}
		}()
	}
	users.Wait()
	return ctx.Err() != nil
}

// acquire takes a concurrency slot, waiting while the cap in force is
// reached. The cap can change with time (ramps), so the wait also wakes
// periodically, on *tick (made at the first wait; the caller stops it).
func (g *Generator) acquire(ctx context.Context, limit schedule.Limit, stageStart int64, tick **time.Ticker) bool {
	for {
		capNow := 0
		if limit != nil {
			capNow = limit(time.Duration(g.now() - stageStart))
		}
		g.col.SetConcurrency(capNow)
		if capNow <= 0 || g.inFlight.Load() < int64(capNow) {
			g.inFlight.Add(1)
			return true
		}
		if *tick == nil {
			*tick = time.NewTicker(50 * time.Millisecond)
		}
		select {
		case <-g.released:
		case <-(*tick).C:
		case <-ctx.Done():
			return false
		}
	}
}

func (g *Generator) release() {
	g.inFlight.Add(-1)
	select {
	case g.released <- struct{}{}:
	default:
	}
}
