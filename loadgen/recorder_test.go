package loadgen

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// countingRecorder is a Recorder that only counts, to show the generator
// needs nothing of metrics.Collector beyond the interface.
type countingRecorder struct {
	mu                                sync.Mutex
	started, first, tokens, reasoning int
	records                           []*metrics.Record
	phases                            []metrics.Phase
	lastStage, lastLimit              int
}

func (r *countingRecorder) Started(metrics.Phase) { r.mu.Lock(); r.started++; r.mu.Unlock() }
func (r *countingRecorder) FirstToken(int64, metrics.Phase, int64) {
	r.mu.Lock()
	r.first++
	r.mu.Unlock()
}
func (r *countingRecorder) Tokens(_ int64, _ int64, n int) { r.mu.Lock(); r.tokens += n; r.mu.Unlock() }
func (r *countingRecorder) Reasoning(int64)                { r.mu.Lock(); r.reasoning++; r.mu.Unlock() }
func (r *countingRecorder) Add(rec *metrics.Record) {
	r.mu.Lock()
	r.records = append(r.records, rec)
	r.mu.Unlock()
}
func (r *countingRecorder) SetPhase(p metrics.Phase) {
	r.mu.Lock()
	r.phases = append(r.phases, p)
	r.mu.Unlock()
}
func (r *countingRecorder) SetStage(i int)       { r.mu.Lock(); r.lastStage = i; r.mu.Unlock() }
func (r *countingRecorder) SetConcurrency(n int) { r.mu.Lock(); r.lastLimit = n; r.mu.Unlock() }

func TestGeneratorReportsToAnyRecorder(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(&streamServer{ttft: time.Millisecond, itl: time.Millisecond, tokens: 3})
	defer ts.Close()
	rec := &countingRecorder{}
	g, err := New(ts.URL, chat(true), testDataset(t, 4), rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Run(context.Background(), []Stage{{Phase: metrics.Profile, Limit: schedule.Constant(2), Count: 6}}); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.started != 6 || len(rec.records) != 6 || rec.first != 6 || rec.tokens != 18 {
		t.Errorf("started %d records %d first tokens %d tokens %d, want 6, 6, 6, 18", rec.started, len(rec.records), rec.first, rec.tokens)
	}
	if len(rec.phases) == 0 || rec.phases[0] != metrics.Profile || rec.lastLimit != 2 {
		t.Errorf("phases %v limit %d, want profile and 2", rec.phases, rec.lastLimit)
	}
}
