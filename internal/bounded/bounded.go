// Package bounded is the one reader of whole files and bodies: every read
// stops at a limit that its error names, stops when its context is done,
// and refuses what is not a regular file (a device, a FIFO, a socket, or a
// symbolic link to one), which could be endless or block forever; only
// /dev/null, empty, is read.
package bounded

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// TooLargeError is a file or body over its limit.
type TooLargeError struct {
	// What names it: a path, "the server's answer", "the summary JSON".
	What string
	// Limit is the bound in bytes.
	Limit int64
	// Size is its size when known (a file's, a Content-Length), else 0.
	Size int64
}

func (e *TooLargeError) Error() string {
	if e.Size > 0 {
		size := Bytes(e.Size)
		if e.Size-e.Limit < e.Limit/20 { // just over: "1.0 MiB, over the 1 MiB limit" would puzzle
			size = fmt.Sprintf("%d bytes", e.Size)
		}
		return fmt.Sprintf("%s is %s, over the %s limit", e.What, size, Bytes(e.Limit))
	}
	return fmt.Sprintf("%s is over the %s limit", e.What, Bytes(e.Limit))
}

// NotRegularError is a path that names something other than a regular
// file (after symbolic links).
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: not a regular file (%s): refused", e.Path, kind(e.Mode))
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return m.Type().String()
}

// isDevNull reports whether st is /dev/null's.
func isDevNull(st fs.FileInfo) bool {
	if st.Mode()&fs.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err == nil && os.SameFile(st, null)
}

// chunk is how much is read between two looks at the context.
const chunk = 64 << 10

// ReadAll reads r to its end, at most limit bytes, looking at ctx between
// chunks: a longer input is a *TooLargeError naming what, a done context
// its error.
func ReadAll(ctx context.Context, r io.Reader, limit int64, what string) ([]byte, error) {
	var buf []byte
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if int64(len(buf)) > limit {
			return nil, &TooLargeError{What: what, Limit: limit}
		}
		if cap(buf)-len(buf) < chunk {
			n := int64(max(2*cap(buf), chunk))
			n = min(n, limit+1)
			if n <= int64(cap(buf)) {
				n = int64(cap(buf)) + chunk
			}
			nb := make([]byte, len(buf), n)
			copy(nb, buf)
			buf = nb
		}
		room := min(int64(cap(buf)-len(buf)), limit+1-int64(len(buf)), chunk)
		n, err := r.Read(buf[len(buf) : len(buf)+int(room)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			if int64(len(buf)) > limit {
				return nil, &TooLargeError{What: what, Limit: limit}
			}
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Head reads at most n bytes of r, the start of what follows: an error
// answer's first bytes, shown in its message (the rest is not read, and is
// no error).
func Head(r io.Reader, n int64) []byte {
	b, _ := io.ReadAll(io.LimitReader(r, n))
	return b
}

// Open opens path for reading after checking that it is a regular file
// (symbolic links followed), and returns a reader that fails with a
// *TooLargeError past limit bytes and with ctx's error once ctx is done.
// The file is opened non-blocking and checked again once open, so a FIFO
// swapped in between the check and the open cannot block.
func Open(ctx context.Context, path string, limit int64) (*File, error) {
	// A stat first: opening some devices acts (a tape rewinds, a watchdog
	// starts).
	st, err := os.Stat(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Op = "open" // what the caller asked for
		}
		return nil, err
	}
	if isDevNull(st) {
		// The empty file every system has (--config /dev/null): its
		// reads end at once.
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		return &File{f: f, ctx: ctx, left: limit, limit: limit, path: path}, nil
	}
	if !st.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: st.Mode()}
	}
	if st.Size() > limit {
		return nil, &TooLargeError{What: path, Limit: limit, Size: st.Size()}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err = f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, Mode: st.Mode()}
	}
	return &File{f: f, ctx: ctx, left: limit, limit: limit, path: path}, nil
}

// OpenStream opens path to be read as a stream, for a reader that bounds
// what it reads itself (a line's limit, a file's): a regular file, or a
// FIFO (process substitution, <(cmd)). Opening a FIFO waits for its
// writer; that wait ends with ctx's error when ctx is done first (the
// open, left behind, ends when a writer comes or the process does).
func OpenStream(ctx context.Context, path string) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		done <- opened{f, err}
	}()
	select {
	case o := <-done:
		return o.f, o.err
	case <-ctx.Done():
		go func() {
			if o := <-done; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, fmt.Errorf("opening %s: %w", path, ctx.Err())
	}
}

// File is a regular file read within a bound (Open).
type File struct {
	f     *os.File
	ctx   context.Context
	left  int64
	limit int64
	path  string
}

// Read reads from the file; past the limit it returns a *TooLargeError.
func (f *File) Read(p []byte) (int, error) {
	if err := f.ctx.Err(); err != nil {
		return 0, err
	}
	if f.left <= 0 {
		// One byte more tells a file that grew past the limit from one
		// that ends exactly at it.
		var one [1]byte
		n, err := f.f.Read(one[:])
		if n > 0 {
			return 0, &TooLargeError{What: f.path, Limit: f.limit}
		}
		return 0, err
	}
	if int64(len(p)) > f.left {
		p = p[:f.left]
	}
	if len(p) > chunk {
		p = p[:chunk]
	}
	n, err := f.f.Read(p)
	f.left -= int64(n)
	return n, err
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// ReadFile reads a whole regular file of at most limit bytes (Open's
// checks), looking at ctx between chunks.
func ReadFile(ctx context.Context, path string, limit int64) ([]byte, error) {
	f, err := Open(ctx, path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := ReadAll(ctx, f, limit, path)
	var tl *TooLargeError
	if errors.As(err, &tl) {
		tl.What = path
	}
	return b, err
}

// Bytes writes n bytes for people: "512 B", "64 MiB", "1.5 GiB".
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	suffix := []string{"KiB", "MiB", "GiB", "TiB", "PiB"}[exp]
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %s", int64(v), suffix)
	}
	return fmt.Sprintf("%.1f %s", v, suffix)
}
