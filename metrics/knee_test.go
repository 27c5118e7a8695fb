package metrics

import "testing"

func TestKnee(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		points        []StagePoint
		factor        float64
		knee, operate int
	}{
		{
			name: "no knee: latency flat, throughput scaling",
			points: []StagePoint{
				{1, 50, 10}, {2, 52, 20}, {4, 55, 40}, {8, 60, 78},
			},
			factor: 2, knee: -1, operate: -1,
		},
		{
			name: "knee at 3",
			points: []StagePoint{
				{1, 50, 10}, {2, 55, 20}, {4, 80, 38}, {8, 160, 40}, {16, 400, 41},
			},
			factor: 2, knee: 3, operate: 2,
		},
		{
			name: "flat throughput but latency under the factor is no knee yet",
			points: []StagePoint{
				{1, 50, 40}, {2, 70, 41}, {4, 99, 41}, {8, 130, 41},
			},
			factor: 2, knee: 3, operate: 2,
		},
		{
			name: "flat throughput, latency never doubles",
			points: []StagePoint{
				{1, 50, 40}, {2, 60, 40}, {4, 70, 40},
			},
			factor: 2, knee: -1, operate: -1,
		},
		{
			name: "latency blows up but throughput still gains >10%: keep going",
			points: []StagePoint{
				{1, 50, 10}, {2, 150, 20}, {4, 300, 30}, {8, 600, 32},
			},
			factor: 2, knee: 3, operate: 2,
		},
		{
			name: "exactly 10% gain is not saturated",
			points: []StagePoint{
				{1, 50, 10}, {2, 200, 11},
			},
			factor: 2, knee: -1, operate: -1,
		},
		{
			name: "factor 0 means 2",
			points: []StagePoint{
				{1, 50, 10}, {2, 101, 10.5},
			},
			factor: 0, knee: 1, operate: 0,
		},
		{
			name:   "custom factor 4",
			points: []StagePoint{{1, 50, 10}, {2, 150, 10}, {4, 250, 10}},
			factor: 4, knee: 2, operate: 1,
		},
		{name: "one stage", points: []StagePoint{{1, 50, 10}}, factor: 2, knee: -1, operate: -1},
		{name: "no stages", factor: 2, knee: -1, operate: -1},
	}
	for _, tt := range tests {
		knee, op := Knee(tt.points, tt.factor)
		if knee != tt.knee || op != tt.operate {
			t.Errorf("%s: Knee = (%d, %d), want (%d, %d)", tt.name, knee, op, tt.knee, tt.operate)
		}
	}
}

func TestMarkKnee(t *testing.T) {
	t.Parallel()
	stage := func(v, p95, tput float64, streamed bool) StageSummary {
		st := StageSummary{Value: v, OutputTokenThroughput: tput}
		st.Latency.P95 = p95
		if streamed {
			st.TTFT.P95, st.TTFT.Count = p95, 10
			st.Latency.P95 = 10 * p95 // must not be used when TTFT is there
		}
		return st
	}
	for _, streamed := range []bool{true, false} {
		s := &Summary{Knee: -1, Operating: -1, Stages: []StageSummary{
			stage(1, 50, 10, streamed), stage(2, 55, 20, streamed), stage(4, 200, 21, streamed),
		}}
		if !s.MarkKnee(0) || s.Knee != 2 || s.Operating != 1 || !s.Stages[2].Knee || s.Stages[1].Knee {
			t.Errorf("streamed %v: knee %d operating %d marks %v %v", streamed, s.Knee, s.Operating, s.Stages[1].Knee, s.Stages[2].Knee)
		}
	}
	one := &Summary{Knee: -1, Operating: -1, Stages: []StageSummary{stage(1, 50, 10, true)}}
	if one.MarkKnee(2) || one.Knee != -1 {
		t.Errorf("one stage: knee %d", one.Knee)
	}
}
