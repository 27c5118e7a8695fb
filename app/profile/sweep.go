package profile

import (
	"context"
	"io"

	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/datasets"
)

// planSweep plans every point of sw as the profile stage of the point's
// own spec (seeded --random-seed + the point's index, as AIPerf seeds a
// sweep's values), the warmup only before the first; each point takes
// prompts of its own when they are synthetic, else all share the dataset.
// That keeps the one collector, the per-stage folders, the sweep
// aggregate, the stage table and the report's sweep charts as they are,
// instead of a second runner beside Run; the points run back to back,
// each drained before the next.
func planSweep(ctx context.Context, s *spec.Spec, tok datasets.Tokenizer, log io.Writer) (*plan, *datasets.Dataset, error) {
	sw := s.Load.Sweep
	var parts []*datasets.Dataset // the synthetic points' own prompts, or the one shared dataset
	out := &plan{sweep: sw, mode: sw.Mode()}
	for i := range sw.Points {
		ps, err := s.Point(i)
		if err != nil {
			return nil, nil, err
		}
		synthetic := ps.Dataset.Synthetic()
		base := 0
		var ds *datasets.Dataset
		if synthetic || len(parts) == 0 {
			if ds, err = loadDataset(ctx, ps, tok, datasetCount(ps), log); err != nil {
				return nil, nil, err
			}
			for _, p := range parts {
				base += p.Len()
			}
			parts = append(parts, ds)
		} else {
			ds = parts[0]
		}
		p, err := buildPlan(ps, ds)
		if err != nil {
			return nil, nil, err
		}
		size := ds.Len()
		for _, st := range p.stages {
			inner := st.Conversation
			if inner == nil {
				inner = st.Pick
			}
			if inner == nil {
				inner = func(k int) int { return k }
			}
			st.Conversation = func(k int) int { return base + inner(k)%size }
			out.stages = append(out.stages, st)
		}
		if i == 0 {
			out.loadMode, out.target, out.rateCap, out.users = p.mode, p.target, p.rateCap, p.users
			out.loadStimulus = p.stimulus()
		}
		if p.total == 0 || (i > 0 && out.total == 0) {
			out.total = 0 // a point bounded by time: no planned count
		} else {
			out.total += p.total
		}
		out.values = append(out.values, sw.Value(i).Value)
	}
	all := parts[0]
	if len(parts) > 1 {
		all = datasets.Concat(parts[0].Name, parts[0].Type, parts, valueSuffix)
	}
	return out, all, nil
}
