package loadgen

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// Live describes a session whose load a Controller steers.
type Live struct {
	// Control holds the setting; every change starts a new stage.
	Control *Controller
	// Arrival builds the schedule of a request-rate stage (stage is the
	// stage's index, to vary the seed); nil means constant gaps.
	Arrival func(rate float64, stage int) (schedule.Schedule, error)
	// Cap is the concurrency cap of request-rate stages (0: unlimited).
	Cap int
	// Duration ends the whole session after this long (0: until ctx ends or
	// the controller finishes).
	Duration time.Duration
	// Count ends the session after this many requests in all (0: no limit).
	Count int
	// OnStage, when set, is told each stage as it starts (from RunLive's
	// goroutine).
	OnStage func(stage int, st ControlState)
}

// StageDefiner is what a Recorder also implements to name the stages of a
// live session as they start (metrics.Collector does): each stage's mode
// and value then reach the summary, as a sweep's do.
type StageDefiner interface {
	DefineStage(i int, mode string, value float64)
}

var _ StageDefiner = (*metrics.Collector)(nil)

// RunLive issues profile load at the controller's setting until ctx ends,
// the session's duration or count is reached, or the controller finishes.
// Each change to the setting ends the stage in progress and starts the
// next one at once: requests in flight are neither waited for nor
// cancelled, and keep the stage they were issued in, so each stage's
// summary is its own. A pause ends the stage; resuming starts a new one.
// Like Run, it returns once every issued request has become a record;
// cancelling ctx gives them the grace period.
func (g *Generator) RunLive(ctx context.Context, l Live) error {
	if l.Control == nil {
		return fmt.Errorf("live session without a controller")
	}
	ctx, g.abort = context.WithCancel(ctx)
	defer g.abort()
	if l.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, l.Duration)
		defer cancel()
	}
	grp := newDrainGroup(ctx)
	defer grp.cancel()
	g.col.SetPhase(metrics.Profile)
	g.startPrefillRamp(ctx)
	first := g.issued.Load()
	stage := 0
	for ctx.Err() == nil {
		changed := l.Control.Changed()
		st := l.Control.State()
		if st.Done {
			break
		}
		if st.Paused {
			// Nothing issues while paused; the stage index moves on only
			// when issuing resumes.
			g.col.SetConcurrency(0)
			select {
			case <-changed:
			case <-ctx.Done():
			}
			continue
		}
		left := 0
		if l.Count > 0 {
			left = l.Count - int(g.issued.Load()-first)
			if left <= 0 {
				break
			}
		}
		s, err := l.stage(st, stage, left)
		if err != nil {
			return err
		}
		if d, ok := g.col.(StageDefiner); ok {
			d.DefineStage(stage, st.Mode, st.Value)
		}
		g.col.SetStage(stage)
		if l.OnStage != nil {
			l.OnStage(stage, st)
		}
		stageCtx, endStage := context.WithCancel(ctx)
		var watch sync.WaitGroup
		watch.Go(func() {
			select {
			case <-changed:
				endStage()
			case <-stageCtx.Done():
			}
		})
		g.issue(stageCtx, grp.ctx, &grp.wg, s, stage, int(g.nextConv.Load()))
		endStage()
		watch.Wait()
		stage++
		select {
		case <-changed:
		default:
			// The stage ended by itself: its count was the session's
			// remainder, so the session is over.
			if ctx.Err() == nil {
				g.drain(ctx, &grp.wg, grp.cancel, false)
				g.col.SetStage(stage)
				return g.abortErr()
			}
		}
	}
	g.drain(ctx, &grp.wg, grp.cancel, ctx.Err() != nil)
	g.col.SetStage(stage)
	return g.abortErr()
}

// stage builds the Stage for a setting.
func (l *Live) stage(st ControlState, i, count int) (Stage, error) {
	s := Stage{Phase: metrics.Profile, Count: count}
	switch st.Mode {
	case ControlConcurrency:
		s.Limit = schedule.Constant(int(st.Value))
	case ControlRequestRate:
		s.Limit = schedule.Constant(l.Cap)
		if l.Arrival != nil {
			sched, err := l.Arrival(st.Value, i)
			if err != nil {
				return Stage{}, err
			}
			s.Schedule = sched
		} else {
			s.Schedule = schedule.ConstantRate(st.Value)
		}
	}
	return s, nil
}

// abortErr is Run's report of a failure-threshold stop.
func (g *Generator) abortErr() error {
	if g.aborted.Load() {
		return fmt.Errorf("%w: %d of %d finished requests failed (more than %.0f%%)",
			ErrFailureThreshold, g.failed.Load(), g.finished.Load(), 100*g.failThreshold)
	}
	return nil
}
