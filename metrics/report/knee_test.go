package report

import (
	"slices"
	"testing"

	"github.com/surgebench/surge/metrics/artifact"
)

// TestInconclusiveKneeMarksNothing: a summary whose knee verdict is
// inconclusive names no stage, so the stage table and the curves mark no
// knee and no operating point (a missing index is not stage 0).
func TestInconclusiveKneeMarksNothing(t *testing.T) {
	s, err := artifact.ParseSummary([]byte(`{"stages": [
		{"mode": "concurrency", "value": 1, "output_token_throughput": 10},
		{"mode": "concurrency", "value": 2, "output_token_throughput": 20}],
		"knee": {"mode": "concurrency", "inconclusive": true, "unsettled_stage": 1, "unsettled_value": 2}}`))
	if err != nil {
		t.Fatal(err)
	}
	if k := s.Knee; k == nil || !k.Inconclusive || k.KneeStage != -1 || k.RecommendedStage != -1 {
		t.Fatalf("knee %+v, want inconclusive with no stage", k)
	}
	for _, row := range stageRows(s) {
		if row.Mark != "" {
			t.Errorf("stage %v marked %q", row.Value, row.Mark)
		}
	}
	for _, c := range sweepCharts([]*artifact.Run{{Name: "r", Summary: s}}) {
		for _, ser := range c.Series {
			if ser.Marker != "" {
				t.Errorf("%s: series %q marks the %s", c.ID, ser.Label, ser.Marker)
			}
		}
	}
}

// TestCurveOrder: one swept parameter joins its stages by value (a search
// probes 1, 2, 4, 8, 6, 5); labelled points of a grid keep their order.
func TestCurveOrder(t *testing.T) {
	st := func(label string, vs ...float64) []artifact.Stage {
		var out []artifact.Stage
		for _, v := range vs {
			out = append(out, artifact.Stage{Value: v, Label: label})
		}
		return out
	}
	if got := curveOrder(st("", 1, 2, 4, 8, 6, 5)); !slices.Equal(got, []int{0, 1, 2, 5, 4, 3}) {
		t.Errorf("search probes joined in order %v, want by value", got)
	}
	if got := curveOrder(st("c=2,isl=16", 4, 1, 2)); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("a grid's points joined in order %v, want as run", got)
	}
}
