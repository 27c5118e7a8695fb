package fingerprint

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"io"
	"iter"
)

// A dataset's fingerprint in bounded time. Dataset hashes every request
// body it is given, which for a trace of long prompts meant spelling out
// and hashing gigabytes before the run could end (and a dataset built on
// demand has no end to hash). Sample hashes the number of items and at
// most SampleItems of them, spread evenly over the dataset, each item at
// most SampleItemBytes: what the caller builds for it should be the
// item's facts (lengths, caps, timing) and the start of its content
// (datasets.Turn.ContentPrefix).
const (
	SampleItems     = 4096
	SampleItemBytes = 64 << 10
)

// Sample is the bounded hash of a dataset of n items, numbered 0 to n−1
// in an order that does not change between runs of the same workload (the
// dataset's own). The zero value is not ready: NewSample.
type Sample struct {
	n, step int64
	set     Dataset
}

// NewSample prepares the hash of n items.
func NewSample(n int64) *Sample {
	return &Sample{n: n, step: max((n+SampleItems-1)/SampleItems, 1)}
}

// Take reports whether item i is in the sample: only those need to be
// built and given to Add.
func (s *Sample) Take(i int64) bool { return i >= 0 && i < s.n && i%s.step == 0 }

// Taken are the items of the sample in order: a dataset of any size is
// sampled in at most SampleItems steps.
func (s *Sample) Taken() iter.Seq[int64] {
	return func(yield func(int64) bool) {
		for i := int64(0); i < s.n; i += s.step {
			if !yield(i) {
				return
			}
		}
	}
}

// Add hashes item i (one Take chose), named by its session and turn, of
// which item holds what the caller hashes; past SampleItemBytes it is cut.
// An item Take did not choose is left out.
func (s *Sample) Add(i int64, session string, turn int, item []byte) {
	if !s.Take(i) {
		return
	}
	s.set.Add(session, turn, item[:min(len(item), SampleItemBytes)])
}

// Sum is the hash of the number of items and of the sampled ones (a set:
// the order they were added in does not matter); "" for no items.
func (s *Sample) Sum() string {
	if s.n == 0 {
		return ""
	}
	h := sha256.New()
	h.Write([]byte("sample\x00"))
	h.Write(binary.AppendVarint(nil, s.n))
	h.Write([]byte(s.set.Sum()))
	return short(h.Sum(nil))
}

// Len is how many items were hashed (at most SampleItems).
func (s *Sample) Len() int { return s.set.Len() }

// ReadInputsContext is ReadInputs that stops soon after ctx is done (a
// large file is read session by session).
func ReadInputsContext(ctx context.Context, r io.Reader, d *Dataset) error {
	return ReadInputs(ctxReader{ctx, r}, d)
}

// EachSessionContext is EachSession that stops soon after ctx is done.
func EachSessionContext(ctx context.Context, r io.Reader, f func(json.RawMessage) error) error {
	return EachSession(ctxReader{ctx, r}, f)
}

// ctxReader fails its reads once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
