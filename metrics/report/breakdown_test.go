package report

import (
	"math"
	"testing"

	"github.com/surgebench/surge/metrics/artifact"
)

// A stacked bar per stage: each part's series is its running total from
// the client up, the tallest (delivery's) first; a part the server did
// not give adds nothing and names no source.
func TestBreakdownCharts(t *testing.T) {
	t.Parallel()
	bd := func(queue float64) artifact.Breakdown {
		p := func(src string, mean float64) artifact.Part { return artifact.Part{Count: 10, Source: src, Mean: mean} }
		return artifact.Breakdown{"client": p("client", 0.5), "network": {Source: "unknown", Mean: math.NaN()},
			"server_queue": p("mock", queue), "prefill": p("mock", 20), "decode": p("mock", 100), "delivery": p("mock", 0.5)}
	}
	sweep := &artifact.Run{Name: "sweep", Summary: &artifact.Summary{Stages: []artifact.Stage{
		{Index: 0, Mode: "concurrency", Value: 1, TimeBreakdown: bd(0)},
		{Index: 1, Mode: "concurrency", Value: 8, TimeBreakdown: bd(40)},
	}}}
	single := &artifact.Run{Name: "one", Summary: &artifact.Summary{Breakdown: bd(5)}}
	none := &artifact.Run{Name: "none", Summary: &artifact.Summary{}}
	charts := breakdownCharts([]*artifact.Run{sweep, none, single})
	if len(charts) != 2 {
		t.Fatalf("%d charts, want one per run with a breakdown", len(charts))
	}
	c := charts[0]
	if c.ID != "breakdown-0" || len(c.XStages) != 2 || c.XStages[1] != "8" || len(c.Series) != 6 {
		t.Fatalf("sweep chart %+v", c)
	}
	top := c.Series[0]
	if top.Label != "delivery (mock)" || top.Style != Bars || top.Y[0] != 121 || top.Y[1] != 161 || top.X[1] != 1.5 {
		t.Errorf("delivery's bar %+v", top)
	}
	if net := c.Series[4]; net.Label != "network" || net.Y[1] != 0.5 {
		t.Errorf("the unknown network part %+v", net)
	}
	if q := c.Series[3]; q.Label != "server queue (mock)" || q.Y[0] != 0.5 || q.Y[1] != 40.5 {
		t.Errorf("queue %+v", q)
	}
	if one := charts[1]; one.ID != "breakdown-2" || len(one.XStages) != 1 || one.XStages[0] != "one" || one.Series[0].Y[0] != 126 {
		t.Errorf("single run's chart %+v", one)
	}
}
