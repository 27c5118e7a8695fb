package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// traceDataset is n agent traces of turns standalone turns (each carries
// its context), delay apart, recorded work apart.
func traceDataset(n, turns int, delay, work time.Duration) *datasets.Dataset {
	ds := &datasets.Dataset{Name: "traces"}
	for i := range n {
		c := datasets.Conversation{ID: fmt.Sprintf("trace-%d", i)}
		at := time.Duration(0)
		for j := range turns {
			t := datasets.Turn{Text: fmt.Sprintf("context of %d up to call %d", i, j), InputTokens: 8 + j, MaxTokens: 4,
				Standalone: true, Timestamp: at, HasTimestamp: true}
			if j > 0 {
				t.Delay = delay
			}
			at += work + delay
			c.Turns = append(c.Turns, t)
		}
		ds.Conversations = append(ds.Conversations, c)
	}
	return ds
}

// TestNewReplay: each lane's start is drawn within the ratios, at most its
// last but one turn, the same for the same seed; a conversation whose
// turns do not carry their context cannot start part-way.
func TestNewReplay(t *testing.T) {
	t.Parallel()
	ds := traceDataset(4, 8, 0, 0)
	r, err := NewReplay(ds, 8, 0.25, 0.75, 7)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := NewReplay(ds, 8, 0.25, 0.75, 7)
	if !slices.Equal(r.Starts, again.Starts) {
		t.Fatalf("seed 7 gave %v, then %v", r.Starts, again.Starts)
	}
	differs := false
	for seed := uint64(1); seed < 20 && !differs; seed++ {
		o, _ := NewReplay(ds, 8, 0.25, 0.75, seed)
		differs = !slices.Equal(o.Starts, r.Starts)
	}
	if !differs {
		t.Error("the starts do not depend on the seed")
	}
	for i, s := range r.Starts {
		// k in [floor(.25·8), min(floor(.75·8), 6)] = [2, 6]; the profile
		// starts after it.
		if s.Conversation != i%4 || s.Turn < 3 || s.Turn > 7 {
			t.Errorf("lane %d starts at %+v", i, s)
		}
	}
	if !r.Primed() {
		t.Error("no lane is primed")
	}
	full, _ := NewReplay(ds, 2, 0, 0, 7)
	if full.Primed() || full.Starts[1] != (Trajectory{Conversation: 1}) {
		t.Errorf("ratios 0: starts %v", full.Starts)
	}
	chat := agentDataset(2, 4)
	if _, err := NewReplay(chat, 2, 0.5, 0.5, 1); err == nil {
		t.Error("a conversation that needs its history started part-way")
	}
	for _, bad := range [][2]float64{{-0.1, 0.5}, {0.6, 0.5}, {0, 1.5}} {
		if _, err := NewReplay(ds, 2, bad[0], bad[1], 1); err == nil {
			t.Errorf("ratios %v accepted", bad)
		}
	}
}

// bodyRecorder keeps every body the mock is sent, with its max_tokens.
type bodyRecorder struct {
	mu   sync.Mutex
	caps []int
}

func (b *bodyRecorder) Body(_ int64, _ int, _ string, _ int, body []byte) {
	var v struct {
		Max int `json:"max_completion_tokens"`
	}
	_ = json.Unmarshal(body, &v)
	b.mu.Lock()
	b.caps = append(b.caps, v.Max)
	b.mu.Unlock()
}
func (b *bodyRecorder) EndSession(int64, int) {}

// runReplay runs stages over ds against the mock and returns the records
// in issue order.
func runReplay(t *testing.T, cfg mockserver.Config, ds *datasets.Dataset, stages []Stage) []*metrics.Record {
	t.Helper()
	ts := httptest.NewServer(mockserver.New(cfg))
	t.Cleanup(ts.Close)
	sink := &collectSink{}
	col := metrics.NewCollector(metrics.WithSink(sink))
	g, err := New(ts.URL, chat(true), ds, col, WithBodySink(&bodyRecorder{}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Run(ctx, stages); err != nil {
		t.Fatal(err)
	}
	col.Close()
	recs := sink.recs
	sort.Slice(recs, func(i, j int) bool { return recs[i].Index < recs[j].Index })
	return recs
}

// TestReplayPrimesThenResumes: the warmup sends each lane's turn before
// its start with one output token; the profile resumes every lane at its
// start and recycles lanes onto the next traces from their first turn.
func TestReplayPrimesThenResumes(t *testing.T) {
	t.Parallel()
	ds := traceDataset(3, 6, 5*time.Millisecond, time.Millisecond)
	r, err := NewReplay(ds, 3, 0.25, 0.75, 3)
	if err != nil {
		t.Fatal(err)
	}
	recs := runReplay(t, mockserver.Config{DefaultOutputTokens: 4}, ds, []Stage{
		{Phase: metrics.Warmup, Lanes: &LanePart{Replay: r, Part: Prime}},
		{Phase: metrics.Profile, Lanes: &LanePart{Replay: r, Part: Profile}, Count: 20},
	})
	first := map[string]int{}
	var warm, prof int
	for _, rec := range recs {
		if rec.Err != nil {
			t.Fatalf("record %d: %+v", rec.Index, rec.Err)
		}
		if rec.Phase == metrics.Warmup {
			warm++
			if rec.RequestedOSL != 1 {
				t.Errorf("primer %d asked for %d tokens, want 1", rec.Index, rec.RequestedOSL)
			}
			continue
		}
		prof++
		if _, ok := first[rec.ConversationID]; !ok {
			first[rec.ConversationID] = rec.TurnIndex
		}
	}
	if warm != 3 || prof != 20 {
		t.Fatalf("%d warmup and %d profile records", warm, prof)
	}
	for i, s := range r.Starts {
		id := ds.Conversations[s.Conversation].ID
		if first[id] != s.Turn {
			t.Errorf("lane %d: the profile's first request of %s is turn %d, want its start %d", i, id, first[id], s.Turn)
		}
	}
	// 20 requests past the starts: the lanes recycled, from turn 0.
	zeros := 0
	for _, rec := range recs {
		if rec.Phase == metrics.Profile && rec.TurnIndex == 0 {
			zeros++
		}
	}
	if zeros == 0 {
		t.Error("no lane recycled onto a trace's first turn")
	}
}

// TestReplayPhaseStarts: spread, a lane's first profile request waits its
// recorded think time; --burst-phase-starts sends them at once.
func TestReplayPhaseStarts(t *testing.T) {
	t.Parallel()
	const think = 300 * time.Millisecond
	for _, burst := range []bool{false, true} {
		ds := traceDataset(2, 4, think, time.Millisecond)
		r, _ := NewReplay(ds, 2, 0.5, 0.5, 1)
		r.Burst = burst
		recs := runReplay(t, mockserver.Config{DefaultOutputTokens: 2}, ds, []Stage{
			{Phase: metrics.Warmup, Lanes: &LanePart{Replay: r, Part: Prime}},
			{Phase: metrics.Profile, Lanes: &LanePart{Replay: r, Part: Profile}, Count: 2},
		})
		var warmEnd, profSent int64
		for _, rec := range recs {
			if rec.Phase == metrics.Warmup {
				warmEnd = max(warmEnd, rec.EndNs)
			} else if profSent == 0 || rec.SentNs < profSent {
				profSent = rec.SentNs
			}
		}
		gap := time.Duration(profSent - warmEnd)
		if burst && gap >= think || !burst && gap < think {
			t.Errorf("burst %v: the profile's first request came %v after the priming (think time %v)", burst, gap, think)
		}
	}
}

// TestReplayPrimeTakesRecordedThink: with the think times scaled to
// none (--conversation-turn-delay-ratio 0), the priming still spaces its
// lanes by the calls' recorded work, not by the recorded pauses, which no
// longer count: a trace's 2 s pause is not waited out.
func TestReplayPrimeTakesRecordedThink(t *testing.T) {
	t.Parallel()
	const pause = 2 * time.Second
	ds := traceDataset(2, 4, 0, time.Millisecond)
	slow := traceDataset(1, 4, pause, time.Millisecond).Conversations[0]
	slow.ID = "paused"
	ds.Conversations[0] = slow
	for i := range ds.Conversations {
		for j := range ds.Conversations[i].Turns {
			tn := &ds.Conversations[i].Turns[j]
			tn.RecordedDelay, tn.Delay = tn.Delay, 0 // as datasets.Load scales by 0
		}
	}
	r, err := NewReplay(ds, 2, 0.5, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	recs := runReplay(t, mockserver.Config{DefaultOutputTokens: 2}, ds, []Stage{
		{Phase: metrics.Warmup, Lanes: &LanePart{Replay: r, Part: Prime}},
	})
	if el := time.Since(start); len(recs) != 2 || el >= pause {
		t.Fatalf("%d primers in %v: the priming waited out a recorded pause of %v", len(recs), el, pause)
	}
	if got := recordedWork(slow.Turns, 1); got != time.Millisecond {
		t.Errorf("recorded work of a call followed by a %v pause: %v, want 1ms", pause, got)
	}
}

// TestReplayGraceAndPressure: the priming waits at most its grace for a
// slow primer, which is cancelled; the cache-pressure warmup replays with
// no think time and one-token outputs until its duration.
func TestReplayGraceAndPressure(t *testing.T) {
	t.Parallel()
	ds := traceDataset(2, 6, 200*time.Millisecond, time.Millisecond)
	r, _ := NewReplay(ds, 2, 0.5, 0.5, 1)
	r.Grace = 50 * time.Millisecond
	start := time.Now()
	recs := runReplay(t, mockserver.Config{TTFT: 2 * time.Second}, ds, []Stage{
		{Phase: metrics.Warmup, Lanes: &LanePart{Replay: r, Part: Prime}},
	})
	if el := time.Since(start); el > time.Second || len(recs) != 2 || recs[0].Err == nil || recs[0].Err.Type != ErrCancelled {
		t.Fatalf("after %v: %d records, first error %+v", el, len(recs), recs[0].Err)
	}

	r, _ = NewReplay(ds, 2, 0, 0, 1)
	recs = runReplay(t, mockserver.Config{DefaultOutputTokens: 3}, ds, []Stage{
		{Phase: metrics.Warmup, Lanes: &LanePart{Replay: r, Part: Pressure}, Duration: 150 * time.Millisecond},
		{Phase: metrics.Profile, Lanes: &LanePart{Replay: r, Part: Profile}, Count: 2},
	})
	warm := 0
	for _, rec := range recs {
		if rec.Phase == metrics.Warmup {
			warm++
			if rec.RequestedOSL != 1 {
				t.Errorf("a pressure request asked for %d tokens", rec.RequestedOSL)
			}
		}
	}
	// 150 ms with 200 ms think times between turns: only with none can a
	// lane send more than one request.
	if warm <= 2 {
		t.Errorf("%d pressure requests in 150 ms: the think times were kept", warm)
	}
}

// TestReplayIdleGapCap: while every lane waits, the waits move earlier so
// the replay idles at most the cap.
func TestReplayIdleGapCap(t *testing.T) {
	t.Parallel()
	ds := traceDataset(2, 3, 10*time.Second, time.Millisecond)
	r, _ := NewReplay(ds, 2, 0, 0, 1)
	r.IdleGapCap = 20 * time.Millisecond
	start := time.Now()
	recs := runReplay(t, mockserver.Config{DefaultOutputTokens: 2}, ds, []Stage{
		{Phase: metrics.Profile, Lanes: &LanePart{Replay: r, Part: Profile}, Count: 6},
	})
	if el := time.Since(start); len(recs) != 6 || el > 5*time.Second {
		t.Fatalf("%d records in %v: 10 s think times not capped", len(recs), el)
	}
	for i := 1; i < len(recs); i++ {
		if gap := time.Duration(recs[i].SentNs - recs[i-1].EndNs); gap > 2*time.Second {
			t.Errorf("the replay idled %v between requests %d and %d", gap, i-1, i)
		}
	}
}

// TestSessionAdmission: session starts come on their own clock; with an
// admission ceiling, a start that finds it full is turned away and
// counted, not queued behind it.
func TestSessionAdmission(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: 150 * time.Millisecond, DefaultOutputTokens: 2}))
	defer ts.Close()
	for _, admission := range []bool{true, false} {
		sched, err := schedule.Arrival(schedule.PatternConstant, 100, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		sink := &collectSink{}
		col := metrics.NewCollector(metrics.WithSink(sink))
		g, err := New(ts.URL, chat(true), testDataset(t, 8), col)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		// 20 starts 10 ms apart against 150 ms requests, at most 2 at once.
		err = g.Run(ctx, []Stage{{Schedule: sched, Limit: schedule.Constant(2), Admission: admission, Count: 20}})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		col.Close()
		got, rejected := len(sink.recs), g.RejectedSessions()
		switch {
		case admission && (rejected < 10 || int64(got)+rejected != 20):
			t.Errorf("admission: %d sent, %d rejected of 20 starts", got, rejected)
		case !admission && (rejected != 0 || got != 20):
			t.Errorf("queued: %d sent, %d rejected", got, rejected)
		}
	}
}
