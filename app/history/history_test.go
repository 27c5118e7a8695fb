package history

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/metrics/artifact"
	"github.com/surgebench/surge/metrics/compare"
	"github.com/surgebench/surge/metrics/history"
	"github.com/surgebench/surge/metrics/stats"
)

func TestMain(m *testing.M) { apptest.Main(m) }

// surge runs args through the history and trend commands as main.go
// would (flags moved first by cmdline.CommandArgs) and returns what they
// wrote and the exit code main would return.
func surge(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	app := &cli.App{Name: "surge", Writer: &out, ErrWriter: &out, HideHelp: true,
		Commands: []*cli.Command{Command(), TrendCommand()}, OnUsageError: cmdline.OnUsageError,
		ExitErrHandler: func(*cli.Context, error) {}}
	for _, c := range app.Commands {
		c.HideHelp = true // urfave's help flag is one global every parse writes
	}
	full, err := cmdline.CommandArgs(append([]string{"surge"}, args...), app.Commands)
	if err == nil {
		err = app.Run(full)
	}
	if err != nil {
		fmt.Fprintln(&out, "surge:", err)
		var ue *cmdline.UsageError
		if errors.As(err, &ue) {
			return out.String(), cmdline.ExitUsage
		}
		return out.String(), cmdline.ExitFailed
	}
	return out.String(), cmdline.ExitOK
}

// profile runs the surge binary against url: one workload (seeded), its
// exports in dir.
func profile(t *testing.T, bin, url, dir string) {
	t.Helper()
	cmd := exec.Command(bin, "profile", "--url", url, "--model", "mock", "--streaming", "--concurrency", "4",
		"--request-count", "120", "--isl", "32", "--osl", "8", "--random-seed", "7", "--ui", "none",
		"--no-server-metrics", "--no-gpu-telemetry", "--output-artifact-dir", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("surge profile: %v\n%s", err, out)
	}
}

func mock(t *testing.T, ttft time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m, err := mockserver.Start(ctx, "127.0.0.1:0", mockserver.Config{TTFT: ttft, ITL: time.Millisecond, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = m.Close(context.Background()) })
	return m.URL()
}

// gate is `surge compare --baseline history:last-matching RUN --fail-on
// RULE` as app/results is to wire it: the baseline resolved in the
// history, then metrics/compare's gate.
func gate(t *testing.T, db, run, rule string) (*compare.Gate, string) {
	t.Helper()
	base, row, err := history.ResolveBaseline(context.Background(), db, "history:last-matching", run)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := artifact.LoadAll([]string{base, run})
	if err != nil {
		t.Fatal(err)
	}
	rules, err := compare.ParseRules(rule)
	if err != nil {
		t.Fatal(err)
	}
	g, err := compare.RunGate(runs, compare.GateOptions{Rules: rules,
		Options: compare.Options{Bootstrap: stats.Bootstrap{Iterations: 1000, Level: 0.95, Seed: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	return g, row.Dir
}

// TestRunsTrendAndGate: three runs on the mock appear in surge history
// and surge trend draws them (terminal and page); against the newest of
// them, an unchanged fourth run passes the regression gate and a run on
// a mock slowed from 8 to 24 ms TTFT fails it with a REGRESSION verdict.
func TestRunsTrendAndGate(t *testing.T) {
	bin := apptest.SurgeBinary(t)
	normal, slowed := mock(t, 8*time.Millisecond), mock(t, 24*time.Millisecond)
	work := t.TempDir()
	db := filepath.Join(work, "history.db")
	var dirs []string
	for i := range 3 {
		d := filepath.Join(work, "run"+strconv.Itoa(i+1))
		profile(t, bin, normal, d)
		dirs = append(dirs, d)
	}
	out, code := surge(t, append([]string{"history", "import", "--history", db, "--label", "nightly"}, dirs...)...)
	if code != 0 || strings.Count(out, "1 row, 1 new") != 3 {
		t.Fatalf("import: exit %d\n%s", code, out)
	}
	out, code = surge(t, "history", "--history", db, "--model", "mock", "--wide")
	if code != 0 || !strings.Contains(out, "3 of 3 runs shown") || strings.Count(out, "nightly") != 3 {
		t.Errorf("surge history: exit %d\n%s", code, out)
	}
	for _, d := range dirs {
		if !strings.Contains(out, d) {
			t.Errorf("surge history lacks %s:\n%s", d, out)
		}
	}
	page := filepath.Join(work, "trend.html")
	out, code = surge(t, "trend", "time_to_first_token.p50", "--history", db, "--html", page)
	if code != 0 || !strings.Contains(out, "across 3 runs") || !strings.Contains(out, "wrote "+page) {
		t.Errorf("surge trend: exit %d\n%s", code, out)
	}
	if b, err := os.ReadFile(page); err != nil || !bytes.Contains(b, []byte(`"id":"trend"`)) {
		t.Errorf("trend page: %v", err)
	}

	rule := "time_to_first_token.p50>+20%"
	same := filepath.Join(work, "unchanged")
	profile(t, bin, normal, same)
	if _, err := history.AppendRun(context.Background(), db, same); err != nil {
		t.Fatal(err)
	}
	g, base := gate(t, db, same, rule)
	if base != dirs[2] || g.Failed || !strings.HasPrefix(g.Verdict, "PASS: ") {
		t.Errorf("unchanged run against %s: failed %v\n%s", base, g.Failed, g.Verdict)
	}

	slow := filepath.Join(work, "slowed")
	profile(t, bin, slowed, slow)
	rec, err := history.AppendRun(context.Background(), db, slow)
	if err != nil {
		t.Fatal(err)
	}
	g, base = gate(t, db, slow, rule)
	if base != same || !g.Failed || !strings.HasPrefix(g.Verdict, "REGRESSION: ") || !strings.Contains(g.Verdict, "time_to_first_token.p50 +") {
		t.Errorf("slowed run against %s: failed %v\n%s", base, g.Failed, g.Verdict)
	}
	t.Logf("gate verdict: %s", g.Verdict)

	// The trend sees the slowdown as significant and worse.
	out, _ = surge(t, "trend", "time_to_first_token.p50", "--history", db)
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), strconv.FormatInt(rec.Rows[0].ID, 10)+" ") {
			line = l
		}
	}
	if !strings.Contains(line, "▲ worse") {
		t.Errorf("the slowed run's trend line %q, want ▲ worse:\n%s", line, out)
	}
	t.Logf("%s", out)
}

// TestCommandUsage: what the commands refuse is a usage error naming it.
func TestCommandUsage(t *testing.T) {
	db := filepath.Join(t.TempDir(), "h.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"history", "--history", db, "frobnicate"}, `unknown "frobnicate"`},
		{[]string{"history", "--history", db, "import"}, "name the artifact folders"},
		{[]string{"history", "--history", db, "import", filepath.Join(t.TempDir(), "nothing")}, "nothing"},
		{[]string{"history", "--history", db, "label", "x", "y"}, `"x" is not a run's ID`},
		{[]string{"history", "--history", db, "label", "7", "y"}, "no run with id 7"},
		{[]string{"history", "--history", db, "--since", "yesterday"}, "--since \"yesterday\""},
		{[]string{"history", "--history", db, "--last", "-1"}, "--last must be ≥ 1, got -1"},
		{[]string{"history", "--history", db, "--prune-older-than", "soon"}, "--prune-older-than \"soon\""},
		{[]string{"history", "--history", db, "--prune-keep", "-3"}, "--prune-keep must be ≥ 1"},
		// 0 is not "all": it is refused, never read as the flag left out.
		{[]string{"history", "--history", db, "--prune-keep", "0"}, "--prune-keep must be ≥ 1, got 0"},
		{[]string{"history", "--history", db, "--last", "0"}, "--last must be ≥ 1, got 0"},
		{[]string{"trend", "--history", db, "time_to_first_token", "--last", "0"}, "--last must be ≥ 1, got 0"},
		{[]string{"trend", "--history", db, "time_to_first_token", "--stages", "--load", "0"}, "--load must be > 0, got 0"},
		{[]string{"trend", "--history", db}, "name one metric"},
		{[]string{"trend", "--history", db, ".p99"}, "want a metric tag"},
		{[]string{"trend", "--history", db, "time_to_first_token", "--confidence", "2"}, "--confidence"},
		{[]string{"trend", "--history", db, "time_to_first_token", "--bootstrap-samples", "5"}, "--bootstrap-samples"},
		{[]string{"trend", "--history", db, "time_to_first_token", "--load", "8"}, "give --stages"},
		{[]string{"trend", "--history", db, "time_to_first_token"}, "no run matches"},
		{[]string{"history", "--history", db, "--nosuch"}, "--nosuch"},
	} {
		out, code := surge(t, tc.args...)
		if code != cmdline.ExitUsage || !strings.Contains(out, tc.want) {
			t.Errorf("surge %q: exit %d, want 2 and %q:\n%s", tc.args, code, tc.want, out)
		}
	}
}

// TestListPruneAndJSON: the compare test runs imported, listed as JSON
// lines with the database's column names, pruned by count; a damaged
// database is an error (exit 1) naming it.
func TestListPruneAndJSON(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	data := "../../metrics/compare/testdata/"
	out, code := surge(t, "history", "import", "--history", db, data+"slow", data+"fast", data+"sweep-fast")
	if code != 0 || !strings.Contains(out, "3 rows, 3 new") {
		t.Fatalf("import: %d\n%s", code, out)
	}
	out, code = surge(t, "history", "--history", db, "--json", "--stages")
	if code != 0 {
		t.Fatalf("--json: %d\n%s", code, out)
	}
	var all []map[string]any
	if err := json.Unmarshal([]byte(out), &all); err != nil || len(all) != 5 {
		t.Fatalf("--json: %d rows (%v), want one array of 5 (2 runs, a sweep and its 2 stages):\n%s", len(all), err, out)
	}
	out, code = surge(t, "history", "--history", db, "--jsonl", "--stages")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 5 {
		t.Fatalf("--jsonl: exit %d, %d JSON lines, want 5:\n%s", code, len(lines), out)
	}
	var row map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &row); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(row, all[0]) {
		t.Errorf("--jsonl's first line %v differs from --json's first element %v", row, all[0])
	}
	if _, code := surge(t, "history", "--history", db, "--json", "--jsonl"); code != cmdline.ExitUsage {
		t.Errorf("--json --jsonl: exit %d, want %d", code, cmdline.ExitUsage)
	}
	// The list fits 80 columns.
	out, code = surge(t, "history", "--history", db, "--stages")
	if code != 0 {
		t.Fatalf("surge history: exit %d\n%s", code, out)
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if n := utf8.RuneCountInString(l); n > 80 && strings.Contains(strings.TrimSpace(l), " ") {
			t.Errorf("surge history: a line of %d columns:\n%s", n, out)
		}
	}
	if row["id"] != 1.0 || row["workload_hash"] != "sha256:5e847e702a6c1e4d" || row["kind"] != "run" ||
		row["cost_per_hour_usd"] != nil || len(row["metrics"].([]any)) == 0 {
		t.Errorf("first JSON row: %v", row)
	}
	out, code = surge(t, "history", "--history", db, "--since", "2026-12-03T07:08:50Z", "--until", "2026-12-04")
	if code != 0 || !strings.Contains(out, "2 of 3 runs shown") {
		t.Errorf("since/until: %d\n%s", code, out)
	}
	out, code = surge(t, "history", "label", "--history", db, "2", "fast-one")
	if code != 0 || !strings.Contains(out, `run 2 labelled "fast-one"`) {
		t.Errorf("label: %d\n%s", code, out)
	}
	out, code = surge(t, "history", "--history", db, "--prune-keep", "1")
	if code != 0 || !strings.Contains(out, "removed 2 runs (2 rows); 1 run left") {
		t.Errorf("prune: %d\n%s", code, out)
	}
	out, code = surge(t, "history", "--history", db, "--prune-older-than", "1d")
	if code != 0 || !strings.Contains(out, "removed 1 run (3 rows); 0 runs left") {
		t.Errorf("prune by age: %d\n%s", code, out)
	}
	bad := filepath.Join(dir, "bad.db")
	if err := os.WriteFile(bad, bytes.Repeat([]byte("not a database "), 100), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = surge(t, "history", "--history", bad)
	if code != cmdline.ExitFailed || !strings.Contains(out, bad) || !strings.Contains(out, "damaged or not a database") {
		t.Errorf("damaged database: exit %d\n%s", code, out)
	}
}

func TestInstantAndAge(t *testing.T) {
	now := time.Date(2026, 12, 10, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"2026-05-01":           time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC),
		"2026-05-01T08:00:00Z": time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC),
		"7d":                   now.Add(-7 * 24 * time.Hour),
		"1d12h":                now.Add(-36 * time.Hour),
		"90m":                  now.Add(-90 * time.Minute),
		"":                     {},
	} {
		got, err := instant("--since", in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("instant(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"d", "-1d", "1x", "tomorrow"} {
		if _, err := instant("--since", bad, now); err == nil {
			t.Errorf("instant(%q) accepted", bad)
		}
	}
}
