package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/metrics"
)

// steadyRun is a seeded 60 s closed-loop run of 32 streams (100–300
// tokens each) whose server is three times slower at the start, easing
// over 10 s: 1,500-odd requests, a warm-up to cut and a drain at the end.
func steadyRun(t *testing.T, opts ...metrics.Option) *metrics.Summary {
	t.Helper()
	c := metrics.NewCollector(append([]metrics.Option{metrics.WithShards(2), metrics.WithOrigin(fixtureStart)}, opts...)...)
	r := rand.New(rand.NewPCG(7, 7))
	var idx int64
	for u := range 32 {
		at := int64(time.Second) + int64(u)*int64(ms)
		for at < int64(61*time.Second) {
			slow := 1 + 2*max(0, 1-float64(at-int64(time.Second))/10e9)
			jitter := math.Exp(0.2 * r.NormFloat64())
			n := 100 + r.IntN(201)
			toks := make([]int64, n)
			tok := at + int64(40e6*slow*jitter)
			for k := range toks {
				toks[k] = tok
				tok += int64(8e6 * slow * jitter)
			}
			c.Add(&metrics.Record{Index: idx, Streamed: true, SentNs: at, EndNs: toks[n-1], TokenNs: toks,
				FirstContentNs: toks[0], Usage: metrics.Usage{Present: true, CompletionTokens: n}})
			idx++
			at = toks[n-1]
		}
	}
	return c.Close()
}

// TestPrecisionExports pins the console's intervals of a run long enough
// to have a steady state, and checks the JSON's and the CSV's: every
// headline percentile and throughput with its interval, the steady
// state's window and numbers beside the whole run's.
func TestPrecisionExports(t *testing.T) {
	t.Parallel()
	s := steadyRun(t)
	var con bytes.Buffer
	consolePrecision(&con, 36, s)
	golden(t, "console_precision.txt", con.Bytes())

	var js bytes.Buffer
	if err := JSON(&js, s, Run{SurgeVersion: "test", Start: fixtureStart, End: fixtureStart.Add(70 * time.Second),
		InputConfig: map[string]any{}, RunInfo: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Precision map[string]json.RawMessage `json:"precision"`
		Steady    map[string]json.RawMessage `json:"steady_state"`
		TTFT      map[string]any             `json:"time_to_first_token"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var ttft map[string]struct {
		Value, Lo, Hi, HalfWidthPct *float64
		N, Tail                     int
		Thin                        bool
	}
	if err := json.Unmarshal(doc.Precision["time_to_first_token"], &ttft); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"p50", "p90", "p95", "p99"} {
		iv := ttft[p]
		if iv.Lo == nil || iv.Hi == nil || !(*iv.Lo <= *iv.Value && *iv.Value <= *iv.Hi) || iv.N < 1000 {
			t.Errorf("TTFT %s: %+v", p, iv)
		}
	}
	if len(doc.TTFT) != 16 {
		t.Errorf("AIPerf's time_to_first_token has %d keys, want its 16 unchanged", len(doc.TTFT))
	}
	var tput struct {
		Value, Lo, Hi float64
		Batches       int
	}
	if err := json.Unmarshal(doc.Precision["output_token_throughput"], &tput); err != nil || tput.Batches < 2 || !(tput.Lo < tput.Value && tput.Value < tput.Hi) {
		t.Errorf("throughput %+v, %v", tput, err)
	}
	var found bool
	var start float64
	if json.Unmarshal(doc.Steady["found"], &found) != nil || !found || json.Unmarshal(doc.Steady["start_sec"], &start) != nil || start < 8 {
		t.Errorf("steady state %s", js.String()[strings.Index(js.String(), `"steady_state"`):][:300])
	}
	for _, k := range []string{"time_to_first_token", "request_latency", "output_token_throughput", "request_count", "precision"} {
		if _, ok := doc.Steady[k]; !ok {
			t.Errorf("steady_state lacks %s", k)
		}
	}

	var b bytes.Buffer
	if err := CSV(&b, s); err != nil {
		t.Fatal(err)
	}
	if _, err := csv.NewReader(bytes.NewReader(b.Bytes())).ReadAll(); err == nil {
		t.Fatal("the CSV's sections have different widths: encoding/csv should refuse to read it whole")
	}
	r := csv.NewReader(bytes.NewReader(b.Bytes()))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	at := slices.IndexFunc(rows, func(r []string) bool { return slices.Equal(r, precisionHeader) })
	if at < 0 {
		t.Fatal("no intervals section in the CSV")
	}
	windows := map[string]int{}
	for _, row := range rows[at+1:] {
		if len(row) != len(precisionHeader) {
			t.Errorf("row %v: %d columns, want %d", row, len(row), len(precisionHeader))
			continue
		}
		windows[row[1]]++
		if row[0] == "Time to First Token (ms)" && row[2] == "p99" && (!twoDecimals.MatchString(row[4]) || !twoDecimals.MatchString(row[5])) {
			t.Errorf("TTFT p99 row %v", row)
		}
	}
	if windows["run"] != 14 || windows["steady"] != 16 {
		t.Errorf("rows by window %v, want 14 of the run's (12 percentiles, 2 throughputs) and the steady state's 14 and its 2 bounds", windows)
	}

	// Trimmed, the headline numbers are the steady state's, and the
	// console and the CSV say so instead of repeating them.
	trimmed := steadyRun(t, metrics.WithTrim(metrics.TrimAuto))
	con.Reset()
	consolePrecision(&con, 36, trimmed)
	if !strings.Contains(con.String(), "(steady state, ") || strings.Contains(con.String(), "  steady state  ") ||
		!strings.Contains(con.String(), "the headline numbers are its own (trim auto)") {
		t.Errorf("trimmed console:\n%s", con.String())
	}
}

// TestThroughputInStepNotEstimable: completions that arrive in step (a
// metronome: every request the same length, all started together) make
// every batch of the throughput series the same, whose spread, zero,
// estimates nothing: the console says the interval is not estimable, the
// JSON has no bounds, and no interval of zero width (±0.0%) is shown.
func TestThroughputInStepNotEstimable(t *testing.T) {
	t.Parallel()
	c := metrics.NewCollector(metrics.WithShards(2), metrics.WithOrigin(fixtureStart))
	var idx int64
	for u := range 8 {
		for at := int64(time.Second); at < int64(41*time.Second); at += int64(2 * time.Second) {
			toks := make([]int64, 10)
			for k := range toks {
				toks[k] = at + int64(200*ms) + int64(k)*int64(200*ms)
			}
			c.Add(&metrics.Record{Index: idx, Streamed: true, SentNs: at + int64(u), EndNs: at + int64(2*time.Second) - 1, TokenNs: toks,
				FirstContentNs: toks[0], Usage: metrics.Usage{Present: true, CompletionTokens: len(toks)}})
			idx++
		}
	}
	s := c.Close()
	r := s.Precision.Throughput(metrics.RequestThroughput)
	if r == nil || !r.Identical || !math.IsInf(r.HalfWidth(), 1) || r.Batches < 2 {
		t.Fatalf("request throughput interval %+v: want identical batches, not estimable", r)
	}
	var con bytes.Buffer
	consolePrecision(&con, 36, s)
	for _, line := range strings.Split(con.String(), "\n") {
		if strings.Contains(line, "Throughput") && (!strings.Contains(line, "interval not estimable") || strings.Contains(line, "±0.0%")) {
			t.Errorf("console line: %s", line)
		}
	}
	var js bytes.Buffer
	if err := JSON(&js, s, Run{SurgeVersion: "test", Start: fixtureStart, End: fixtureStart.Add(45 * time.Second),
		InputConfig: map[string]any{}, RunInfo: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Precision map[string]json.RawMessage `json:"precision"`
	}
	var iv struct{ Lo, Hi *float64 }
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(doc.Precision["request_throughput"], &iv); err != nil || iv.Lo != nil || iv.Hi != nil {
		t.Errorf("request_throughput's interval in the JSON: lo %v hi %v, want null", iv.Lo, iv.Hi)
	}
}
