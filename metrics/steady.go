package metrics

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/surgebench/surge/metrics/stats"
)

// Trim says what a summary's headline numbers cover.
type Trim uint8

// The trims.
const (
	// TrimNone reports the whole run (the steady state beside it).
	TrimNone Trim = iota
	// TrimAuto reports the headline numbers of the steady state the data
	// shows (SteadyState), when one was found.
	TrimAuto
)

// ParseTrim reads a trim's name: "none" or "auto".
func ParseTrim(s string) (Trim, error) {
	switch s {
	case "none", "":
		return TrimNone, nil
	case "auto":
		return TrimAuto, nil
	}
	return TrimNone, fmt.Errorf("trim %q: want auto (report the steady state the data shows) or none (the whole run)", s)
}

// WithTrim sets what the summary's headline numbers cover (TrimNone by
// default): with TrimAuto and a steady state found, the latency
// distributions and throughputs SteadyState lists are its own, and a
// warning says so.
func WithTrim(t Trim) Option { return func(c *Collector) { c.trim = t } }

// steadyMethod names the truncation rule in exports.
const steadyMethod = "MSER-5"

// minSteadyBins is the fewest bins of the rate series the steady-state
// search works on (10 batches of 5).
const minSteadyBins = 50

// SteadyState is the part of a run between its warm-up transient (cold
// connections, an empty batch, a cold prefix cache) and its drain (the
// last requests finishing with less and less in flight), found in the data
// (steadyOf), and the headline numbers of the requests sent inside it.
type SteadyState struct {
	// Found is false when the series never settled or the run is too
	// short to tell (Reason says which); the window is then the whole run
	// and the window's numbers are left out.
	Found  bool
	Reason string
	// Method is the truncation rule ("MSER-5"); BinSec the rate series'
	// resolution (1 s for runs of 100 s or more, finer for shorter ones).
	Method string
	BinSec float64
	// RunStartNs and RunEndNs bound the run, StartNs and EndNs the steady
	// state (run clock).
	RunStartNs, RunEndNs int64
	StartNs, EndNs       int64
	// Requests counts the successful requests sent inside the window.
	Requests int64
	// Metrics holds the window's distributions of TTFT, ITL, request
	// latency and OSL (exact); Run its request count, duration and
	// throughputs; Precision their intervals.
	Metrics   map[Tag]Distribution
	Run       map[Tag]float64
	Precision *Precision
	// Applied is set when the summary's headline numbers are these
	// (TrimAuto).
	Applied bool
}

// WarmupSec and DrainSec are the lengths of the spans cut at each end.
func (s *SteadyState) WarmupSec() float64 { return float64(s.StartNs-s.RunStartNs) / 1e9 }

// DrainSec is the length of the span cut at the run's end.
func (s *SteadyState) DrainSec() float64 { return float64(s.RunEndNs-s.EndNs) / 1e9 }

// steadyTags are the distributions a steady state reports.
var steadyTags = []Tag{TTFT, ITL, RequestLatency, OSL}

// steadyBin is the rate series' resolution for a run of dur: a second for
// runs of 100 s or more, else the coarsest multiple of 100 ms that still
// gives 100 bins.
func steadyBin(dur int64) int64 {
	if dur >= 100*int64(time.Second) {
		return int64(time.Second)
	}
	return max(binNs, dur/100/binNs*binNs)
}

// steadyOf finds the steady state of the requests e holds over [from,
// to). The warm-up is cut by MSER-5 (White 1997; White, Cobb & Spratt
// 2000: stats.MSER) on the rate series and, where every bin saw requests,
// on the per-bin mean TTFT; the later cut wins. The drain needs no
// heuristic: the offered load ends with the last request sent, and the
// window ends one mean request latency before it, so the requests it
// counts ran under the full load. (MSER-5 run backwards from the end
// finds the drain too, but on a series with slow swings it cuts far more:
// the end of the load is known, so it is not guessed.)
func steadyOf(e *rowSet, from, to int64, level float64) *SteadyState {
	if e == nil || len(e.rows) == 0 || to <= from {
		return nil
	}
	var lastSent int64
	var latSum float64
	var latN int
	for _, x := range e.rows {
		lastSent = max(lastSent, x.sent)
		if !math.IsNaN(float64(x.e2e)) {
			latSum += float64(x.e2e)
			latN++
		}
	}
	end := lastSent
	if latN > 0 {
		end -= int64(latSum / float64(latN) * float64(time.Millisecond))
	}
	w := steadyBin(end - from)
	s := &SteadyState{Method: steadyMethod, BinSec: float64(w) / 1e9, RunStartNs: from, RunEndNs: to, StartNs: from, EndNs: to}
	if end <= from {
		s.Reason = "the load ended within one request latency of its start"
		return s
	}
	tokens, done := e.rates(from, end, w)
	series := tokens
	if sum(tokens) == 0 {
		series = done // no output tokens (embeddings, rankings): completions
	}
	n := len(series)
	if n < minSteadyBins {
		s.Reason = fmt.Sprintf("the run (%.1f s under full load) is too short to tell a warm-up from a steady state (that takes %d bins of %s: %s)",
			float64(end-from)/1e9, minSteadyBins, time.Duration(w), time.Duration(minSteadyBins*w))
		return s
	}
	warm, ok := truncation(series, e.latencySeries(from, w, n))
	if !ok {
		s.Reason = "the rate series never settled: the load or the server was still changing over the run"
		return s
	}
	s.Found = true
	s.StartNs, s.EndNs = from+int64(warm)*w, end
	s.fill(e, s.StartNs, s.EndNs, level)
	return s
}

// truncation is MSER-5's cut for the rate series and, when there is one,
// the latency series: the larger, so neither transient is left in.
func truncation(rate, lat []float64) (int, bool) {
	d, ok := stats.MSER(rate, 5)
	if !ok {
		return 0, false
	}
	if lat != nil {
		if dl, okl := stats.MSER(lat, 5); okl {
			d = max(d, dl)
		}
	}
	return d, true
}

// fill computes the window's numbers: the distributions of the requests
// sent inside it, and the throughputs of what arrived inside it.
func (s *SteadyState) fill(e *rowSet, from, to int64, level float64) {
	in := e.within(from, to)
	s.Requests = in.seen
	s.Metrics, s.Run = map[Tag]Distribution{}, map[Tag]float64{}
	for _, t := range steadyTags {
		if xs := in.column(t); len(xs) > 0 {
			d, _ := defOf(t)
			s.Metrics[t] = distributionOf(xs, d.Unit)
		}
	}
	dur := float64(to-from) / 1e9
	s.Run[RequestCount] = float64(in.seen)
	s.Run[BenchmarkDuration] = dur
	if tokens, done := e.rates(from, to, to-from); len(tokens) == 1 {
		if tokens[0] > 0 {
			s.Run[OutputTokenThroughput] = tokens[0]
		}
		s.Run[RequestThroughput] = done[0]
	}
	s.Precision = precisionOf(in, e, from, to, s.Run, level)
}

// latencySeries is the mean headline latency (TTFT, else request latency)
// of the requests sent in each of n bins of w from from; nil when more
// than a tenth of the bins saw no request (too sparse to average), an
// empty bin otherwise carrying the one before it.
func (e *rowSet) latencySeries(from, w int64, n int) []float64 {
	sums, counts := make([]float64, n), make([]int, n)
	useTTFT := len(e.column(TTFT)) > 0
	for _, x := range e.rows {
		i := int(floorDiv(x.sent-from, w))
		if i < 0 || i >= n {
			continue
		}
		v := x.e2e
		if useTTFT {
			v = x.ttft
		}
		if math.IsNaN(float64(v)) {
			continue
		}
		sums[i] += float64(v)
		counts[i]++
	}
	empty := 0
	for i := range sums {
		switch {
		case counts[i] > 0:
			sums[i] /= float64(counts[i])
		case i > 0:
			sums[i] = sums[i-1]
			empty++
		default:
			empty++
		}
	}
	if empty*10 > n {
		return nil
	}
	return sums
}

// distributionOf summarises exact values as AIPerf does: numpy's linear
// percentiles, the population standard deviation.
func distributionOf(xs []float64, unit string) Distribution {
	s := slices.Clone(xs)
	slices.Sort(s)
	m := newMoments()
	for _, x := range s {
		m.add(x)
	}
	q := func(p float64) float64 { return stats.Quantile(s, p) }
	return Distribution{Unit: unit, Count: m.n, Avg: m.mean, Min: m.min, Max: m.max,
		P1: q(0.01), P5: q(0.05), P10: q(0.10), P25: q(0.25), P50: q(0.50),
		P75: q(0.75), P90: q(0.90), P95: q(0.95), P99: q(0.99), Std: m.std(), Sum: m.sum}
}

func sum(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}

// applyTrim puts the steady state's headline numbers in the summary, and
// says so.
func (s *Summary) applyTrim() {
	ss := s.SteadyState
	if ss == nil {
		return
	}
	if !ss.Found {
		s.Warnings = append(s.Warnings, fmt.Sprintf("trim auto: no steady state found (%s); the whole run is reported", ss.Reason))
		return
	}
	ss.Applied = true
	for _, t := range steadyTags {
		if _, had := s.Metrics[t]; had {
			if d, ok := ss.Metrics[t]; ok {
				s.Metrics[t] = d
			}
		}
	}
	for _, t := range []Tag{OutputTokenThroughput, RequestThroughput} {
		if v, ok := ss.Run[t]; ok {
			if _, had := s.Run[t]; had {
				s.Run[t] = v
			}
		}
	}
	s.Precision = ss.Precision
	s.Warnings = append(s.Warnings, fmt.Sprintf(
		"trim auto: time to first token, inter token latency, request latency, output sequence length and the output token and request throughputs (with their intervals) are the steady state's: the %d requests sent in %.1f–%.1f s of the run (%.1f s of warm-up and %.1f s of drain cut, %s); every other number covers the whole run",
		ss.Requests, float64(ss.StartNs-ss.RunStartNs)/1e9, float64(ss.EndNs-ss.RunStartNs)/1e9, ss.WarmupSec(), ss.DrainSec(), ss.Method))
}
