package export

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// Write faults. A full disk (ENOSPC) or a failing one (EIO) must stop a
// run when it happens, not be found at the end: every writer here reports
// its first failed write at once, through the callback it was given (the
// caller stops issuing), and a JSONL file is cut back to its last whole
// line, so a reader never meets a torn one.

// truncater is a file that can be cut back (an *os.File).
type truncater interface {
	Truncate(size int64) error
	Seek(offset int64, whence int) (int64, error)
}

// lineFile writes whole lines to w. A write that fails part way through
// is cut back to its last whole line where w can be truncated, and every
// write after a failure is refused with it. One goroutine writes at a
// time.
type lineFile struct {
	w io.Writer
	// base is w's offset when the writer started (-1: w cannot be cut),
	// size the bytes written since, all whole lines but after a failure
	// that could not be cut back.
	base, size int64
	err        error
}

func newLineFile(w io.Writer) lineFile {
	f := lineFile{w: w, base: -1}
	if t, ok := w.(truncater); ok {
		if off, err := t.Seek(0, io.SeekCurrent); err == nil {
			f.base = off
		}
	}
	return f
}

// write writes b, whole lines. It returns the first failure and whether
// this call met it (so its caller reports it once).
func (f *lineFile) write(b []byte) (err error, first bool) {
	if f.err != nil {
		return f.err, false
	}
	n, err := f.w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err == nil {
		f.size += int64(n)
		return nil, false
	}
	// Keep the lines written in full; cut the torn one.
	whole := int64(bytes.LastIndexByte(b[:max(n, 0)], '\n') + 1)
	f.size += whole
	if t, ok := f.w.(truncater); ok && f.base >= 0 && int64(n) > whole {
		if terr := t.Truncate(f.base + f.size); terr != nil {
			err = fmt.Errorf("%w (and cutting back the torn line: %v)", err, terr)
		} else {
			_, _ = t.Seek(f.base+f.size, io.SeekStart)
		}
	}
	f.err = err
	return err, true
}

// WriteFault is told of a writer's first failed write, once, from the
// goroutine that met it (it must not block for long).
type WriteFault func(err error)

// WithWriteFault reports the file's first failed write to f at once: the
// caller should stop issuing requests (the records would be lost).
func WithWriteFault(f WriteFault) JSONLOption { return func(j *JSONL) { j.onFault = f } }

// InputsOption configures an Inputs writer.
type InputsOption func(*Inputs)

// InputsWriteFault reports inputs.json's first failed write to f at once.
func InputsWriteFault(f WriteFault) InputsOption { return func(in *Inputs) { in.onFault = f } }

// faultWriter tells f of w's first failed write.
type faultWriter struct {
	w    io.Writer
	f    WriteFault
	once sync.Once
}

func (fw *faultWriter) Write(p []byte) (int, error) {
	n, err := fw.w.Write(p)
	if err != nil && fw.f != nil {
		fw.once.Do(func() { fw.f(err) })
	}
	return n, err
}

// AtomicFile is a file written under a temporary name (path + ".partial")
// and renamed to its path by Commit: a process killed before then leaves
// no empty or torn file under the real name (inputs.json is one document,
// whole only at its end).
type AtomicFile struct {
	*os.File
	path string
}

// PartialSuffix names a file not yet committed.
const PartialSuffix = ".partial"

// CreateAtomic creates path's temporary file, truncating one a killed
// earlier run left, and removes the document an earlier run committed
// under path: this run replaces the folder's files, and a kill before
// Commit must not leave an earlier run's document beside this run's
// records as if it were theirs. So after a kill the folder holds this
// run's path+".partial" and no path; the next run into it reuses the
// temporary name, and its Commit leaves path alone.
func CreateAtomic(path string) (*AtomicFile, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	f, err := os.OpenFile(path+PartialSuffix, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	return &AtomicFile{File: f, path: path}, nil
}

// Commit closes the file and gives it its name. A file that failed to
// close keeps its temporary name (and the error says so).
func (a *AtomicFile) Commit() error {
	if err := a.File.Close(); err != nil {
		return fmt.Errorf("%s left as %s: %w", a.path, a.File.Name(), err)
	}
	return os.Rename(a.File.Name(), a.path)
}

// Close closes the file and leaves it under its temporary name (an
// abandoned document); after Commit it does nothing.
func (a *AtomicFile) Close() error {
	if err := a.File.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return err
	}
	return nil
}
