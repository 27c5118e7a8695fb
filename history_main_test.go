package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/examples/mockserver"
)

// mockAt starts the mock with ttft on a free loopback port.
func mockAt(t *testing.T, ttft time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m, err := mockserver.Start(ctx, "127.0.0.1:0", mockserver.Config{TTFT: ttft, ITL: time.Millisecond, Model: "mock"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = m.Close(context.Background()) })
	return m.URL()
}

// TestHistoryTrendAndGate runs the whole command line: three runs on the
// mock (the third on one slowed from 100 to 300 ms TTFT) each append
// themselves to the history, surge history lists them and surge trend
// draws them, the slowdown marked; the regression gate against
// history:last-matching passes the unchanged run (exit 0) and fails the
// slowed one (exit 1) with its verdict; the first run, with no baseline
// yet, passes. Priced runs carry their cost in the export and the history.
func TestHistoryTrendAndGate(t *testing.T) {
	t.Parallel()
	normal, slowed := mockAt(t, 100*time.Millisecond), mockAt(t, 300*time.Millisecond)
	work := t.TempDir()
	db := filepath.Join(work, "runs.db")
	profile := func(url, dir string, extra ...string) {
		t.Helper()
		args := append([]string{"profile", "--url", url, "--model", "mock", "--streaming", "--concurrency", "8",
			"--request-count", "40", "--isl", "32", "--osl", "8", "--random-seed", "7", "--ui", "none",
			"--no-server-metrics", "--no-gpu-telemetry", "--skip-preflight", "--history", db, "--cost-per-hour", "2.5",
			"--output-artifact-dir", filepath.Join(work, dir)}, extra...)
		code, _, stderr := captured(t, args...)
		if code != cmdline.ExitOK || !strings.Contains(stderr, "recorded as run") {
			t.Fatalf("surge %v: exit %d\n%s", args, code, stderr)
		}
	}
	gate := func(dir string) (int, string) {
		t.Helper()
		code, stdout, stderr := captured(t, "compare", "--history", db, "--baseline", "history:last-matching",
			filepath.Join(work, dir), "--fail-on", "time_to_first_token.p50>+25%")
		return code, stdout + stderr
	}

	profile(normal, "first", "--history-label", "before")
	if code, out := gate("first"); code != cmdline.ExitOK || !strings.Contains(out, "nothing to judge yet") {
		t.Errorf("the first run's gate: exit %d, want 0 with nothing to judge:\n%s", code, out)
	}
	profile(normal, "unchanged")
	if code, out := gate("unchanged"); code != cmdline.ExitOK || !strings.Contains(out, "PASS: ") {
		t.Errorf("the unchanged run's gate: exit %d, want 0 and PASS:\n%s", code, out)
	}
	profile(slowed, "slowed")
	code, out := gate("slowed")
	if code != cmdline.ExitFailed || !strings.Contains(out, "REGRESSION: ") || !strings.Contains(out, "time_to_first_token.p50 +") {
		t.Errorf("the slowed run's gate: exit %d, want 1 and a REGRESSION verdict:\n%s", code, out)
	}
	t.Logf("slowed gate:\n%s", out[strings.Index(out, "REGRESSION"):])
	code, stdout, _ := captured(t, "compare", "--history", db, "--baseline", "history:label=before", filepath.Join(work, "slowed"), "--json")
	var g struct {
		Failed  bool   `json:"failed"`
		Verdict string `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(stdout), &g); code != cmdline.ExitFailed || err != nil || !g.Failed || !strings.HasPrefix(g.Verdict, "REGRESSION") {
		t.Errorf("--baseline history:label=before --json: exit %d, %v, %+v\n%s", code, err, g, stdout)
	}

	code, stdout, _ = captured(t, "history", "--history", db, "--wide")
	if code != cmdline.ExitOK || !strings.Contains(stdout, "3 of 3 runs shown") || !strings.Contains(stdout, "before") {
		t.Errorf("surge history: exit %d\n%s", code, stdout)
	}
	for _, d := range []string{"first", "unchanged", "slowed"} {
		if !strings.Contains(stdout, filepath.Join(work, d)) {
			t.Errorf("surge history lacks %s:\n%s", d, stdout)
		}
	}
	page := filepath.Join(work, "trend.html")
	code, stdout, _ = captured(t, "trend", "time_to_first_token.p50", "--history", db, "--html", page)
	if code != cmdline.ExitOK || !strings.Contains(stdout, "across 3 runs") || !strings.Contains(stdout, "▲ worse") {
		t.Errorf("surge trend: exit %d, want 3 runs, the slowdown ▲ worse:\n%s", code, stdout)
	}
	if _, err := os.Stat(page); err != nil {
		t.Errorf("surge trend --html: %v", err)
	}
	t.Logf("%s", stdout)

	// The price: in the export and the history.
	var exp map[string]any
	b, err := os.ReadFile(filepath.Join(work, "first", "profile_export_aiperf.json"))
	if err == nil {
		err = json.Unmarshal(b, &exp)
	}
	cost, _ := exp["cost_per_1m_output_tokens"].(map[string]any)
	if err != nil || cost == nil || !(cost["avg"].(float64) > 0) {
		t.Errorf("the export's cost_per_1m_output_tokens: %v (%v)", cost, err)
	}
	code, stdout, _ = captured(t, "history", "--history", db, "--json", "--label", "before")
	var rows []map[string]any
	err = json.Unmarshal([]byte(stdout), &rows)
	var row map[string]any
	if len(rows) == 1 {
		row = rows[0]
	}
	price, _ := row["cost_per_hour_usd"].(float64)
	perM, _ := row["cost_per_1m_output_tokens_usd"].(float64)
	if code != 0 || err != nil || math.Abs(price-2.5) > 1e-3 || !(perM > 0) {
		t.Errorf("the history's row: exit %d, %v: %v", code, err, row)
	}
}

// TestGateFailsClosed: a regression gate that cannot read its history,
// or whose baseline is missing, does not pass: it exits 3 with one line
// naming the history or the baseline, for every kind of damage (a page
// of data or of an index a query would not notice, a cut file, junk,
// another application's database, a newer surge's, a folder where the
// file should be) and every selector. A first run with a sound history
// still passes (TestHistoryTrendAndGate).
func TestGateFailsClosed(t *testing.T) {
	t.Parallel()
	url := mockAt(t, 5*time.Millisecond)
	work := t.TempDir()
	db := filepath.Join(work, "runs.db")
	for _, d := range []string{"a", "b", "gone"} {
		args := []string{"profile", "--url", url, "--model", "mock", "--streaming", "--request-count", "4", "--isl", "16", "--osl", "4",
			"--random-seed", "7", "--ui", "none", "--no-server-metrics", "--no-gpu-telemetry", "--skip-preflight", "--history", db,
			"--output-artifact-dir", filepath.Join(work, d)}
		if code, _, stderr := captured(t, args...); code != cmdline.ExitOK {
			t.Fatalf("surge %v: exit %d\n%s", args, code, stderr)
		}
	}
	labelGone := []string{"history", "--history", db, "label", "3", "gone"}
	if code, _, stderr := captured(t, labelGone...); code != cmdline.ExitOK {
		t.Fatalf("surge %v: exit %d\n%s", labelGone, code, stderr)
	}
	if err := os.RemoveAll(filepath.Join(work, "gone")); err != nil {
		t.Fatal(err)
	}
	sound, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	pages := rootPages(t, db)

	for _, tc := range []struct {
		name string
		// damage writes the history the gate reads at path.
		damage    func(t *testing.T, path string)
		selectors []string
		want      string
	}{
		{"junk", func(t *testing.T, p string) { write(t, p, bytes.Repeat([]byte("not SQLite\n"), 500)) },
			[]string{"last-matching", "id=1"}, "damaged or not a database"},
		{"header zeroed", func(t *testing.T, p string) { write(t, p, overwrite(sound, 0, 100, 0)) },
			[]string{"last-matching", "id=1"}, "damaged or not a database"},
		{"the runs table's page", func(t *testing.T, p string) { write(t, p, overwrite(sound, pages["runs"], 4096, 0xff)) },
			[]string{"last-matching", "id=1", "label=gone"}, "damaged"},
		{"an index's page", func(t *testing.T, p string) { write(t, p, overwrite(sound, pages["runs_workload"], 4096, 0x5a)) },
			[]string{"last-matching", "id=1"}, "damaged"},
		{"cut in half", func(t *testing.T, p string) { write(t, p, sound[:len(sound)/2]) },
			[]string{"last-matching", "id=1"}, "damaged"},
		{"a newer surge's", func(t *testing.T, p string) {
			write(t, p, sound)
			setPragma(t, p, "user_version = 99")
		}, []string{"last-matching", "id=1"}, "newer than this surge reads"},
		{"another application's", func(t *testing.T, p string) {
			write(t, p, sound)
			setPragma(t, p, "application_id = 7")
		}, []string{"last-matching", "id=1"}, "another application's SQLite file"},
		{"a folder, not a file", func(t *testing.T, p string) {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}, []string{"last-matching", "id=1"}, "runs.db"},
		{"no run with that id", func(t *testing.T, p string) { write(t, p, sound) },
			[]string{"id=99"}, "no run with id 99"},
		{"no run with that label", func(t *testing.T, p string) { write(t, p, sound) },
			[]string{"label=nosuch"}, `no run labelled "nosuch"`},
		{"the baseline's folder is gone", func(t *testing.T, p string) { write(t, p, sound) },
			[]string{"id=3", "label=gone"}, "artifact folder is gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "runs.db")
			tc.damage(t, path)
			for _, sel := range tc.selectors {
				code, stdout, stderr := captured(t, "compare", "--history", path, "--baseline", "history:"+sel, filepath.Join(work, "b"),
					"--fail-on", "time_to_first_token.p50>+25%")
				lines := strings.Split(strings.TrimSpace(stderr), "\n")
				if code != cmdline.ExitNoBaseline || len(lines) != 1 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "history:"+sel) {
					t.Errorf("history:%s: exit %d, want %d and one line naming %q:\n%s%s", sel, code, cmdline.ExitNoBaseline, tc.want, stdout, stderr)
				}
			}
		})
	}
}

// rootPages maps each table and index of the history at path to the
// byte offset of its root page.
func rootPages(t *testing.T, path string) map[string]int {
	t.Helper()
	raw, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var size int
	if err := raw.QueryRow("PRAGMA page_size").Scan(&size); err != nil {
		t.Fatal(err)
	}
	rs, err := raw.Query("SELECT name, rootpage FROM sqlite_schema WHERE rootpage > 0")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	out := map[string]int{}
	for rs.Next() {
		var name string
		var page int
		if err := rs.Scan(&name, &page); err != nil {
			t.Fatal(err)
		}
		out[name] = (page - 1) * size
	}
	if out["runs"] == 0 || out["runs_workload"] == 0 {
		t.Fatalf("root pages %v: want runs and runs_workload", out)
	}
	return out
}

// overwrite is a copy of b with n bytes from off set to v.
func overwrite(b []byte, off, n int, v byte) []byte {
	out := bytes.Clone(b)
	for i := off; i < off+n && i < len(out); i++ {
		out[i] = v
	}
	return out
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// setPragma sets a header pragma of the database at path, as another
// program would.
func setPragma(t *testing.T, path, pragma string) {
	t.Helper()
	raw, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec("PRAGMA " + pragma); err != nil {
		t.Fatal(err)
	}
}
