package metrics

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/surgebench/surge/metrics/stats"
)

// slotHeap is the times a server's slots come free.
type slotHeap []int64

func (h slotHeap) Len() int           { return len(h) }
func (h slotHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h slotHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *slotHeap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *slotHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// simulateSweep runs a closed-loop concurrency sweep against a simulated
// server of 6 slots (a request waits in FIFO order for a free slot; its
// prefill, per-token time and length vary at random, and every busy slot
// slows the others' tokens by a quarter, as on shared CPU cores) and
// returns the collector's summary. Throughput gains 60%, 43%, ≈ 16% and
// 0% from stage to stage: concurrency 8 is close to the knee rule's 10%,
// so few requests per stage cannot tell whether the knee is at 8 or 16.
func simulateSweep(seed uint64, perStage int, values []float64) *Summary {
	return simulateDrift(seed, perStage, values, nil)
}

// simulateDrift is simulateSweep on a server whose speed drifts: every
// token takes drift(t) times as long at time t (nil: 1).
func simulateDrift(seed uint64, perStage int, values []float64, drift func(t int64) float64) *Summary {
	const slots = 6
	r := rand.New(rand.NewPCG(seed, 7))
	logn := func(sigma float64) float64 { return math.Exp(sigma*r.NormFloat64() - sigma*sigma/2) }
	col := NewCollector(WithShards(2), WithStages("concurrency", values))
	var idx int64
	start := int64(1e6)
	for stage, v := range values {
		c := int(v)
		free := &slotHeap{}
		for range slots {
			heap.Push(free, start)
		}
		next := make([]int64, c) // each client's next send
		for i := range next {
			next[i] = start + int64(i)*1000
		}
		end := start
		for n := 0; n < perStage; n++ {
			ci := 0
			for i := range next {
				if next[i] < next[ci] {
					ci = i
				}
			}
			sent := next[ci]
			begin := max(sent, heap.Pop(free).(int64))
			busy := 1 // this request's slot, and those still running at its start
			for _, f := range *free {
				if f > begin {
					busy++
				}
			}
			prefill := int64(20e6 * logn(0.3))
			slow := 1.0
			if drift != nil {
				slow = drift(begin)
			}
			perToken := int64(10e6 * (1 + 0.25*float64(busy-1)) * logn(0.3) * slow)
			osl := 32 + r.IntN(65)
			tokens := make([]int64, osl)
			at := begin + prefill
			for k := range tokens {
				tokens[k] = at
				at += perToken
			}
			done := tokens[osl-1]
			heap.Push(free, done)
			next[ci] = done
			end = max(end, done)
			col.Add(&Record{Index: idx, Stage: stage, Streamed: true, SentNs: sent, EndNs: done, TokenNs: tokens,
				FirstContentNs: tokens[0], Usage: Usage{Present: true, CompletionTokens: osl}})
			idx++
		}
		start = end + 1e6
	}
	s := col.Close()
	return s
}

// TestKneeNeverFlips runs the same simulated sweep with different seeds
// (runs of one benchmark): at 64 requests per stage, as in the issue, and
// at 2,000. Any two runs either name the same knee or at least one says
// inconclusive; never two different confident answers. The point
// estimates alone (Knee) do flip between these runs (knee at 8, at 16, or
// none), and with enough requests the verdict is confident and right.
func TestKneeNeverFlips(t *testing.T) {
	t.Parallel()
	values := []float64{1, 2, 4, 8, 16}
	for _, perStage := range []int{64, 2000} {
		seeds := 8
		if perStage > 1000 {
			seeds = 3
		}
		var confident []int
		pointKnees := map[int]bool{}
		for seed := range uint64(seeds) {
			s := simulateSweep(seed, perStage, values)
			pts := make([]StagePoint, len(s.Stages))
			for i, st := range s.Stages {
				pts[i] = StagePoint{st.Value, st.TTFT.P95, st.OutputTokenThroughput}
				if st.TTFTP95CI == nil || st.OutputTokenThroughputCI == nil {
					t.Fatalf("stage %d has no intervals", i)
				}
			}
			k, _ := Knee(pts, 0)
			pointKnees[k] = true
			s.MarkKnee(0)
			v := s.KneeVerdict
			t.Logf("%d per stage, seed %d: %s (points alone: knee %d)", perStage, seed, v, k)
			if v.Inconclusive {
				if v.Suggested <= int64(perStage) {
					t.Errorf("inconclusive, suggesting %d requests per stage: no more than the %d run", v.Suggested, perStage)
				}
				continue
			}
			confident = append(confident, v.Knee)
		}
		for _, k := range confident {
			if k != confident[0] {
				t.Fatalf("%d per stage: confident knees %v differ between runs", perStage, confident)
			}
		}
		if perStage == 64 && len(pointKnees) < 2 {
			t.Errorf("the point estimates agreed on every seed (%v): the case shows no flip", pointKnees)
		}
		if perStage == 2000 && (len(confident) == 0 || confident[0] != 4) {
			t.Errorf("2000 per stage: confident knees %v, want stage 4 (concurrency 16, where throughput stops growing) named", confident)
		}
	}
}

// TestKneeSure judges hand-made intervals: a sure knee, a stage that
// cannot be ruled either way, and a sweep that surely never saturates.
func TestKneeSure(t *testing.T) {
	t.Parallel()
	est := func(v, p95, lo95, hi95, tput, loT, hiT float64) StageEstimate {
		return StageEstimate{StagePoint: StagePoint{v, p95, tput}, P95CI: stats.Interval{Lo: lo95, Hi: hi95},
			ThroughputCI: stats.Interval{Lo: loT, Hi: hiT}, Requests: 100}
	}
	cases := []struct {
		name         string
		pts          []StageEstimate
		knee         int
		inconclusive bool
	}{
		{"sure knee at 2", []StageEstimate{
			est(1, 50, 45, 55, 10, 9, 11), est(2, 52, 47, 57, 20, 19.5, 20.5), est(4, 300, 250, 350, 20, 19.5, 20.5)}, 2, false},
		{"throughput gain within the noise", []StageEstimate{
			est(1, 50, 45, 55, 10, 9, 11), est(2, 300, 250, 350, 11, 8, 14)}, -1, true},
		{"latency near the factor", []StageEstimate{
			est(1, 50, 45, 55, 10, 9.5, 10.5), est(2, 100, 90, 110, 10, 9.5, 10.5)}, -1, true},
		{"surely no knee", []StageEstimate{
			est(1, 50, 45, 55, 10, 9, 11), est(2, 52, 47, 57, 20, 18, 22), est(4, 54, 49, 59, 40, 36, 44)}, -1, false},
		{"points alone say knee, intervals do not", []StageEstimate{
			est(1, 50, 30, 70, 10, 6, 14), est(2, 101, 60, 140, 10.5, 6, 15)}, -1, true},
	}
	for _, tc := range cases {
		v := KneeSure(tc.pts, 2)
		if v.Knee != tc.knee || v.Inconclusive != tc.inconclusive {
			t.Errorf("%s: %+v, want knee %d inconclusive %v", tc.name, v, tc.knee, tc.inconclusive)
		}
		if v.Inconclusive && (v.Suggested < 200 || v.Suggested > maxSuggestFactor*100) {
			t.Errorf("%s: %d suggested, want between 2× and %d× the 100 run", tc.name, v.Suggested, maxSuggestFactor)
		}
		if want := fmt.Sprintf("(%d suggested)", v.Suggested); v.Inconclusive && v.String() != "inconclusive: run more requests per stage "+want {
			t.Errorf("%s: %q", tc.name, v.String())
		}
	}
}

// wander is a server speed that wanders as real machines do (thermal
// limits, neighbours): the log of the time a token takes is an
// Ornstein–Uhlenbeck process with memory tau and spread sd, on a 100 ms
// grid over secs.
func wander(r *rand.Rand, tau, sd float64, secs int) func(int64) float64 {
	const dt = 0.1
	xs := make([]float64, int(float64(secs)/dt))
	a := math.Exp(-dt / tau)
	x := sd * r.NormFloat64()
	for i := range xs {
		x = a*x + sd*math.Sqrt(1-a*a)*r.NormFloat64()
		xs[i] = math.Exp(x)
	}
	return func(at int64) float64 { return xs[min(int(float64(at)/1e9/dt), len(xs)-1)] }
}

// TestStageThroughputUnderDrift is issue 50's drifting machine: the
// server's speed wanders (20% spread, 10 s memory) and twelve runs of the
// same 600-request stage at concurrency 4 (about 170 s each) catch it
// wandering differently. The batch-means intervals see the drift inside
// each stage and widen with it: pairs of runs whose intervals do not
// overlap stay rare. The interval that treated the requests as
// independent (the coefficients of variation of OSL and latency over √n,
// plus one latency over the stage's length: this file's formula before
// batch means) kept its width whatever the drift, and a quarter of the
// pairs did not overlap.
func TestStageThroughputUnderDrift(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 1))
	type span struct{ lo, hi float64 }
	var bm, iid []span
	const runs = 12
	for run := range runs {
		st := simulateDrift(uint64(run), 600, []float64{4, 5}, wander(r, 10, 0.2, 2000)).Stages[0]
		ci, v := st.OutputTokenThroughputCI, st.OutputTokenThroughput
		bm = append(bm, span{ci.Lo, ci.Hi})
		const cvOSL = 0.2887 // OSL is uniform on 32 … 96
		rel := 1.959964*(cvOSL+st.Latency.Std/st.Latency.Avg)/math.Sqrt(float64(st.RequestCount)) +
			st.Latency.Avg/1000/st.DurationSec
		iid = append(iid, span{v * (1 - rel), v * (1 + rel)})
		t.Logf("run %d: %.0f tokens/s, batch means %.0f–%.0f (%s), i.i.d. ±%.1f%%", run, v, ci.Lo, ci.Hi,
			FormatHalfWidth((ci.Hi-ci.Lo)/2/v), 100*rel)
	}
	disjoint := func(s []span) int {
		n := 0
		for i := range s {
			for j := i + 1; j < len(s); j++ {
				if s[i].hi < s[j].lo || s[j].hi < s[i].lo {
					n++
				}
			}
		}
		return n
	}
	pairs := runs * (runs - 1) / 2
	t.Logf("disjoint pairs of %d: batch means %d, i.i.d. %d", pairs, disjoint(bm), disjoint(iid))
	if d := disjoint(bm); d*20 > pairs {
		t.Errorf("batch means: %d of %d pairs of identical runs gave disjoint intervals, want at most 5%%", d, pairs)
	}
	if d := disjoint(iid); d*6 < pairs {
		t.Errorf("i.i.d.: only %d of %d pairs disjoint: the drift is too weak to tell the methods apart", d, pairs)
	}
}

// TestSuggestionStable: identical runs that cannot settle the knee suggest
// about the same requests per stage (issue 50: 111 and 2,400 before).
func TestSuggestionStable(t *testing.T) {
	t.Parallel()
	var got []int64
	for seed := range uint64(8) {
		s := simulateSweep(seed, 300, []float64{1, 2, 4, 8, 16})
		s.MarkKnee(0)
		if v := s.KneeVerdict; v.Inconclusive {
			got = append(got, v.Suggested)
		}
	}
	if len(got) < 3 {
		t.Fatalf("%d inconclusive runs of 8 (%v): the case does not test the suggestion", len(got), got)
	}
	lo, hi := slices.Min(got), slices.Max(got)
	if float64(hi) > 2*float64(lo) {
		t.Errorf("suggestions %v: they differ by more than a factor of 2", got)
	}
	t.Logf("suggested requests per stage: %v", got)
}

func TestRoundUp2(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		x    float64
		want int64
	}{{1234, 1300}, {1200, 1200}, {99.1, 100}, {7.2, 8}, {0, 0}, {math.Inf(1), 0}} {
		if got := roundUp2(c.x); got != c.want {
			t.Errorf("roundUp2(%g) = %d, want %d", c.x, got, c.want)
		}
	}
}
