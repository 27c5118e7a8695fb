package history

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// foreignDB writes another application's SQLite database at path, in
// the rollback journal mode SQLite starts in, and returns its bytes.
func foreignDB(t *testing.T, path string, stmts ...string) []byte {
	t.Helper()
	raw, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		if _, err := raw.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestForeignDatabaseUntouched: a database that is not surge's is refused
// before anything is written to it: the file is byte for byte as it was,
// its journal mode is still delete, and no journal, WAL or shared-memory
// file is left beside it.
func TestForeignDatabaseUntouched(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		stmts []string
	}{
		{"tables, no application id", []string{"CREATE TABLE notes (body TEXT)", "INSERT INTO notes VALUES ('mine')"}},
		{"another application id", []string{"PRAGMA application_id = 1234", "CREATE TABLE t (x)"}},
		{"an application id, no tables", []string{"PRAGMA application_id = 42", "PRAGMA user_version = 7"}},
		{"surge's tables under another id", []string{"PRAGMA application_id = 99", "CREATE TABLE runs (id INTEGER)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "other.db")
			before := foreignDB(t, path, tc.stmts...)
			_, err := Open(context.Background(), path)
			if !errors.Is(err, ErrNotHistory) || !strings.Contains(err.Error(), path) {
				t.Errorf("Open: %v, want ErrNotHistory naming the file", err)
			}
			if _, err := AppendRun(context.Background(), path, compareData+"fast"); !errors.Is(err, ErrNotHistory) {
				t.Errorf("AppendRun: %v, want ErrNotHistory", err)
			}
			after, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(before, after) {
				t.Errorf("the file changed (%d bytes before, %d after, %v)", len(before), len(after), err)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Errorf("files beside it: %v, want only other.db", names)
			}
			raw, err := sql.Open("sqlite3", path)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			var mode string
			if err := raw.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "delete" {
				t.Errorf("journal mode %q (%v), want delete", mode, err)
			}
		})
	}
}

// TestOwnHistoryIsWAL: surge's own history (new, or opened again) is in
// write-ahead-log mode once Open has shown it is surge's.
func TestOwnHistoryIsWAL(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "h.db")
	for range 2 {
		s, err := Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		var mode string
		if err := s.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
			t.Errorf("journal mode %q (%v), want wal", mode, err)
		}
		s.Close()
	}
}

// TestLockWaitInterruptible: opening and appending to a history another
// process holds locked wait for it (the busy timeout), but end as soon
// as their context does, with an error that says so.
func TestLockWaitInterruptible(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "h.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct {
		name string
		do   func(t *testing.T, ctx context.Context) error
	}{
		{"open", func(t *testing.T, ctx context.Context) error {
			// A new (empty) history must be created: a write.
			older := filepath.Join(filepath.Dir(path), "new.db")
			if err := os.WriteFile(older, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			lock := holdLock(t, older)
			defer lock()
			_, err := Open(ctx, older, WithBusyTimeout(time.Minute))
			return err
		}},
		{"append", func(t *testing.T, ctx context.Context) error {
			lock := holdLock(t, path)
			defer lock()
			_, err := s.Append(ctx, []Row{synthetic("waiting")})
			return err
		}},
		{"append a run", func(t *testing.T, ctx context.Context) error {
			lock := holdLock(t, path)
			defer lock()
			_, err := AppendRun(ctx, path, compareData+"fast")
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
			start := time.Now()
			err := tc.do(t, ctx)
			took := time.Since(start)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err %v, want context.Canceled", err)
			}
			// The busy timeout is 10 s or more: ending within 3 s of the
			// cancel (a busy machine) is ending at once.
			if took > 3*time.Second {
				t.Errorf("returned %v after the cancel was asked at 200ms", took)
			}
		})
	}
}

// holdLock takes path's write lock (another process's write
// transaction) until the returned func is called.
func holdLock(t *testing.T, path string) func() {
	t.Helper()
	raw, err := sql.Open("sqlite3", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := raw.Begin()
	if err != nil {
		t.Fatal(err)
	}
	return func() { _ = tx.Rollback(); raw.Close() }
}
