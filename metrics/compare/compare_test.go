package compare

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surgebench/surge/metrics/artifact"
	"github.com/surgebench/surge/metrics/stats"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func load(t *testing.T, dirs ...string) []*artifact.Run {
	t.Helper()
	var paths []string
	for _, d := range dirs {
		paths = append(paths, filepath.Join("testdata", d))
	}
	runs, err := artifact.LoadAll(paths)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

var opts = Options{Bootstrap: stats.Bootstrap{Iterations: 2000, Level: 0.95, Seed: 1}}

func metric(t *testing.T, c Comparison, tag string) Metric {
	t.Helper()
	m := findMetric(c, tag)
	if m == nil {
		t.Fatalf("%s vs %s: no %s", c.B, c.A, tag)
	}
	return *m
}

func stat(t *testing.T, m Metric, name string) StatDiff {
	t.Helper()
	for _, s := range m.Stats {
		if s.Stat == name {
			return s
		}
	}
	t.Fatalf("%s: no %s", m.Tag, name)
	return StatDiff{}
}

// TestFastAgainstSlow: the same workload against the mock with a TTFT of
// 20 ms (slow, the baseline) and 16 ms (fast): TTFT and latency are
// significantly lower by about a fifth and an eighth, ITL (4 ms in both)
// is not, and the verdict says so in one line.
func TestFastAgainstSlow(t *testing.T) {
	t.Parallel()
	res, err := Compare(load(t, "slow", "fast"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Check.Comparable || len(res.Check.Reasons) != 0 {
		t.Errorf("one workload judged incomparable: %+v", res.Check)
	}
	if len(res.Comparisons) != 1 {
		t.Fatalf("%d comparisons, want 1", len(res.Comparisons))
	}
	c := res.Comparisons[0]
	ttft := metric(t, c, "time_to_first_token")
	p50 := stat(t, ttft, "p50")
	if !p50.Significant || !(p50.Rel < -0.15 && p50.Rel > -0.22) || !(p50.RelLo < p50.Rel && p50.Rel < p50.RelHi) {
		t.Errorf("TTFT p50: %+v, want about −19%% inside its interval, significant", p50)
	}
	if !ttft.MannWhitney.Significant || ttft.MannWhitney.BGreater > 0.05 || ttft.Better != "lower" {
		t.Errorf("TTFT rank test %+v better %q", ttft.MannWhitney, ttft.Better)
	}
	if want := "fast's TTFT p50 is 19.1% lower, 95% CI 18.5–19.5% (better)"; p50.Verdict != want {
		t.Errorf("verdict %q, want %q", p50.Verdict, want)
	}
	if !strings.HasPrefix(ttft.Verdict, "fast's TTFT is lower (better; Mann–Whitney p = ") {
		t.Errorf("metric verdict %q", ttft.Verdict)
	}
	itl := metric(t, c, "inter_token_latency")
	for _, s := range itl.Stats {
		if s.Stat != "p99" && s.Significant {
			t.Errorf("ITL %s significant: %+v (both mocks stream 4 ms apart)", s.Stat, s)
		}
	}
	if itl.MannWhitney.Significant {
		t.Errorf("ITL distributions judged different: %+v", itl.MannWhitney)
	}
	if !strings.Contains(stat(t, itl, "p50").Verdict, "not significantly different") {
		t.Errorf("ITL p50 verdict %q", stat(t, itl, "p50").Verdict)
	}
	var tput *RunLevel
	for i := range c.RunLevel {
		if c.RunLevel[i].Tag == "output_token_throughput" {
			tput = &c.RunLevel[i]
		}
	}
	if tput == nil || !(tput.Rel > 0.05) {
		t.Errorf("output throughput %+v, want higher for the faster server", tput)
	}
}

// TestReproducible: one seed, one result, byte for byte; another seed
// moves the intervals but not the estimates.
func TestReproducible(t *testing.T) {
	t.Parallel()
	enc := func(o Options) string {
		res, err := Compare(load(t, "slow", "fast"), o)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	a, b := enc(opts), enc(opts)
	if a != b {
		t.Errorf("the same seed gave two results")
	}
	other := opts
	other.Bootstrap.Seed = 2
	if enc(other) == a {
		t.Errorf("another seed gave the same intervals")
	}
	// Asking for more metrics leaves the others' intervals as they were.
	more := opts
	more.Metrics = append([]string{"http_req_duration"}, DefaultMetrics...)
	r1, _ := Compare(load(t, "slow", "fast"), opts)
	r2, _ := Compare(load(t, "slow", "fast"), more)
	if diff := cmp.Diff(metric(t, r1.Comparisons[0], "time_to_first_token"), metric(t, r2.Comparisons[0], "time_to_first_token")); diff != "" {
		t.Errorf("adding a metric changed TTFT's result:\n%s", diff)
	}
}

// TestGolden pins the JSON of a comparison (go test ./metrics/compare
// -update rewrites it).
func TestGolden(t *testing.T) {
	t.Parallel()
	res, err := Compare(load(t, "slow", "fast", "other-isl"), opts)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := ParseRules("time_to_first_token.p99>+5%,request_throughput<-5%")
	if err != nil {
		t.Fatal(err)
	}
	outcomes, err := res.Evaluate(rules)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(struct {
		*Result
		FailOn []Outcome `json:"fail_on"`
	}{res, outcomes}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := WriteText(&text, res, outcomes); err != nil {
		t.Fatal(err)
	}
	// fast's ITL p99 moved significantly, its distribution did not: the
	// verdict says so rather than leave the two side by side.
	if !strings.Contains(text.String(), "fast's ITL distribution is not significantly different (Mann–Whitney p = 0.204), but its p99 is ") ||
		!strings.Contains(text.String(), "a percentile moved, not the distribution as a whole") {
		t.Errorf("the ITL verdict does not explain its significant p99:\n%s", text.String())
	}
	// One format per column: values with two decimals, changes with one.
	value, change := regexp.MustCompile(`^\d+\.\d\d$`), regexp.MustCompile(`^[+−]\d+\.\d%$`)
	rows := 0
	for _, l := range strings.Split(text.String(), "\n") {
		f := strings.Fields(l)
		i := slices.Index(f, "p99")
		if i < 0 || i+3 >= len(f) || !strings.HasPrefix(l, "   ") {
			continue // not a table's p99 row (a verdict's "p99 16% lower")
		}
		rows++
		if !value.MatchString(f[i+1]) || !value.MatchString(f[i+2]) || !change.MatchString(f[i+3]) {
			t.Errorf("row %q: want values like 21.72 and changes like +5.6%%", l)
		}
	}
	if rows != 10 {
		t.Errorf("%d p99 rows, want 10 (5 metrics × 2 comparisons)", rows)
	}
	for _, g := range []struct {
		file string
		got  []byte
	}{{"slow-fast-other.golden.json", append(got, '\n')}, {"slow-fast-other.golden.txt", text.Bytes()}} {
		path := filepath.Join("testdata", g.file)
		if *update {
			if err := os.WriteFile(path, g.got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./metrics/compare -update)", err)
		}
		if diff := cmp.Diff(string(want), string(g.got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", path, diff)
		}
	}
}

// TestDifferentWorkloadIsRefused: a run with --isl 24 against one with 16
// differs in its configuration and dataset, and the reason says which
// setting.
func TestDifferentWorkloadIsRefused(t *testing.T) {
	t.Parallel()
	c := Fingerprints(load(t, "slow", "other-isl"))
	if c.Comparable || len(c.Reasons) != 1 {
		t.Fatalf("check %+v, want one reason", c)
	}
	for _, want := range []string{"slow and other-isl ran different workloads", "differing: config, dataset", "isl: 16 vs 24"} {
		if !strings.Contains(c.Reasons[0], want) {
			t.Errorf("reason %q lacks %q", c.Reasons[0], want)
		}
	}
	if strings.Contains(c.Reasons[0], "output_artifact_dir") || strings.Contains(c.Reasons[0], "url") {
		t.Errorf("reason %q names settings outside the workload", c.Reasons[0])
	}
	// Without fingerprints (AIPerf's JSONL) nothing can be checked: noted.
	c = Fingerprints(load(t, "slow", "../../report/testdata/aiperf"))
	if !c.Comparable || len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "aiperf has no workload fingerprint") {
		t.Errorf("check against an AIPerf export: %+v", c)
	}
}

// TestSweepsCompareStageByStage: two sweeps pair their stages by mode and
// value; a sweep against a single run pools its stages, and says so.
func TestSweepsCompareStageByStage(t *testing.T) {
	t.Parallel()
	res, err := Compare(load(t, "sweep-slow", "sweep-fast"), opts)
	if err != nil {
		t.Fatal(err)
	}
	var stages []string
	for _, c := range res.Comparisons {
		stages = append(stages, c.Stage)
		if n := metric(t, c, "time_to_first_token").NA; n != 40 {
			t.Errorf("%s: %d baseline requests, want the stage's 40", c.Stage, n)
		}
		if rl := c.RunLevel[0]; rl.Tag != "request_throughput" || !(rl.B > rl.A) {
			t.Errorf("%s: %+v, want the stage's request throughput, higher for the faster server", c.Stage, rl)
		}
		if p50 := stat(t, metric(t, c, "time_to_first_token"), "p50"); !p50.Significant || p50.Rel > -0.1 {
			t.Errorf("%s TTFT p50 %+v, want significantly lower", c.Stage, p50)
		}
		if p99 := stat(t, metric(t, c, "time_to_first_token"), "p99"); !p99.TooFew || p99.Significant || !strings.Contains(p99.Verdict, "too few requests") {
			t.Errorf("%s: p99 of 40 requests %+v, want too few to judge", c.Stage, p99)
		}
	}
	if diff := cmp.Diff([]string{"concurrency 1", "concurrency 4"}, stages); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
	res, err = Compare(load(t, "slow", "sweep-fast"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Comparisons) != 1 || res.Comparisons[0].Stage != "" || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "stages pooled") {
		t.Errorf("sweep against a run: %d comparisons, warnings %q", len(res.Comparisons), res.Warnings)
	}
}

func TestParseRules(t *testing.T) {
	t.Parallel()
	got, err := ParseRules("time_to_first_token.p99>+5%, output_token_throughput<-3%  request_latency.avg>20,inter_token_latency.p99.9>0.5%")
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{
		{Text: "time_to_first_token.p99>+5%", Metric: "time_to_first_token", Stat: "p99", Op: ">", Limit: 0.05, Relative: true},
		{Text: "output_token_throughput<-3%", Metric: "output_token_throughput", Op: "<", Limit: -0.03, Relative: true},
		{Text: "request_latency.avg>20", Metric: "request_latency", Stat: "avg", Op: ">", Limit: 20},
		{Text: "inter_token_latency.p99.9>0.5%", Metric: "inter_token_latency", Stat: "p99.9", Op: ">", Limit: 0.005, Relative: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseRules (-want +got):\n%s", diff)
	}
	for _, tc := range []struct{ in, want string }{
		{"time_to_first_token.p99", "no > or <"},
		{"time_to_first_token.p99>=5%", ">= is not supported"},
		{".p99>5%", "no metric"},
		{"ttft.p98x>5%", `unknown statistic "p98x"`},
		{"ttft.p100>5%", `unknown statistic "p100"`},
		{"ttft.p99>", "no change"},
		{"ttft.p99>5%%", "plain signed number"},
		{"ttft.p99>five", "plain signed number"},
		{"ttft.p99>1e3", "plain signed number"},
		{"ttft.p99>inf", "plain signed number"},
		{"tt ft.p99>5", "no > or <"},
		{"tt/ft.p99>5", "want a metric tag"},
	} {
		if _, err := ParseRules(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseRules(%q) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	eval := func(base, other, rules string) ([]Outcome, error) {
		t.Helper()
		rs, err := ParseRules(rules)
		if err != nil {
			t.Fatal(err)
		}
		ms, ss := RuleMetrics(rs)
		o := opts
		o.Metrics, o.Stats = append(ms, DefaultMetrics...), ss
		res, err := Compare(load(t, base, other), o)
		if err != nil {
			t.Fatal(err)
		}
		return res.Evaluate(rs)
	}
	// slow against fast as the baseline: TTFT rose by ~23%, throughput fell
	// by ~12%, ITL stayed.
	out, err := eval("fast", "slow", "time_to_first_token.p90>+5% time_to_first_token.p90>+40% request_throughput<-5% inter_token_latency.p50>+1% request_latency.avg>+2")
	if err != nil {
		t.Fatal(err)
	}
	var failed []bool
	for _, o := range out {
		failed = append(failed, o.Failed)
	}
	if diff := cmp.Diff([]bool{true, false, true, false, true}, failed); diff != "" {
		t.Errorf("failed (-want +got):\n%s\n%+v", diff, out)
	}
	if !strings.Contains(out[0].Detail, "slow time_to_first_token.p90 +22% (95% CI") || !strings.HasSuffix(out[0].Detail, ": above +5.0%") {
		t.Errorf("detail %q", out[0].Detail)
	}
	for _, tc := range []struct{ rules, want string }{
		{"time_to_first_token>+5%", "name a statistic"},
		{"no_such_metric.p99>+5%", "no metric no_such_metric in the comparison of slow with fast (it has time_to_first_token"},
		{"request_throughput.p99<-5%", "run-level"},
	} {
		if _, err := eval("fast", "slow", tc.rules); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.rules, err, tc.want)
		}
	}
}

func FuzzParseRules(f *testing.F) {
	for _, s := range []string{"time_to_first_token.p99>+5%", "output_token_throughput<-3%", "a.p99.9>1", "x>", "<5", "a.avg>-0.5%,b<3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rules, err := ParseRules(s)
		if err != nil {
			return
		}
		for _, r := range rules {
			if r.Metric == "" || (r.Op != ">" && r.Op != "<") || r.Limit != r.Limit {
				t.Errorf("ParseRules(%q) accepted %+v", s, r)
			}
			if r.Stat != "" {
				if _, ok := statLevel(r.Stat); !ok {
					t.Errorf("ParseRules(%q) accepted statistic %q", s, r.Stat)
				}
			}
		}
	})
}

// TestMergedRun: `surge merge` output (the fast run sent by two shards)
// compares with a one-host run of the same plan: one workload, and the
// faster server shows.
func TestMergedRun(t *testing.T) {
	t.Parallel()
	runs := load(t, "slow", "merged")
	if runs[1].Summary == nil || len(runs[1].Profile()) != 120 {
		t.Fatalf("merged export read back with %d records", len(runs[1].Profile()))
	}
	res, err := Compare(runs, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Check.Comparable || len(res.Warnings) != 0 {
		t.Errorf("merged against a one-host run: check %+v, warnings %q", res.Check, res.Warnings)
	}
	if p50 := stat(t, metric(t, res.Comparisons[0], "time_to_first_token"), "p50"); !p50.Significant || p50.Rel > -0.1 {
		t.Errorf("merged TTFT p50 %+v, want significantly lower than the slow server's", p50)
	}
}

// TestAIPerfRecords: AIPerf's own profile_export.jsonl (no summary)
// compares from its records: its per-request metrics, and run-level values
// computed from them.
func TestAIPerfRecords(t *testing.T) {
	t.Parallel()
	res, err := Compare(load(t, "slow", "../../report/testdata/aiperf"), opts)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Comparisons[0]
	if m := metric(t, c, "time_to_first_token"); m.NB != 15 || m.Unit != "ms" {
		t.Errorf("AIPerf TTFT: %d values in %q, want its 15 successful requests in ms", m.NB, m.Unit)
	}
	got := map[string]float64{}
	for _, rl := range c.RunLevel {
		got[rl.Tag] = float64(rl.B)
	}
	if got["request_count"] != 15 || got["error_request_count"] != 1 || !(got["request_throughput"] > 0) {
		t.Errorf("AIPerf run-level values %v", got)
	}
	if len(res.Check.Notes) != 1 || !strings.Contains(res.Check.Notes[0], "aiperf has no workload fingerprint") {
		t.Errorf("notes %q", res.Check.Notes)
	}
}

// TestBreakdownPartsCompared: two runs whose server queue differs (their
// records carry the time breakdown's parts): the queue is the part that
// moved, the prefill is not; a run without the parts leaves them out.
func TestBreakdownPartsCompared(t *testing.T) {
	t.Parallel()
	run := func(name string, queue float64) *artifact.Run {
		r := &artifact.Run{Name: name, Dir: name}
		for i := range 200 {
			jitter := float64(i%13) / 13
			r.Records = append(r.Records, artifact.Record{Stage: -1, Metrics: map[string]float64{
				"request_latency": 100 + queue + jitter, "time_breakdown_server_queue": queue + jitter,
				"time_breakdown_prefill": 20 + jitter,
			}, Units: map[string]string{"request_latency": "ms", "time_breakdown_server_queue": "ms", "time_breakdown_prefill": "ms"}})
		}
		return r
	}
	res, err := Compare([]*artifact.Run{run("slow", 40), run("fast", 2)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Comparisons[0]
	q := metric(t, c, "time_breakdown_server_queue")
	if !q.MannWhitney.Significant || q.Better != "lower" || !strings.Contains(q.Verdict, "fast's server queue is lower (better") {
		t.Errorf("queue: %+v", q)
	}
	if p := metric(t, c, "time_breakdown_prefill"); p.MannWhitney.Significant || !strings.Contains(p.Verdict, "prefill distribution is not significantly different") {
		t.Errorf("prefill: %q", p.Verdict)
	}
	if findMetric(c, "time_breakdown_decode") != nil {
		t.Error("a part neither run has was compared")
	}
}
