package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/surgebench/surge/metrics"
)

// fullFile is a real file on a disk that fills after left bytes: the
// write that crosses it writes what fits and fails with ENOSPC, as
// write(2) on a full filesystem does.
type fullFile struct {
	*os.File
	left int
}

func (f *fullFile) Write(p []byte) (int, error) {
	if len(p) <= f.left {
		f.left -= len(p)
		return f.File.Write(p)
	}
	n, _ := f.File.Write(p[:f.left])
	f.left = 0
	return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
}

// faults counts a callback's calls and keeps the first error.
type faults struct {
	n     atomic.Int32
	mu    sync.Mutex
	first error
}

func (f *faults) report(err error) {
	if f.n.Add(1) == 1 {
		f.mu.Lock()
		f.first = err
		f.mu.Unlock()
	}
}

// checkWholeLines fails unless the file is whole JSON lines, and returns
// how many.
func checkWholeLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("%s ends in a torn line: …%q", filepath.Base(path), b[max(0, len(b)-40):])
	}
	n := 0
	for l := range bytes.Lines(b) {
		if !json.Valid(l) {
			t.Fatalf("line %d is not JSON: %.60q", n+1, l)
		}
		n++
	}
	return n
}

// TestJSONLWriteFault: the disk fills part way through a line. The fault
// is reported once, as it happens (before Err), the file is cut back to
// its last whole line, and nothing is written after.
func TestJSONLWriteFault(t *testing.T) {
	t.Parallel()
	recs, vals := benchLines(8, 16)
	for _, hold := range []time.Duration{0, 5 * time.Millisecond} {
		for _, room := range []int{0, 1, 700, 5000} {
			path := filepath.Join(t.TempDir(), "profile_export.jsonl")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			var got faults
			j := NewJSONL(&fullFile{File: f, left: room}, time.Unix(0, 0), WithHold(hold), WithWriteFault(got.report))
			for i := range 200 {
				j.WriteRecord(recs[i%len(recs)], &vals[i%len(vals)], true)
				if hold == 0 && got.n.Load() > 0 {
					break // the caller stops at the first fault
				}
			}
			j.WriteHeld()
			if got.n.Load() != 1 {
				t.Fatalf("hold %v, room %d: fault reported %d times before Err, want once", hold, room, got.n.Load())
			}
			err = j.Err()
			got.mu.Lock()
			first := got.first
			got.mu.Unlock()
			if !errors.Is(err, syscall.ENOSPC) || !errors.Is(first, syscall.ENOSPC) {
				t.Fatalf("hold %v, room %d: Err %v, fault %v; want ENOSPC", hold, room, err, first)
			}
			f.Close()
			n := checkWholeLines(t, path)
			if st, _ := os.Stat(path); st.Size() > int64(room) {
				t.Errorf("hold %v, room %d: %d bytes on a disk with room for %d", hold, room, st.Size(), room)
			}
			if room == 5000 && n == 0 {
				t.Errorf("hold %v: no whole line kept of the %d bytes that fit", hold, room)
			}
			if got.n.Load() != 1 {
				t.Errorf("hold %v, room %d: fault reported %d times", hold, room, got.n.Load())
			}
		}
	}
}

// TestRawJSONLWriteFault: the raw dump's lines are cut back the same way.
func TestRawJSONLWriteFault(t *testing.T) {
	t.Parallel()
	recs, vals := benchLines(4, 8)
	path := filepath.Join(t.TempDir(), "profile_export_raw.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got faults
	j := NewRawJSONL(&fullFile{File: f, left: 3000}, time.Unix(0, 0), WithWriteFault(got.report))
	for i := range 50 {
		r := *recs[i%len(recs)]
		r.Raw = rawCapture(i)
		j.WriteRecord(&r, &vals[i%len(vals)], true)
	}
	if got.n.Load() != 1 || !errors.Is(j.Err(), syscall.ENOSPC) {
		t.Fatalf("fault reported %d times, Err %v; want once, ENOSPC", got.n.Load(), j.Err())
	}
	if n := checkWholeLines(t, path); n == 0 {
		t.Error("no whole line kept")
	}
}

// TestInputsWriteFault: inputs.json's first failed write is reported when
// it happens, not only by Close.
func TestInputsWriteFault(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "inputs.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	faulted := make(chan error, 4)
	in := NewInputs(&fullFile{File: f, left: 1000}, InputsWriteFault(func(err error) { faulted <- err }))
	body := fmt.Appendf(nil, `{"p":"%s"}`, bytes.Repeat([]byte("x"), 64<<10))
	for s := range 32 { // 2 MiB: the writer flushes on its way
		in.Body(int64(s), "c", 0, body)
		in.EndSession(int64(s))
	}
	select {
	case err := <-faulted:
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("fault %v, want ENOSPC", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no fault reported while the run went on")
	}
	if err := in.Close(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Close: %v, want ENOSPC", err)
	}
	if len(faulted) != 0 {
		t.Errorf("fault reported %d more times", len(faulted))
	}
}

// TestAtomicFile: until Commit the document has only its temporary name,
// so a process killed while writing leaves no empty or torn file under
// the real one; Commit names it.
func TestAtomicFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "inputs.json")
	a, err := CreateAtomic(path)
	if err != nil {
		t.Fatal(err)
	}
	in := NewInputs(a)
	in.Body(0, "c", 0, []byte(`{"x":1}`))
	in.EndSession(0)
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s exists before Commit: %v", path, err)
	}
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !json.Valid(b) {
		t.Fatalf("committed %s: %q, %v", path, b, err)
	}
	if _, err := os.Stat(path + PartialSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file is left after Commit: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("Close after Commit: %v", err)
	}
	// Abandoned: the real name never appears.
	other := filepath.Join(t.TempDir(), "inputs.json")
	a, err = CreateAtomic(other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.WriteString(`{"data":[`); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(other); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an abandoned document took the real name: %v", err)
	}

	// A run killed in a folder that holds an earlier run's document: the
	// earlier document goes when the run starts (it is not this run's), and
	// the next run's Commit replaces the killed run's partial.
	if err := os.WriteFile(path, []byte(`{"data":["earlier run"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	killed, err := CreateAtomic(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := killed.WriteString(`{"data":[{"session_id":"killed"`); err != nil {
		t.Fatal(err)
	}
	killed.Close() // killed: never committed
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the earlier run's %s is still beside the killed run's files: %v", path, err)
	}
	next, err := CreateAtomic(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := next.WriteString(`{"data":[]}`); err != nil {
		t.Fatal(err)
	}
	if err := next.Commit(); err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(path)
	if err != nil || string(b) != `{"data":[]}` {
		t.Errorf("next run's %s: %q, %v", path, b, err)
	}
	if _, err := os.Stat(path + PartialSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed run's partial is left after the next run: %v", err)
	}
}

// rawCapture is a streamed exchange of a few events.
func rawCapture(i int) *metrics.RawExchange {
	return &metrics.RawExchange{Body: fmt.Appendf(nil, `{"model":"m","n":%d}`, i), Status: 200, ContentType: "text/event-stream", Stream: true,
		Events: []metrics.RawEvent{{AtNs: 1, Data: []byte(`{"choices":[{"delta":{"content":"a"}}]}`)}, {AtNs: 2, Data: []byte("[DONE]")}}}
}
