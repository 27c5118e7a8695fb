package profile

import (
	"context"
	"fmt"
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
	var all, shared *datasets.Dataset
	out := &plan{sweep: sw, mode: sw.Mode()}
	for i := range sw.Points {
		ps, err := s.Point(i)
		if err != nil {
			return nil, nil, err
		}
		synthetic := ps.Dataset.Synthetic()
		ds := shared
		if synthetic || ds == nil {
			d, err := loadDataset(ctx, ps, tok, conversationsNeeded(ps), log)
			if err != nil {
				return nil, nil, err
			}
			ds = d
			if !synthetic {
				shared = d
			}
		}
		p, err := buildPlan(ps, ds)
		if err != nil {
			return nil, nil, err
		}
		base := 0
		switch {
		case all == nil:
			all = ds
		case synthetic:
			base = len(all.Conversations)
			for _, conv := range ds.Conversations {
				conv.ID = fmt.Sprintf("%s-v%d", conv.ID, i)
				all.Conversations = append(all.Conversations, conv)
			}
		}
		size := len(ds.Conversations)
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
	return out, all, nil
}
