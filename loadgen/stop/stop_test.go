package stop

import (
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/metrics"
)

func TestParse(t *testing.T) {
	t.Parallel()
	cs, err := Parse("--stop-on", "time_to_first_token:p99:2000@30s, error_rate:0.1 kv_cache_usage>=0.99@5s num_requests_waiting>100@2.5")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 4 {
		t.Fatalf("%d conditions", len(cs))
	}
	if o := cs[0].Objective; o == nil || o.Tag != "time_to_first_token" || o.Percentile != 99 || o.Limit != 2000 || cs[0].Window != 30*time.Second {
		t.Errorf("item 1: %+v", cs[0])
	}
	if cs[1].Objective == nil || cs[1].Window != DefaultWindow {
		t.Errorf("item 2: %+v", cs[1])
	}
	if cs[2].Metric != "kv_cache_usage" || cs[2].Op != ">=" || cs[2].Bound != 0.99 || cs[2].Window != 5*time.Second {
		t.Errorf("item 3: %+v", cs[2])
	}
	if cs[3].Op != ">" || cs[3].Window != 2500*time.Millisecond {
		t.Errorf("item 4: %+v", cs[3])
	}
	for _, bad := range []struct{ in, says string }{
		{"", "no conditions"},
		{"gpu_temp>90", "unknown server metric"},
		{"kv_cache_usage>=x", "not a number"},
		{"error_rate:0.1@soon", "window"},
		{"error_rate:0.1@-5s", "window"},
		{"ttft:100", "unknown metric"},
	} {
		if _, err := Parse("--stop-on", bad.in); err == nil || !strings.Contains(err.Error(), bad.says) || !strings.HasPrefix(err.Error(), "--stop-on") {
			t.Errorf("Parse(%q) = %v, want an error naming --stop-on saying %q", bad.in, err, bad.says)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"error_rate:0.1@10s", "kv_cache_usage>=0.99@5s", "time_to_first_token:p95:10@1", "a>b@c", "<<@@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs, err := Parse("--stop-on", s)
		if err != nil {
			return
		}
		for _, c := range cs {
			if c.Window <= 0 || (c.Objective == nil) == (c.Metric == "") {
				t.Fatalf("%q gave %+v", s, c)
			}
		}
	})
}

const sec = int64(time.Second)

func rec(endNs int64, ttftMs float64, failed bool) (*metrics.Record, *metrics.Values) {
	r := &metrics.Record{EndNs: endNs}
	if failed {
		r.Err = &metrics.Error{Code: 500, Type: "server_error"}
	}
	return r, &metrics.Values{TTFT: ttftMs}
}

func TestWatchObjectiveMustStayViolated(t *testing.T) {
	t.Parallel()
	cs, err := Parse("--stop-on", "time_to_first_token:p50:100@3s")
	if err != nil {
		t.Fatal(err)
	}
	w := NewWatch(cs)
	feed := func(from, to int64, ttft float64) {
		for at := from; at < to; at += sec / 10 {
			w.Record(rec(at, ttft, false))
		}
	}
	feed(0, 2*sec, 50)
	if tr := w.Check(2 * sec); tr != nil {
		t.Fatalf("tripped while met: %v", tr.Reason())
	}
	// A violation that lasts 2 s, then clears, does not trip a 3 s window.
	feed(2*sec, 6*sec, 500)
	for now := 3 * sec; now <= 4*sec; now += sec {
		if tr := w.Check(now); tr != nil {
			t.Fatalf("tripped at %d s, the violation began at 3 s", now/sec)
		}
	}
	w.recent = nil
	feed(4*sec, 5*sec, 50)
	if tr := w.Check(5 * sec); tr != nil {
		t.Fatalf("tripped after recovering: %s", tr.Reason())
	}
	// A lasting violation trips once its window has passed.
	feed(5*sec, 12*sec, 500)
	var trip *Trip
	for now := 6 * sec; now <= 12*sec && trip == nil; now += sec {
		if trip = w.Check(now); trip != nil && now < 9*sec {
			t.Fatalf("tripped at %d s, before the 3 s window from 6 s", now/sec)
		}
	}
	if trip == nil || trip.Since != 6*time.Second || !strings.Contains(trip.Reason(), "p50(time_to_first_token)") {
		t.Fatalf("trip %+v", trip)
	}
}

func TestWatchErrorRateNeedsSamples(t *testing.T) {
	t.Parallel()
	cs, _ := Parse("--stop-on", "error_rate:0.5@1s")
	w := NewWatch(cs)
	w.Record(rec(sec, 0, true))
	w.Record(rec(sec, 0, true))
	if w.Check(sec) != nil || w.Check(3*sec) != nil {
		t.Fatal("two failures tripped an error rate on their own")
	}
	for at := 3 * sec; at < 6*sec; at += sec / 4 {
		w.Record(rec(at, 0, at%sec == 0))
	}
	if w.Check(4*sec) != nil || w.Check(6*sec) != nil {
		t.Fatal("25% errors tripped a 50% limit")
	}
	for at := 6 * sec; at < 9*sec; at += sec / 4 {
		w.Record(rec(at, 0, true))
	}
	w.Check(7 * sec)
	if tr := w.Check(8 * sec); tr == nil || tr.Value != 1 {
		t.Fatalf("all failing for 1 s did not trip: %+v", tr)
	}
}

// gauges is a scrape of named gauges.
type gauges map[string]float64

func (g gauges) Gauge(name string) float64 { return g[name] }

func TestWatchServerMetric(t *testing.T) {
	t.Parallel()
	cs, _ := Parse("--stop-on", "kv_cache_usage>=0.99@2s")
	w := NewWatch(cs)
	if w.Check(0) != nil {
		t.Fatal("tripped without a scrape")
	}
	w.Server(gauges{"kv_cache_usage": 1})
	w.Check(1 * sec)
	w.Server(gauges{"kv_cache_usage": 0.5})
	if w.Check(2*sec) != nil {
		t.Fatal("tripped after the gauge fell")
	}
	w.Server(gauges{"kv_cache_usage": 0.995})
	w.Check(3 * sec)
	if w.Check(4*sec) != nil {
		t.Fatal("tripped before the window passed")
	}
	if tr := w.Check(5 * sec); tr == nil || tr.Condition.Metric != "kv_cache_usage" {
		t.Fatalf("KV cache full for 2 s did not trip: %+v", tr)
	}
}

// A watch with precision targets stops the run once a check finds them
// all reached; a violated condition still wins.
func TestPrecisionStops(t *testing.T) {
	t.Parallel()
	targets, err := metrics.ParseTargets([]string{"time_to_first_token:p50:±50%"})
	if err != nil {
		t.Fatal(err)
	}
	k := metrics.NewChecker(targets, metrics.WithMinRequests(20))
	c := metrics.NewCollector(metrics.WithShards(1))
	w := NewWatch(nil)
	add := func(from, n int) {
		for i := from; i < from+n; i++ {
			c.Add(&metrics.Record{Index: int64(i), Streamed: true, SentNs: int64(i) * 1e7, EndNs: int64(i)*1e7 + 5e7,
				TokenNs: []int64{int64(i)*1e7 + 2e7 + int64(i%3)*1e6, int64(i)*1e7 + 5e7}})
		}
	}
	judge := func(want int64) {
		t.Helper()
		for range 200 { // records reach their shard asynchronously
			st := k.Check(c.Sample(-1))
			if st.Requests == want {
				w.Precision(st)
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
		t.Fatalf("the sample never held %d requests", want)
	}
	if trip := w.Check(0); trip != nil {
		t.Fatalf("no judgement yet: %+v", trip)
	}
	add(0, 10)
	judge(10)
	if trip := w.Check(int64(time.Second)); trip != nil {
		t.Fatalf("10 requests, below the minimum of 20: %+v", trip)
	}
	add(10, 30)
	judge(40)
	trip := w.Check(int64(2 * time.Second))
	if trip == nil || trip.Precision == nil || !trip.Precision.Settled {
		t.Fatalf("40 requests: %+v, want the precision trip", trip)
	}
	if r := trip.Reason(); !strings.HasPrefix(r, "--precision: every target reached: time_to_first_token:p50 ±") || !strings.Contains(r, "after 40 requests") {
		t.Errorf("reason %q", r)
	}
	c.Close()

	conds, err := Parse("--stop-on", "error_rate:0.1@1s")
	if err != nil {
		t.Fatal(err)
	}
	w = NewWatch(conds)
	for i := range 10 {
		w.Record(&metrics.Record{Phase: metrics.Profile, EndNs: int64(i) * 2e8, Err: &metrics.Error{Type: "x"}}, nil)
	}
	w.Precision(metrics.PrecisionStatus{Settled: true})
	if trip := w.Check(int64(time.Second)); trip == nil || trip.Precision == nil {
		t.Errorf("violation just begun, precision settled: %+v, want the precision trip", trip)
	}
	if trip := w.Check(int64(2 * time.Second)); trip == nil || trip.Precision != nil {
		t.Errorf("violated condition and settled precision: %+v, want the condition", trip)
	}
}
