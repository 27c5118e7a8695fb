package bounded

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadAll(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		size  int
		limit int64
		over  bool
	}{
		{"empty", 0, 10, false},
		{"under", 5, 10, false},
		{"exactly at the limit", 10, 10, false},
		{"one over", 11, 10, true},
		{"many chunks under", 5*chunk + 7, 6 * chunk, false},
		{"many chunks over", 5*chunk + 7, 5 * chunk, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := bytes.Repeat([]byte{'x'}, tc.size)
			got, err := ReadAll(ctx, bytes.NewReader(in), tc.limit, "the answer")
			var tl *TooLargeError
			if tc.over {
				if !errors.As(err, &tl) || tl.What != "the answer" || tl.Limit != tc.limit {
					t.Fatalf("err = %v, want a TooLargeError naming the answer and %d", err, tc.limit)
				}
				return
			}
			if err != nil || !bytes.Equal(got, in) {
				t.Fatalf("got %d bytes, %v; want %d", len(got), err, len(in))
			}
		})
	}
}

// endless never ends: /dev/zero's shape.
type endless struct{}

func (endless) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestReadAllEndlessStopsAtTheLimit(t *testing.T) {
	_, err := ReadAll(context.Background(), endless{}, 1<<20, "an endless body")
	if err == nil || !strings.Contains(err.Error(), "1 MiB limit") || !strings.Contains(err.Error(), "an endless body") {
		t.Fatalf("err = %v", err)
	}
}

func TestReadAllStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadAll(ctx, endless{}, 1<<40, "x"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestReadFileRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	link := filepath.Join(dir, "summary.json")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, tc := range []struct{ path, kind string }{
		{"/dev/zero", "a character device"},
		{link, "a character device"},
		{fifo, "a named pipe"},
		{sock, "a socket"},
		{dir, "a directory"},
	} {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(ctx, tc.path, 1<<20); done <- err }()
		select {
		case err := <-done:
			var nr *NotRegularError
			if !errors.As(err, &nr) || !strings.Contains(err.Error(), tc.kind) || !strings.Contains(err.Error(), tc.path) {
				t.Errorf("ReadFile(%s) = %v, want a refusal naming %s", tc.path, err, tc.kind)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("ReadFile(%s) blocked", tc.path)
		}
	}
}

func TestReadFileBounds(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "big.json")
	if err := os.WriteFile(p, bytes.Repeat([]byte("{}"), 600), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(context.Background(), p, 1000)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Size != 1200 || !strings.Contains(err.Error(), "1.2 KiB") || !strings.Contains(err.Error(), p) {
		t.Fatalf("err = %v", err)
	}
	b, err := ReadFile(context.Background(), p, 1200)
	if err != nil || len(b) != 1200 {
		t.Fatalf("at the limit: %d bytes, %v", len(b), err)
	}
}

func TestFileStopsAFileThatGrows(t *testing.T) {
	p := filepath.Join(t.TempDir(), "grows")
	if err := os.WriteFile(p, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(context.Background(), p, 5)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString("678"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	_, err = io.ReadAll(f)
	var tl *TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("err = %v, want TooLargeError", err)
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 64 << 20: "64 MiB", 5 << 30: "5 GiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestDevNullIsEmpty: /dev/null, a device, reads as the empty file it is
// (--config /dev/null); /dev/zero, endless, is refused.
func TestDevNullIsEmpty(t *testing.T) {
	b, err := ReadFile(context.Background(), os.DevNull, 10)
	if err != nil || len(b) != 0 {
		t.Errorf("/dev/null: %q %v", b, err)
	}
	var nr *NotRegularError
	if _, err := ReadFile(context.Background(), "/dev/zero", 10); !errors.As(err, &nr) {
		t.Errorf("/dev/zero: %v", err)
	}
}

// TestJustOverNamesBytes: a size that rounds to the limit is given in
// bytes.
func TestJustOverNamesBytes(t *testing.T) {
	e := &TooLargeError{What: "f", Limit: 1 << 20, Size: 1<<20 + 1}
	if got := e.Error(); got != "f is 1048577 bytes, over the 1 MiB limit" {
		t.Errorf("%q", got)
	}
}

// TestOpenStreamWaitsForAWriterUntilCancelled: opening a FIFO nobody
// writes waits, and the wait ends with the context; a FIFO with a writer
// opens and reads.
func TestOpenStreamWaitsForAWriterUntilCancelled(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := OpenStream(ctx, fifo); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Errorf("no writer: %v after %v", err, time.Since(start))
	}
	// A FIFO of its own: the first one's open, left behind, would take
	// this writer and leave the second open waiting for ever.
	fifo = filepath.Join(t.TempDir(), "fifo2")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			w.WriteString("row\n")
			w.Close()
		}
	}()
	f, err := OpenStream(context.Background(), fifo)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	if string(b) != "row\n" {
		t.Errorf("read %q", b)
	}
}
