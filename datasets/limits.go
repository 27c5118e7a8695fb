package datasets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/surgebench/surge/internal/bounded"
)

// Limits on what a dataset may ask for. Every length read from a file or
// given as an option is checked against them before memory is spent on it,
// so a 60-byte trace line cannot ask for a gigabyte prompt and an endless
// input cannot grow without bound. docs/datasets-limits.md argues each.
const (
	// MaxRequestTokens bounds every token length one request may ask for:
	// a trace's input and output lengths, a synthetic ISL or OSL (and
	// their stddevs; a sampled length is capped at it), a prefix or system
	// prompt length, a block size. The longest model contexts are a few
	// million tokens (Llama 4 Scout: 10M is the outlier; most are 128K–1M),
	// and a prompt of 4,194,304 tokens is already ~16 MiB of text.
	MaxRequestTokens = 4 << 20

	// MaxLineBytes bounds one line of a JSONL or CSV dataset: room for a
	// MaxRequestTokens prompt written out as text (~4 bytes a token) with
	// JSON escapes, but not for an endless line (/dev/zero).
	MaxLineBytes = 16 << 20

	// MaxFileBytes bounds a whole dataset file. A dataset is held in
	// memory, so its file's size is a floor on the run's memory; the
	// largest public dataset surge reads (ShareGPT V3, ~0.67 GB) fits
	// with room to spare.
	MaxFileBytes = 1 << 30

	// MaxTraceBlocks bounds the prompt blocks a whole Mooncake trace
	// names (its hash_ids, or input_length over the block size where it
	// gives none): each costs ~50–200 bytes however short its line, and
	// the public traces name under a million.
	MaxTraceBlocks = 1 << 24
)

// LimitError says that a dataset asked for more than a limit allows. It is
// the cause (Unwrap) of the *InputError or *OptionError that says where:
// errors.As(err, &le) tells a limit from other bad input.
type LimitError struct {
	// What is what was too long: a field ("input_length"), "line", "file".
	What string
	// Got is the length asked for (for a line or file: at least this
	// much), Limit the limit, both in Unit ("tokens", "bytes", "blocks").
	Got, Limit int64
	Unit       string
}

// Error says what was over which limit.
func (e *LimitError) Error() string {
	switch e.Unit {
	case "bytes":
		return fmt.Sprintf("the %s is longer than the limit of %d bytes (%d MiB)", e.What, e.Limit, e.Limit>>20)
	case "blocks":
		return fmt.Sprintf("%s: %d so far, over the limit of %d", e.What, e.Got, e.Limit)
	}
	return fmt.Sprintf("%s %d is over the limit of %d %s", e.What, e.Got, e.Limit, e.Unit)
}

// checkTokens returns a *LimitError when n tokens are over
// MaxRequestTokens.
func checkTokens(what string, n int) *LimitError {
	if n > MaxRequestTokens {
		return &LimitError{What: what, Got: int64(n), Limit: MaxRequestTokens, Unit: "tokens"}
	}
	return nil
}

// tokensInput checks a token length read from file:line; the error is an
// *InputError wrapping a *LimitError.
func tokensInput(file string, line int, what string, n int) error {
	if le := checkTokens(what, n); le != nil {
		return &InputError{File: file, Line: line, Msg: le.Error(), Err: le}
	}
	return nil
}

// tokensOption checks a token length given as an option; the error is an
// *OptionError wrapping a *LimitError.
func tokensOption(option string, n int) error {
	if le := checkTokens("", n); le != nil {
		return &OptionError{Option: option, Reason: fmt.Sprintf("%d is over the limit of %d tokens", n, MaxRequestTokens), Err: le}
	}
	return nil
}

// tokensStddevOption is tokensOption for a standard deviation.
func tokensStddevOption(option string, v float64) error {
	if math.IsNaN(v) {
		return optionErrorf(option, "must be a number, got NaN")
	}
	if v > MaxRequestTokens {
		le := &LimitError{What: option, Got: int64(min(v, math.MaxInt64)), Limit: MaxRequestTokens, Unit: "tokens"}
		return &OptionError{Option: option, Reason: fmt.Sprintf("%g is over the limit of %d tokens", v, MaxRequestTokens), Err: le}
	}
	return nil
}

// boundedReader reads a dataset file: it fails once more than limit bytes
// were read, and as soon as ctx is done, so that neither an endless input
// nor a reader that is never cancelled keeps the load going.
type boundedReader struct {
	ctx   context.Context
	r     io.Reader
	n     int64
	limit int64
	// utf8, when set, refuses bytes that are not UTF-8 (by file:line).
	utf8 *utf8Check
}

func newBoundedReader(ctx context.Context, r io.Reader) *boundedReader {
	return &boundedReader{ctx: ctx, r: r, limit: MaxFileBytes}
}

// Read reads from the file, up to one byte past the limit (which is an
// error: the file is longer than the limit).
func (b *boundedReader) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	if b.n > b.limit {
		return 0, &LimitError{What: "file", Got: b.n, Limit: b.limit, Unit: "bytes"}
	}
	if room := b.limit + 1 - b.n; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.r.Read(p)
	if err != nil && b.ctx.Err() != nil {
		return n, b.ctx.Err() // the read failed because ctx closed the file
	}
	b.n += int64(n)
	if b.n > b.limit {
		return n, &LimitError{What: "file", Got: b.n, Limit: b.limit, Unit: "bytes"}
	}
	if b.utf8 != nil {
		if uerr := b.utf8.scan(p[:n]); uerr != nil {
			return 0, uerr
		}
		if errors.Is(err, io.EOF) {
			if uerr := b.utf8.end(); uerr != nil {
				return 0, uerr
			}
		}
	}
	return n, err
}

// openInput opens one input file for reading through a boundedReader
// (refusing bytes that are not UTF-8 unless o allows them); a read blocked
// on it ends when ctx is done. closeFile closes it.
func openInput(ctx context.Context, file string, o Options) (r *boundedReader, closeFile func(), err error) {
	f, err := bounded.OpenStream(ctx, file)
	if err != nil {
		return nil, nil, openError(ctx, file, err)
	}
	stop := context.AfterFunc(ctx, func() { f.Close() })
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > MaxFileBytes {
		stop()
		f.Close()
		le := &LimitError{What: "file", Got: st.Size(), Limit: MaxFileBytes, Unit: "bytes"}
		return nil, nil, &InputError{File: file, Msg: le.Error(), Err: le}
	}
	r = newBoundedReader(ctx, f)
	if !o.AllowInvalidUTF8 {
		r.checkUTF8(file)
	}
	return r, func() { stop(); f.Close() }, nil
}

// openError is a failed open of an input file: a cancellation as itself
// (a FIFO whose writer had not come), else an *InputError naming it.
func openError(ctx context.Context, file string, err error) error {
	if ctx.Err() != nil {
		return err
	}
	return &InputError{File: file, Msg: fmt.Sprintf("cannot read the input file: %v", err), Err: err}
}

// checkUTF8 makes b refuse bytes that are not UTF-8, naming file:line.
func (b *boundedReader) checkUTF8(file string) *boundedReader {
	b.utf8 = &utf8Check{file: file}
	return b
}

// readError turns an error reading file at line into the error Load
// returns: a cancellation as itself (wrapped, so errors.Is finds it), a
// limit or a read fault as an *InputError naming the line.
func readError(file string, line int, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: reading stopped at line %d: %w", file, line, err)
	}
	var le *LimitError
	if errors.As(err, &le) {
		return &InputError{File: file, Line: line, Msg: le.Error(), Err: le}
	}
	var ie *InputError
	if errors.As(err, &ie) {
		return ie // it says where (invalid UTF-8)
	}
	return &InputError{File: file, Line: line, Msg: fmt.Sprintf("read: %v", err), Err: err}
}

// every is how many rows or prompts a build loop makes between looks at
// its context: a look costs tens of nanoseconds, a row microseconds (a
// millisecond or more under the race detector), so 32 keeps an interrupt
// within milliseconds at any row size.
const every = 32

// canceled returns ctx's error every every'th i (nil otherwise), wrapped
// with what was being built.
func canceled(ctx context.Context, i int, what string) error {
	if i%every != 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
