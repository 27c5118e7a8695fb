package loadgen

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// shardDataset has n conversations of 1 to maxTurns turns (multi-turn when
// maxTurns > 1), each with a trace timestamp.
func shardDataset(n, maxTurns int) *datasets.Dataset {
	ds := &datasets.Dataset{Name: "shards"}
	for i := range n {
		c := datasets.Conversation{ID: fmt.Sprintf("c%d", i)}
		for k := range 1 + (i*7)%maxTurns {
			c.Turns = append(c.Turns, datasets.Turn{Text: fmt.Sprintf("c%d turn %d", i, k),
				Timestamp: time.Duration((i*37)%50) * time.Millisecond, HasTimestamp: k == 0})
		}
		ds.Conversations = append(ds.Conversations, c)
	}
	return ds
}

// planned is one session start of a plan as a shard sends it.
type planned struct {
	Stage int
	Session
}

// walk lists the session starts shard sends of stages (at most horizon per
// stage: stages bounded by time have no end), and each stage's users.
func walk(stages []Stage, ds *datasets.Dataset, shard Shard, horizon int) (sessions []planned, users [][]int) {
	firsts := newTurnTable(ds).firsts(stages)
	for i, st := range stages {
		if st.Users != nil {
			var mine []int
			for u := range st.Users.N() {
				if shard.owns(u) {
					mine = append(mine, u)
				}
			}
			users = append(users, mine)
			continue
		}
		for s := range st.Sessions(shard, ds, firsts[i]) {
			if s.Index >= horizon {
				break
			}
			sessions = append(sessions, planned{i, s})
		}
	}
	return sessions, users
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// TestShardsUnionIsTheWholePlan is sharding's contract, for every load
// mode: the session starts of shards 0..N−1 together are exactly the whole
// plan's (same times, conversations and turns), none twice; their
// concurrency caps add up to the whole cap; users are split; and the
// planned request counts add up.
func TestShardsUnionIsTheWholePlan(t *testing.T) {
	t.Parallel()
	arrival := func(pattern string, rate float64, seed uint64, opts ...schedule.Option) schedule.Schedule {
		return must[schedule.Schedule](t)(schedule.Arrival(pattern, rate, 0.5, seed, opts...))
	}
	cases := []struct {
		name     string
		maxTurns int
		stages   func() []Stage // fresh each call: schedules are consumed
	}{
		{"concurrency", 1, func() []Stage { return []Stage{{Limit: schedule.Constant(12), Count: 100}} }},
		{"concurrency by time", 1, func() []Stage {
			return []Stage{{Limit: schedule.Constant(7), Duration: time.Minute}}
		}},
		{"concurrency ramp", 1, func() []Stage {
			return []Stage{{Limit: schedule.ConcurrencyRamp(16, 10*time.Second), Count: 90}}
		}},
		{"poisson rate", 1, func() []Stage { return []Stage{{Schedule: arrival("poisson", 40, 3), Count: 101}} }},
		{"gamma rate with a cap", 1, func() []Stage {
			return []Stage{{Schedule: arrival("gamma", 40, 3), Limit: schedule.Constant(9), Count: 80}}
		}},
		{"rate ramp by time", 1, func() []Stage {
			return []Stage{{Schedule: arrival("constant", 100, 0, schedule.RampUp(5*time.Second)), Duration: time.Minute}}
		}},
		{"rate sweep with warmup", 1, func() []Stage {
			return []Stage{
				{Phase: metrics.Warmup, Limit: schedule.Constant(8), Count: 7},
				{Schedule: arrival("poisson", 10, 1), Count: 30},
				{Schedule: arrival("poisson", 20, 2), Count: 30},
				{Schedule: arrival("poisson", 40, 3), Count: 30},
			}
		}},
		{"concurrency sweep by time", 1, func() []Stage {
			return []Stage{{Limit: schedule.Constant(4), Duration: time.Second}, {Limit: schedule.Constant(8), Duration: time.Second}}
		}},
		{"multi-turn", 4, func() []Stage { return []Stage{{Limit: schedule.Constant(6), Count: 77}} }},
		{"multi-turn, sampled", 4, func() []Stage {
			pick := datasets.NewSampler(datasets.SampleShuffle, 120, 7).Pick
			return []Stage{{Limit: schedule.Constant(6), Count: 50, Pick: pick}, {Limit: schedule.Constant(6), Count: 50, Pick: pick}}
		}},
		{"a count of 10^11", 3, func() []Stage {
			return []Stage{{Limit: schedule.Constant(5), Count: 99_999_999_999}, {Schedule: arrival("poisson", 40, 3), Count: 99_999_999_999}}
		}},
		{"multi-turn sweep", 3, func() []Stage {
			return []Stage{{Limit: schedule.Constant(3), Count: 20}, {Limit: schedule.Constant(6), Count: 20}}
		}},
		{"fixed-schedule trace", 3, func() []Stage {
			ds := shardDataset(120, 3)
			offsets := must[[]time.Duration](t)(schedule.TraceOffsets(len(ds.Conversations), func(i int) (time.Duration, bool) {
				return ds.Conversations[i].Turns[0].Timestamp, true
			}))
			replay := must[*schedule.Replay](t)(schedule.Fixed(offsets, schedule.EndOffset(40*time.Millisecond)))
			return []Stage{{Schedule: replay, Conversation: replay.Row, Count: replay.Len()}}
		}},
		{"user-centric", 3, func() []Stage {
			return []Stage{{Users: must[*schedule.UserPlan](t)(schedule.Users(20, 10, 1, 0, 0)), Count: 64}}
		}},
	}
	for _, tc := range cases {
		ds := shardDataset(120, tc.maxTurns)
		const horizon = 300
		whole, wholeUsers := walk(tc.stages(), ds, Shard{}, horizon)
		wholeRequests := PlannedRequests(tc.stages(), ds, Shard{})
		for _, n := range []int{1, 2, 3, 5} {
			var union []planned
			var unionUsers [][]int
			requests := 0
			for i := range n {
				sh := must[Shard](t)(NewShard(i, n))
				part, users := walk(tc.stages(), ds, sh, horizon)
				for _, p := range part {
					if p.Index%n != i {
						t.Errorf("%s, shard %d/%d: sends the plan's session %d", tc.name, i, n, p.Index)
					}
				}
				union = append(union, part...)
				for s, us := range users {
					if len(unionUsers) <= s {
						unionUsers = append(unionUsers, nil)
					}
					unionUsers[s] = append(unionUsers[s], us...)
				}
				requests += PlannedRequests(tc.stages(), ds, sh)
				for s, st := range tc.stages() {
					if st.Limit == nil {
						continue
					}
					for _, e := range []time.Duration{0, time.Second, 3 * time.Second, 7 * time.Second, time.Hour} {
						if whole, part := st.Limit(e), sh.limit(st.Limit)(e); part < 1 || part > whole/n+1 {
							t.Errorf("%s stage %d, shard %d/%d at %s: cap %d of the whole %d", tc.name, s, i, n, e, part, whole)
						}
					}
				}
			}
			slices.SortStableFunc(union, func(a, b planned) int { return (a.Stage-b.Stage)*1_000_000 + a.Index - b.Index })
			if diff := cmp.Diff(whole, union); diff != "" {
				t.Errorf("%s over %d shards: union differs from the whole plan (-whole +union):\n%s", tc.name, n, diff)
			}
			for s := range unionUsers {
				slices.Sort(unionUsers[s])
			}
			if diff := cmp.Diff(wholeUsers, unionUsers); diff != "" {
				t.Errorf("%s over %d shards: users differ (-whole +union):\n%s", tc.name, n, diff)
			}
			if requests != wholeRequests {
				t.Errorf("%s over %d shards: %d requests planned, the whole plan %d", tc.name, n, requests, wholeRequests)
			}
			// Every shard's caps add up to the whole cap once it reaches N.
			for s, st := range tc.stages() {
				if st.Limit == nil {
					continue
				}
				for _, e := range []time.Duration{0, 2 * time.Second, 9 * time.Second, time.Hour} {
					sum := 0
					for i := range n {
						sum += Shard{i, n}.limit(st.Limit)(e)
					}
					if whole := st.Limit(e); whole >= n && sum != whole {
						t.Errorf("%s stage %d over %d shards at %s: caps add to %d, want %d", tc.name, s, n, e, sum, whole)
					}
				}
			}
		}
		if len(whole) == 0 && len(wholeUsers) == 0 {
			t.Errorf("%s: the whole plan is empty", tc.name)
		}
	}
}

// TestUserTurnsAddUp: user-centric counts split over users by slot, for
// every count, whichever users a shard runs.
func TestUserTurnsAddUp(t *testing.T) {
	t.Parallel()
	for _, users := range []int{1, 3, 10} {
		for count := range 40 {
			sum := 0
			for u := range users {
				sum += userTurns(count, u, users)
			}
			if sum != count {
				t.Errorf("%d users, count %d: turns add to %d", users, count, sum)
			}
		}
	}
}

func TestParseShard(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want Shard
		err  string
	}{
		{"0/1", Shard{0, 1}, ""},
		{" 2/3 ", Shard{2, 3}, ""},
		{"3/3", Shard{}, "not in 0..2"},
		{"-1/3", Shard{}, "not in 0..2"},
		{"0/0", Shard{}, "must be ≥ 1"},
		{"1", Shard{}, "is not i/N"},
		{"a/b", Shard{}, "is not i/N"},
	} {
		got, err := ParseShard(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseShard(%q) error %v, want one saying %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// TestShardedGeneratorsSendTheWholeRun runs a multi-turn plan once whole
// and once as three shards against one server: the shards together send
// exactly the whole run's (conversation, turn) requests, each once, and
// every session's turns come from one shard.
func TestShardedGeneratorsSendTheWholeRun(t *testing.T) {
	t.Parallel()
	srv := &streamServer{ttft: time.Millisecond, itl: time.Millisecond, tokens: 2}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	ds := shardDataset(40, 3)
	stages := func() []Stage {
		return []Stage{
			{Phase: metrics.Warmup, Limit: schedule.Constant(3), Count: 4},
			{Limit: schedule.Constant(3), Count: 25},
			{Users: must[*schedule.UserPlan](t)(schedule.Users(200, 6, 1, 0, 0)), Count: 18},
		}
	}
	run := func(shard Shard) map[string]int {
		sink := &collectSink{}
		col := metrics.NewCollector(metrics.WithSink(sink))
		g := must[*Generator](t)(New(ts.URL, chat(true), ds, col, WithShard(shard)))
		if err := g.Run(context.Background(), stages()); err != nil {
			t.Fatal(err)
		}
		col.Close()
		sent := map[string]int{}
		for _, r := range sink.recs {
			if r.Err != nil {
				t.Errorf("shard %v: %+v", shard, r.Err)
			}
			sent[fmt.Sprintf("%s stage %d %s#%d", r.Phase, r.Stage, r.ConversationID, r.TurnIndex)]++
		}
		return sent
	}
	whole := run(Shard{})
	union := map[string]int{}
	for i := range 3 {
		for k, n := range run(Shard{i, 3}) {
			union[k] += n
		}
	}
	if diff := cmp.Diff(whole, union); diff != "" {
		t.Errorf("three shards sent (+) other requests than the whole run (-):\n%s", diff)
	}
	total := 0
	for _, n := range whole {
		total += n
	}
	if total != 4+25+18 {
		t.Errorf("the whole run sent %d requests, want 47", total)
	}
}
