package metrics

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
)

// withSpec is a streamed record whose server reported spec decoding.
func withSpec(i int, sd SpecDecode) *Record {
	r := streamed(i, "a b c", 3, 3)
	r.SpecDecode = sd
	return r
}

func specOf(steps, acc, drafted int32, counts ...uint16) SpecDecode {
	s := SpecDecode{Engine: SpecVLLM, Steps: steps, Accepted: acc, Drafted: drafted, Buckets: uint8(len(counts))}
	copy(s.Hist[:], counts)
	return s
}

// TestSpecDecodeMetrics: AIPerf's worked numbers. Two requests, 8 steps
// accepting 18 of 32 drafts and 3 steps accepting 2 of 12: per-request
// acceptance lengths 3.25 and 1.667 (mean 2.458), token-weighted
// 1 + 20/11, overall draft acceptance 20/44; the pooled histogram sums
// to the 11 steps. A zero-step request and a rejected payload are
// counted apart, out of the per-request metrics.
func TestSpecDecodeMetrics(t *testing.T) {
	t.Parallel()
	c := NewCollector(WithShards(1))
	c.Add(withSpec(0, specOf(8, 18, 32, 1, 1, 2, 3, 1)))
	c.Add(withSpec(1, specOf(3, 2, 12, 1, 2)))
	c.Add(withSpec(2, specOf(0, 0, 0, 0)))
	c.Add(withSpec(3, SpecDecode{Engine: SpecSGLang, Drafted: -1, Rejected: true}))
	c.Add(streamed(4, "no spec", 2, 2))
	s := c.Close()

	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if d := s.Metrics[SpecAcceptanceLength]; d.Count != 2 {
		t.Fatalf("acceptance length over %d requests, want 2", d.Count)
	} else {
		near("mean acceptance length", d.Avg, (3.25+(1+2.0/3))/2)
	}
	near("mean draft acceptance rate", s.Metrics[SpecDraftAcceptanceRate].Avg, (100*18.0/32+100*2.0/12)/2)
	near("accepted per verified", s.Metrics[SpecAcceptedPerVerified].Max, (18.0+8)/(32+8))
	near("total steps", s.Run[TotalSpecSteps], 11)
	near("token-weighted acceptance length", s.Run[SpecTokenWeightedAcceptanceLength], 1+20.0/11)
	near("overall draft acceptance rate", s.Run[SpecOverallDraftAcceptanceRate], 100*20.0/44)
	near("zero-step requests", s.Run[SpecZeroStepRequests], 1)
	if want := []int64{2, 3, 2, 3, 1}; !slices.Equal(s.SpecHistogram, want) {
		t.Errorf("pooled histogram %v, want %v", s.SpecHistogram, want)
	}
	warningWith(t, s.Warnings, "1 responses carried speculative-decoding counts that contradict each other")
	if got := SpecHistogramLine(s.SpecHistogram); got != "Accepted drafts per step (% of steps):  0: 18%  1: 27%  2: 18%  3: 27%  4: 9%" {
		t.Errorf("console line %q", got)
	}

	// The state file keeps the pool: a summary read back has it.
	b, err := json.Marshal(c.State())
	if err != nil {
		t.Fatal(err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	back := st.Summary()
	if !slices.Equal(back.SpecHistogram, s.SpecHistogram) || back.Run[SpecZeroStepRequests] != 1 {
		t.Errorf("read back: histogram %v, zero-step %v", back.SpecHistogram, back.Run[SpecZeroStepRequests])
	}
}

// TestSpecDecodeWithoutProposedCounts: SGLang's verify count alone gives
// the acceptance length, no draft acceptance rate; a run that mixes
// requests with and without proposed counts has no overall rate (its
// sums would cover different requests).
func TestSpecDecodeWithoutProposedCounts(t *testing.T) {
	t.Parallel()
	c := NewCollector(WithShards(1))
	c.Add(withSpec(0, SpecDecode{Engine: SpecSGLang, Steps: 4, Accepted: 6, Drafted: -1}))
	c.Add(withSpec(1, specOf(2, 2, 4)))
	s := c.Close()
	if d := s.Metrics[SpecAcceptanceLength]; d.Count != 2 {
		t.Errorf("acceptance length over %d requests, want 2", d.Count)
	}
	if d := s.Metrics[SpecDraftAcceptanceRate]; d.Count != 1 {
		t.Errorf("draft acceptance rate over %d requests, want 1", d.Count)
	}
	if _, ok := s.Run[SpecOverallDraftAcceptanceRate]; ok {
		t.Errorf("overall draft acceptance rate %v over mixed requests", s.Run[SpecOverallDraftAcceptanceRate])
	}
}
