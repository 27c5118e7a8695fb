package loadgen

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/surgebench/surge/metrics"
)

// ErrResponseTooLarge is the error type of a response that ran past the
// per-response byte limit.
const ErrResponseTooLarge = "response_too_large"

// DefaultMaxResponseBytes bounds one response's body: generous for any
// answer a model gives (a 64 MiB stream is ~10 M tokens of SSE), small
// enough that a server streaming without end cannot take the machine.
const DefaultMaxResponseBytes = 64 << 20

// WithMaxResponseBytes bounds each response's body to n bytes (default
// DefaultMaxResponseBytes; n <= 0 keeps the default): a response running
// past it ends as an error record.
func WithMaxResponseBytes(n int64) Option {
	return func(g *Generator) {
		if n > 0 {
			g.maxResponse = n
		}
	}
}

// tooLarge is the error a body's read returns past the limit.
type tooLarge struct{ limit int64 }

func (e *tooLarge) Error() string {
	return fmt.Sprintf("response larger than the limit of %s (max response bytes)", byteSize(e.limit))
}

// byteSize writes n in the largest binary unit that divides it.
func byteSize(n int64) string {
	for _, u := range []struct {
		s    string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.s)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// limit trims a read so that the body never passes the limit by more
// than the one byte that proves it did.
func (b *stampedBody) limit(p []byte) []byte {
	if b.max > 0 {
		if room := b.max - b.total + 1; int64(len(p)) > room {
			return p[:room]
		}
	}
	return p
}

// shortBody is the error a body's read returns when the connection
// closed before the body reached the length its Content-Length declared
// (net/http says only io.ErrUnexpectedEOF, which a stream cut inside an
// event also becomes).
type shortBody struct{ got, want int64 }

func (e *shortBody) Error() string {
	return fmt.Sprintf("connection closed before the Content-Length was reached (%d of %d bytes)", e.got, e.want)
}

func (e *shortBody) Unwrap() error { return io.ErrUnexpectedEOF }

// tooLargeError is the record's error for a body past its limit, or nil.
func tooLargeError(err error) *metrics.Error {
	var tl *tooLarge
	if !errors.As(err, &tl) {
		return nil
	}
	return &metrics.Error{Code: http.StatusOK, Type: ErrResponseTooLarge, Message: tl.Error()}
}
