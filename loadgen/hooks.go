package loadgen

import (
	"context"
	"math"
	"time"
)

// StageHooks run around each profile stage of a planned run (Run): Before
// once every stage before it has drained (with DrainWarmup the warmup
// drains first too, instead of flowing into the profile), After once the
// stage itself has drained, even when the run was interrupted. A Before
// error ends the run with it; After errors are returned with the run's.
type StageHooks struct {
	Before, After func(ctx context.Context, stage int) error
	DrainWarmup   bool
}

// WithStageHooks sets the hooks run around each profile stage: a
// server's KV-cache reset, its profiler's start and stop.
func WithStageHooks(h StageHooks) Option { return func(g *Generator) { g.hooks = h } }

// warmupDrain is how a warmup ends: whether the next stage waits for it,
// and how long its requests get once it stops issuing.
func (g *Generator) warmupDrain(st Stage) (drain bool, grace time.Duration) {
	switch {
	case st.Drain:
		return true, st.DrainGrace
	case g.hooks.DrainWarmup:
		return true, time.Duration(math.MaxInt64)
	}
	return false, 0
}

// beforeStage runs the Before hook of profile stage i, unless the run is
// ending.
func (g *Generator) beforeStage(ctx context.Context, i int) error {
	if g.hooks.Before == nil || ctx.Err() != nil {
		return nil
	}
	return g.hooks.Before(ctx, i)
}

// afterStage runs the After hook of profile stage i, under a context that
// an interrupt does not end (a profiler started must be stopped).
func (g *Generator) afterStage(ctx context.Context, i int) error {
	if g.hooks.After == nil {
		return nil
	}
	return g.hooks.After(context.WithoutCancel(ctx), i)
}
