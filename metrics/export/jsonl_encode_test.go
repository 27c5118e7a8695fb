package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/surgebench/surge/metrics"
)

// TestAppendLineMatchesEncodingJSON holds the hand-written line encoder to
// encoding/json's bytes: for real lines (a field added to line or its
// metadata shows up here), and for values that exercise every notation.
func TestAppendLineMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	j := NewJSONL(&bytes.Buffer{}, time.Unix(1_800_000_000, 0))
	check := func(name string, l line) {
		t.Helper()
		got, err := appendLine(nil, &l)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := json.Marshal(l) // metrics through MarshalJSON …
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
		plain, err := json.Marshal(metricsAsMap(l.Metrics)) // … which must be encoding/json's own
		if err != nil {
			t.Fatal(err)
		}
		if m, _ := l.Metrics.MarshalJSON(); !bytes.Equal(m, plain) {
			t.Errorf("%s metrics:\n got %s\nwant %s", name, m, plain)
		}
	}
	recs, vals := benchLines(3, 8)
	for i, r := range recs {
		check("streamed", j.line(r, &vals[i], i%2 == 0))
	}
	failed := &metrics.Record{RequestID: "x", SentNs: ms, EndNs: 2 * ms, RetryAfter: "1",
		Err: &metrics.Error{Code: 429, Type: "rate <limit> & \"quota\"", Message: "naïve\n\u2028"}}
	check("failed", j.line(failed, &metrics.Values{}, false))
	metric := func(name, unit string, x float64, xs ...float64) namedValue {
		m := newLineMetric(name, unit, requestMetric, 0)
		return namedValue{m: &m, x: x, xs: xs, list: len(xs) > 0}
	}
	list := func(name string, xs []float64) namedValue {
		v := metric(name, "ms", 0)
		v.xs, v.list = xs, true
		return v
	}
	odd := metricMap{
		metric("tiny", "ms", 1e-7), metric("small", "ms", 0.000001), metric("huge", "ms", 1e21),
		metric("big", "ms", 123456789012.5), metric("zero", "ms", 0), metric("negzero", "ms", math.Copysign(0, -1)),
		metric("neg", "ms", -2.5e-9), metric("micros", "ms", -1234.000567), metric("list", "ms", 0, 1, 2.5, 1e-8),
		list("nil list", nil), list("empty", []float64{}), metric("whole", "tokens", 42),
		metric("escaped <key>", "tokens/sec/\"user\"", 1), metric("ünïcode", "µs", 1),
	}
	slices.SortFunc(odd, byName) // as a line adds them
	check("odd values", line{Metrics: odd})
}

// slowWriter takes a while over each Write, as a busy disk does, and
// remembers what each one carried.
type slowWriter struct {
	mu     sync.Mutex
	writes [][]byte
	fail   error
}

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(2 * time.Millisecond)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fail != nil {
		return 0, w.fail
	}
	w.writes = append(w.writes, bytes.Clone(p))
	return len(p), nil
}

func (w *slowWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.writes)
}

func (w *slowWriter) lines() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, b := range w.writes {
		n += bytes.Count(b, []byte("\n"))
	}
	return n
}

// Lines that finish while a write is under way (or within the hold) go
// out together, whole and each once, and every line is written by the time
// Err returns, a write of the hold's under way or not.
func TestJSONLGroupCommit(t *testing.T) {
	t.Parallel()
	w := &slowWriter{}
	j := NewJSONL(w, time.Unix(0, 0))
	recs, vals := benchLines(4, 3)
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				r := *recs[i%len(recs)]
				r.RequestID = fmt.Sprintf("g%d-%d", g, i)
				j.WriteRecord(&r, &vals[i%len(vals)], true)
			}
		}()
	}
	wg.Wait()
	if err := j.Err(); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, b := range w.writes {
		if len(b) == 0 || b[len(b)-1] != '\n' {
			t.Fatalf("a write ends inside a line: %q", b)
		}
		for _, l := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
			var rec struct {
				Metadata struct {
					ID string `json:"x_request_id"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(l, &rec); err != nil {
				t.Fatalf("bad line %q: %v", l, err)
			}
			if seen[rec.Metadata.ID] {
				t.Errorf("%s written twice", rec.Metadata.ID)
			}
			seen[rec.Metadata.ID] = true
		}
	}
	if len(seen) != writers*each {
		t.Errorf("%d lines written, want %d", len(seen), writers*each)
	}
	if len(w.writes) >= writers*each {
		t.Errorf("%d writes for %d lines: nothing was batched", len(w.writes), writers*each)
	}
	t.Logf("%d lines in %d writes", len(seen), len(w.writes))
}

// A line is written within the hold of being queued, with no further call;
// until then it waits for others (a hold of an hour writes nothing before
// Err), and a long burst goes out in pieces of ≥ flushAt bytes, each of
// whole lines, hold or not.
func TestJSONLWritesWithinTheHold(t *testing.T) {
	t.Parallel()
	recs, vals := benchLines(3, 3)

	w := &slowWriter{}
	j := NewJSONL(w, time.Unix(0, 0), WithHold(time.Millisecond))
	for i := range recs {
		j.WriteRecord(recs[i], &vals[i], true)
	}
	for deadline := time.Now().Add(10 * time.Second); w.lines() < len(recs); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d lines written 10 s after they were queued with a 1 ms hold", w.lines(), len(recs))
		}
	}

	w = &slowWriter{}
	j = NewJSONL(w, time.Unix(0, 0), WithHold(time.Hour))
	j.WriteRecord(recs[0], &vals[0], true)
	if w.count() != 0 {
		t.Fatalf("%d writes within the hold, want 0", w.count())
	}
	n := 1
	for w.count() == 0 {
		j.WriteRecord(recs[n%len(recs)], &vals[n%len(vals)], true)
		n++
	}
	if got := len(w.writes[0]); got < flushAt || w.writes[0][got-1] != '\n' {
		t.Errorf("a held burst was written as %d bytes ending %q, want ≥ %d bytes of whole lines", got, w.writes[0][got-1:], flushAt)
	}
	if held := bytes.Count(w.writes[0], []byte("\n")); held != n {
		t.Errorf("the burst's write has %d lines, want %d", held, n)
	}
	j.WriteRecord(recs[0], &vals[0], true)
	if err := j.Err(); err != nil || w.count() != 2 || bytes.Count(w.writes[1], []byte("\n")) != 1 {
		t.Errorf("Err wrote %d pieces (err %v), want the held line as the second", w.count(), err)
	}
}

func TestJSONLWriteErrorSticks(t *testing.T) {
	t.Parallel()
	w := &slowWriter{fail: errors.New("disk full")}
	j := NewJSONL(w, time.Unix(0, 0), WithHold(0)) // each line written at once
	recs, vals := benchLines(2, 3)
	j.WriteRecord(recs[0], &vals[0], true)
	w.fail = nil
	j.WriteRecord(recs[1], &vals[1], true)
	if err := j.Err(); err == nil || err.Error() != "disk full" {
		t.Fatalf("Err() = %v, want the first write's error", err)
	}
	if len(w.writes) != 0 {
		t.Errorf("%d writes after a failed one, want none", len(w.writes))
	}
}

// TestAppendMicrosMatchesStrconv: the millionths fast path writes what
// strconv's shortest formatting writes, for rounded times of every size
// and for values it must decline (then appendJSONFloat falls back).
func TestAppendMicrosMatchesStrconv(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	vals := []float64{1e-6, -1e-6, 0.1, 0.5, 1, 2.000001, 999999999.999999, 123.45, -7.25, 1e9 - 1e-6, 3e-7, 0, 1e15, 0.1 + 0.2}
	for range 200_000 {
		scale := math.Pow(10, float64(rng.IntN(16)-7))
		v := rng.NormFloat64() * scale
		vals = append(vals, v, roundTo(v))
	}
	for _, v := range vals {
		want := strconv.AppendFloat(nil, v, 'f', -1, 64)
		if got, ok := appendMicros(nil, v); ok && string(got) != string(want) {
			t.Fatalf("appendMicros(%v) = %s, want %s", v, got, want)
		}
	}
	for _, v := range []float64{1.5, 0.000123, 20.735} {
		if _, ok := appendMicros(nil, roundTo(v)); !ok {
			t.Errorf("appendMicros declined %v, a whole number of millionths", v)
		}
	}
}

func FuzzAppendMicros(f *testing.F) {
	f.Add(1.5)
	f.Add(-0.000001)
	f.Fuzz(func(t *testing.T, v float64) {
		for _, x := range []float64{v, roundTo(v)} {
			if got, ok := appendMicros(nil, x); ok {
				if want := strconv.AppendFloat(nil, x, 'f', -1, 64); string(got) != string(want) {
					t.Fatalf("appendMicros(%v) = %s, want %s", x, got, want)
				}
			}
		}
	})
}

// jsonValue is a metric as encoding/json would be given it.
type jsonValue struct {
	Value any    `json:"value"`
	Unit  string `json:"unit"`
}

// metricsAsMap is m as the map encoding/json would be given.
func metricsAsMap(m metricMap) map[string]jsonValue {
	out := make(map[string]jsonValue, len(m))
	for _, x := range m {
		if _, dup := out[x.m.name]; dup {
			panic("metric " + x.m.name + " set twice")
		}
		v := any(x.x)
		if x.list {
			v = x.xs
		}
		out[x.m.name] = jsonValue{v, x.m.unit}
	}
	return out
}

// TestAppendMetadataMatchesEncodingJSON fills every field of a line's
// metadata and surge object at random (zero or not, nil or not, strings
// that need escaping) and holds the hand-written encoders to
// encoding/json's bytes: a field added to lineMetadata or lineSurge and not
// to appendMetadata or appendSurge fails here.
func TestAppendMetadataMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	checkAppender(t, appendMetadata)
	checkAppender(t, appendSurge)
}

func checkAppender[T any](t *testing.T, appendTo func([]byte, *T) ([]byte, error)) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	strs := []string{"", "w0", "kernel", "ünïcode µs", "<tag> & \"quoted\"\n", "\u2028\x01", "00000000000000000000000000000abc"}
	ints := []int64{0, 1, -1, 42, 1_796_119_200_001_000_000, math.MaxInt64, math.MinInt64}
	fill := func(v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			v.SetString(strs[rng.IntN(len(strs))])
		case reflect.Int, reflect.Int64:
			v.SetInt(ints[rng.IntN(len(ints))])
		case reflect.Bool:
			v.SetBool(rng.IntN(2) == 0)
		case reflect.Struct:
			b, ok := v.Addr().Interface().(*metrics.Breakdown)
			if !ok {
				t.Fatalf("%T has a %s field: teach this test (and its appender) about it", *new(T), v.Type())
			}
			for p := range b.Ms {
				b.Ms[p], b.Source[p] = math.NaN(), metrics.TimingSource(rng.IntN(9))
				if rng.IntN(4) > 0 {
					b.Ms[p] = rng.NormFloat64() * 100
				}
			}
		default:
			t.Fatalf("%T has a %s field: teach this test (and its appender) about it", *new(T), v.Type())
		}
	}
	for range 5000 {
		var md T
		rv := reflect.ValueOf(&md).Elem()
		for i := range rv.NumField() {
			f := rv.Field(i)
			if f.Kind() == reflect.Pointer {
				if rng.IntN(3) == 0 {
					continue // nil
				}
				f.Set(reflect.New(f.Type().Elem()))
				f = f.Elem()
			}
			fill(f)
		}
		got, err := appendTo(nil, &md)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(&md)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	}
}
