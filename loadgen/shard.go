package loadgen

import (
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/loadgen/schedule"
)

// Shard is one load host's part of a plan run from several hosts at once
// (--shard i/N): every host builds the same seeded plan, walks all of it,
// and sends only its own share, so the N shards together send exactly what
// one host running the whole plan would:
//
//   - session starts (a credit of a closed loop, a scheduled arrival, a
//     trace row) go round robin: shard i sends the plan's starts i, i+N,
//     i+2N, … at the times the whole plan gives them, so each shard runs
//     1/N of the rate and a trace is split by conversation;
//   - a session is whole on one shard (all its turns go from the host
//     that started it);
//   - the concurrency cap in force is split into N near-equal parts (at
//     least one each);
//   - user-centric users go round robin (user u to shard u mod N), each
//     with its own sessions and pacing.
//
// The zero value is the whole plan.
type Shard struct {
	Index, Count int
}

// ParseShard reads "i/N": shard i (0 to N−1) of N.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	i, errI := strconv.Atoi(strings.TrimSpace(a))
	n, errN := strconv.Atoi(strings.TrimSpace(b))
	if !ok || errI != nil || errN != nil {
		return Shard{}, fmt.Errorf("%q is not i/N (shard i of N, numbered from 0), e.g. 0/4", s)
	}
	return NewShard(i, n)
}

// NewShard checks shard i of n: n ≥ 1 and 0 ≤ i < n.
func NewShard(i, n int) (Shard, error) {
	switch {
	case n < 1:
		return Shard{}, fmt.Errorf("the shard count must be ≥ 1, got %d", n)
	case i < 0 || i >= n:
		return Shard{}, fmt.Errorf("shard index %d is not in 0..%d (shards are numbered from 0 to N−1)", i, n-1)
	}
	return Shard{Index: i, Count: n}, nil
}

// Whole reports whether s is the whole plan (no sharding, or 0/1).
func (s Shard) Whole() bool { return s.Count <= 1 }

// String is "i/N" ("" for the whole plan).
func (s Shard) String() string {
	if s.Whole() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// owns reports whether the plan's k-th session start (or user k) is this
// shard's.
func (s Shard) owns(k int) bool { return s.Whole() || k%s.Count == s.Index }

// Share is this shard's part of n things split as evenly as possible: the
// first n mod N shards take one more.
func (s Shard) Share(n int) int {
	if s.Whole() {
		return n
	}
	q := n / s.Count
	if s.Index < n%s.Count {
		q++
	}
	return q
}

// limit is this shard's part of a concurrency cap: its Share of the cap in
// force, at least one while the cap is (0, unlimited, stays 0).
func (s Shard) limit(l schedule.Limit) schedule.Limit {
	if s.Whole() || l == nil {
		return l
	}
	return func(elapsed time.Duration) int {
		n := l(elapsed)
		if n <= 0 {
			return n
		}
		return max(s.Share(n), 1)
	}
}

// WithShard makes the generator send only shard's part of the stages it
// runs (see Shard). The stages are the whole plan's.
func WithShard(s Shard) Option { return func(g *Generator) { g.shard = s } }

// Session is one session start of a stage's plan.
type Session struct {
	// Index is the start's position in the whole plan's stage (shards
	// included): shard i sends the starts whose Index mod N is i.
	Index int
	// At is the intended offset from the stage's start (0 in a closed
	// loop, where a free slot decides).
	At time.Duration
	// Conversation indexes the dataset's conversations.
	Conversation int
	// Turns is how many of the conversation's turns are sent: all of them,
	// but for the last session of a stage bounded by a request count, which
	// sends what is left of the count.
	Turns int
}

// Sessions yields the session starts of st that shard sends, in order,
// as they are asked for: nothing is worked out ahead. The whole plan is
// walked to find them, one start after another: its schedule (consumed:
// iterate once), its conversations (st.Conversation, or the dataset round
// robin from the stage's first conversation) and its request count, which
// sessions reserve whole, one after another, so which requests a count
// allows never depends on timing. Without a count the starts go on until
// the schedule ends (or forever: the stage's duration stops them).
func (st Stage) Sessions(shard Shard, ds *datasets.Dataset, first int) iter.Seq[Session] {
	n := ds.Len()
	return func(yield func(Session) bool) {
		left := st.Count
		for k := 0; (st.Count <= 0 || left > 0) && (st.SessionCount <= 0 || k < st.SessionCount); k++ {
			s := Session{Index: k}
			if st.Schedule != nil {
				at, ok := st.Schedule.Next()
				if !ok {
					return
				}
				s.At = at
			}
			s.Conversation = st.conversation(k, first, n)
			s.Turns = ds.Turns(s.Conversation)
			if st.Count > 0 {
				s.Turns = min(s.Turns, left)
				left -= s.Turns
			}
			if shard.owns(k) && !yield(s) {
				return
			}
		}
	}
}

// conversation is the dataset index of the stage's k-th session start.
func (st Stage) conversation(k, first, n int) int {
	switch {
	case st.Conversation != nil:
		return st.Conversation(k) % n
	case st.Pick != nil:
		return st.Pick(first+k) % n
	}
	return (first + k) % n
}

// userTurns is how many turns user u of n sends in a stage bounded by
// count requests: the turns of its slots among the first count of the
// users' schedule (slot k is user k mod n's), so the users' turns add up
// to count whichever user runs ahead.
func userTurns(count, u, n int) int {
	if count <= u {
		return 0
	}
	return (count-u-1)/n + 1
}
