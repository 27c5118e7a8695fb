package metrics

import (
	"math"
	"math/rand/v2"
	"time"
)

// row is one successful profile request's headline values, kept exactly
// beside the digests: the confidence intervals and the steady state are
// computed from them at the end (the digests stay the live aggregator).
// Latencies are milliseconds; float32 holds them to 7 digits, far below
// any interval's width.
type row struct {
	// sent is when the request started (Record.Issued), end its last byte.
	sent, end int64
	// ttft, itl, e2e (request latency) and osl (output tokens) are NaN
	// where the request has none.
	ttft, itl, e2e, osl float32
	// lead is the time from the intended start to the issue (ms; NaN
	// unless a schedule set the intended time): the wait coordinated
	// omission hides.
	lead  float32
	stage int32
}

// maxRows bounds the rows a collector keeps (40 bytes each: 80 MiB).
// Past it each shard keeps a uniform random sample of its requests
// (reservoir sampling), and the intervals say they rest on a sample.
const maxRows = 1 << 21

// rowOf builds r's row from its values.
func rowOf(r *Record, v *Values) row {
	lead := float32(math.NaN())
	if r.Scheduled && r.IntendedNs > 0 {
		lead = float32(float64(r.Issued()-r.IntendedNs) / nsPerMs)
	}
	return row{sent: r.Issued(), end: r.EndNs, ttft: float32(v.TTFT), itl: float32(v.ITL), e2e: float32(v.Latency),
		osl: float32(v.OSL), lead: lead, stage: int32(r.Stage)}
}

// rowKeeper is a shard's rows: every one until its share of maxRows, then
// a uniform sample of all it saw (Vitter's algorithm R, seeded alike in
// every run).
type rowKeeper struct {
	rows []row
	seen int64
	cap  int
	rng  *rand.Rand
}

func newRowKeeper(capacity int) *rowKeeper {
	return &rowKeeper{cap: max(capacity, 1)}
}

func (k *rowKeeper) add(x row) {
	k.seen++
	if len(k.rows) < k.cap {
		k.rows = append(k.rows, x)
		return
	}
	if k.rng == nil {
		k.rng = rand.New(rand.NewPCG(0x5eed, uint64(k.cap)))
	}
	if j := k.rng.Int64N(k.seen); j < int64(k.cap) {
		k.rows[j] = x
	}
}

// rowSet is the rows of a state: the shards' rows together, and how many
// requests they were drawn from (more than len(rows) once a shard sampled).
type rowSet struct {
	rows []row
	seen int64
}

// sampled reports whether the rows are a sample of more requests.
func (e *rowSet) sampled() bool { return e != nil && e.seen > int64(len(e.rows)) }

// stage returns the rows of stage i alone.
func (e *rowSet) stage(i int) *rowSet {
	if e == nil {
		return nil
	}
	out := &rowSet{}
	for _, x := range e.rows {
		if int(x.stage) == i {
			out.rows = append(out.rows, x)
		}
	}
	out.seen = int64(len(out.rows))
	if e.sampled() && len(e.rows) > 0 {
		// The stage's share of the requests seen, as sampled.
		out.seen = int64(math.Round(float64(e.seen) * float64(len(out.rows)) / float64(len(e.rows))))
	}
	return out
}

// within returns the rows of requests sent in [from, to).
func (e *rowSet) within(from, to int64) *rowSet {
	out := &rowSet{}
	for _, x := range e.rows {
		if x.sent >= from && x.sent < to {
			out.rows = append(out.rows, x)
		}
	}
	out.seen = int64(len(out.rows))
	if e.sampled() && len(e.rows) > 0 {
		out.seen = int64(math.Round(float64(e.seen) * float64(len(out.rows)) / float64(len(e.rows))))
	}
	return out
}

// column returns the values of one headline metric, NaNs left out.
func (e *rowSet) column(t Tag) []float64 {
	out := make([]float64, 0, len(e.rows))
	for _, x := range e.rows {
		var v float32
		switch t {
		case TTFT:
			v = x.ttft
		case ITL:
			v = x.itl
		case RequestLatency:
			v = x.e2e
		case OSL:
			v = x.osl
		default:
			return nil
		}
		if !math.IsNaN(float64(v)) {
			out = append(out, float64(v))
		}
	}
	return out
}

// span is the rows' extent: the first start and the last end.
func (e *rowSet) span() (from, to int64) {
	for i, x := range e.rows {
		if i == 0 || x.sent < from {
			from = x.sent
		}
		to = max(to, x.end)
	}
	return from, to
}

// binNs is the finest resolution of the rate series: 100 ms.
const binNs = int64(100 * time.Millisecond)

// rates returns, for the bins of width w that lie wholly inside [from,
// to), the output tokens and the requests completed per second in each.
// A request's output tokens are spread evenly over its decode (first token
// to last byte; at its end when it has no first token): the client keeps
// no per-token times after a request, and over bins as long as a request
// the spread changes little. Sampled rows are scaled to the requests they
// stand for.
func (e *rowSet) rates(from, to, w int64) (tokens, done []float64) {
	if w <= 0 || to-from < w {
		return nil, nil
	}
	n := int((to - from) / w)
	tokens, done = make([]float64, n), make([]float64, n)
	scale := 1.0
	if e.sampled() {
		scale = float64(e.seen) / float64(len(e.rows))
	}
	bin := func(t int64) int { return int(floorDiv(t-from, w)) }
	for _, x := range e.rows {
		if i := bin(x.end); i >= 0 && i < n && x.end < to {
			done[i] += scale
		}
		if !(x.osl > 0) {
			continue
		}
		a := x.end
		if !math.IsNaN(float64(x.ttft)) {
			a = min(x.end, x.sent+int64(float64(x.ttft)*float64(time.Millisecond)))
		}
		b := x.end
		osl := float64(x.osl) * scale
		if b <= a {
			if i := bin(a); i >= 0 && i < n && a < to {
				tokens[i] += osl
			}
			continue
		}
		perNs := osl / float64(b-a)
		for i := max(bin(a), 0); i < n; i++ {
			lo, hi := from+int64(i)*w, from+int64(i+1)*w
			if lo >= b {
				break
			}
			if ov := min(hi, b) - max(lo, a); ov > 0 {
				tokens[i] += perNs * float64(ov)
			}
		}
	}
	sec := float64(w) / 1e9
	for i := range tokens {
		tokens[i] /= sec
		done[i] /= sec
	}
	return tokens, done
}

// floorDiv is a/b rounded toward −∞ (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
