package metrics

import "math"

// lagTag keys the scheduler-lag distribution next to the request metrics.
const lagTag Tag = "scheduler_lag"

// errKey groups identical errors for error_summary.
type errKey struct {
	code      int
	typ, text string
}

// aggregate holds everything known about the records of one phase and
// stage. It belongs to one shard goroutine, or to the collector after the
// shards stopped.
type aggregate struct {
	dists map[Tag]*dist
	// icl has one value per token: a histogram, not a digest (see hist).
	icl *hist
	// http holds the transport breakdown (HTTPDefs order) and readDelay
	// the client's read delay per event: histograms too, cheaper to add to
	// than a digest and well within the accuracy these need.
	http      [httpTags]*hist
	readDelay *hist
	// kernelStamps and readStamps count records by timestamp source.
	kernelStamps, readStamps int64
	// firstShared counts streamed records whose first token came in one
	// read with the next (Record.FirstTokenShared).
	firstShared int64

	count, errors, good int64
	// cancelled counts the failed records the client cut off
	// (Record.Cancelled).
	cancelled   int64
	connRetries int64
	// retryDups counts the retries that may have been duplicates
	// (Record.RetryDuplicate).
	retryDups int64
	// oslRequested counts the successful records that asked for an OSL,
	// oslMismatched those that missed it (osl_mismatch_count).
	oslRequested, oslMismatched  int64
	firstSent, lastSent, lastEnd int64
	// okStart and okEnd bound the successful requests, from the first's
	// start (Record.Issued) to the last's end: AIPerf's
	// min_request_timestamp and max_response_timestamp, whose difference is
	// benchmark_duration.
	okStart, okEnd              int64
	firstIntended, lastIntended int64
	inputTokens                 float64
	outputTokens                float64
	// noOutput counts the records (failed ones too) of types that generate
	// no tokens; inputs totals the successful ones' Inputs.
	noOutput, inputs int64

	errs    map[errKey]int64
	sources map[string]int64
	// usageOSL and tokenizerOSL total both counts over the records that had
	// both, for the disagreement warning.
	usageOSL, tokenizerOSL float64
	// checks is what the token-count checks found.
	checks countChecks
	// breakdown gathers the requests' time breakdowns (nil until one had
	// a breakdown).
	breakdown *breakdownAgg
	// little is what Little's law is checked with (little.go).
	little littleAgg
}

func newAggregate() *aggregate {
	a := &aggregate{dists: map[Tag]*dist{}, icl: newHist(), readDelay: newHist(), errs: map[errKey]int64{}, sources: map[string]int64{}}
	for i := range a.http {
		a.http[i] = newHist()
	}
	return a
}

func (a *aggregate) dist(t Tag) *dist {
	d := a.dists[t]
	if d == nil {
		d = newDist()
		a.dists[t] = d
	}
	return d
}

// add folds one record (and its computed values when it succeeded) in.
func (a *aggregate) add(r *Record, v *Values, good bool) {
	if r.IntendedNs > 0 {
		a.dist(lagTag).add(float64(r.LagNs()) / nsPerMs)
		if a.firstIntended == 0 || r.IntendedNs < a.firstIntended {
			a.firstIntended = r.IntendedNs
		}
		a.lastIntended = max(a.lastIntended, r.IntendedNs)
	}
	if a.firstSent == 0 || r.SentNs < a.firstSent {
		a.firstSent = r.SentNs
	}
	a.lastSent = max(a.lastSent, r.SentNs)
	if r.EndNs > a.lastEnd {
		a.lastEnd = r.EndNs
	}
	a.little.add(r)
	a.connRetries += int64(r.ConnectionRetries)
	if r.RetryDuplicate && r.ConnectionRetries > 0 {
		a.retryDups++
	}
	if r.NoOutput {
		a.noOutput++
	}
	if r.Cancelled {
		a.cancelled++
	}
	if r.Err != nil {
		a.errors++
		a.errs[errKey{r.Err.Code, r.Err.Type, r.Err.Message}]++
		if !math.IsNaN(v.ErrorISL) {
			a.dist(ErrorISL).add(v.ErrorISL)
		}
		return
	}
	a.count++
	if st := r.Issued(); a.okStart == 0 || st < a.okStart {
		a.okStart = st
	}
	a.okEnd = max(a.okEnd, r.EndNs)
	a.inputs += int64(r.Inputs)
	for i, x := range v.HTTP {
		a.http[i].add(x)
	}
	for _, d := range r.ReadDelayNs {
		a.readDelay.add(float64(d) / nsPerMs)
	}
	if r.Streamed {
		if r.FirstTokenShared {
			a.firstShared++
		}
		if r.KernelStamps {
			a.kernelStamps++
		} else {
			a.readStamps++
		}
	}
	if r.RequestedOSL > 0 {
		a.oslRequested++
		if v.Mismatched {
			a.oslMismatched++
		}
	}
	if good {
		a.good++
	}
	eachValue(v, func(t Tag, x float64) { a.dist(t).add(x) })
	if v.Parts.Has() {
		if a.breakdown == nil {
			a.breakdown = newBreakdownAgg()
		}
		a.breakdown.add(&v.Parts)
	}
	for _, x := range v.ICL {
		a.icl.add(x)
	}
	if !math.IsNaN(v.ISL) {
		a.inputTokens += v.ISL
	}
	if !math.IsNaN(v.OSL) {
		a.outputTokens += v.OSL
	}
	if !r.NoOutput { // no output tokens were counted
		a.sources[v.Source]++
	}
	if !math.IsNaN(v.UsageOSL) && !math.IsNaN(v.TokenizerOSL) {
		a.usageOSL += v.UsageOSL
		a.tokenizerOSL += v.TokenizerOSL
	}
}

// eachValue calls f with each per-request metric a successful record has
// (inter_chunk_latency's list aside), as the distributions take them.
func eachValue(v *Values, f func(Tag, float64)) {
	for _, d := range RequestDefs {
		if d.Tag == ICL || d.Tag == ErrorISL || d.Tag == ReasoningTokens && !(v.Reasoning > 0) {
			// Reasoning counts describe reasoning answers only (as AIPerf).
			continue
		}
		if x := v.Get(d.Tag); !math.IsNaN(x) {
			f(d.Tag, x)
		}
	}
}

// merge folds o into a.
func (a *aggregate) merge(o *aggregate) {
	for t, d := range o.dists {
		a.dist(t).merge(d)
	}
	a.icl.merge(o.icl)
	for i := range a.http {
		a.http[i].merge(o.http[i])
	}
	a.readDelay.merge(o.readDelay)
	a.kernelStamps += o.kernelStamps
	a.readStamps += o.readStamps
	a.firstShared += o.firstShared
	a.count += o.count
	a.errors += o.errors
	a.cancelled += o.cancelled
	a.good += o.good
	a.connRetries += o.connRetries
	a.retryDups += o.retryDups
	a.oslRequested += o.oslRequested
	a.oslMismatched += o.oslMismatched
	if o.firstSent > 0 && (a.firstSent == 0 || o.firstSent < a.firstSent) {
		a.firstSent = o.firstSent
	}
	a.lastEnd = max(a.lastEnd, o.lastEnd)
	if o.okStart > 0 && (a.okStart == 0 || o.okStart < a.okStart) {
		a.okStart = o.okStart
	}
	a.okEnd = max(a.okEnd, o.okEnd)
	a.lastSent = max(a.lastSent, o.lastSent)
	if o.firstIntended > 0 && (a.firstIntended == 0 || o.firstIntended < a.firstIntended) {
		a.firstIntended = o.firstIntended
	}
	a.lastIntended = max(a.lastIntended, o.lastIntended)
	a.inputTokens += o.inputTokens
	a.outputTokens += o.outputTokens
	a.noOutput += o.noOutput
	a.inputs += o.inputs
	for k, n := range o.errs {
		a.errs[k] += n
	}
	for k, n := range o.sources {
		a.sources[k] += n
	}
	a.usageOSL += o.usageOSL
	a.tokenizerOSL += o.tokenizerOSL
	a.checks.merge(&o.checks)
	a.little.merge(&o.little)
	if o.breakdown != nil {
		if a.breakdown == nil {
			a.breakdown = newBreakdownAgg()
		}
		a.breakdown.merge(o.breakdown)
	}
}

// sendRate is the achieved issue rate: requests sent per second between
// the first and the last send.
func (a *aggregate) sendRate() float64 {
	n := a.count + a.errors
	if n < 2 || a.lastSent <= a.firstSent {
		return 0
	}
	return float64(n-1) / (float64(a.lastSent-a.firstSent) / 1e9)
}

// intendedRate is the rate the schedule asked for over the same requests
// (a Poisson sample's own rate, not the nominal target).
func (a *aggregate) intendedRate() float64 {
	n := a.count + a.errors
	if n < 2 || a.lastIntended <= a.firstIntended {
		return 0
	}
	return float64(n-1) / (float64(a.lastIntended-a.firstIntended) / 1e9)
}

// durationSec is AIPerf's benchmark_duration: last response minus first
// request.
func (a *aggregate) durationSec() float64 {
	if a.okEnd <= a.okStart {
		return 0
	}
	return float64(a.okEnd-a.okStart) / 1e9
}
