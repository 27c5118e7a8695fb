package history

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/surgebench/surge/metrics/report"
	"github.com/surgebench/surge/metrics/stats"
)

// TestTrend: TTFT p50 across slow (20 ms), fast (16 ms) and merged (fast
// again): the drop from slow to fast is significantly better by the
// bootstrap interval, fast to merged is noise; the other workload is left
// out unless asked; a metric the runs lack is named with the ones they have.
func TestTrend(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	importInto(t, s, "slow", "fast", "other-isl", "merged")
	tr, err := s.Trend(ctx(), TrendQuery{Metric: "time_to_first_token", Bootstrap: stats.Bootstrap{Iterations: 500, Level: 0.95, Seed: 1}, MinChange: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Stat != "p50" || tr.Unit != "ms" || tr.Workload != "sha256:5e847e702a6c1e4d" || len(tr.Points) != 3 {
		t.Fatalf("trend %s.%s (%s) of %s, %d points; want TTFT p50 in ms of slow's workload, 3 points", tr.Metric, tr.Stat, tr.Unit, tr.Workload, len(tr.Points))
	}
	down, flat := tr.Points[1].Change, tr.Points[2].Change
	if down == nil || !down.Judged || !down.Significant || down.Worse || down.Rel > -0.1 || !(down.RelHi < 0) {
		t.Errorf("slow → fast: %+v, want a significant drop of about 20%% (better)", down)
	}
	if flat == nil || !flat.Judged || flat.Significant {
		t.Errorf("fast → merged: %+v, want noise", flat)
	}
	var buf bytes.Buffer
	if err := tr.WriteText(&buf, 0, true); err != nil {
		t.Fatal(err)
	}
	golden(t, "trend.txt", buf.Bytes())
	buf.Reset()
	if err := tr.WriteText(&buf, 80, false); err != nil {
		t.Fatal(err)
	}
	golden(t, "trend_80.txt", buf.Bytes())
	for _, l := range strings.Split(buf.String(), "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("a line of %d columns at 80: %q", n, l)
		}
	}
	// Past a 50% threshold the same drop is real but small.
	big, err := s.Trend(ctx(), TrendQuery{Metric: "time_to_first_token", MinChange: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if c := big.Points[1].Change; !c.Significant || !c.Small || mark(c) != "·" {
		t.Errorf("a 19%% drop under a 50%% threshold: %+v, want significant and small", c)
	}

	d := tr.Report()
	if len(d.Charts) != 1 || len(d.Charts[0].Series) != 2 || d.Charts[0].Series[1].Label != "significantly better" ||
		len(d.Runs) != 3 || len(d.Summary) != 2 {
		t.Errorf("report data: %+v", d)
	}
	var page bytes.Buffer
	if err := report.WriteHTML(&page, d); err != nil || !strings.Contains(page.String(), "surge trend: time_to_first_token p50") {
		t.Errorf("HTML: %v", err)
	}

	all, err := s.Trend(ctx(), TrendQuery{Metric: "output_token_throughput", AnyWorkload: true})
	if err != nil {
		t.Fatal(err)
	}
	if all.Stat != "avg" || len(all.Points) != 4 || all.Workload != "" {
		t.Errorf("every workload's throughput: %s, %d points", all.Stat, len(all.Points))
	}
	for _, p := range all.Points[1:] {
		if !p.Change.Judged || !strings.Contains(p.Change.How, "intervals are disjoint") {
			t.Errorf("a run-level change judged by %q, want the intervals", p.Change.How)
		}
	}

	if _, err := s.Trend(ctx(), TrendQuery{Metric: "no_such_metric"}); err == nil || !strings.Contains(err.Error(), "time_to_first_token") {
		t.Errorf("an unknown metric: %v, want the known ones listed", err)
	}
	if _, err := s.Trend(ctx(), TrendQuery{Filter: Filter{Model: "llama"}, Metric: "time_to_first_token"}); err == nil || !strings.Contains(err.Error(), "no run matches") {
		t.Errorf("no run: %v", err)
	}
}

// TestTrendWithoutRecords: a run whose artifact folder is gone keeps its
// point, and its change is marked as not judged, never as noise.
func TestTrendWithoutRecords(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	dir := t.TempDir()
	for _, name := range []string{"slow", "fast"} {
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(compareData, name, "profile_export_aiperf.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, "profile_export_aiperf.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		rows, err := FromArtifacts(dst)
		if err != nil {
			t.Fatal(err)
		}
		if rows[0].TTFTP95CI != nil {
			t.Error("an interval from no records")
		}
		if _, err := s.Append(ctx(), rows); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(filepath.Join(dir, "fast")); err != nil {
		t.Fatal(err)
	}
	tr, err := s.Trend(ctx(), TrendQuery{Metric: "time_to_first_token", Stat: "p99"})
	if err != nil {
		t.Fatal(err)
	}
	if c := tr.Points[1].Change; c.Judged || !strings.Contains(c.How, "gone") || mark(c) != "?" {
		t.Errorf("change without records: %+v", c)
	}
}

func TestParseMetric(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][2]string{
		"time_to_first_token.p99": {"time_to_first_token", "p99"},
		"output_token_throughput": {"output_token_throughput", ""},
		" request_latency.avg ":   {"request_latency", "avg"},
	} {
		m, st, err := ParseMetric(in)
		if err != nil || m != want[0] || st != want[1] {
			t.Errorf("ParseMetric(%q) = %q, %q, %v", in, m, st, err)
		}
	}
	for _, bad := range []string{"", ".p99", "two words"} {
		if _, _, err := ParseMetric(bad); err == nil {
			t.Errorf("ParseMetric(%q) accepted", bad)
		}
	}
}

// TestBaseline: last-matching is the newest earlier run of the same
// workload, model and load (never the run itself, never another
// workload); a label picks the newest of that label; a first run has none.
func TestBaseline(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	rows := importInto(t, s, "slow", "fast", "other-isl", "merged")
	merged, fast, other := rows[3:4], rows[1:2], rows[2:3]
	for _, tc := range []struct {
		name    string
		sel     Selector
		current []Row
		want    string
	}{
		{"merged's last match", Selector{LastMatching: true}, merged, "fast"},
		{"fast's last match", Selector{LastMatching: true}, fast, "slow"},
		{"by id", Selector{ID: 1}, merged, "slow"},
	} {
		got, err := s.Baseline(ctx(), tc.sel, tc.current)
		if err != nil || filepath.Base(got.Dir) != tc.want {
			t.Errorf("%s: %s, %v; want %s", tc.name, got.Dir, err, tc.want)
		}
	}
	if _, err := s.Baseline(ctx(), Selector{LastMatching: true}, other); !errors.Is(err, ErrNoBaseline) {
		t.Errorf("the only run of its workload: %v, want ErrNoBaseline", err)
	}
	if _, err := s.Baseline(ctx(), Selector{Label: "release"}, merged); !errors.Is(err, ErrNoBaseline) || !strings.Contains(err.Error(), `labelled "release"`) {
		t.Errorf("no such label: %v", err)
	}
	if err := s.SetLabel(ctx(), 1, "release"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Baseline(ctx(), Selector{Label: "release"}, merged); err != nil || filepath.Base(got.Dir) != "slow" {
		t.Errorf("label release: %s, %v", got.Dir, err)
	}
	if _, err := s.Baseline(ctx(), Selector{}, merged); err == nil {
		t.Error("an empty selector resolved")
	}
	if _, err := s.Baseline(ctx(), Selector{ID: 42}, merged); !errors.Is(err, ErrNoBaseline) {
		t.Errorf("an id not there: %v", err)
	}
	noPrint := merged[0]
	noPrint.Workload = ""
	if _, err := s.Baseline(ctx(), Selector{LastMatching: true}, []Row{noPrint}); err == nil || !strings.Contains(err.Error(), "no workload fingerprint") {
		t.Errorf("a run without a fingerprint: %v", err)
	}
	// A baseline whose folder is gone is passed over.
	gone := synthetic("gone")
	gone.Workload, gone.Model, gone.EndpointType, gone.LoadMode, gone.LoadValue = fast[0].Workload, "mock", "chat", "concurrency", 4
	gone.StartedAt = fast[0].StartedAt.Add(1)
	added := []Row{gone}
	if _, err := s.Append(ctx(), added); err != nil {
		t.Fatal(err)
	}
	gone = added[0]
	if got, err := s.Baseline(ctx(), Selector{LastMatching: true}, merged); err != nil || filepath.Base(got.Dir) != "fast" {
		t.Errorf("past a gone folder: %s, %v; want fast", got.Dir, err)
	}
	if _, err := s.Baseline(ctx(), Selector{ID: gone.ID}, merged); err == nil || !strings.Contains(err.Error(), "gone") {
		t.Errorf("a gone folder by id: %v", err)
	}
}

func TestParseSelector(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want Selector
		ok   bool
		err  bool
	}{
		{"history:last-matching", Selector{LastMatching: true}, true, false},
		{"history:label=nightly", Selector{Label: "nightly"}, true, false},
		{"history:id=12", Selector{ID: 12}, true, false},
		{"runs/baseline", Selector{}, false, false},
		{"history:latest", Selector{}, true, true},
		{"history:label=", Selector{}, true, true},
		{"history:id=-1", Selector{}, true, true},
	} {
		got, ok, err := ParseSelector(tc.in)
		if got != tc.want || ok != tc.ok || (err != nil) != tc.err {
			t.Errorf("ParseSelector(%q) = %+v, %v, %v", tc.in, got, ok, err)
		}
		if tc.ok && !tc.err && got.String() != tc.in {
			t.Errorf("%+v.String() = %q, want %q", got, got.String(), tc.in)
		}
	}
}

// TestCleanTarget: a URL's credentials, path and query never reach the
// history.
func TestCleanTarget(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://user:secret@api.example.com:8443/v1?key=abc": "https://api.example.com:8443",
		"127.0.0.1:8000": "http://127.0.0.1:8000",
		"":               "",
		"http://":        "",
	} {
		if got := cleanTarget(in); got != want {
			t.Errorf("cleanTarget(%q) = %q, want %q", in, got, want)
		}
	}
	if got := gpuSummary([]any{map[string]any{"name": "H100", "driver": "550"}, map[string]any{"name": "H100", "driver": "550"}, map[string]any{}}); got != "2× H100 + 1× GPU (driver 550)" {
		t.Errorf("gpuSummary = %q", got)
	}
	if short(math.NaN()) != "–" || short(1234.5) != "1234" || short(0.01234) != "0.0123" || pct(-0.5) != "−50.0%" {
		t.Errorf("short/pct: %q %q %q %q", short(math.NaN()), short(1234.5), short(0.01234), pct(-0.5))
	}
}
