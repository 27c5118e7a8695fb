package history

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// docQueries are the ```sql blocks of docs/history.md (the DuckDB one is
// fenced ```sql duckdb, and left out).
func docQueries(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../docs/history.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var cur *strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		switch trimmed := strings.TrimSpace(line); {
		case cur == nil && trimmed == "```sql":
			cur = &strings.Builder{}
		case cur != nil && trimmed == "```":
			out = append(out, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	if len(out) == 0 {
		t.Fatal("docs/history.md has no ```sql block")
	}
	return out
}

// TestDocQueries runs the documentation's queries on a history of the
// compare test runs: through surge's driver, and through the sqlite3
// command line where it is installed (the file is plain SQLite).
func TestDocQueries(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "history.db")
	for _, d := range []string{"slow", "fast", "sweep-fast"} {
		if _, err := AppendRun(ctx(), path, compareData+d); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Open(ctx(), path)
	if err != nil {
		t.Fatal(err)
	}
	queries := docQueries(t)
	for i, q := range queries {
		rows, err := s.db.Query(q)
		if err != nil {
			t.Fatalf("query %d: %v\n%s", i+1, err, q)
		}
		n := 0
		for rows.Next() {
			n++
		}
		rows.Close()
		if n < 2 {
			t.Errorf("query %d: %d rows, want the runs\n%s", i+1, n, q)
		}
	}
	s.Close() // the log folded back: the file alone is the database

	cli, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("no sqlite3 command line to read the file with")
	}
	for i, q := range queries {
		cmd := exec.Command(cli, "-readonly", "-bail", path)
		cmd.Stdin = strings.NewReader(q)
		out, err := cmd.CombinedOutput()
		if err != nil || strings.Count(strings.TrimSpace(string(out)), "\n") < 1 {
			t.Errorf("sqlite3, query %d: %v\n%s\n%s", i+1, err, q, out)
		}
		if i == 0 && !strings.Contains(string(out), "|concurrency|4.0|") {
			t.Errorf("sqlite3, query 1:\n%s", out)
		}
	}
}
