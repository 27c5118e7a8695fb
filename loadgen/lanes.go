package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/surgebench/surge/datasets"
)

// Replay is agentic replay, AIPerf's AGENTIC_REPLAY timing mode: a fixed
// number of lanes (--concurrency), each replaying a conversation (an
// agent's trace) turn after turn with its recorded think times, and, when
// it ends, the next conversation from its first turn. A lane's first
// trajectory may start part-way (--trajectory-start-min/max-ratio): a
// warmup then primes the turn before its start, so the server's prefix
// cache holds the context the profile resumes from, as a live agent's
// would. A Replay's parts run as stages (LanePart): the priming, an
// optional cache-pressure warmup, and the profile.
type Replay struct {
	// Starts are the lanes' first trajectories.
	Starts []Trajectory
	// Burst fires each phase's first requests together instead of spreading
	// them by their recorded offsets (--burst-phase-starts).
	Burst bool
	// Grace bounds how long the priming waits for its requests once the
	// last was sent; those still running are cancelled (0: wait for every
	// one).
	Grace time.Duration
	// IdleGapCap, when > 0, moves every lane's pending wait earlier, all
	// by the same amount, whenever nothing is in flight and the next
	// request is further off than this (--system-idle-gap-cap-seconds).
	IdleGapCap time.Duration

	mu     sync.Mutex
	lanes  []lane
	active map[int]int // lanes replaying each conversation
	cursor int         // the next conversation a freed lane takes
	n      int         // the dataset's conversations
	// pressured is set once a Pressure part ran: the profile's lanes then
	// wait what is left of their think time, not all of it.
	pressured bool
}

// Trajectory is where a lane's replay starts: a conversation and the turn
// the profile begins at (the priming sends the turn before it, when
// there is one).
type Trajectory struct {
	Conversation, Turn int
}

// lane is one lane's place: its conversation, the next turn it sends and
// when its last request ended.
type lane struct {
	conv, next int
	lastEnd    int64
	// trip counts the trajectories the lane started before this one: with
	// the lane's index it names the session (its cache-bust marker), the
	// same across the replay's parts.
	trip int
}

// LanePart is a stage's part of a Replay.
type LanePart struct {
	Replay *Replay
	Part   ReplayPart
}

// ReplayPart is what a stage of a Replay does.
type ReplayPart uint8

// The parts of a replay, in the order they run.
const (
	// Prime sends each lane's turn before its start, one output token
	// each (the warmup's barrier: the stage ends when they have).
	Prime ReplayPart = iota
	// Pressure replays the lanes on from their starts without think times
	// and with one output token, recycling freed lanes, until the stage's
	// duration (--agentic-cache-warmup-duration): the server's cache
	// under the load it will see.
	Pressure
	// Profile replays the lanes with their recorded think times, each
	// resuming where it stands, until the stage's bounds.
	Profile
)

// NewReplay lays out lanes lanes over ds: lane i replays conversation i
// (round robin), starting at a turn drawn uniformly (seeded) between
// minRatio and maxRatio of its turns, at most its last but one (AIPerf's
// min(int(max_ratio·n), n−2)); maxRatio 0 starts every lane at its first
// turn (no priming). A trajectory that starts part-way must carry its
// context in its turns (a trace's): the turns before are not sent.
func NewReplay(ds *datasets.Dataset, lanes int, minRatio, maxRatio float64, seed uint64) (*Replay, error) {
	switch {
	case lanes < 1:
		return nil, fmt.Errorf("agentic replay: %d lanes: want at least one", lanes)
	case ds == nil || ds.Len() == 0:
		return nil, errors.New("agentic replay: no conversations")
	case !(minRatio >= 0 && minRatio <= 1 && maxRatio >= 0 && maxRatio <= 1):
		return nil, fmt.Errorf("agentic replay: start ratios %g and %g: want each in [0, 1]", minRatio, maxRatio)
	case minRatio > maxRatio:
		return nil, fmt.Errorf("agentic replay: start ratio %g above %g", minRatio, maxRatio)
	}
	r := &Replay{n: ds.Len(), active: map[int]int{}, cursor: lanes}
	rng := rand.New(rand.NewPCG(seed, 0x7472616a)) // "traj"
	for i := range lanes {
		c := i % ds.Len()
		conv := ds.Conversation(c)
		turns := conv.Turns
		t := Trajectory{Conversation: c}
		if n := len(turns); maxRatio > 0 && n >= 2 {
			lo := int(math.Floor(minRatio * float64(n)))
			hi := min(int(math.Floor(maxRatio*float64(n))), n-2)
			lo = min(lo, hi)
			t.Turn = lo + rng.IntN(hi-lo+1) + 1
			for _, tr := range turns[1:t.Turn] {
				if !tr.Standalone {
					return nil, fmt.Errorf("agentic replay: conversation %s would start at turn %d, but its turns do not carry their context (a trace's do): replay it from its start (start ratios 0)", conv.ID, t.Turn)
				}
			}
		}
		r.Starts = append(r.Starts, t)
	}
	return r, nil
}

// Primed reports whether any lane starts part-way, so a priming warmup
// has requests to send.
func (r *Replay) Primed() bool {
	for _, t := range r.Starts {
		if t.Turn > 0 {
			return true
		}
	}
	return false
}

// setup places the lanes at their starts, once.
func (r *Replay) setup() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lanes != nil {
		return
	}
	r.lanes = make([]lane, len(r.Starts))
	for i, t := range r.Starts {
		r.lanes[i] = lane{conv: t.Conversation, next: t.Turn}
		r.active[t.Conversation]++
	}
}

// recycle frees lane i's conversation and gives it the next one in turn,
// from its first turn, passing over conversations other lanes replay
// (unless every one is taken).
func (r *Replay) recycle(i int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.active[r.lanes[i].conv]--
	c := r.cursor % r.n
	for k := 0; k < r.n && r.active[(r.cursor+k)%r.n] > 0; k++ {
		c = (r.cursor + k + 1) % r.n
	}
	if r.active[c] > 0 {
		c = r.cursor % r.n
	}
	r.cursor = c + 1
	r.active[c]++
	r.lanes[i] = lane{conv: c, lastEnd: r.lanes[i].lastEnd, trip: r.lanes[i].trip + 1}
}

// recordedWork is how long a conversation's turn ti took when it was
// recorded: the gap between its start and the next turn's, less the
// think time recorded before that one (0 without timestamps). Not the
// scaled think time: with --conversation-turn-delay-ratio 0 that counted
// a trace's pauses as work, and the priming waited them out (26 s for
// docs/agentic.md's eight-request replay).
func recordedWork(turns []datasets.Turn, ti int) time.Duration {
	if ti+1 >= len(turns) || !turns[ti].HasTimestamp || !turns[ti+1].HasTimestamp {
		return 0
	}
	return max(turns[ti+1].Timestamp-turns[ti].Timestamp-turns[ti+1].RecordedThink(), 0)
}

// residualCap bounds the wait a lane resumed after the cache-pressure
// warmup keeps of its turn's think time (AIPerf's handoff cap).
const residualCap = 60 * time.Second

// issueLanes runs one stage's part of a replay (see ReplayPart). It
// reports whether issuing was cut short.
func (g *Generator) issueLanes(ctx, reqCtx context.Context, wg *sync.WaitGroup, st Stage, stage int) (stopped bool) {
	r := st.Lanes.Replay
	r.setup()
	ctx, cancel, stageStart := g.startStage(ctx, st)
	defer cancel()
	if st.Lanes.Part == Prime {
		return g.prime(ctx, reqCtx, wg, st, stage, stageStart)
	}
	var budget atomic.Int64 // requests left (st.Count)
	budget.Store(math.MaxInt64)
	if st.Count > 0 {
		budget.Store(int64(st.Count))
	}
	var sessions atomic.Int64
	var lanes sync.WaitGroup
	owned := 0
	for i := range r.lanes {
		if g.shard.owns(i) {
			owned++
		}
	}
	idle := newIdleClock(r.IdleGapCap, owned)
	resumed := r.pressured
	if st.Lanes.Part == Pressure {
		r.pressured = true
	}
	for i := range r.lanes {
		if !g.shard.owns(i) {
			continue
		}
		lanes.Add(1)
		wg.Add(1)
		go func() {
			defer lanes.Done()
			defer wg.Done()
			defer idle.leave()
			first := true
			for ctx.Err() == nil {
				if st.SessionCount > 0 && sessions.Add(1) > int64(st.SessionCount) {
					return
				}
				r.mu.Lock()
				ln := r.lanes[i]
				r.mu.Unlock()
				conv := g.laneConv(i, ln)
				if ln.next >= len(conv.Turns) {
					r.recycle(i)
					continue
				}
				pace := func(ti int, _ int64) (slot, bool) {
					wait := conv.Turns[ti].Delay
					switch {
					case st.Lanes.Part == Pressure:
						wait = 0 // the cache's load, not the trace's pace
					case first && r.Burst:
						wait = 0 // the phase's first requests together
					case first && resumed && ln.lastEnd > 0:
						// What the cache-pressure warmup left of the
						// recorded think time.
						wait = min(wait-time.Duration(g.now()-ln.lastEnd), residualCap)
					}
					first = false
					if wait > 0 && !idle.sleep(ctx, g, wait) {
						return slot{}, false
					}
					if ctx.Err() != nil || budget.Add(-1) < 0 {
						return slot{}, false
					}
					g.issued.Add(1)
					return slot{intended: g.now()}, true
				}
				o := sessionOpts{from: ln.next}
				if st.Lanes.Part == Pressure {
					o.maxTokens = 1
				}
				next, failed := g.sessionRun(reqCtx, conv, st.Phase, stage, i, pace, o)
				r.mu.Lock()
				r.lanes[i].next, r.lanes[i].lastEnd = next, g.now()
				r.mu.Unlock()
				if next < len(conv.Turns) && !failed {
					return // the stage ended with the lane part-way
				}
				r.recycle(i)
				first = false
			}
		}()
	}
	lanes.Wait()
	return ctx.Err() != nil
}

// prime sends each lane's turn before its start, with one output token,
// spread so that their recorded ends line up (or all at once, Burst),
// and waits for them: at most Grace once the last was sent.
func (g *Generator) prime(ctx, reqCtx context.Context, wg *sync.WaitGroup, st Stage, stage int, stageStart int64) bool {
	r := st.Lanes.Replay
	var lead time.Duration
	for _, t := range r.Starts {
		if t.Turn > 0 {
			lead = max(lead, recordedWork(g.ds.Conversation(t.Conversation).Turns, t.Turn-1))
		}
	}
	primeCtx, cancel := context.WithCancel(reqCtx)
	defer cancel()
	var sent, done sync.WaitGroup
	for i, t := range r.Starts {
		if t.Turn == 0 || !g.shard.owns(i) {
			continue
		}
		conv := g.laneConv(i, lane{conv: t.Conversation})
		at := time.Duration(0)
		if !r.Burst {
			at = lead - recordedWork(conv.Turns, t.Turn-1)
		}
		sent.Add(1)
		done.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer done.Done()
			once := false
			pace := func(ti int, _ int64) (slot, bool) {
				defer func() {
					if !once {
						once = true
						sent.Done()
					}
				}()
				if ti != t.Turn-1 || once {
					return slot{}, false
				}
				intended := stageStart + int64(at)
				if wait := time.Duration(intended - g.now()); wait > 0 && !Sleep(ctx, wait) {
					return slot{}, false
				}
				g.issued.Add(1)
				return slot{intended: intended, scheduled: !r.Burst}, true
			}
			g.sessionRun(primeCtx, conv, st.Phase, stage, i, pace, sessionOpts{from: t.Turn - 1, maxTokens: 1})
			r.mu.Lock()
			r.lanes[i].lastEnd = g.now()
			r.mu.Unlock()
		}()
	}
	sent.Wait()
	finished := make(chan struct{})
	go func() { done.Wait(); close(finished) }()
	var grace <-chan time.Time
	if r.Grace > 0 {
		t := time.NewTimer(r.Grace)
		defer t.Stop()
		grace = t.C
	}
	select {
	case <-finished:
	case <-grace:
		cancel()
		<-finished
	case <-ctx.Done():
		cancel()
		<-finished
	}
	return ctx.Err() != nil
}

// idleClock moves the lanes' waits earlier when the whole replay idles
// (--system-idle-gap-cap-seconds): while every lane is waiting (nothing
// in flight, nothing ready), the waits are shifted, all alike, so the
// next request comes within the cap. Without a cap it is a plain sleep.
type idleClock struct {
	cap time.Duration
	mu  sync.Mutex
	// lanes is the lanes still replaying; waiting maps each waiting one to
	// its deadline on the run clock, before the shift.
	lanes   int
	waiting map[*int64]int64
	shift   int64
	moved   chan struct{} // closed when shift grows
}

func newIdleClock(cap time.Duration, lanes int) *idleClock {
	return &idleClock{cap: cap, lanes: lanes, waiting: map[*int64]int64{}, moved: make(chan struct{})}
}

// leave says a lane replays no more: the waiting lanes look again, as
// they may now be all there is.
func (c *idleClock) leave() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lanes--
	if len(c.waiting) > 0 {
		close(c.moved)
		c.moved = make(chan struct{})
	}
}

// sleep waits d on g's clock, or less when the replay idles past the cap;
// false when ctx ends first.
func (c *idleClock) sleep(ctx context.Context, g *Generator, d time.Duration) bool {
	if c.cap <= 0 {
		return Sleep(ctx, d)
	}
	key := new(int64)
	c.mu.Lock()
	deadline := g.now() + int64(d) + c.shift
	c.waiting[key] = deadline
	defer func() {
		c.mu.Lock()
		delete(c.waiting, key)
		c.mu.Unlock()
	}()
	for {
		c.check(g.now())
		wait, moved := time.Duration(deadline-c.shift-g.now()), c.moved
		c.mu.Unlock()
		if wait <= 0 {
			return ctx.Err() == nil
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
			c.mu.Lock()
		case <-moved:
			t.Stop()
			c.mu.Lock()
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
}

// check shifts the waits when every lane waits and the nearest is more
// than the cap away. c.mu is held.
func (c *idleClock) check(now int64) {
	if c.cap <= 0 || len(c.waiting) == 0 || len(c.waiting) < c.lanes {
		return
	}
	next := int64(math.MaxInt64)
	for _, d := range c.waiting {
		next = min(next, d)
	}
	if gap := next - c.shift - now; gap > int64(c.cap) {
		c.shift += gap - int64(c.cap)
		close(c.moved)
		c.moved = make(chan struct{})
	}
}

// laneConv is the conversation lane i sends on its trajectory ln, with the
// session's own copy (WithSessionConversation) keyed by the lane and its
// trip, so the priming, the warmup and the profile send one session.
func (g *Generator) laneConv(i int, ln lane) *datasets.Conversation {
	c := g.ds.Conversation(ln.conv)
	if g.perSession == nil {
		return c
	}
	return g.perSession(c, "lane/"+strconv.Itoa(i)+"/"+strconv.Itoa(ln.trip))
}
