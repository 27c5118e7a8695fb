package hostile

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"testing"

	_ "github.com/ncruces/go-sqlite3/driver" // the foreign database's driver
	"github.com/parquet-go/parquet-go"

	"github.com/surgebench/surge/internal/bounded"
)

// DevZeroLink makes path a symbolic link to /dev/zero: endless, and a
// read of it never ends on its own.
func DevZeroLink(t testing.TB, path string) {
	t.Helper()
	if err := os.Symlink("/dev/zero", path); err != nil {
		t.Skipf("symlink to /dev/zero: %v", err)
	}
}

// FIFO makes path a named pipe nobody writes: opening it blocking waits
// forever.
func FIFO(t testing.TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// Huge writes a file of size bytes: EndlessPrefix, then 'a' to the end (a
// JSON string and a line that never close).
func Huge(t testing.TB, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.WriteString(f, EndlessPrefix); err != nil {
		t.Fatal(err)
	}
	chunk := []byte(strings.Repeat("a", 1<<20))
	for n := int64(len(EndlessPrefix)); n < size; n += int64(len(chunk)) {
		if _, err := f.Write(chunk[:min(int64(len(chunk)), size-n)]); err != nil {
			t.Fatal(err)
		}
	}
}

// Garbage writes n seeded random bytes, control characters among them.
func Garbage(t testing.TB, path string, n int) {
	t.Helper()
	r := rand.New(rand.NewPCG(59, 59))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	write(t, path, b)
}

// DamagedSQLite writes a file that starts as an SQLite database does and
// is garbage after its header.
func DamagedSQLite(t testing.TB, path string) {
	t.Helper()
	r := rand.New(rand.NewPCG(5, 9))
	b := make([]byte, 3*4096)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	copy(b, "SQLite format 3\x00")
	b[16], b[17] = 0x10, 0x00 // page size 4096
	write(t, path, b)
}

// ForeignSQLite writes another application's SQLite database (a notes
// table, rollback journal "delete") and returns its bytes, to check that
// nothing changed it.
func ForeignSQLite(t testing.TB, path string) []byte {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, q := range []string{
		`PRAGMA journal_mode=delete`,
		`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)`,
		`INSERT INTO notes (body) VALUES ('another application''s data')`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			db.Close()
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := bounded.ReadFile(context.Background(), path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// HugeRowParquet is a Parquet file of one row whose "question" column
// holds size bytes (no statistics: the value is not copied into the
// metadata).
func HugeRowParquet(t testing.TB, size int) []byte {
	t.Helper()
	type row struct {
		Q string `parquet:"question,plain"`
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf, parquet.DataPageStatistics(false), parquet.ColumnIndexSizeLimit(func([]string) int { return 16 }))
	if _, err := w.Write([]row{{strings.Repeat("y", size)}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func write(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
