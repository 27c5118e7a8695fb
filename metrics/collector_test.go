package metrics

import (
	"strings"
	"testing"
	"time"
)

func TestSnapshotIsLive(t *testing.T) {
	t.Parallel()
	var now int64 = int64(5 * time.Second)
	c := NewCollector(WithShards(2), WithClock(func() int64 { return now }), WithStages("concurrency", []float64{1, 2}))
	c.SetStage(0)
	c.Started(Warmup)
	for i := range 4 {
		c.Started(Profile)
		// A long generation's first token shows up before it finishes.
		c.FirstToken(int64(i), Profile, int64(20+i)*int64(time.Millisecond))
		c.Tokens(int64(i), int64(3*time.Second), 10)
	}
	s := c.Snapshot()
	if s.Started != 4 || s.Finished != 0 || s.InFlight != 5 {
		t.Errorf("started/finished/in-flight %d/%d/%d, want 4/0/5 (warmup in flight too)", s.Started, s.Finished, s.InFlight)
	}
	if q := s.Run[string(TTFT)]; q.Count != 4 || q.P50 < 20 || q.P50 > 23 {
		t.Errorf("live TTFT %+v, want 4 samples of 20–23 ms before any request finished", q)
	}
	if w := s.Window[string(TTFT)]; w.Count != 4 {
		t.Errorf("window TTFT %+v, want the 4 first tokens", w)
	}
	if len(s.Timeline) != 5 || s.Timeline[3].OutputTokens != 40 || s.OutputTokens != 40 {
		t.Errorf("timeline %+v / %d tokens, want 40 tokens in second 3", s.Timeline, s.OutputTokens)
	}
	for i := range 4 {
		c.Add(&Record{Index: int64(i), Phase: Profile, Stage: 0, SentNs: int64(time.Second), EndNs: int64(4 * time.Second),
			Streamed: true, TokenNs: []int64{int64(time.Second) + int64(20+i)*int64(time.Millisecond), int64(4 * time.Second)}})
	}
	c.Add(&Record{Index: 9, Phase: Profile, Stage: 0, SentNs: 1, EndNs: 2, Err: &Error{Type: "timeout"}})
	c.SetStage(1)
	s = c.Snapshot()
	if s.Finished != 5 || s.Failed != 1 || s.Errors["timeout"] != 1 {
		t.Errorf("finished/failed/errors %d/%d/%v", s.Finished, s.Failed, s.Errors)
	}
	if len(s.Stages) != 1 || s.Stages[0].RequestCount != 4 || s.Stages[0].Value != 1 || s.Stages[0].ErrorRequestCount != 1 {
		t.Errorf("finished stages %+v, want stage 0 with 4 ok and 1 error", s.Stages)
	}
	if q := s.Run[string(RequestLatency)]; q.Count != 4 || q.P50 != 3000 {
		t.Errorf("latency %+v, want 4 × 3000 ms", q)
	}
	sum := c.Close()
	if len(sum.Stages) != 1 || sum.Run[RequestCount] != 4 {
		t.Errorf("summary stages %d, request_count %v", len(sum.Stages), sum.Run[RequestCount])
	}
}

func TestTimelineRingWraps(t *testing.T) {
	t.Parallel()
	var s tokenSlot
	s.add(3, 10)
	s.add(3, 5)
	if got := s.get(3); got != 15 {
		t.Errorf("second 3: %d tokens, want 15", got)
	}
	// timelineSlots seconds later the same slot starts over.
	later := int64(3 + timelineSlots)
	s.add(later, 7)
	if s.get(3) != 0 || s.get(later) != 7 {
		t.Errorf("after the wrap: second 3 %d, second %d %d; want 0 and 7", s.get(3), later, s.get(later))
	}
}

func TestSnapshotAndSummaryCarryReadDelay(t *testing.T) {
	t.Parallel()
	c := NewCollector(WithShards(2), WithClock(func() int64 { return 0 }))
	for i := range 4 {
		c.Add(&Record{Index: int64(i), SentNs: 1e6, EndNs: 9e6, Streamed: true, KernelStamps: true,
			TokenNs: []int64{5e6, 9e6}, ReadDelayNs: []int32{int32(i+1) * 1e6, 0}})
	}
	var snap Snapshot
	for range 100 { // records reach their shards asynchronously
		if snap = c.Snapshot(); snap.Finished == 4 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if snap.ReadDelay.Count != 8 || snap.ReadDelayMax != 4 {
		t.Errorf("snapshot read delay %+v max %v, want 8 values, max 4 ms", snap.ReadDelay, snap.ReadDelayMax)
	}
	s := c.Close()
	if d := s.Metrics[ClientReadDelay]; d.Count != 8 || d.Max != 4 || s.TimestampSource != "kernel" {
		t.Errorf("summary read delay %+v, source %q", d, s.TimestampSource)
	}
	if len(s.Warnings) == 0 || !strings.Contains(s.Warnings[len(s.Warnings)-1], "client read delay") {
		t.Errorf("no read-delay warning in %q", s.Warnings)
	}
}
