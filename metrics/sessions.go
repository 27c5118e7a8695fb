package metrics

import (
	"cmp"
	"math"
	"slices"
	"sync"
)

// Sessions summarises the run's sessions (the profile phase's): how long
// they ran and how many requests they made, the context each request
// carried, TTFT by what a request continued (a session's first request, a
// user's next turn, tool results) and against the context length, the
// prompt tokens the server's prefix cache served, and the tool calls.
// Summary.Sessions is nil for a run whose sessions were single requests
// with no tool calls and no cache report: there is nothing to say.
type Sessions struct {
	// Count is the sessions with a profile request; Completed those none
	// of whose requests failed; Rejected the session starts an admission
	// ceiling turned away (session arrivals), filled in by the composer.
	Count, Completed, Rejected int64
	// Duration is each session's time from its first request's send to
	// its last response's end (ms); Requests and Turns its requests (a
	// tool loop's included) and dataset turns.
	Duration, Requests, Turns Distribution
	// Context is the context length each request carried, in tokens: the
	// server's prompt_tokens where it reported them, else the client's
	// count of the session so far.
	Context Distribution
	// TTFT is TTFT by turn kind ("first", "user", "tool_result"), for the
	// kinds the run had.
	TTFT map[string]Distribution
	// ByContext is TTFT against the context length, one row per band of
	// context lengths that had requests.
	ByContext []ContextBand
	// Cached is the fraction of prompt tokens the server reported as
	// served from its prefix cache, over the requests whose usage said
	// (NaN: none did); CachedByKind the same by turn kind; CacheReports
	// counts those requests.
	Cached       float64
	CachedByKind map[string]float64
	CacheReports int64
	// ToolCalls counts the calls replies made, ToolCallErrors those whose
	// arguments were not JSON; ToolResults counts requests that sent tool
	// results, UnknownToolResults the results that answered no earlier
	// call; ContextOverflows the requests refused for passing the
	// server's window.
	ToolCalls, ToolCallErrors, ToolResults, UnknownToolResults, ContextOverflows int64
	// ToolTimeMs is the time spent in tools (the tool loop's delays) and
	// ServerTimeMs the time requests were on the server, summed over the
	// sessions.
	ToolTimeMs, ServerTimeMs float64
}

// ToolCallSuccess is the fraction of tool calls whose arguments parsed
// (NaN without calls).
func (s *Sessions) ToolCallSuccess() float64 {
	if s.ToolCalls == 0 {
		return math.NaN()
	}
	return 1 - float64(s.ToolCallErrors)/float64(s.ToolCalls)
}

// ContextBand is TTFT over the requests whose context fell in [From, To)
// tokens.
type ContextBand struct {
	From, To int
	// Count is the requests with a TTFT; Context their mean context.
	Count   int64
	Context float64
	// TTFT's mean and percentiles, in ms.
	Avg, P50, P90, P99 float64
}

// bandsPerOctave sets how finely ByContext cuts the context lengths: two
// bands per doubling.
const bandsPerOctave = 2

// maxTrackedSessions bounds the sessions followed one by one (a run of
// more keeps counting the requests' metrics, not the later sessions').
const maxTrackedSessions = 1 << 20

// sessionTracker builds Sessions from the profile records, which the
// shards hand it one at a time (a request, not a token: its lock is taken
// once a record).
type sessionTracker struct {
	mu       sync.Mutex
	sessions map[int64]*sessionAgg
	// dropped counts the sessions past maxTrackedSessions.
	dropped int64
	context *dist
	ttft    map[TurnKind]*dist
	bands   map[int]*bandAgg
	// cached and prompt sum the cache reports, by kind.
	cached, prompt [3]float64
	reports        int64
	multi          bool // a session made more than one request
	calls, callErr int64
	results        int64
	unknown        int64
	overflows      int64
	toolNs, server int64
}

type sessionAgg struct {
	first, last int64
	requests    int
	maxTurn     int
	failed      bool
}

type bandAgg struct {
	ttft    *dist
	context float64
}

func newSessionTracker() *sessionTracker {
	return &sessionTracker{sessions: map[int64]*sessionAgg{}, context: newDist(), ttft: map[TurnKind]*dist{}, bands: map[int]*bandAgg{}}
}

// contextOf is the context a request carried: the server's count when it
// reported one, else the client's, else its ISL (0: unknown).
func contextOf(r *Record, v *Values) int {
	switch {
	case r.Usage.Present && r.Usage.Has(UsagePromptField) && r.Usage.PromptTokens > 0:
		return r.Usage.PromptTokens
	case r.ContextTokens > 0:
		return r.ContextTokens
	case !math.IsNaN(v.ISL) && v.ISL > 0:
		return int(v.ISL)
	}
	return 0
}

// band is the ByContext band of a context length.
func band(ctx int) int { return int(math.Floor(bandsPerOctave * math.Log2(float64(ctx)))) }

// bandEdges are a band's bounds in tokens.
func bandEdges(b int) (from, to int) {
	return int(math.Ceil(math.Exp2(float64(b) / bandsPerOctave))), int(math.Ceil(math.Exp2(float64(b+1) / bandsPerOctave)))
}

// add takes in one profile record.
func (t *sessionTracker) add(r *Record, v *Values) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.sessions[r.Session]
	if s == nil {
		if len(t.sessions) >= maxTrackedSessions {
			t.dropped++
		} else {
			s = &sessionAgg{first: r.Issued(), maxTurn: -1}
			t.sessions[r.Session] = s
		}
	}
	if s != nil {
		s.first = min(s.first, r.Issued())
		s.last = max(s.last, r.EndNs)
		s.requests++
		s.maxTurn = max(s.maxTurn, r.TurnIndex)
		s.failed = s.failed || r.Err != nil
		t.multi = t.multi || s.requests > 1
	}
	t.calls += int64(len(r.ToolCalls))
	t.callErr += int64(r.ToolCallErrors)
	t.unknown += int64(r.UnknownToolResults)
	t.toolNs += r.ToolWaitNs
	if r.TurnKind == TurnToolResult {
		t.results++
	}
	if r.Err != nil && r.Err.Type == errContextOverflow {
		t.overflows++
	}
	if r.Err != nil {
		return
	}
	t.server += r.EndNs - r.SentNs
	ctx := contextOf(r, v)
	if ctx > 0 {
		t.context.add(float64(ctx))
	}
	if !math.IsNaN(v.TTFT) {
		d := t.ttft[r.TurnKind]
		if d == nil {
			d = newDist()
			t.ttft[r.TurnKind] = d
		}
		d.add(v.TTFT)
		if ctx > 0 {
			b := t.bands[band(ctx)]
			if b == nil {
				b = &bandAgg{ttft: newDist()}
				t.bands[band(ctx)] = b
			}
			b.ttft.add(v.TTFT)
			b.context += float64(ctx)
		}
	}
	if u := &r.Usage; u.Present && u.Has(UsageCacheReadField|UsagePromptField) && u.PromptTokens > 0 {
		k := min(int(r.TurnKind), len(t.cached)-1)
		t.cached[k] += float64(u.CacheReadTokens)
		t.prompt[k] += float64(u.PromptTokens)
		t.reports++
	}
}

// errContextOverflow is loadgen's error type for a prompt past the
// server's window (metrics does not import loadgen).
const errContextOverflow = "context_overflow"

// summary is the Sessions of what was taken in (nil: nothing to say).
func (t *sessionTracker) summary() *Sessions {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.multi && t.calls == 0 && t.reports == 0 && t.results == 0 && t.overflows == 0 {
		return nil
	}
	s := &Sessions{Count: int64(len(t.sessions)) + t.dropped, ToolCalls: t.calls, ToolCallErrors: t.callErr,
		ToolResults: t.results, UnknownToolResults: t.unknown, ContextOverflows: t.overflows,
		ToolTimeMs: float64(t.toolNs) / nsPerMs, ServerTimeMs: float64(t.server) / nsPerMs,
		TTFT: map[string]Distribution{}, CachedByKind: map[string]float64{}, Cached: math.NaN(), CacheReports: t.reports}
	dur, reqs, turns := newDist(), newDist(), newDist()
	for _, a := range t.sessions {
		if !a.failed {
			s.Completed++
		}
		dur.add(float64(a.last-a.first) / nsPerMs)
		reqs.add(float64(a.requests))
		turns.add(float64(a.maxTurn + 1))
	}
	s.Duration, s.Requests, s.Turns = dur.distribution("ms"), reqs.distribution("requests"), turns.distribution("turns")
	s.Context = t.context.distribution("tokens")
	for k, d := range t.ttft {
		s.TTFT[k.String()] = d.distribution("ms")
	}
	var cached, prompt float64
	for k := range t.cached {
		cached += t.cached[k]
		prompt += t.prompt[k]
		if t.prompt[k] > 0 {
			s.CachedByKind[TurnKind(k).String()] = t.cached[k] / t.prompt[k]
		}
	}
	if prompt > 0 {
		s.Cached = cached / prompt
	}
	for b := range t.bands {
		s.ByContext = append(s.ByContext, t.bandRow(b))
	}
	slices.SortFunc(s.ByContext, func(a, b ContextBand) int { return cmp.Compare(a.From, b.From) })
	return s
}

// bandRow summarises band b.
func (t *sessionTracker) bandRow(b int) ContextBand {
	a := t.bands[b]
	from, to := bandEdges(b)
	d := a.ttft.distribution("ms")
	return ContextBand{From: from, To: to, Count: d.Count, Context: a.context / float64(max(d.Count, 1)),
		Avg: d.Avg, P50: d.P50, P90: d.P90, P99: d.P99}
}
