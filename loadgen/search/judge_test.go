package search

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestParseObjectives(t *testing.T) {
	t.Parallel()
	got, err := ParseObjectives("--slo", "time_to_first_token:p99:200, inter_token_latency:20 error_rate:0.01 output_token_throughput_per_user:P50:30")
	if err != nil {
		t.Fatal(err)
	}
	want := []Objective{
		{Tag: "time_to_first_token", Percentile: 99, Limit: 200},
		{Tag: "inter_token_latency", Percentile: 95, Limit: 20},
		{Tag: ErrorRate, Percentile: 95, Limit: 0.01},
		{Tag: "output_token_throughput_per_user", Percentile: 50, Limit: 30, HigherIsBetter: true},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("item %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if s := got[0].String(); s != "time_to_first_token:p99:200" {
		t.Errorf("String %q", s)
	}
	for _, bad := range []struct{ in, says string }{
		{"", "no objectives"},
		{"ttft:200", "unknown metric"},
		{"time_to_first_token", "not tag:value"},
		{"time_to_first_token:p0:200", "percentile"},
		{"time_to_first_token:p101:200", "percentile"},
		{"time_to_first_token:px:200", "percentile"},
		{"time_to_first_token:-1", "non-negative"},
		{"time_to_first_token:1:2:3", "not tag:value"},
		{"error_rate:p50:0.1", "no percentile"},
		{"error_rate:5", "fraction"},
		{"request_latency:1 request_latency:p95:2", "twice"},
		{"inter_chunk_latency:5", "unknown metric"},
	} {
		_, err := ParseObjectives("--slo", bad.in)
		if err == nil || !strings.Contains(err.Error(), bad.says) || !strings.HasPrefix(err.Error(), "--slo") {
			t.Errorf("ParseObjectives(%q) = %v, want an error naming --slo saying %q", bad.in, err, bad.says)
		}
	}
}

func FuzzParseObjectives(f *testing.F) {
	for _, s := range []string{"time_to_first_token:p99:200", "error_rate:0.1", "a:b:c", ":::", "inter_token_latency:1e308"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		objs, err := ParseObjectives("--slo", s)
		if err != nil {
			return
		}
		for _, o := range objs {
			if math.IsNaN(o.Limit) || o.Limit < 0 || !(o.Percentile > 0 && o.Percentile <= 100) {
				t.Fatalf("%q gave %+v", s, o)
			}
			back, err := ParseObjectives("--slo", o.String())
			if err != nil || len(back) != 1 || back[0] != o {
				t.Fatalf("%+v does not round-trip through %q: %+v %v", o, o.String(), back, err)
			}
		}
	})
}

// samples makes n samples 10 ms apart whose one value comes from f(i).
func samples(n int, f func(i int) float64) []Sample {
	out := make([]Sample, n)
	for i := range out {
		out[i] = Sample{EndNs: int64(i) * 10e6, Values: []float64{f(i)}}
	}
	return out
}

// settle is j ending probes once their verdict is settled.
func settle(j Judging) Judging {
	j.Settle = true
	return j
}

func TestJudge(t *testing.T) {
	t.Parallel()
	ttft := []Objective{{Tag: "time_to_first_token", Percentile: 95, Limit: 100}}
	rng := rand.New(rand.NewPCG(1, 2))
	steady := func(mean, jitter float64) func(int) float64 {
		return func(int) float64 { return mean + jitter*(rng.Float64()-0.5) }
	}
	j := Judging{Objectives: ttft, MinDuration: 2 * time.Second, MaxDuration: 8 * time.Second, MinRequests: 40}
	tests := []struct {
		name    string
		j       Judging
		samples []Sample
		elapsed time.Duration
		verdict Verdict
		stable  bool
		early   bool
		reason  string
	}{
		{name: "too few requests", j: j, samples: samples(20, steady(50, 5)), elapsed: 3 * time.Second, verdict: Undecided, reason: "collecting"},
		{name: "too short", j: j, samples: samples(100, steady(50, 5)), elapsed: time.Second, verdict: Undecided, reason: "collecting"},
		{name: "steady pass", j: j, samples: samples(100, steady(50, 5)), elapsed: 3 * time.Second, verdict: Pass, stable: true},
		{name: "noise clear of the limit is stable", j: j, samples: samples(100, func(i int) float64 { return 20 + 30*float64(i/25%2) }), elapsed: 3 * time.Second, verdict: Pass, stable: true},
		{name: "steady fail", j: j, samples: samples(100, steady(120, 5)), elapsed: 3 * time.Second, verdict: Fail, stable: true},
		{name: "clear failure is cut short", j: j, samples: samples(30, steady(400, 50)), elapsed: 500 * time.Millisecond, verdict: Fail, early: true},
		{name: "growing queue is noisy, extended", j: j, samples: samples(100, func(i int) float64 { return 20 + float64(i) }), elapsed: 3 * time.Second, verdict: Undecided, reason: "noisy"},
		{name: "noisy at the maximum is decided, unstable", j: j, samples: samples(100, func(i int) float64 { return 40 + float64(5+2*(i%25))*float64(i/25%2) }), elapsed: 8 * time.Second, verdict: Pass, reason: "unstable"},
		// samples end 10 ms apart: 100 requests/s.
		{name: "rate probe falling behind", j: Judging{Objectives: ttft, MinDuration: time.Second, OfferedRate: 150}, samples: samples(50, steady(50, 5)), elapsed: time.Second, verdict: Fail, stable: true, reason: "request_throughput"},
		{name: "rate probe keeping up", j: Judging{Objectives: ttft, MinDuration: time.Second, OfferedRate: 100}, samples: samples(100, steady(50, 5)), elapsed: time.Second, verdict: Pass, stable: true},
		// Requests of 2 s latency offered at 100/s for 3 s: the first
		// finish after 2 s, the rest at the offered rate. Counting the
		// probe's completions over its whole time (a third of those sent)
		// would call that falling behind.
		{name: "rate probe keeping up at long latencies", j: Judging{Objectives: ttft, MinDuration: time.Second, OfferedRate: 100}, samples: samples(100, steady(50, 5)), elapsed: 3 * time.Second, verdict: Pass, stable: true},
		// Settle: the requests decide before the minimum duration when the
		// intervals are clear of the limits.
		// (a p95's upper bound needs some 60 values above the median: 100 here)
		{name: "settled pass before the minimum", j: settle(j), samples: samples(100, steady(50, 5)), elapsed: time.Second, verdict: Pass, stable: true, reason: "settled after 100 requests"},
		{name: "settled fail before the minimum", j: settle(j), samples: samples(60, steady(110, 5)), elapsed: time.Second, verdict: Fail, stable: true, reason: "settled"},
		{name: "near the limit: not settled", j: settle(j), samples: samples(100, steady(90.25, 20.5)), elapsed: time.Second, verdict: Undecided, reason: "collecting"},
		{name: "settle waits for the minimum requests", j: settle(j), samples: samples(30, steady(50, 5)), elapsed: time.Second, verdict: Undecided, reason: "collecting"},
		{name: "a rate probe settles on its finishing rate", j: settle(Judging{Objectives: ttft, MinDuration: 5 * time.Second, OfferedRate: 100}), samples: samples(200, steady(50, 5)), elapsed: 2 * time.Second, verdict: Pass, stable: true, reason: "settled"},
		{name: "a rate probe not yet settled", j: settle(Judging{Objectives: ttft, MinDuration: 5 * time.Second, OfferedRate: 100}), samples: samples(40, steady(50, 5)), elapsed: 500 * time.Millisecond, verdict: Undecided, reason: "collecting"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.j.Judge(tt.samples, tt.elapsed)
			if got.Verdict != tt.verdict || (tt.verdict != Undecided && got.Stable != tt.stable) || got.Early != tt.early || !strings.Contains(got.Reason, tt.reason) {
				t.Errorf("judgement %+v, want %v stable %v early %v reason ~%q", got, tt.verdict, tt.stable, tt.early, tt.reason)
			}
			if got.Verdict != Undecided && got.Limiting == "" {
				t.Errorf("no limiting metric: %+v", got)
			}
		})
	}
}

func TestJudgeErrorRate(t *testing.T) {
	t.Parallel()
	j := Judging{Objectives: []Objective{{Tag: ErrorRate, Limit: 0.05}}, MinDuration: time.Second, MinRequests: 40}
	s := samples(100, func(int) float64 { return 1 })
	for i := range 3 {
		s[i*30].Failed = true
	}
	if got := j.Judge(s, 2*time.Second); got.Verdict != Pass || got.Observed[ErrorRate] != 0.03 {
		t.Errorf("3%% errors under a 5%% limit: %+v", got)
	}
	for i := range 20 {
		s[i*5].Failed = true
	}
	if got := j.Judge(s, 2*time.Second); got.Verdict != Fail || got.Limiting != ErrorRate {
		t.Errorf("20%% errors under a 5%% limit: %+v", got)
	}
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	xs := []float64{5, 1, 4, 2, 3}
	for p, want := range map[float64]float64{50: 3, 100: 5, 25: 2, 95: 4.8} {
		if got := Percentile(xs, p); math.Abs(got-want) > 1e-9 {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
	if !math.IsNaN(Percentile(nil, 50)) {
		t.Error("percentile of nothing is not NaN")
	}
}

func TestLowestRate(t *testing.T) {
	for _, tc := range []struct {
		j    Judging
		want float64
	}{
		{Judging{}, 2},                                // 40 requests in 4 × 5 s
		{Judging{MinDuration: time.Second}, 10},       // 40 in 4 s
		{Judging{MaxDuration: 80 * time.Second}, 0.5}, // 40 in 80 s
		{Judging{MinRequests: 100, MaxDuration: 10 * time.Second}, 10},
	} {
		if got := tc.j.LowestRate(); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%+v: LowestRate %v, want %v", tc.j, got, tc.want)
		}
	}
}

func TestJudgeDecisiveExtendsWhileAnIntervalStraddles(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	j := Judging{Objectives: []Objective{{Tag: "time_to_first_token", Percentile: 95, Limit: 100}}, MinDuration: time.Second,
		MaxDuration: 3 * time.Second, MinRequests: 40, Decisive: true}
	near := samples(100, func(int) float64 { return 105.3 * rng.Float64() }) // p95 ≈ 100
	if got := j.Judge(near, 2*time.Second); got.Verdict != Undecided || !strings.Contains(got.Reason, "straddles") {
		t.Errorf("near the limit before the cap: %+v", got)
	}
	if got := j.Judge(near, 3*time.Second); got.Verdict == Undecided || got.Stable {
		t.Errorf("near the limit at the cap: decided and unstable, got %+v", got)
	}
	clear := samples(100, func(int) float64 { return 40 + rng.Float64() })
	if got := j.Judge(clear, time.Second); got.Verdict != Pass || !got.Stable || !strings.Contains(got.Reason, "interval clear") {
		t.Errorf("clear of the limit: %+v", got)
	}
}

func TestJudgeWindowObjectives(t *testing.T) {
	t.Parallel()
	lat := Objective{Tag: "request_latency", Stat: StatAvg, Limit: 100}
	mk := func() []Sample {
		s := samples(100, func(i int) float64 { return float64(50 + 100*(i%4/3)) }) // every 4th is 150 ms
		for i := range s {
			s[i].Tokens = 10
		}
		for i := range 10 {
			s[i*10].Failed = true
			if i < 4 {
				s[i*10].Cancelled = true
			}
		}
		return s
	}
	for _, tc := range []struct {
		o    Objective
		want float64
	}{
		{Objective{Tag: SuccessRate, Limit: 0.5, HigherIsBetter: true}, 0.9},
		{Objective{Tag: CancellationRate, Limit: 0.5}, 0.04},
		{Objective{Tag: RequestErrorRate, Limit: 0.5}, 6.0 / 96},
		{Objective{Tag: ErrorRate, Limit: 0.5}, 0.1},
		// samples end 10 ms apart: 99 gaps over 0.99 s; 90 successes of 10 tokens.
		{Objective{Tag: OutputThroughput, Limit: 1, HigherIsBetter: true}, 900 / 0.99},
	} {
		j := Judging{Objectives: []Objective{tc.o}, MinDuration: time.Second}
		got := j.Judge(mk(), 2*time.Second).Observed[tc.o.Name()]
		if math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", tc.o.Name(), got, tc.want)
		}
	}
	// Good: met the per-request latency (≤ 100 ms) and succeeded.
	j := Judging{Objectives: []Objective{{Tag: "request_latency", Percentile: 99, Limit: 100}, {Tag: GoodputRatio, Limit: 0.1, HigherIsBetter: true}}, MinDuration: time.Second}
	s := mk()
	good := 0
	for _, x := range s {
		if !x.Failed && x.Values[0] <= 100 {
			good++
		}
	}
	if got := j.Judge(s, 2*time.Second).Observed[GoodputRatio]; math.Abs(got-float64(good)/100) > 1e-9 {
		t.Errorf("goodput_ratio %v, want %v", got, float64(good)/100)
	}
	if got := (Judging{Objectives: []Objective{lat}, MinDuration: time.Second}).Judge(s, 2*time.Second).Observed["avg(request_latency)"]; got < 50 || got > 150 {
		t.Errorf("avg(request_latency) = %v", got)
	}
	strict := Objective{Tag: "request_latency", Stat: StatMax, Limit: 150, Strict: true}
	if strict.Met(150) || !strict.Met(149) || strict.Name() != "max(request_latency)" || strict.String() != "request_latency:max:150" {
		t.Errorf("a strict max limit: met(150) %v, name %s, string %s", strict.Met(150), strict.Name(), strict.String())
	}
}
