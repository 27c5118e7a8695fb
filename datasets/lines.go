package datasets

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
)

// lineReader yields the lines of a text file with their 1-based numbers.
// A line may be up to MaxLineBytes long (a JSONL row can carry a whole
// document); a longer one is an error before it is read to its end.
type lineReader struct {
	r    *bufio.Reader
	file string
	line int
	buf  []byte
	// ctx is the boundedReader's: a Read looks at it every 256 KiB, each
	// line too, so a cancel is seen within one line's parse.
	ctx context.Context
}

func newLineReader(r io.Reader, file string) *lineReader {
	l := &lineReader{r: bufio.NewReaderSize(r, 256<<10), file: file, ctx: context.Background()}
	if b, ok := r.(*boundedReader); ok {
		l.ctx = b.ctx
	}
	return l
}

// next returns the next line without its line ending; ok is false at EOF.
// The slice is valid until the next call.
func (l *lineReader) next() (line []byte, ok bool, err error) {
	l.buf = l.buf[:0]
	if err := l.ctx.Err(); err != nil {
		return nil, false, readError(l.file, l.line+1, err)
	}
	for {
		chunk, err := l.r.ReadSlice('\n')
		size := len(l.buf) + len(chunk)
		if err == nil {
			size-- // the newline
		}
		if size > MaxLineBytes {
			return nil, false, readError(l.file, l.line+1, &LimitError{What: "line", Got: int64(size), Limit: MaxLineBytes, Unit: "bytes"})
		}
		if need := len(l.buf) + len(chunk); need > cap(l.buf) {
			// Double (append grows a large slice by 1.25×: five times a
			// long line's size allocated on the way instead of two).
			nb := make([]byte, len(l.buf), min(max(2*cap(l.buf), need), MaxLineBytes+1))
			copy(nb, l.buf)
			l.buf = nb
		}
		l.buf = append(l.buf, chunk...)
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			if len(l.buf) == 0 {
				return nil, false, nil
			}
			break
		}
		return nil, false, readError(l.file, l.line+1, err)
	}
	l.line++
	b := bytes.TrimSuffix(l.buf, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	if l.line == 1 {
		b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) // UTF-8 BOM
	}
	return b, true, nil
}

// each calls fn for every remaining non-blank line and returns how many
// there were.
func (l *lineReader) each(fn func(line int, b []byte) error) (int, error) {
	n := 0
	for {
		b, ok, err := l.next()
		if err != nil || !ok {
			return n, err
		}
		if blank(b) {
			continue
		}
		n++
		if err := fn(l.line, b); err != nil {
			return n, err
		}
	}
}

// blank reports whether a line holds only white space.
func blank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }
