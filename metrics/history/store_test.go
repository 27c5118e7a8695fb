package history

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// runs of metrics/compare's testdata: the same workload against the mock
// with TTFT 20 ms (slow, first), 16 ms (fast) and fast again (merged: two
// shards merged), a sweep, and another workload (other-isl).
const compareData = "../compare/testdata/"

func ctx() context.Context { return context.Background() }

func openTemp(t *testing.T, opts ...Option) *Store {
	t.Helper()
	s, err := Open(ctx(), filepath.Join(t.TempDir(), "sub", "history.db"), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func importInto(t *testing.T, s *Store, dirs ...string) []Row {
	t.Helper()
	var all []Row
	for _, d := range dirs {
		rows, err := FromArtifacts(compareData + d)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx(), rows); err != nil {
			t.Fatal(err)
		}
		all = append(all, rows...)
	}
	return all
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./metrics/history -update)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs from golden (-want +got):\n%s", name, d)
	}
}

// portable replaces the repository's absolute path in out.
func portable(t *testing.T, out string) string {
	t.Helper()
	abs, err := filepath.Abs(compareData)
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(out, abs, "<compare testdata>")
}

// TestImportAndList: runs go in with their fingerprint and headline, a
// sweep with its stages, the same folder twice once; filters select.
func TestImportAndList(t *testing.T) {
	t.Parallel()
	s := openTemp(t, WithClock(func() time.Time { return time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC) }))
	importInto(t, s, "slow", "fast", "merged", "sweep-fast", "other-isl")
	again, err := FromArtifacts(compareData + "fast")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.Append(ctx(), again); err != nil || n != 0 || again[0].ID != 2 {
		t.Errorf("importing fast again: %d added, id %d, %v; want none added, its row 2", n, again[0].ID, err)
	}
	rows, err := s.List(ctx(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 7 {
		t.Fatalf("%d rows, want 7 (4 runs, a sweep and its 2 stages)", len(rows))
	}
	var buf bytes.Buffer
	if err := WriteList(&buf, rows, 0, true); err != nil {
		t.Fatal(err)
	}
	golden(t, "list.txt", []byte(portable(t, buf.String())))
	// Fitted to 80 columns (and narrower, the model and label cut).
	for _, width := range []int{80, 60} {
		buf.Reset()
		if err := WriteList(&buf, rows, width, false); err != nil {
			t.Fatal(err)
		}
		if width == 80 {
			golden(t, "list_80.txt", buf.Bytes())
		}
		for _, l := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
			if n := utf8.RuneCountInString(l); n > 80 {
				t.Errorf("width %d: a line of %d columns: %q", width, n, l)
			}
		}
	}

	fast, err := s.Get(ctx(), 2)
	if err != nil {
		t.Fatal(err)
	}
	want := Fingerprint{Model: "mock", EndpointType: "chat", Endpoint: "/v1/chat/completions", Target: "http://127.0.0.1:18401",
		ServerHash: "sha256:3e614cf3ddc79238", Workload: "sha256:5e847e702a6c1e4d", Config: "sha256:ded9f0ed10490c5d",
		Dataset: "sha256:3445badf983923cb", Tokenizer: "sha256:03af41ae14429b51", LoadMode: "concurrency", LoadValue: 4, SurgeVersion: "0.1.0-dev"}
	if d := cmp.Diff(want, fast.Fingerprint); d != "" {
		t.Errorf("fast's fingerprint (-want +got):\n%s", d)
	}
	if fast.Requests != 120 || fast.TTFTP95CI == nil || !(fast.TTFTP95CI.Lo <= fast.TTFTP95 && fast.TTFTP95 <= fast.TTFTP95CI.Hi) ||
		fast.OutputTokenThroughputCI == nil || !(fast.OutputTokenThroughputCI.Lo < fast.OutputTokenThroughput) {
		t.Errorf("fast's headline %+v, want 120 requests and intervals around p95 TTFT and throughput", fast.Headline)
	}
	if v, ok := fast.Value("time_to_first_token", "p99"); !ok || v != fast.TTFTP99 {
		t.Errorf("statistics: TTFT p99 %v (%v), headline %v", v, ok, fast.TTFTP99)
	}
	if !fast.RecordedAt.Equal(time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)) || fast.StartedAt.IsZero() {
		t.Errorf("recorded %v, started %v", fast.RecordedAt, fast.StartedAt)
	}

	// By start: slow 1, fast 2, other-isl 7, the sweep 4 (stages 5, 6),
	// merged 3.
	for _, tc := range []struct {
		f    Filter
		want []int64
	}{
		{Filter{Kind: KindStage}, []int64{5, 6}},
		{Filter{Kind: KindRun, Workload: "sha256:5e847e702a6c1e4d"}, []int64{1, 2, 3}},
		{Filter{Kind: KindRun, Last: 2}, []int64{4, 3}},
		{Filter{Model: "MOC", Server: "18402"}, []int64{1}},
		{Filter{Model: "llama"}, nil},
		{Filter{Since: time.Date(2026, 12, 3, 7, 8, 52, 0, time.UTC), Until: time.Date(2026, 12, 3, 7, 8, 56, 0, time.UTC)}, []int64{7}},
	} {
		got, err := s.List(ctx(), tc.f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, r := range got {
			ids = append(ids, r.ID)
		}
		if !slices.Equal(ids, tc.want) {
			t.Errorf("%+v: ids %v, want %v", tc.f, ids, tc.want)
		}
	}

	if err := s.SetLabel(ctx(), 5, "sweep"); err != nil {
		t.Fatal(err)
	}
	labelled, _ := s.List(ctx(), Filter{Label: "sweep"})
	if len(labelled) != 3 {
		t.Errorf("labelling stage 5 labelled %d rows, want the sweep's 3", len(labelled))
	}
	if err := s.SetLabel(ctx(), 99, "x"); err == nil {
		t.Error("labelling a row that is not there")
	}
	if _, err := s.Get(ctx(), 99); err == nil {
		t.Error("getting a row that is not there")
	}
}

// TestBrokenDatabases: a file that is not a database, another
// application's database and a newer surge's are each refused with an
// error naming the file, and left as they were.
func TestBrokenDatabases(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	content := bytes.Repeat([]byte("this is not SQLite\n"), 300)
	if err := os.WriteFile(garbage, content, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(ctx(), garbage)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), garbage) {
		t.Errorf("garbage: %v, want ErrCorrupt naming the file", err)
	}
	if b, _ := os.ReadFile(garbage); !bytes.Equal(b, content) {
		t.Error("the damaged file was changed")
	}
	// AppendRun says the same, and the run's artifacts are untouched.
	if _, err := AppendRun(ctx(), garbage, compareData+"fast"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("AppendRun into garbage: %v", err)
	}

	other := filepath.Join(dir, "other.db")
	raw, err := sql.Open("sqlite3", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("CREATE TABLE notes (body TEXT)"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if _, err := Open(ctx(), other); !errors.Is(err, ErrNotHistory) {
		t.Errorf("another application's database: %v, want ErrNotHistory", err)
	}

	newer := filepath.Join(dir, "newer.db")
	s, err := Open(ctx(), newer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(fmt.Sprintf("PRAGMA user_version = %d", len(migrations)+1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = Open(ctx(), newer)
	var se *SchemaError
	if !errors.As(err, &se) || se.Have != len(migrations)+1 || !strings.Contains(err.Error(), "upgrade surge") {
		t.Errorf("a newer schema: %v, want a SchemaError", err)
	}
}

// TestMigratesForward: a database at version 0 (empty) is brought to the
// newest schema; opening it again changes nothing.
func TestMigratesForward(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "h.db")
	for range 2 {
		s, err := Open(ctx(), path)
		if err != nil {
			t.Fatal(err)
		}
		var v, app int
		if err := s.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
			t.Fatal(err)
		}
		if err := s.db.QueryRow("PRAGMA application_id").Scan(&app); err != nil {
			t.Fatal(err)
		}
		if v != len(migrations) || app != applicationID {
			t.Errorf("user_version %d, application_id %#x; want %d, %#x", v, app, len(migrations), applicationID)
		}
		s.Close()
	}
}

// writerEnv makes the test binary a writer process (TestWriterProcess).
const writerEnv = "SURGE_HISTORY_TEST_WRITER"

// TestWriterProcess is one of TestConcurrentProcesses' writers: it
// appends its runs one transaction each, as surge runs ending together do.
func TestWriterProcess(t *testing.T) {
	spec := os.Getenv(writerEnv)
	if spec == "" {
		t.Skip("a helper of TestConcurrentProcesses")
	}
	parts := strings.Split(spec, "|")
	n, _ := strconv.Atoi(parts[2])
	s, err := Open(ctx(), parts[0])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range n {
		if _, err := s.Append(ctx(), []Row{synthetic(fmt.Sprintf("%s-%d", parts[1], i))}); err != nil {
			t.Fatal(err)
		}
	}
}

// synthetic is a minimal row of its own run.
func synthetic(uid string) Row {
	return Row{RunUID: uid, Kind: KindRun, Stage: -1, Dir: "/runs/" + uid, Fingerprint: Fingerprint{LoadValue: math.NaN()},
		Headline: blankHeadline(), Metrics: []Metric{{"request_count", "avg", 1, "requests"}}}
}

// TestConcurrentProcesses: two surge processes appending to one history
// at once lose nothing (WAL and the busy timeout serialise their
// transactions), and two stores in one process neither.
func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two processes")
	}
	t.Parallel()
	path := filepath.Join(t.TempDir(), "h.db")
	const each = 40
	var wg sync.WaitGroup
	errs := make([]error, 2)
	outs := make([][]byte, 2)
	for i := range 2 {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestWriterProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|p%d|%d", writerEnv, path, i, each))
			outs[i], errs[i] = cmd.CombinedOutput()
		})
	}
	// Two stores of this process write meanwhile.
	for i := range 2 {
		wg.Go(func() {
			s, err := Open(ctx(), path, WithBusyTimeout(time.Minute))
			if err != nil {
				t.Error(err)
				return
			}
			defer s.Close()
			for j := range each {
				if _, err := s.Append(ctx(), []Row{synthetic(fmt.Sprintf("g%d-%d", i, j))}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil {
			t.Fatalf("writer %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	s, err := Open(ctx(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, err := s.Stats(ctx())
	if err != nil {
		t.Fatal(err)
	}
	if st.Rows != 4*each || st.Runs != 4*each {
		t.Errorf("%d rows of %d runs, want %d: a concurrent append was lost", st.Rows, st.Runs, 4*each)
	}
	var metricRows int
	if err := s.db.QueryRow("SELECT count(*) FROM run_metrics").Scan(&metricRows); err != nil || metricRows != 4*each {
		t.Errorf("%d statistics rows (%v), want %d", metricRows, err, 4*each)
	}
}

// TestPrune: by count and by age, whole runs go (a sweep with its
// stages), the file shrinks, and the size is reported.
func TestPrune(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	importInto(t, s, "slow", "fast", "sweep-fast", "merged")
	for i := range 300 {
		// Bulk: old runs whose space a prune gives back.
		r := synthetic(fmt.Sprintf("old-%d", i))
		r.StartedAt = time.Date(2020, 1, 1, 0, 0, i, 0, time.UTC)
		for j := range 50 {
			r.Metrics = append(r.Metrics, Metric{fmt.Sprintf("metric_%d", j), "p50", float64(j), "ms"})
		}
		if _, err := s.Append(ctx(), []Row{r}); err != nil {
			t.Fatal(err)
		}
	}
	before, err := s.Stats(ctx())
	if err != nil {
		t.Fatal(err)
	}
	if before.Runs != 304 || before.Rows != 306 || before.Oldest.Year() != 2020 {
		t.Fatalf("before: %+v", before)
	}
	p, err := s.Prune(ctx(), Prune{Before: time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if p.Runs != 300 || p.Rows != 300 || p.After.Runs != 4 || p.After.Bytes >= before.Bytes {
		t.Errorf("prune by age: %+v (before %d bytes), want 300 runs gone and a smaller file", p, before.Bytes)
	}
	p, err = s.Prune(ctx(), Prune{Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	// The newest two: merged, and the sweep (its stages with it).
	if p.Runs != 2 || p.Rows != 2 || p.After.Runs != 2 || p.After.Rows != 4 {
		t.Errorf("prune keeping 2: %+v", p)
	}
	var orphans int
	if err := s.db.QueryRow("SELECT count(*) FROM run_metrics WHERE run_id NOT IN (SELECT id FROM runs)").Scan(&orphans); err != nil || orphans != 0 {
		t.Errorf("%d statistics left of removed runs (%v)", orphans, err)
	}
	if p, err := s.Prune(ctx(), Prune{}); err != nil || p.Runs != 0 || p.After.Runs != 2 {
		t.Errorf("an empty prune: %+v, %v", p, err)
	}
	if w := (Stats{Path: "h.db", Runs: 3, Bytes: 1 << 20}).Warning(); w != "" {
		t.Errorf("a small history warned: %s", w)
	}
	if w := (Stats{Path: "h.db", Runs: 3, Bytes: 300 << 20}).Warning(); !strings.Contains(w, "300.0 MiB") || !strings.Contains(w, "--prune") {
		t.Errorf("a large history: %q", w)
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/data")
	if p, err := DefaultPath(); err != nil || p != "/data/surge/history.db" {
		t.Errorf("with XDG_DATA_HOME: %q, %v", p, err)
	}
	t.Setenv("XDG_DATA_HOME", "relative") // the spec says: ignore a relative one
	t.Setenv("HOME", "/home/u")
	if p, err := DefaultPath(); err != nil || p != "/home/u/.local/share/surge/history.db" {
		t.Errorf("without: %q, %v", p, err)
	}
}

// TestListShowsLabelsEscaped: a label set by hand or imported, with
// terminal escapes or a tab, is one cell, shown escaped.
func TestListShowsLabelsEscaped(t *testing.T) {
	var buf bytes.Buffer
	rows := []Row{{ID: 1, Kind: KindRun, Fingerprint: Fingerprint{Model: "m\u202e"}, Label: "l\x1b]0;t\x07\tx", Dir: "/d\x1b[2J"}}
	if err := WriteList(&buf, rows, 0, true); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.ContainsAny(out, "\x1b\x07\u202e") || !strings.Contains(out, `l\x1b]0;t\x07\tx`) || !strings.Contains(out, `m\u202e`) {
		t.Errorf("%q", out)
	}
}
