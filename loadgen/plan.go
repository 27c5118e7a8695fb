package loadgen

import (
	"math"
	"sort"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/metrics"
)

// Planning without walking the plan. A stage bounded by a request count
// starts sessions that reserve their turns one after another (Sessions);
// where the next stage starts and how many requests a shard sends follow
// from the dataset's turn counts by arithmetic, so neither costs time with
// the count (a --request-count of 10¹¹ plans as fast as one of 10):
//
//   - every conversation has the same number of turns u (single-turn
//     datasets, synthetic prompts of fixed turns): a count of c takes
//     ⌈c/u⌉ sessions;
//   - conversations taken in order from a held dataset: prefix sums of
//     their turns and whole passes over the dataset;
//   - otherwise (a sampling strategy over conversations of differing
//     turns, a trace's named rows) the plan is walked, up to planWalk
//     sessions; past that a stage's sessions are bounded by its count
//     (each sends at least one request) and a shard's requests are its
//     share of the count (Estimate says so).
//
// Every host computes the same numbers from the same plan, so shards agree.

// planWalk bounds the sessions planning walks one by one (tens of
// milliseconds at most).
const planWalk = 1 << 17

// turnTable is what planning needs of a dataset: its conversations' turn
// counts, read without building a conversation.
type turnTable struct {
	ds *datasets.Dataset
	n  int
	// uniform is every conversation's turn count (0: they differ).
	uniform int
	// prefix[i] is the turns of conversations [0, i), for a held dataset
	// whose turns differ.
	prefix []int64
}

func newTurnTable(ds *datasets.Dataset) *turnTable {
	t := &turnTable{ds: ds, n: ds.Len()}
	if ds.Source != nil {
		t.uniform = ds.Source.UniformTurns()
		return t
	}
	t.uniform = -1
	t.prefix = make([]int64, t.n+1)
	for i := range ds.Conversations {
		k := len(ds.Conversations[i].Turns)
		t.prefix[i+1] = t.prefix[i] + int64(k)
		switch {
		case t.uniform == -1:
			t.uniform = k
		case t.uniform != k:
			t.uniform = 0
		}
	}
	if t.uniform > 0 {
		t.prefix = nil
	}
	t.uniform = max(t.uniform, 0)
	return t
}

// turns is conversation i's turn count.
func (t *turnTable) turns(i int) int {
	if t.prefix != nil {
		return int(t.prefix[i+1] - t.prefix[i])
	}
	if t.uniform > 0 {
		return t.uniform
	}
	return t.ds.Turns(i)
}

// inOrder reports whether the stage takes held conversations in order, so
// prefix sums answer for it.
func (t *turnTable) inOrder(st *Stage) bool {
	return st.Conversation == nil && st.Pick == nil && t.prefix != nil
}

// total is the turns of all conversations (held datasets).
func (t *turnTable) total() int64 { return t.prefix[t.n] }

// rrSum is the turns of the stage's sessions [0, m) when it takes the
// conversations in order from first.
func (t *turnTable) rrSum(first, m int64) int64 {
	n := int64(t.n)
	p := first % n
	if m <= n-p {
		return t.prefix[p+m] - t.prefix[p]
	}
	s := t.total() - t.prefix[p]
	m -= n - p
	s += m / n * t.total()
	return s + t.prefix[m%n]
}

// rrSessions is how many sessions, taking the conversations in order from
// first, it takes for their turns to reach count.
func (t *turnTable) rrSessions(first, count int64) int64 {
	n := int64(t.n)
	T := t.total()
	p := first % n
	tail := T - t.prefix[p]
	if count <= tail {
		return int64(sort.Search(int(n-p), func(m int) bool { return t.prefix[p+int64(m)+1]-t.prefix[p] >= count })) + 1
	}
	count -= tail
	passes := (count - 1) / T
	count -= passes * T
	m := int64(sort.Search(int(n), func(m int) bool { return t.prefix[m+1] >= count })) + 1
	return n - p + passes*n + m
}

// stageSessions is how many session starts stage st (from first) makes
// of the whole plan, or -1 for no end (a stage bounded by time); exact is
// false when it is only a bound (see above).
func (t *turnTable) stageSessions(st *Stage, first int) (sessions int64, exact bool) {
	limit := int64(math.MaxInt64)
	if st.SessionCount > 0 {
		limit = int64(st.SessionCount)
	}
	count := int64(st.Count)
	switch {
	case count <= 0 && st.SessionCount <= 0:
		return -1, true
	case count <= 0:
		return limit, true
	case t.uniform > 0:
		return min((count+int64(t.uniform)-1)/int64(t.uniform), limit), true
	case t.inOrder(st):
		if t.total() == 0 {
			return 0, true
		}
		return min(t.rrSessions(int64(first), count), limit), true
	}
	left := count
	for k := 0; k < planWalk && int64(k) < limit; k++ {
		if left -= int64(t.turns(st.conversation(k, first, t.n))); left <= 0 {
			return int64(k) + 1, true
		}
	}
	if limit <= planWalk {
		return limit, true
	}
	return min(count, limit), false
}

// firsts is where each stage starts in the run's sessions (the dataset's
// conversations in order, or a Pick's): after the sessions of the stages
// before it, so no prompt repeats across a run while the dataset lasts. A
// stage bounded by time takes an equal share of the dataset.
func (t *turnTable) firsts(stages []Stage) []int {
	out := make([]int, len(stages))
	next := 0
	for i := range stages {
		st := &stages[i]
		out[i] = next
		switch {
		case st.Conversation != nil:
			// The stage names its conversations (a trace's rows).
		case st.Count <= 0 && st.SessionCount <= 0:
			next += max(t.n/len(stages), 1)
		case st.Users != nil:
			next += st.Count // at most one session per request
		default:
			s, _ := t.stageSessions(st, next)
			next += int(min(s, int64(math.MaxInt-next)))
		}
	}
	return out
}

// stageRequests is how many requests shard sends of a stage of sessions
// sessions (from first) bounded by st.Count; exact is false for an
// estimate (a walk too long).
func (t *turnTable) stageRequests(st *Stage, first int, sessions int64, shard Shard) (int64, bool) {
	count := int64(st.Count)
	// whole is the turns of the whole plan's sessions, mine this shard's
	// (both before the last session is cut to what is left of the count).
	var whole, mine int64
	// last is the turns of session sessions−1.
	var last int64
	switch {
	case sessions <= 0:
		return 0, true
	case t.uniform > 0:
		u := int64(t.uniform)
		whole, last = sessions*u, u
		mine = int64(shardShare(shard, sessions)) * u
	case t.inOrder(st):
		whole = t.rrSum(int64(first), sessions)
		last = int64(t.turns(int((int64(first) + sessions - 1) % int64(t.n))))
		mine = whole
		if !shard.Whole() {
			mine = t.strided(int64(first)+int64(shard.Index), int64(shard.Count), int64(shardShare(shard, sessions)))
		}
	case sessions <= planWalk:
		for k := range int(sessions) {
			n := int64(t.turns(st.conversation(k, first, t.n)))
			whole += n
			if shard.owns(k) {
				mine += n
			}
			last = n
		}
	default:
		if count > 0 {
			return int64(shardShare(shard, count)), false
		}
		return int64(shardShare(shard, sessions)), false
	}
	if count > 0 && whole > count && shard.owns(int(min(sessions-1, math.MaxInt))) {
		mine -= min(whole-count, last)
	}
	return mine, true
}

// strided is the turns of m sessions start, start+stride, … taking the
// conversations in order: whole cycles of the positions they visit, then
// the rest one by one (at most the dataset's size).
func (t *turnTable) strided(start, stride, m int64) int64 {
	n := int64(t.n)
	start %= n
	step := stride % n
	if step == 0 {
		return m * int64(t.turns(int(start)))
	}
	g := gcd(step, n)
	period := n / g
	var s int64
	if m >= period {
		var class int64
		for c := start % g; c < n; c += g {
			class += int64(t.turns(int(c)))
		}
		s = m / period * class
		m %= period
	}
	for j := int64(0); j < m; j++ {
		s += int64(t.turns(int((start + j*step) % n)))
	}
	return s
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// shardShare is Shard.Share for counts past an int's comfort.
func shardShare(s Shard, n int64) int64 {
	if s.Whole() {
		return n
	}
	q := n / int64(s.Count)
	if int64(s.Index) < n%int64(s.Count) {
		q++
	}
	return q
}

// PlannedRequests is how many profile requests shard sends of stages, or
// 0 when a stage is bounded by time (its count is not known ahead). It
// does not walk the plan (see turnTable): its cost does not grow with the
// counts. Where the exact number would need a walk of more than planWalk
// sessions (a sampling strategy over conversations of differing turns) it
// is the shard's share of the count.
func PlannedRequests(stages []Stage, ds *datasets.Dataset, shard Shard) int {
	t := newTurnTable(ds)
	firsts := t.firsts(stages)
	var total int64
	for i := range stages {
		st := &stages[i]
		if st.Phase != metrics.Profile {
			continue
		}
		if st.Count <= 0 && (st.SessionCount <= 0 || st.Users != nil) {
			return 0
		}
		if st.Users != nil {
			total += usersRequests(st.Count, st.Users.N(), shard)
			continue
		}
		s, _ := t.stageSessions(st, firsts[i])
		n, _ := t.stageRequests(st, firsts[i], s, shard)
		total += n
	}
	return int(min(total, math.MaxInt))
}

// usersRequests is the turns shard's users send of a stage bounded by
// count, n users: userTurns summed without a loop over the users (a user
// u < count mod n sends one more).
func usersRequests(count, n int, shard Shard) int64 {
	q, r := int64(count/n), count%n
	return shardShare(shard, int64(n))*q + shardShare(shard, int64(r))
}
