package metrics

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"
)

// State is everything a run's summary is computed from: per phase and
// stage, every distribution's t-digest (or histogram) with its exact
// moments, and the counters and time bounds. Summaries of several runs
// cannot be combined, but their states can: merging the states of the
// shards of one plan (see Merge) gives the summary one collector would have
// computed from all their records, with exact counts, sums and moments and
// percentiles within the digests' error.
//
// A State serialises to JSON (the export's sidecar, so `surge merge` works
// from summaries alone); it is not safe for concurrent use.
type State struct {
	// Origin is the wall-clock time of the run clock's zero: the times the
	// state holds are nanoseconds after it. Merge aligns states by it.
	Origin time.Time

	aggs map[aggKey]*aggregate
	// stages holds the stage definitions (index, mode, value) of a sweep,
	// ramp or live session; fewer than two means no per-stage summaries.
	stages []StageSummary
	// goodput is set when --goodput objectives judged the requests.
	goodput bool
	// exact holds the successful profile requests' exact headline values
	// (nil for a state read back from JSON: its summary then has no
	// intervals); trim is the collector's WithTrim.
	exact *rowSet
	trim  Trim
	// modelTokenizer is set when the tokenizer that counted tokens was the
	// model's own (WithModelTokenizer).
	modelTokenizer bool
	// costPerHour prices the run's tokens (0: no price).
	costPerHour float64
}

// State returns the collector's final state; it is nil before Close.
func (c *Collector) State() *State { return c.final }

// collect merges the shards' aggregates into one state. The shards must
// have stopped.
func (c *Collector) collect() *State {
	st := &State{aggs: map[aggKey]*aggregate{}, goodput: len(c.slos) > 0, exact: &rowSet{}, trim: c.trim, modelTokenizer: c.modelTokenizer,
		costPerHour: c.costPerHour}
	for _, s := range c.shards {
		for k, a := range s.aggs {
			st.agg(k).merge(a)
		}
		st.exact.rows = append(st.exact.rows, s.keep.rows...)
		st.exact.seen += s.keep.seen
	}
	st.Origin = c.origin
	c.stageMu.Lock()
	st.stages = slices.Clone(c.stageDef)
	c.stageMu.Unlock()
	return st
}

func (st *State) agg(k aggKey) *aggregate {
	a := st.aggs[k]
	if a == nil {
		a = newAggregate()
		st.aggs[k] = a
	}
	return a
}

// Summary computes the summary of the state: the profile phase's metrics,
// each stage's when there are several, and the warmup's. It adds the
// warnings the numbers earn (scheduler lag, read delay, token counts);
// caveats found while a run went on are the collector's to add.
func (st *State) Summary() *Summary {
	profile, warmup := newAggregate(), newAggregate()
	var stageKeys []int
	for k, a := range st.aggs {
		if k.phase == Warmup {
			warmup.merge(a)
			continue
		}
		profile.merge(a)
		stageKeys = append(stageKeys, k.stage)
	}
	sum := summaryOf(profile, st.modelTokenizer)
	finishRun(sum.Run, st.Origin, profile.okStart, profile.okEnd, st.goodput, st.costPerHour)
	if st.exact != nil && len(st.exact.rows) > 0 {
		sum.Precision = precisionOf(st.exact, st.exact, profile.okStart, profile.okEnd, sum.Run, PrecisionLevel)
		sum.Omission = omissionOf(st.exact, PrecisionLevel)
		if w := sum.Omission.Warning(); w != "" {
			sum.Warnings = append(sum.Warnings, w)
		}
		if len(st.stages) <= 1 {
			// A sweep's load changes from stage to stage: each stage's run
			// folder (State.Stage) has its own steady state.
			sum.SteadyState = steadyOf(st.exact, profile.okStart, profile.okEnd, PrecisionLevel)
			if st.trim == TrimAuto {
				sum.applyTrim()
			}
		}
	}
	if len(st.stages) > 1 {
		slices.Sort(stageKeys)
		for _, i := range stageKeys {
			def := StageSummary{Index: i}
			if i < len(st.stages) {
				def = st.stages[i]
			}
			sum.Stages = append(sum.Stages, stageSummary(def, st.aggs[aggKey{Profile, i}], st.exact.stage(i)))
		}
		for _, stage := range sum.Stages {
			if stage.Little.Disagrees() {
				sum.Warnings = append(sum.Warnings, littleWarning(stage.Little, fmt.Sprintf(" (stage %d, %s %g)", stage.Index, stage.Mode, stage.Value)))
			}
		}
	}
	if warmup.count+warmup.errors > 0 {
		sum.Warmup = summaryOf(warmup, st.modelTokenizer)
	}
	return sum
}

// Stage is the state of profile stage i of a sweep alone, as if the stage
// had been a run of its own (the warmup goes with stage 0, which it
// preceded): its Summary is the stage's full summary.
func (st *State) Stage(i int) *State {
	out := &State{Origin: st.Origin, aggs: map[aggKey]*aggregate{}, goodput: st.goodput, exact: st.exact.stage(i), trim: st.trim,
		modelTokenizer: st.modelTokenizer, costPerHour: st.costPerHour}
	if out.exact != nil {
		for j := range out.exact.rows {
			out.exact.rows[j].stage = 0
		}
	}
	for k, a := range st.aggs {
		if (k.phase == Profile && k.stage == i) || (k.phase == Warmup && i == 0) {
			out.agg(aggKey{k.phase, 0}).merge(a)
		}
	}
	return out
}

// finishRun completes run-level metrics: goodput only with objectives, the
// window in wall-clock time when the run clock's origin is known, and the
// cost of the tokens when the run has a price.
func finishRun(run map[Tag]float64, origin time.Time, firstSent, lastEnd int64, goodput bool, costPerHour float64) {
	addCost(run, costPerHour)
	if !goodput {
		// Without --goodput every request would count as good; say nothing.
		delete(run, Goodput)
		delete(run, GoodRequestCount)
		delete(run, GoodRequestFraction)
	}
	if !origin.IsZero() && firstSent > 0 {
		o := origin.UnixNano()
		run[MinRequestTimestamp] = float64(o + firstSent)
		run[MaxResponseTimestamp] = float64(o + lastEnd)
	}
}

// Merge folds o into st as if one collector had seen the records of both:
// counts, sums and moments add exactly, digests and histograms merge, and
// the time bounds are put on one clock by the states' origins (the earlier
// origin becomes the merged one), so durations and throughputs cover the
// union of the runs' windows. o is left unchanged.
func (st *State) Merge(o *State) {
	o = o.clone()
	switch {
	case st.Origin.IsZero():
		st.Origin = o.Origin
	case o.Origin.IsZero():
	case o.Origin.Before(st.Origin):
		st.shift(int64(st.Origin.Sub(o.Origin)))
		st.Origin = o.Origin
	default:
		o.shift(int64(o.Origin.Sub(st.Origin)))
	}
	if st.aggs == nil {
		st.aggs = map[aggKey]*aggregate{}
	}
	switch {
	case len(st.aggs) == 0 && st.exact == nil:
		st.exact = o.exact // already a clone, shifted with o
	case st.exact != nil && o.exact != nil:
		st.exact.rows = append(st.exact.rows, o.exact.rows...)
		st.exact.seen += o.exact.seen
	default:
		st.exact = nil // one side has no exact values: no intervals
	}
	for k, a := range o.aggs {
		st.agg(k).merge(a)
	}
	if len(o.stages) > len(st.stages) {
		st.stages = slices.Clone(o.stages)
	}
	st.goodput = st.goodput || o.goodput
	if st.costPerHour == 0 {
		// The shards of one plan priced one server.
		st.costPerHour = o.costPerHour
	}
}

func (st *State) clone() *State {
	c := *st
	c.aggs = make(map[aggKey]*aggregate, len(st.aggs))
	for k, a := range st.aggs {
		n := newAggregate()
		n.merge(a)
		c.aggs[k] = n
	}
	c.stages = slices.Clone(st.stages)
	if st.exact != nil {
		c.exact = &rowSet{rows: slices.Clone(st.exact.rows), seen: st.exact.seen}
	}
	return &c
}

// shift moves every time the state holds d nanoseconds later (0 stays
// "never").
func (st *State) shift(d int64) {
	move := func(t *int64) {
		if *t != 0 {
			*t += d
		}
	}
	for _, a := range st.aggs {
		for _, t := range []*int64{&a.firstSent, &a.lastSent, &a.lastEnd, &a.firstIntended, &a.lastIntended, &a.okStart, &a.okEnd} {
			move(t)
		}
	}
	if st.exact != nil {
		for i := range st.exact.rows {
			move(&st.exact.rows[i].sent)
			move(&st.exact.rows[i].end)
		}
	}
}

// maxCount bounds every count a state may hold (2^53: exact as a
// float64, and far beyond any run), so merging states cannot overflow.
const maxCount = 1 << 53

// stateVersion versions the JSON form of a State.
const stateVersion = 1

// The JSON form of a State: plain numbers, so other tools can read it.
// Digests are their centroids ([mean, count] pairs), histograms their
// non-empty buckets.
type (
	stateJSON struct {
		Version     int            `json:"version"`
		Origin      int64          `json:"origin_unix_ns"`
		Compression float64        `json:"digest_compression"`
		Goodput     bool           `json:"goodput,omitempty"`
		ModelTok    bool           `json:"model_tokenizer,omitempty"`
		CostPerHour float64        `json:"cost_per_hour_usd,omitempty"`
		Stages      []StageSummary `json:"stages,omitempty"`
		Aggregates  []aggJSON      `json:"aggregates"`
	}
	aggJSON struct {
		Phase     string              `json:"phase"`
		Stage     int                 `json:"stage"`
		Digests   map[string]distJSON `json:"digests,omitempty"`
		ICL       *histJSON           `json:"inter_chunk_latency,omitempty"`
		HTTP      map[string]histJSON `json:"http,omitempty"`
		ReadDelay *histJSON           `json:"client_read_delay,omitempty"`

		KernelStamps  int64 `json:"kernel_stamps"`
		ReadStamps    int64 `json:"read_stamps"`
		FirstShared   int64 `json:"first_token_shared_read,omitempty"`
		Count         int64 `json:"count"`
		Errors        int64 `json:"errors"`
		Cancelled     int64 `json:"cancelled,omitempty"`
		Good          int64 `json:"good"`
		ConnRetries   int64 `json:"connection_retries"`
		RetryDups     int64 `json:"connection_retry_duplicates,omitempty"`
		OSLRequested  int64 `json:"osl_requested"`
		OSLMismatched int64 `json:"osl_mismatched"`
		FirstSent     int64 `json:"first_sent_ns"`
		LastSent      int64 `json:"last_sent_ns"`
		LastEnd       int64 `json:"last_end_ns"`
		// OKStart and OKEnd bound the successful requests (absent from
		// states written before they were kept: the bounds of all then).
		OKStart       int64 `json:"ok_start_ns,omitempty"`
		OKEnd         int64 `json:"ok_end_ns,omitempty"`
		FirstIntended int64 `json:"first_intended_ns"`
		LastIntended  int64 `json:"last_intended_ns"`

		InputTokens  float64          `json:"input_tokens"`
		OutputTokens float64          `json:"output_tokens"`
		UsageOSL     float64          `json:"usage_osl"`
		TokenizerOSL float64          `json:"tokenizer_osl"`
		ErrorCounts  []ErrorCount     `json:"error_counts,omitempty"`
		Sources      map[string]int64 `json:"token_sources,omitempty"`
		Checks       *countChecks     `json:"count_checks,omitempty"`
	}
	momentsJSON struct {
		N    int64   `json:"n"`
		Mean float64 `json:"mean"`
		M2   float64 `json:"m2"`
		Min  float64 `json:"min"`
		Max  float64 `json:"max"`
		// Sum is the exact sum (absent from states written before it was
		// kept: the mean times the count then).
		Sum *float64 `json:"sum,omitempty"`
	}
	distJSON struct {
		momentsJSON
		Centroids [][2]float64 `json:"centroids"`
	}
	histJSON struct {
		momentsJSON
		Zeros int64 `json:"zeros"`
		// Buckets are [index, count] pairs of the non-empty buckets.
		Buckets [][2]int64 `json:"buckets,omitempty"`
	}
)

func (m *moments) toJSON() momentsJSON {
	sum := m.sum
	return momentsJSON{N: m.n, Mean: m.mean, M2: m.m2, Min: m.min, Max: m.max, Sum: &sum}
}

func (j momentsJSON) moments() moments {
	m := moments{n: j.N, mean: j.Mean, m2: j.M2, min: j.Min, max: j.Max, sum: j.Mean * float64(j.N)}
	if j.Sum != nil {
		m.sum = *j.Sum
	}
	return m
}

func histToJSON(h *hist) *histJSON {
	if h.n == 0 {
		return nil
	}
	j := &histJSON{momentsJSON: h.moments.toJSON(), Zeros: h.zeros}
	for i, c := range h.buckets {
		if c > 0 {
			j.Buckets = append(j.Buckets, [2]int64{int64(i), c})
		}
	}
	return j
}

func (j *histJSON) hist() (*hist, error) {
	h := newHist()
	if j == nil || j.N == 0 {
		return h, nil
	}
	h.moments, h.zeros = j.moments(), j.Zeros
	var total int64 = j.Zeros
	for _, b := range j.Buckets {
		if b[0] < 0 || b[0] >= histBuckets || b[1] < 0 {
			return nil, fmt.Errorf("histogram bucket %d (count %d) out of range", b[0], b[1])
		}
		if h.buckets == nil {
			h.buckets = make([]int64, histBuckets)
		}
		h.buckets[b[0]] += b[1]
		total += b[1]
	}
	if total != h.n {
		return nil, fmt.Errorf("histogram holds %d values, its count says %d", total, h.n)
	}
	return h, nil
}

// MarshalJSON writes the state's JSON form.
func (st *State) MarshalJSON() ([]byte, error) {
	out := stateJSON{Version: stateVersion, Compression: compression, Goodput: st.goodput, ModelTok: st.modelTokenizer, CostPerHour: st.costPerHour, Stages: st.stages,
		Aggregates: []aggJSON{}}
	if !st.Origin.IsZero() {
		out.Origin = st.Origin.UnixNano()
	}
	keys := slices.SortedFunc(maps.Keys(st.aggs), func(a, b aggKey) int {
		return cmp.Or(cmp.Compare(a.phase, b.phase), cmp.Compare(a.stage, b.stage))
	})
	for _, k := range keys {
		a := st.aggs[k]
		j := aggJSON{
			Phase: k.phase.String(), Stage: k.stage, Digests: map[string]distJSON{}, HTTP: map[string]histJSON{},
			ICL: histToJSON(a.icl), ReadDelay: histToJSON(a.readDelay),
			KernelStamps: a.kernelStamps, ReadStamps: a.readStamps, FirstShared: a.firstShared, Count: a.count, Errors: a.errors, Good: a.good,
			Cancelled:   a.cancelled,
			ConnRetries: a.connRetries, RetryDups: a.retryDups, OSLRequested: a.oslRequested, OSLMismatched: a.oslMismatched,
			FirstSent: a.firstSent, LastSent: a.lastSent, LastEnd: a.lastEnd, OKStart: a.okStart, OKEnd: a.okEnd,
			FirstIntended: a.firstIntended, LastIntended: a.lastIntended,
			InputTokens: a.inputTokens, OutputTokens: a.outputTokens, UsageOSL: a.usageOSL, TokenizerOSL: a.tokenizerOSL,
			Sources: a.sources,
		}
		if a.checks.PromptChecked > 0 || a.checks.Chunks > 0 || len(a.checks.InputSources) > 0 || a.checks.Batches.Counted > 0 || a.checks.Distrust != nil {
			j.Checks = &a.checks
		}
		for t, d := range a.dists {
			if d.n == 0 {
				continue
			}
			dj := distJSON{momentsJSON: d.moments.toJSON()}
			d.digest().ForEachCentroid(func(mean float64, count uint64) bool {
				dj.Centroids = append(dj.Centroids, [2]float64{mean, float64(count)})
				return true
			})
			j.Digests[string(t)] = dj
		}
		for i, h := range a.http {
			if hj := histToJSON(h); hj != nil {
				j.HTTP[string(HTTPDefs[i].Tag)] = *hj
			}
		}
		for e, n := range a.errs {
			j.ErrorCounts = append(j.ErrorCounts, ErrorCount{Details: Error{Code: e.code, Type: e.typ, Message: e.text}, Count: n})
		}
		slices.SortFunc(j.ErrorCounts, func(x, y ErrorCount) int {
			return cmp.Or(cmp.Compare(y.Count, x.Count), cmp.Compare(x.Details.Message, y.Details.Message))
		})
		out.Aggregates = append(out.Aggregates, j)
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads the state's JSON form. A state of another version,
// or one whose parts disagree (a digest holding more values than its count
// says), is an error.
func (st *State) UnmarshalJSON(b []byte) error {
	var in stateJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	if in.Version != stateVersion {
		return fmt.Errorf("state version %d: this surge reads version %d", in.Version, stateVersion)
	}
	*st = State{aggs: map[aggKey]*aggregate{}, goodput: in.Goodput, modelTokenizer: in.ModelTok, stages: in.Stages}
	if CheckCostPerHour(in.CostPerHour) == nil {
		st.costPerHour = in.CostPerHour
	}
	if in.Origin != 0 {
		st.Origin = time.Unix(0, in.Origin).UTC()
	}
	httpIndex := map[string]int{}
	for i, d := range HTTPDefs {
		httpIndex[string(d.Tag)] = i
	}
	for _, j := range in.Aggregates {
		var k aggKey
		switch j.Phase {
		case Profile.String():
			k.phase = Profile
		case Warmup.String():
			k.phase = Warmup
		default:
			return fmt.Errorf("aggregate of unknown phase %q", j.Phase)
		}
		k.stage = j.Stage
		for _, n := range []int64{j.KernelStamps, j.ReadStamps, j.FirstShared, j.Count, j.Errors, j.Good, j.ConnRetries, j.RetryDups, j.OSLRequested, j.OSLMismatched} {
			if n < 0 || n > maxCount {
				return fmt.Errorf("%s stage %d: a count of %d", j.Phase, j.Stage, n)
			}
		}
		a := st.agg(k)
		for t, dj := range j.Digests {
			d := newDist()
			var n uint64
			for _, c := range dj.Centroids {
				if !(c[1] >= 1) || c[1] != math.Trunc(c[1]) || math.IsNaN(c[0]) || math.IsInf(c[0], 0) {
					return fmt.Errorf("digest %s: bad centroid %v", t, c)
				}
				if err := d.td.AddWeighted(c[0], uint64(c[1])); err != nil {
					return fmt.Errorf("digest %s: %w", t, err)
				}
				n += uint64(c[1])
			}
			if n > maxCount || int64(n) != dj.N {
				return fmt.Errorf("digest %s holds %d values, its count says %d", t, n, dj.N)
			}
			d.moments = dj.moments()
			a.dists[Tag(t)] = d
		}
		var err error
		if a.icl, err = j.ICL.hist(); err != nil {
			return fmt.Errorf("%s: %w", ICL, err)
		}
		if a.readDelay, err = j.ReadDelay.hist(); err != nil {
			return fmt.Errorf("%s: %w", ClientReadDelay, err)
		}
		for t, hj := range j.HTTP {
			i, ok := httpIndex[t]
			if !ok {
				return fmt.Errorf("unknown transport metric %q", t)
			}
			if a.http[i], err = hj.hist(); err != nil {
				return fmt.Errorf("%s: %w", t, err)
			}
		}
		a.kernelStamps, a.readStamps, a.count, a.errors, a.good = j.KernelStamps, j.ReadStamps, j.Count, j.Errors, j.Good
		a.firstShared, a.cancelled = j.FirstShared, j.Cancelled
		a.connRetries, a.oslRequested, a.oslMismatched = j.ConnRetries, j.OSLRequested, j.OSLMismatched
		a.retryDups = min(j.RetryDups, j.ConnRetries)
		a.firstSent, a.lastSent, a.lastEnd = j.FirstSent, j.LastSent, j.LastEnd
		a.okStart, a.okEnd = j.OKStart, j.OKEnd
		if j.OKEnd == 0 && j.Count > 0 {
			a.okStart, a.okEnd = j.FirstSent, j.LastEnd
		}
		a.firstIntended, a.lastIntended = j.FirstIntended, j.LastIntended
		a.inputTokens, a.outputTokens, a.usageOSL, a.tokenizerOSL = j.InputTokens, j.OutputTokens, j.UsageOSL, j.TokenizerOSL
		for _, e := range j.ErrorCounts {
			a.errs[errKey{e.Details.Code, e.Details.Type, e.Details.Message}] += e.Count
		}
		maps.Copy(a.sources, j.Sources)
		if j.Checks != nil {
			if err := j.Checks.valid(); err != nil {
				return fmt.Errorf("%s stage %d: %w", j.Phase, j.Stage, err)
			}
			a.checks.merge(j.Checks)
		}
	}
	return nil
}
