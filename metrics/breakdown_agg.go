package metrics

import (
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/surgebench/surge/metrics/stats"
)

// breakdownAgg gathers the time breakdowns of one phase and stage: a
// histogram per part (one value per request, cheap to add to), each
// part's sources, and the sums its shares are taken from.
type breakdownAgg struct {
	n     int64
	parts [NumParts]*hist
	src   [NumParts][numTimingSources]int64
	// negative counts the values below zero per part: the client's stamps
	// and the server's account disagree (clocks, or a server's own
	// overhead outside its stamps).
	negative [NumParts]int64
	// side sums, per part, the side of the first token it falls on
	// (ToFirst before it, Total − ToFirst after it; Total for a whole
	// body) over the requests that had the part: its share's denominator.
	side [NumParts]float64
	// other sums, before the first token and after it, the time no
	// known part covers; otherSide the sides it is a share of.
	other, otherSide [2]float64
}

// newBreakdownAgg makes an aggregate whose histograms have their buckets
// already: made at the first request with a breakdown, not at the first
// value of each part past the histogram's floor (a request in the steady
// state would pay for it).
func newBreakdownAgg() *breakdownAgg {
	b := &breakdownAgg{}
	for i := range b.parts {
		b.parts[i] = newHist()
		b.parts[i].buckets = make([]int64, histBuckets)
	}
	return b
}

// add folds one request's breakdown in (one without a breakdown is not
// counted).
func (a *breakdownAgg) add(b *Breakdown) {
	if !b.Has() {
		return
	}
	a.n++
	var known [2]float64
	for p := range NumParts {
		src := b.Source[p]
		a.src[p][src]++
		if !b.Known(p) {
			continue
		}
		x := b.Ms[p]
		a.parts[p].add(max(x, 0))
		if x < 0 {
			a.negative[p]++
		}
		s := sideOf(b, p)
		a.side[p] += s
		known[sideIndex(b, p)] += x
	}
	if !math.IsNaN(b.ToFirst) {
		a.other[0] += b.ToFirst - known[0]
		a.otherSide[0] += b.ToFirst
		a.other[1] += b.Total - b.ToFirst - known[1]
		a.otherSide[1] += b.Total - b.ToFirst
	} else if !math.IsNaN(b.Total) {
		a.other[0] += b.Total - known[0] - known[1]
		a.otherSide[0] += b.Total
	}
}

// sideIndex is 0 for a part before the first token (or any part of a
// whole body), 1 after it.
func sideIndex(b *Breakdown, p Part) int {
	if p.BeforeFirst() || math.IsNaN(b.ToFirst) {
		return 0
	}
	return 1
}

// sideOf is the time part p is a share of.
func sideOf(b *Breakdown, p Part) float64 {
	switch {
	case math.IsNaN(b.ToFirst):
		return b.Total
	case p.BeforeFirst():
		return b.ToFirst
	}
	return b.Total - b.ToFirst
}

func (a *breakdownAgg) merge(o *breakdownAgg) {
	if o == nil {
		return
	}
	a.n += o.n
	for p := range NumParts {
		a.parts[p].merge(o.parts[p])
		for s := range numTimingSources {
			a.src[p][s] += o.src[p][s]
		}
		a.negative[p] += o.negative[p]
		a.side[p] += o.side[p]
	}
	for i := range a.other {
		a.other[i] += o.other[i]
		a.otherSide[i] += o.otherSide[i]
	}
}

// TimeBreakdown is where the requests' time went: each part's percentiles
// over the requests that had it, its source, and its share of the time to
// the first token (the parts before it) or of the rest (the parts after
// it).
type TimeBreakdown struct {
	// Requests counts the requests with a breakdown.
	Requests int64
	Parts    [NumParts]PartSummary
	// Unattributed is the share of the time to the first token, and of
	// the rest, that no known part covers (NaN: nothing to say): the
	// parts a server did not give.
	Unattributed [2]float64
}

// PartSummary is one part of a TimeBreakdown. A part no request had is
// Count 0 with Source "unknown".
type PartSummary struct {
	Count int64
	// Source names where the part came from: one source, or "mixed" (the
	// counts are in Sources), or "unknown".
	Source  string
	Sources map[string]int64
	// P50, P90, P99 and Mean are in ms; P50Lo and P50Hi bound the median
	// at 95% (order statistics; NaN where the sample is too small).
	P50, P90, P99, Mean float64
	P50Lo, P50Hi        float64
	// Share is the part's share of its side of the first token (0–1).
	Share float64
	// Negative counts the requests whose value was below zero (shown as
	// 0 in the percentiles): the client's stamps and the server's account
	// disagree.
	Negative int64
}

// summary reads the aggregate (nil when no request had a breakdown).
func (a *breakdownAgg) summary() *TimeBreakdown {
	if a == nil || a.n == 0 {
		return nil
	}
	tb := &TimeBreakdown{Requests: a.n}
	for p := range NumParts {
		ps := PartSummary{Source: TimingUnknown.String(), P50: math.NaN(), P90: math.NaN(), P99: math.NaN(),
			Mean: math.NaN(), P50Lo: math.NaN(), P50Hi: math.NaN(), Share: math.NaN(), Negative: a.negative[p]}
		h := a.parts[p]
		ps.Count = h.n
		var named []TimingSource
		for s := TimingSource(1); s < numTimingSources; s++ {
			if a.src[p][s] > 0 {
				named = append(named, s)
			}
		}
		switch {
		case len(named) == 1 && a.src[p][TimingUnknown] == 0:
			ps.Source = named[0].String()
		case len(named) > 0:
			ps.Source = "mixed"
			ps.Sources = map[string]int64{}
			for s := range numTimingSources {
				if a.src[p][s] > 0 {
					ps.Sources[TimingSource(s).String()] = a.src[p][s]
				}
			}
		}
		if h.n > 0 {
			ps.P50, ps.P90, ps.P99, ps.Mean = h.quantile(0.5), h.quantile(0.9), h.quantile(0.99), h.mean
			lo, hi := stats.QuantileRanks(int(h.n), 0.5, 0.95)
			if lo >= 1 && hi <= float64(h.n) {
				ps.P50Lo, ps.P50Hi = h.quantile(lo/float64(h.n)), h.quantile(hi/float64(h.n))
			}
			if a.side[p] > 0 {
				ps.Share = h.sum / a.side[p]
			}
		}
		tb.Parts[p] = ps
	}
	for i := range tb.Unattributed {
		tb.Unattributed[i] = math.NaN()
		if a.otherSide[i] > 0 {
			tb.Unattributed[i] = max(a.other[i], 0) / a.otherSide[i]
		}
	}
	return tb
}

// MarshalJSON writes the breakdown as an object keyed by part (client,
// network, server_queue, prefill, decode, delivery), each with its count,
// source (and sources when mixed), p50, p90, p99 and mean in ms, the
// median's 95% interval and its share: null where unknown.
func (tb *TimeBreakdown) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	num := func(key string, x float64) {
		b = append(b, ',', '"')
		b = append(b, key...)
		b = append(b, '"', ':')
		b = appendNum(b, x)
	}
	for p := range NumParts {
		ps := &tb.Parts[p]
		if p > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, Part(p).String()...)
		b = append(b, `":{"count":`...)
		b = strconv.AppendInt(b, ps.Count, 10)
		b = append(b, `,"source":`...)
		b = strconv.AppendQuote(b, ps.Source)
		if len(ps.Sources) > 0 {
			b = append(b, `,"sources":{`...)
			for i, k := range slices.Sorted(maps.Keys(ps.Sources)) {
				if i > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendQuote(b, k)
				b = append(b, ':')
				b = strconv.AppendInt(b, ps.Sources[k], 10)
			}
			b = append(b, '}')
		}
		num("p50", ps.P50)
		num("p90", ps.P90)
		num("p99", ps.P99)
		num("mean", ps.Mean)
		b = append(b, `,"p50_ci":`...)
		if math.IsNaN(ps.P50Lo) {
			b = append(b, "null"...)
		} else {
			b = append(b, '[')
			b = appendNum(b, ps.P50Lo)
			b = append(b, ',')
			b = appendNum(b, ps.P50Hi)
			b = append(b, ']')
		}
		num("share", ps.Share)
		if ps.Negative > 0 {
			b = append(b, `,"negative_count":`...)
			b = strconv.AppendInt(b, ps.Negative, 10)
		}
		b = append(b, `,"unit":"ms"}`...)
	}
	return append(b, '}'), nil
}

// appendNum appends x rounded to 4 decimals, null for NaN or ±Inf: in
// fixed point (a record's line writes six of them, and a float's
// shortest form costs several times more).
func appendNum(b []byte, x float64) []byte {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return append(b, "null"...)
	}
	v := math.Round(x * 1e4)
	if math.Abs(v) >= 1e15 {
		return strconv.AppendFloat(b, v/1e4, 'f', -1, 64)
	}
	n := int64(v)
	if n < 0 {
		b, n = append(b, '-'), -n
	}
	b = strconv.AppendInt(b, n/1e4, 10)
	frac := n % 1e4
	if frac == 0 {
		return b
	}
	digits := [4]byte{byte('0' + frac/1000), byte('0' + frac/100%10), byte('0' + frac/10%10), byte('0' + frac%10)}
	end := 4
	for digits[end-1] == '0' {
		end--
	}
	return append(append(b, '.'), digits[:end]...)
}
