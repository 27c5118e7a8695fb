package schedule

import (
	"math"
	"time"
)

// UserPlan paces --num-users users, each running the turns of its own
// multi-turn sessions, so that the users' rates add up to
// --user-centric-rate q. Each user starts a turn every Gap = n/q; user u's
// first turn is at u/q, staggering the users evenly over one gap so the
// aggregate is a smooth q requests/s rather than n-request bursts. Think
// times (--conversation-turn-delay-mean/-stddev) are the least delay between
// the end of a turn and the next one. A UserPlan is immutable and safe for
// concurrent use.
type UserPlan struct {
	q                   float64
	n                   int
	seed                uint64
	thinkMean, thinkStd float64 // nanoseconds
}

// Users validates a user-centric load and builds its plan: q requests/s
// over n users, think times between turns. Bad input is a *FieldError:
// "rate" (q) must be > 0, "users" (n) ≥ 1, "think mean" and "think stddev"
// ≥ 0.
func Users(q float64, n int, seed uint64, thinkMean, thinkStd time.Duration) (*UserPlan, error) {
	if err := ValidateRate("rate", q); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fieldErrorf("users", "must be ≥ 1, got %d", n)
	}
	if thinkMean < 0 {
		return nil, fieldErrorf("think mean", "must be ≥ 0, got %s", millis(thinkMean))
	}
	if thinkStd < 0 {
		return nil, fieldErrorf("think stddev", "must be ≥ 0, got %s", millis(thinkStd))
	}
	return &UserPlan{q: q, n: n, seed: seed, thinkMean: float64(thinkMean), thinkStd: float64(thinkStd)}, nil
}

// N is the number of users.
func (u *UserPlan) N() int { return u.n }

// Gap is the interval between one user's turn starts, n/q.
func (u *UserPlan) Gap() time.Duration { return secs(float64(u.n) / u.q) }

// Start is user's first turn offset, user/q.
func (u *UserPlan) Start(user int) time.Duration { return secs(float64(user) / u.q) }

// TurnAt is the slot of the user's turn-th turn (0-based, counted across the
// user's sessions): Start(user) + turn·Gap, computed in one step so nothing
// drifts.
func (u *UserPlan) TurnAt(user, turn int) time.Duration {
	return secs((float64(user) + float64(turn)*float64(u.n)) / u.q)
}

// Think is the think time before the user's turn-th turn: normal with the
// configured mean and stddev, clipped at 0. It is a pure function of the
// seed, user and turn, so it does not depend on which goroutine asks first.
func (u *UserPlan) Think(user, turn int) time.Duration {
	if u.thinkStd == 0 {
		return time.Duration(u.thinkMean)
	}
	h := mix(u.seed ^ streamThink)
	h = mix(h ^ uint64(user))
	h1 := mix(h ^ uint64(turn))
	h2 := mix(h1)
	// Box–Muller with u1 in (0, 1] so the log is finite.
	u1 := (float64(h1>>11) + 1) / (1 << 53)
	u2 := float64(h2>>11) / (1 << 53)
	z := math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
	return time.Duration(max(u.thinkMean+u.thinkStd*z, 0))
}

// NextTurnAt is when the user's turn-th turn (turn ≥ 1) is intended, given
// that the previous turn ended at prevEnd: its slot TurnAt(user, turn), or
// prevEnd plus the think time if that is later (a slow response pushes the
// turn back rather than overlapping a user's own turns).
func (u *UserPlan) NextTurnAt(user, turn int, prevEnd time.Duration) time.Duration {
	return max(u.TurnAt(user, turn), prevEnd+u.Think(user, turn))
}

// Slot maps the k-th slot of Schedule to its user and that user's turn.
func (u *UserPlan) Slot(k int) (user, turn int) { return k % u.n, k / u.n }

// Schedule returns the aggregate of every user's turn slots in time order:
// slot k is user k mod n's turn k div n at k/q, a constant q requests/s.
func (u *UserPlan) Schedule() Schedule { return ConstantRate(u.q) }

func secs(s float64) time.Duration {
	if !(s < maxSeconds) {
		return math.MaxInt64
	}
	return time.Duration(s * 1e9)
}

// mix is SplitMix64's finaliser, a bijective 64-bit hash.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
