package merge

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/artifact"
	"github.com/surgebench/surge/metrics/export"
)

// shardRecords builds n streamed records with lognormal TTFTs and varied
// lengths, a few failed, on a run clock starting at 1 s.
func shardRecords(n int, seed uint64) []*metrics.Record {
	rng := rand.New(rand.NewPCG(seed, 1))
	recs := make([]*metrics.Record, n)
	for i := range recs {
		sent := int64(time.Second) + int64(i)*int64(7*time.Millisecond)
		r := &metrics.Record{Index: int64(i), RequestID: fmt.Sprintf("r%d-%d", seed, i), ConversationID: fmt.Sprint(i),
			SentNs: sent, Streamed: true, InputTokens: 50 + rng.IntN(100)}
		if i%23 == 5 {
			r.EndNs = sent + 1e6
			r.Err = &metrics.Error{Code: 503, Type: "unavailable", Message: "busy"}
			recs[i] = r
			continue
		}
		at := sent + int64(15e6*math.Exp(0.5*rng.NormFloat64()))
		for range 2 + rng.IntN(30) {
			r.TokenNs = append(r.TokenNs, at)
			at += int64(3e6 * math.Exp(0.3*rng.NormFloat64()))
		}
		r.FirstContentNs, r.EndNs = r.TokenNs[0], at
		recs[i] = r
	}
	return recs
}

// writeShard writes the export of shard index of count, as surge profile
// does: summary, records (when withRecords), state.
func writeShard(t *testing.T, dir string, index, count int, cfg map[string]any, version string, origin time.Time, recs []*metrics.Record, withRecords bool) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var opts []metrics.Option
	if withRecords {
		f, err := os.Create(filepath.Join(dir, artifact.RecordsFile))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		opts = append(opts, metrics.WithSink(export.NewJSONL(f, origin)))
	}
	col := metrics.NewCollector(append(opts, metrics.WithClock(func() int64 { return 0 }))...)
	for _, r := range recs {
		col.Add(r)
	}
	sum := col.Close()
	st := col.State()
	st.Origin = origin
	run := export.Run{SurgeVersion: version, Start: origin, End: origin.Add(time.Duration(sum.EndNs)), InputConfig: cfg,
		RunInfo: map[string]any{"mode": "concurrency", "target_url": "http://x", "shard": ShardInfo{Index: index, Count: count}}}
	for name, write := range map[string]func(*os.File) error{
		artifact.SummaryFile: func(f *os.File) error { return export.JSON(f, sum, run) },
		export.StateFile:     func(f *os.File) error { return json.NewEncoder(f).Encode(st) },
	} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := write(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}

func plan(seed int) map[string]any {
	return map[string]any{"model": "m", "random_seed": seed, "concurrency": "6", "shard": "", "url": "http://x"}
}

func TestMergeIsExactFromRecordsAndCloseFromDigests(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	origin := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var dirs []string
	var ttfts []float64
	for i := range 3 {
		d := filepath.Join(root, fmt.Sprint(i))
		dirs = append(dirs, d)
		recs := shardRecords(400+50*i, uint64(i))
		for _, r := range recs {
			if r.Err == nil {
				ttfts = append(ttfts, math.Round(float64(r.TokenNs[0]-r.SentNs)/1e6*1e6)/1e6)
			}
		}
		writeShard(t, d, i, 3, plan(7), "v1", origin.Add(time.Duration(i)*20*time.Millisecond), recs, true)
	}
	exact := artifact.StatOf(ttfts)
	for _, withRecords := range []bool{true, false} {
		if !withRecords {
			os.Remove(filepath.Join(dirs[1], artifact.RecordsFile))
		}
		shards, err := Load(dirs)
		if err != nil {
			t.Fatal(err)
		}
		if shards, err = Check(shards); err != nil {
			t.Fatal(err)
		}
		res := Merge(shards)
		got := res.Summary.Metrics[metrics.TTFT]
		if res.Exact != withRecords || got.Count != int64(len(ttfts)) {
			t.Fatalf("records %v: exact %v, TTFT count %d; want %d values", withRecords, res.Exact, got.Count, len(ttfts))
		}
		tol := 1e-9 // records: exact
		if !withRecords {
			tol = 0.02 // digests
		}
		for _, q := range []struct {
			name      string
			got, want float64
		}{{"p50", got.P50, exact.P50}, {"p90", got.P90, exact.P90}, {"p99", got.P99, exact.P99}, {"avg", got.Avg, exact.Avg}} {
			if math.Abs(q.got-q.want) > tol*q.want+1e-6 {
				t.Errorf("records %v: TTFT %s %v, exact %v", withRecords, q.name, q.got, q.want)
			}
		}
		if n := res.Summary.Run[metrics.ErrorRequestCount]; n != 18+20+22 {
			t.Errorf("records %v: %v errors, want 60", withRecords, n)
		}
		// The union window: the last shard started 40 ms after the first.
		if !res.Run.Start.Equal(origin) || len(res.Run.Shards) != 3 {
			t.Errorf("merged start %v, %d sections", res.Run.Start, len(res.Run.Shards))
		}
		if !withRecords && !strings.Contains(strings.Join(res.Summary.Warnings, "\n"), "t-digests") {
			t.Errorf("no word that percentiles come from digests: %q", res.Summary.Warnings)
		}
	}
}

func TestCheckRefusesWhatIsNotOnePlan(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	origin := time.Unix(1_800_000_000, 0)
	recs := shardRecords(20, 1)
	shard := func(name string, index, count int, cfg map[string]any, version string) string {
		d := filepath.Join(root, name)
		writeShard(t, d, index, count, cfg, version, origin, recs, false)
		return d
	}
	s0, s1, s2 := shard("s0", 0, 3, plan(7), "v1"), shard("s1", 1, 3, plan(7), "v1"), shard("s2", 2, 3, plan(7), "v1")
	seed := shard("seed", 2, 3, plan(8), "v1")
	ver := shard("ver", 2, 3, plan(7), "v2")
	four := shard("four", 2, 4, plan(7), "v1")
	otherURL := plan(7)
	otherURL["url"] = "http://y" // where, not what: shards may aim at different replicas
	url := shard("url", 2, 3, otherURL, "v1")
	whole := filepath.Join(root, "whole")
	writeShard(t, whole, 0, 1, plan(7), "v1", origin, recs, false)
	// An unsharded run has no run_info.shard.
	b, _ := os.ReadFile(filepath.Join(whole, artifact.SummaryFile))
	os.WriteFile(filepath.Join(whole, artifact.SummaryFile), []byte(strings.Replace(string(b), `"shard": {`, `"shard_was": {`, 1)), 0o644)
	noState := shard("nostate", 2, 3, plan(7), "v1")
	os.Remove(filepath.Join(noState, export.StateFile))

	for _, tc := range []struct {
		dirs []string
		want string
	}{
		{[]string{s0, s1}, "shard 2 of 3 missing"},
		{[]string{s0, s1, s1}, "shard 1 of 3 given twice"},
		{[]string{s0, s1, seed}, "--random-seed 7 vs 8"},
		{[]string{s0, s1, ver}, `surge version v1 vs v2`},
		{[]string{s0, s1, four}, "shard 2 of 4"},
		{[]string{s0, whole}, "not a shard's export"},
		{[]string{s0, s1, noState}, export.StateFile},
	} {
		shards, err := Load(tc.dirs)
		if err == nil {
			_, err = Check(shards)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.dirs, err, tc.want)
		}
	}
	shards, err := Load([]string{s2, url, s0, s1}[1:])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Check(shards); err != nil {
		t.Errorf("shards aimed at different URLs: %v", err)
	}
	if shards, err = Check(shards); err == nil && (shards[0].Dir != s0 || shards[2].Dir != url) {
		t.Errorf("Check did not order the shards by index: %s, %s, %s", shards[0].Dir, shards[1].Dir, shards[2].Dir)
	}
}

// TestWindowsMustOverlap: a plan's shards run at once. Shards that ran
// one after another (their windows do not meet) or far apart are refused,
// naming each shard's window and how low the throughputs would read;
// with force, or a little apart, they merge with a warning saying so;
// shards that ran together pass silently.
func TestWindowsMustOverlap(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	shards := func(length time.Duration, starts ...float64) []*Shard {
		var out []*Shard
		for i, s := range starts {
			start := at.Add(time.Duration(s * float64(time.Second)))
			out = append(out, &Shard{Index: i, Count: len(starts), Start: start, End: start.Add(length)})
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		starts []float64
		force  bool
		err    string
		warn   string
		length time.Duration // each shard's (0: 10 s)
	}{
		{"together", []float64{0, 0.02, 0.3}, false, "", "", 0},
		{"short runs a start-up apart", []float64{0, 0.4}, false, "", "", 50 * time.Millisecond},
		{"one after another", []float64{0, 10, 20}, false,
			"the shards did not run at once, as one plan's shards do: shard 0 0.0–10.0 s, shard 1 10.0–20.0 s, shard 2 20.0–30.0 s (from the first start); merged over those 30.0 s, the throughputs would read 67% low", "", 0},
		{"far apart", []float64{0, 6}, false, "merged over those 16.0 s, the throughputs would read 38% low", "", 0},
		{"forced", []float64{0, 10, 20}, true, "", "they did not run together (shard 0 0.0–10.0 s, shard 1 10.0–20.0 s, shard 2 20.0–30.0 s); the throughputs, over the 30.0 s, read up to 67% low", 0},
		{"a little apart", []float64{0, 2}, false, "", "they ran 8.0 s together of 12.0 s (shard 0 0.0–10.0 s, shard 1 2.0–12.0 s); the throughputs, over the 12.0 s, read up to 17% low", 0},
	} {
		length := cmp.Or(tc.length, 10*time.Second)
		warn, err := Windows(shards(length, tc.starts...), tc.force)
		var pe *PlanError
		switch {
		case tc.err != "" && (!errors.As(err, &pe) || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "--start-at")):
			t.Errorf("%s: %v, want a plan error saying %q", tc.name, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.warn == "" && warn != "" || !strings.Contains(warn, tc.warn):
			t.Errorf("%s: warning %q, want %q", tc.name, warn, tc.warn)
		}
	}
}
