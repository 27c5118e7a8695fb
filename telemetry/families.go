package telemetry

import (
	"cmp"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// Family is one Prometheus metric family as a server exported it, every
// sample with its labels: what server_metrics_export.jsonl keeps of each
// scrape, whatever names the server uses.
type Family struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"` // counter, gauge, histogram, summary, untyped
	Help    string   `json:"help,omitempty"`
	Samples []Sample `json:"samples"`
}

// Sample is one series of a family at one scrape. Counters, gauges and
// untyped samples have Value; histograms Count, Sum and Buckets
// (cumulative, as exported); summaries Count, Sum and Quantiles.
type Sample struct {
	Labels    map[string]string
	Value     float64
	Count     float64
	Sum       float64
	Buckets   []Bucket
	Quantiles []Quantile
}

// Bucket is a histogram bucket: the count of observations ≤ UpperBound.
type Bucket struct {
	UpperBound float64
	Count      float64
}

// Quantile is a summary's quantile Q (0–1) and its value.
type Quantile struct {
	Q, Value float64
}

type sampleJSON struct {
	Labels    map[string]string `json:"labels,omitempty"`
	Value     *jfloat           `json:"value,omitempty"`
	Count     *jfloat           `json:"count,omitempty"`
	Sum       *jfloat           `json:"sum,omitempty"`
	Buckets   []bucketJSON      `json:"buckets,omitempty"`
	Quantiles []quantileJSON    `json:"quantiles,omitempty"`
}

type bucketJSON struct {
	LE    string `json:"le"` // as Prometheus writes it: "0.5", "+Inf"
	Count jfloat `json:"count"`
}

type quantileJSON struct {
	Q     jfloat `json:"quantile"`
	Value jfloat `json:"value"`
}

// MarshalJSON writes the fields of the sample's kind; NaN as null.
func (s Sample) MarshalJSON() ([]byte, error) {
	j := sampleJSON{Labels: s.Labels}
	switch {
	case s.Buckets != nil:
		j.Count, j.Sum = jp(s.Count), jp(s.Sum)
		for _, b := range s.Buckets {
			j.Buckets = append(j.Buckets, bucketJSON{LE: formatLE(b.UpperBound), Count: jfloat(b.Count)})
		}
	case s.Quantiles != nil:
		j.Count, j.Sum = jp(s.Count), jp(s.Sum)
		for _, q := range s.Quantiles {
			j.Quantiles = append(j.Quantiles, quantileJSON{Q: jfloat(q.Q), Value: jfloat(q.Value)})
		}
	default:
		j.Value = jp(s.Value)
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Sample) UnmarshalJSON(b []byte) error {
	var j sampleJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = Sample{Labels: j.Labels, Value: math.NaN(), Count: math.NaN(), Sum: math.NaN()}
	if j.Value != nil {
		s.Value = float64(*j.Value)
	}
	if j.Count != nil {
		s.Count = float64(*j.Count)
	}
	if j.Sum != nil {
		s.Sum = float64(*j.Sum)
	}
	for _, bj := range j.Buckets {
		le, err := strconv.ParseFloat(bj.LE, 64)
		if err != nil {
			return err
		}
		s.Buckets = append(s.Buckets, Bucket{UpperBound: le, Count: float64(bj.Count)})
	}
	for _, q := range j.Quantiles {
		s.Quantiles = append(s.Quantiles, Quantile{Q: float64(q.Q), Value: float64(q.Value)})
	}
	return nil
}

func formatLE(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// families converts parsed families to Family values, sorted by name.
func families(fams map[string]*dto.MetricFamily) []Family {
	out := make([]Family, 0, len(fams))
	for _, name := range slices.Sorted(maps.Keys(fams)) {
		mf := fams[name]
		f := Family{Name: name, Type: strings.ToLower(mf.GetType().String()), Help: mf.GetHelp()}
		for _, m := range mf.GetMetric() {
			s := Sample{Value: math.NaN(), Count: math.NaN(), Sum: math.NaN()}
			if lps := m.GetLabel(); len(lps) > 0 {
				s.Labels = make(map[string]string, len(lps))
				for _, lp := range lps {
					s.Labels[lp.GetName()] = lp.GetValue()
				}
			}
			switch {
			case m.Histogram != nil:
				h := m.Histogram
				s.Count, s.Sum = float64(h.GetSampleCount()), h.GetSampleSum()
				s.Buckets = make([]Bucket, 0, len(h.GetBucket())+1)
				for _, b := range h.GetBucket() {
					s.Buckets = append(s.Buckets, Bucket{UpperBound: b.GetUpperBound(), Count: float64(b.GetCumulativeCount())})
				}
				if n := len(s.Buckets); n == 0 || !math.IsInf(s.Buckets[n-1].UpperBound, 1) {
					s.Buckets = append(s.Buckets, Bucket{UpperBound: math.Inf(1), Count: s.Count})
				}
			case m.Summary != nil:
				sm := m.Summary
				s.Count, s.Sum = float64(sm.GetSampleCount()), sm.GetSampleSum()
				s.Quantiles = make([]Quantile, 0, len(sm.GetQuantile()))
				for _, q := range sm.GetQuantile() {
					s.Quantiles = append(s.Quantiles, Quantile{Q: q.GetQuantile(), Value: q.GetValue()})
				}
			default:
				s.Value = value(m)
			}
			f.Samples = append(f.Samples, s)
		}
		out = append(out, f)
	}
	return out
}

// seriesKey names one series as Prometheus prints it: name{a="1",b="2"}.
func seriesKey(name string, labels map[string]string) string {
	if len(labels) == 0 {
		return name
	}
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(labels)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteString("=")
		b.WriteString(strconv.Quote(labels[k]))
	}
	b.WriteByte('}')
	return b.String()
}

// SeriesSummary is one counter or histogram series over the run: its
// increase between the first and the last scrape, and for a histogram the
// mean and quantiles of the observations made in between (from the
// buckets' increase, interpolated linearly inside a bucket as Prometheus's
// histogram_quantile does).
type SeriesSummary struct {
	Type  string  `json:"type"`
	Delta *jfloat `json:"delta,omitempty"` // counters
	Count *jfloat `json:"count,omitempty"` // histograms: observations
	Sum   *jfloat `json:"sum,omitempty"`
	Mean  *jfloat `json:"avg,omitempty"`
	P50   *jfloat `json:"p50,omitempty"`
	P90   *jfloat `json:"p90,omitempty"`
	P99   *jfloat `json:"p99,omitempty"`
}

func jp(v float64) *jfloat { x := jfloat(v); return &x }

// summarizeSeries compares the first and last scrape of one endpoint.
// A counter that went down was reset: its increase is its last value. An
// untyped family named *_total counts as a counter.
func summarizeSeries(first, last []Family) map[string]SeriesSummary {
	before := map[string]Sample{}
	for _, f := range first {
		for _, s := range f.Samples {
			before[seriesKey(f.Name, s.Labels)] = s
		}
	}
	out := map[string]SeriesSummary{}
	for _, f := range last {
		if f.Type == "untyped" && strings.HasSuffix(f.Name, "_total") {
			f.Type = "counter" // no # TYPE line, but named as a counter
		}
		if f.Type != "counter" && f.Type != "histogram" {
			continue
		}
		for _, s := range f.Samples {
			key := seriesKey(f.Name, s.Labels)
			b, seen := before[key]
			switch f.Type {
			case "counter":
				d := s.Value
				if seen && s.Value >= b.Value {
					d -= b.Value
				}
				out[key] = SeriesSummary{Type: f.Type, Delta: jp(d)}
			case "histogram":
				buckets := slices.Clone(s.Buckets)
				count, sum := s.Count, s.Sum
				if seen && s.Count >= b.Count && len(b.Buckets) == len(s.Buckets) {
					count -= b.Count
					sum -= b.Sum
					for i := range buckets {
						buckets[i].Count -= b.Buckets[i].Count
					}
				}
				ss := SeriesSummary{Type: f.Type, Count: jp(count), Sum: jp(sum)}
				if count > 0 {
					ss.Mean = jp(sum / count)
					ss.P50 = jp(bucketQuantile(0.50, buckets))
					ss.P90 = jp(bucketQuantile(0.90, buckets))
					ss.P99 = jp(bucketQuantile(0.99, buckets))
				}
				out[key] = ss
			}
		}
	}
	return out
}

// bucketQuantile estimates quantile q from cumulative buckets sorted by
// upper bound, the last +Inf: linear inside the bucket holding the rank,
// the lower bound 0 for the first; a rank in the +Inf bucket gives the
// highest finite bound.
func bucketQuantile(q float64, buckets []Bucket) float64 {
	buckets = slices.Clone(buckets)
	slices.SortFunc(buckets, func(a, b Bucket) int { return cmp.Compare(a.UpperBound, b.UpperBound) })
	n := len(buckets)
	if n == 0 || buckets[n-1].Count <= 0 {
		return math.NaN()
	}
	rank := q * buckets[n-1].Count
	lower, below := 0.0, 0.0
	for i, b := range buckets {
		if b.Count >= rank {
			if math.IsInf(b.UpperBound, 1) {
				if i == 0 {
					return math.NaN()
				}
				return buckets[i-1].UpperBound
			}
			in := b.Count - below
			if in <= 0 {
				return b.UpperBound
			}
			return lower + (b.UpperBound-lower)*(rank-below)/in
		}
		lower, below = b.UpperBound, b.Count
	}
	return buckets[n-1].UpperBound
}
