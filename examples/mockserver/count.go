package mockserver

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// Tokenizer counts a text's tokens: surge's embedded Qwen3
// (datasets/tokenizer) does, so the mock's usage counts what surge built.
type Tokenizer interface {
	Count(text string) int
}

// counter counts a prompt's tokens: with the Tokenizer when there is one,
// else its whitespace-separated words. A benchmark sends the same prompts
// again and again, so the tokenizer's counts are kept by the text's hash
// (at most memoMax at once): one count costs a hash, not a tokenization.
type counter struct {
	tok  Tokenizer // nil: words
	seed maphash.Seed
	memo sync.Map // uint64 (the text's hash) → int
	n    atomic.Int64
}

// memoMax bounds the counts kept; past it they are dropped and counted anew.
const memoMax = 4096

// words is the counter of a mock without a tokenizer.
var words = &counter{}

func newCounter(tok Tokenizer) *counter {
	if tok == nil {
		return words
	}
	return &counter{tok: tok, seed: maphash.MakeSeed()}
}

// count is the tokens (or words) of s.
func (c *counter) count(s string) int {
	if c.tok == nil {
		return countWords(s)
	}
	h := maphash.String(c.seed, s)
	if v, ok := c.memo.Load(h); ok {
		return v.(int)
	}
	n := c.tok.Count(s)
	if c.n.Add(1) > memoMax {
		c.memo.Clear()
		c.n.Store(1)
	}
	c.memo.Store(h, n)
	return n
}

// countWords counts whitespace-separated words without allocating.
func countWords(s string) int {
	n := 0
	in := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r', '\v', '\f':
			in = false
		default:
			if !in {
				n++
				in = true
			}
		}
	}
	return n
}
