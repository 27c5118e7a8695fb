package search

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/metrics"
)

// Live is the Prober of a real run: each probe sets a live session's
// Controller to the probe's value, which starts a new stage (so every probe
// is a stage of the export, with its own summary), and judges that stage's
// records as they finish. Hand it to the collector as a RecordSink and to
// loadgen.Live as its OnStage hook.
type Live struct {
	// Control is the live session's controller; its mode is the search's.
	Control *loadgen.Controller
	// Judging holds the objectives and probe lengths (a request-rate
	// search sets OfferedRate per probe itself).
	Judging Judging
	// Now is the run clock (monotonic ns since the start), as records use.
	Now func() int64
	// InFlight reports requests on the wire; after a failed probe the
	// session pauses until it is 0, so the next probe does not inherit a
	// queue. Nil skips the drain.
	InFlight func() int64
	// Settle is the start of each probe that is not judged, while the
	// previous probe's load clears (default: a fifth of MinDuration, at
	// most 1 s).
	Settle time.Duration
	// Tick is how often the judge reads the samples (100 ms).
	Tick time.Duration
	// OnUpdate, when set, sees the running judgement of the probe in
	// progress (for the dashboard and the simple UI).
	OnUpdate func(Probe)
	// NoKeepUp leaves out a request-rate probe's implicit objective that
	// requests finish at the offered rate (adaptive scale judges its SLAs
	// alone, as AIPerf's).
	NoKeepUp bool

	mu      sync.Mutex
	stage   int // the latest stage started, -1 before any
	stageAt int64
	state   loadgen.ControlState
	from    int // records of stages before it are not kept
	samples map[int][]Sample
	sent    map[int][]int64 // each sample's send time, for the settle cut
	failed  bool            // the previous probe failed: drain before the next
}

// NewLive returns a prober for a session steered by ctl.
func NewLive(ctl *loadgen.Controller, j Judging, now func() int64) *Live {
	return &Live{Control: ctl, Judging: j, Now: now, stage: -1, samples: map[int][]Sample{}, sent: map[int][]int64{}}
}

// OnStage is loadgen.Live's hook: it learns each stage as it starts.
func (l *Live) OnStage(stage int, st loadgen.ControlState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stage, l.stageAt, l.state = stage, l.Now(), st
}

// WriteRecord keeps the values the objectives need of each profile record
// of the probe in progress (it is a metrics.RecordSink; the shards call it
// concurrently).
func (l *Live) WriteRecord(r *metrics.Record, v *metrics.Values, _ bool) {
	if r.Phase != metrics.Profile {
		return
	}
	s := Sample{EndNs: r.EndNs, Failed: r.Failed(), Cancelled: r.Cancelled, Values: make([]float64, len(l.Judging.Objectives))}
	if r.Err != nil {
		s.Err = *r.Err
	}
	for i, o := range l.Judging.Objectives {
		s.Values[i] = math.NaN()
		if !o.Window() && !s.Failed {
			s.Values[i] = v.Get(metrics.Tag(o.Tag))
		}
	}
	s.Latency, s.TTFT, s.ITL = math.NaN(), math.NaN(), math.NaN()
	if !s.Failed {
		s.Tokens = v.Get(metrics.OSL)
		s.Latency, s.TTFT, s.ITL = v.Get(metrics.RequestLatency), v.Get(metrics.TTFT), v.Get(metrics.ITL)
	}
	sentNs := r.SentNs
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.Stage < l.from {
		return
	}
	l.samples[r.Stage] = append(l.samples[r.Stage], s)
	l.sent[r.Stage] = append(l.sent[r.Stage], sentNs)
}

// Probe runs one probe at value.
func (l *Live) Probe(ctx context.Context, value float64) (Probe, error) {
	tick := l.Tick
	if tick <= 0 {
		tick = 100 * time.Millisecond
	}
	j := l.Judging.withDefaults()
	settle := l.Settle
	if settle <= 0 {
		settle = min(time.Second, j.MinDuration/5)
	}
	if l.failed && l.InFlight != nil {
		if _, err := l.Control.Pause(); err != nil {
			return Probe{}, err
		}
		for l.InFlight() > 0 {
			if !loadgen.Sleep(ctx, tick) {
				return Probe{}, ctx.Err()
			}
		}
	}
	l.mu.Lock()
	before := l.stage
	l.mu.Unlock()
	st, err := l.Control.Set(value)
	if err != nil {
		return Probe{}, fmt.Errorf("search: probing %v: %w", value, err)
	}
	if st.Paused {
		if _, err := l.Control.Resume(); err != nil {
			return Probe{}, err
		}
	}
	// Wait for the stage the change started (none when the session was
	// already at value: the stage in progress is then the probe's, judged
	// on what it finishes from now on, a window of its own).
	var stage int
	var stageAt int64
	asked := l.Now()
	for {
		l.mu.Lock()
		stage, stageAt = l.stage, l.stageAt
		ok := l.stage >= 0 && l.state.Value == value && !l.state.Paused && (l.stage > before || l.state.Changes == l.Control.State().Changes)
		if ok {
			l.from = stage
			for k := range l.samples {
				if k < stage {
					delete(l.samples, k)
					delete(l.sent, k)
				}
			}
		}
		l.mu.Unlock()
		if ok {
			break
		}
		if !loadgen.Sleep(ctx, 10*time.Millisecond) {
			return Probe{}, ctx.Err()
		}
	}
	if rate := value; l.Control.State().Mode == loadgen.ControlRequestRate && !l.NoKeepUp {
		j.OfferedRate = rate
	}
	judgeFrom := stageAt + int64(settle)
	if stage == before {
		judgeFrom = max(judgeFrom, asked)
	}
	for {
		if !loadgen.Sleep(ctx, tick) {
			return Probe{}, ctx.Err()
		}
		now := l.Now()
		elapsed := time.Duration(max(now-judgeFrom, 0))
		ss := l.samplesOf(stage, judgeFrom)
		jd := j.Judge(ss, elapsed)
		if jd.Verdict == Undecided && j.TooSlow(len(ss), elapsed) {
			// Too few finish to judge this load on its percentiles within
			// the probe's patience: neither a pass nor a fail.
			jd.Verdict = Inconclusive
			jd.Reason = fmt.Sprintf("inconclusive (%d of %d needed after %s): too few requests finish at this load to judge it", len(ss), j.MinRequests, elapsed.Round(time.Second))
		}
		p := Probe{Stage: stage, Value: value, Judgement: jd, Requests: len(ss), Duration: elapsed, DurationSec: elapsed.Seconds()}
		if jd.Verdict != Undecided {
			p.Stats = j.Stats(ss)
		}
		if l.OnUpdate != nil {
			l.OnUpdate(p)
		}
		if jd.Verdict != Undecided {
			l.failed = jd.Verdict == Fail
			return p, nil
		}
	}
}

// samplesOf copies a stage's samples sent at or after from, ordered by
// their end.
func (l *Live) samplesOf(stage int, from int64) []Sample {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Sample
	for i, s := range l.samples[stage] {
		if l.sent[stage][i] >= from {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b Sample) int { return cmp.Compare(a.EndNs, b.EndNs) })
	return out
}
