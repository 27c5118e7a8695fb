package loadgen

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// bruteForce walks a stage's sessions as Sessions does (without its
// schedule), counting the sessions and the requests shard sends.
func bruteForce(st Stage, ds *datasets.Dataset, first int, shard Shard) (sessions, requests int) {
	st.Schedule = nil
	for range st.Sessions(Shard{}, ds, first) {
		sessions++
	}
	for s := range st.Sessions(shard, ds, first) {
		requests += s.Turns
	}
	return sessions, requests
}

// turnsDataset has conversations of the given turn counts.
func turnsDataset(turns []int) *datasets.Dataset {
	ds := &datasets.Dataset{Name: "turns"}
	for i, n := range turns {
		c := datasets.Conversation{ID: fmt.Sprint(i)}
		for range n {
			c.Turns = append(c.Turns, datasets.Turn{Text: "x"})
		}
		ds.Conversations = append(ds.Conversations, c)
	}
	return ds
}

// TestPlanArithmeticMatchesAWalk: the sessions a stage starts and the
// requests each shard sends, worked out without walking, are what walking
// the plan gives, for datasets of equal and of differing turns, taken in
// order or sampled, from any first conversation, bounded by requests,
// sessions or both.
func TestPlanArithmeticMatchesAWalk(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 400 {
		n := 1 + rng.IntN(12)
		turns := make([]int, n)
		same := rng.IntN(3) == 0
		for i := range turns {
			turns[i] = 1 + rng.IntN(4)
			if same {
				turns[i] = turns[0]
			}
		}
		ds := turnsDataset(turns)
		tt := newTurnTable(ds)
		st := Stage{Phase: metrics.Profile, Count: rng.IntN(90)}
		if rng.IntN(4) == 0 || st.Count == 0 {
			st.SessionCount = 1 + rng.IntN(40)
		}
		if rng.IntN(3) == 0 {
			st.Pick = datasets.NewSampler(datasets.SampleShuffle, n, uint64(trial)).Pick
		}
		first := rng.IntN(3 * n)
		wantSessions, _ := bruteForce(st, ds, first, Shard{})
		sessions, exact := tt.stageSessions(&st, first)
		if !exact || sessions != int64(wantSessions) {
			t.Fatalf("trial %d (turns %v, count %d, sessions ≤ %d, first %d, sampled %v): %d sessions (exact %v), the walk %d",
				trial, turns, st.Count, st.SessionCount, first, st.Pick != nil, sessions, exact, wantSessions)
		}
		for _, shards := range []int{1, 2, 3, 5} {
			for i := range shards {
				sh := Shard{Index: i, Count: shards}
				_, want := bruteForce(st, ds, first, sh)
				got, exact := tt.stageRequests(&st, first, sessions, sh)
				if !exact || got != int64(want) {
					t.Fatalf("trial %d (turns %v, count %d, sessions ≤ %d, first %d), shard %v: %d requests, the walk %d",
						trial, turns, st.Count, st.SessionCount, first, sh, got, want)
				}
			}
		}
	}
}

// TestPlanningDoesNotGrowWithTheCount: a request count of 10¹¹ plans (the
// stages' firsts, every shard's requests) at once, in order and in
// sessions of differing turns, for users too, and the shards' requests
// still add up to the whole plan's.
func TestPlanningDoesNotGrowWithTheCount(t *testing.T) {
	t.Parallel()
	const huge = 99_999_999_999
	users := func() *schedule.UserPlan {
		p, err := schedule.Users(50, 1000, 1, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name   string
		ds     *datasets.Dataset
		stages func() []Stage
	}{
		{"single turn", turnsDataset([]int{1, 1, 1}), func() []Stage {
			return []Stage{{Phase: metrics.Warmup, Limit: schedule.Constant(2), Count: huge}, {Phase: metrics.Profile, Limit: schedule.Constant(2), Count: huge}}
		}},
		{"turns that differ, in order", turnsDataset([]int{1, 3, 2, 5, 4, 1, 1}), func() []Stage {
			return []Stage{{Phase: metrics.Profile, Limit: schedule.Constant(2), Count: huge}, {Phase: metrics.Profile, Limit: schedule.Constant(4), Count: huge}}
		}},
		{"sessions", turnsDataset([]int{2, 3}), func() []Stage {
			return []Stage{{Phase: metrics.Profile, Limit: schedule.Constant(2), SessionCount: huge}}
		}},
		{"users", turnsDataset([]int{1, 2}), func() []Stage {
			return []Stage{{Phase: metrics.Profile, Users: users(), Count: huge}}
		}},
	} {
		start := time.Now()
		whole := PlannedRequests(tc.stages(), tc.ds, Shard{})
		sum := 0
		for i := range 7 {
			sum += PlannedRequests(tc.stages(), tc.ds, Shard{Index: i, Count: 7})
		}
		firsts := newTurnTable(tc.ds).firsts(tc.stages())
		if el := time.Since(start); el > time.Second {
			t.Errorf("%s: planning took %s", tc.name, el)
		}
		if whole <= huge/10 || sum != whole {
			t.Errorf("%s: %d requests planned, shards' add to %d", tc.name, whole, sum)
		}
		if len(firsts) > 1 && firsts[1] <= huge/10 {
			t.Errorf("%s: the second stage starts at %d", tc.name, firsts[1])
		}
	}
	// Sampled sessions of differing turns cannot be counted without a walk:
	// past planWalk sessions the shards' requests are their share of the
	// count, which still adds up.
	ds := turnsDataset([]int{1, 2, 3})
	sampled := func() []Stage {
		return []Stage{{Phase: metrics.Profile, Limit: schedule.Constant(2), Count: huge,
			Pick: datasets.NewSampler(datasets.SampleRandom, 3, 1).Pick}}
	}
	sum := 0
	for i := range 3 {
		sum += PlannedRequests(sampled(), ds, Shard{Index: i, Count: 3})
	}
	if whole := PlannedRequests(sampled(), ds, Shard{}); whole != huge || sum != huge {
		t.Errorf("sampled: %d requests planned, shards' add to %d, want %d", whole, sum, huge)
	}
}

// TestLookaheadBoundsItsBodies: with the dispatcher held (one slot, a
// server that does not answer), the lookahead builds bodies ahead only up
// to LookaheadBytes (and one more), however many starts it prepares.
func TestLookaheadBoundsItsBodies(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer ts.Close()
	defer close(release)
	text := strings.Repeat("lorem ipsum ", 4<<20/12) // one string, shared by every turn
	ds := &datasets.Dataset{Name: "long"}
	for i := range 8 {
		ds.Conversations = append(ds.Conversations, datasets.Conversation{ID: fmt.Sprint(i), Turns: []datasets.Turn{{Text: text}}})
	}
	g, err := New(ts.URL, chat(true), ds, discard{}, WithGracePeriod(0))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- g.Run(ctx, []Stage{{Phase: metrics.Profile, Limit: schedule.Constant(1), Count: 1000}})
	}()
	// Wait for the lookahead to fill up to its bound, then to stop building
	// (it is held): a busy machine may start it late and build a 4 MiB body
	// slowly, so stillness counts only once the bound is in reach.
	body := int64(len(text))
	last, still := int64(-1), 0
	for deadline := time.Now().Add(30 * time.Second); still < 20 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		if n := g.ahead.Load(); n == last && n >= LookaheadBytes-body {
			still++
		} else {
			last, still = n, 0
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if last < LookaheadBytes-body || last > LookaheadBytes+2*body {
		t.Errorf("%d MiB of bodies built ahead, want LookaheadBytes (%d MiB) and one more", last>>20, LookaheadBytes>>20)
	}
}

// TestAHugePlanStartsAtOnce is `surge profile --concurrency 2
// --request-count 99999999999` at the library's level: the first request
// goes out at once, whatever the count, the dataset (held with turns that
// differ, or synthetic prompts built on demand and sampled), and an
// interrupt ends the run at once.
func TestAHugePlanStartsAtOnce(t *testing.T) {
	t.Parallel()
	const huge = 99_999_999_999
	lazy, _, err := datasets.Load(datasets.Options{OnDemand: true, Seed: 1,
		Synthetic: datasets.SyntheticOptions{ISL: 32, OSL: 4, Turns: 2, TurnsStddev: 1}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		ds   *datasets.Dataset
		st   Stage
	}{
		{"held, turns that differ", turnsDataset([]int{1, 3, 2}), Stage{Limit: schedule.Constant(2), Count: huge}},
		{"on demand, sampled", lazy, Stage{Limit: schedule.Constant(2), Count: huge,
			Pick: datasets.NewSampler(datasets.SampleShuffle, lazy.Len(), 1).Pick}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := &streamServer{ttft: time.Millisecond, itl: time.Millisecond, tokens: 2}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			sink := &collectSink{}
			col := metrics.NewCollector(metrics.WithSink(sink))
			g, err := New(ts.URL, chat(true), tc.ds, col, WithGracePeriod(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			start := time.Now()
			go func() {
				done <- g.Run(ctx, []Stage{{Phase: metrics.Warmup, Limit: schedule.Constant(2), Count: huge}, tc.st})
			}()
			for g.nextIndex.Load() < 5 {
				if time.Since(start) > 10*time.Second {
					t.Fatal("no request in 10 s")
				}
				time.Sleep(time.Millisecond)
			}
			first := time.Since(start)
			cancel()
			stopped := time.Now()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the run went on 10 s after the interrupt")
			}
			col.Close()
			t.Logf("5 requests after %s; stopped %s after the interrupt", first, time.Since(stopped))
			if len(sink.recs) == 0 {
				t.Error("no record")
			}
		})
	}
}
