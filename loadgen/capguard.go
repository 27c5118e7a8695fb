package loadgen

import (
	"fmt"
	"net/http"

	"github.com/surgebench/surge/metrics"
)

// CapGuardFactor is how many times its output cap a streamed response may
// run before the cap guard ends it: servers count a closing token or two
// differently, and a reasoning model's thinking may not count toward the
// cap, but a server that ignores the cap's field streams until its own
// limit or the request timeout (minutes of a slot, for nothing).
const CapGuardFactor = 4

// ErrOverCap is the error type of a request the cap guard ended.
const ErrOverCap = "output_cap_exceeded"

// WithoutCapGuard lets a streamed response run past CapGuardFactor × its
// output cap, to the server's own limit or the request timeout.
func WithoutCapGuard() Option { return func(g *Generator) { g.noCapGuard = true } }

// chunkUsage counts what a text chunk's usage says about it, when the
// server reports usage on every chunk (vLLM's continuous usage stats): the
// running completion_tokens grows by the chunk's own tokens. last is the
// running count before this chunk. It returns the chunk's tokens (1 when
// its usage does not say).
func chunkUsage(rec *metrics.Record, last *int, u *metrics.Usage) int {
	if !u.Present || !u.Has(metrics.UsageCompletionField) || u.CompletionTokens < *last {
		return 1
	}
	n := u.CompletionTokens - *last
	*last = u.CompletionTokens
	rec.UsageChunks++
	if len(rec.TokenNs) == 1 {
		rec.FirstChunkTokens = n
	}
	if n > 1 {
		rec.MultiTokenChunks++
	}
	return max(n, 1)
}

// overCap reports whether the cap guard ends rec's response now: it has
// more than CapGuardFactor × its cap in text events, or in tokens by the
// per-chunk usage. The record then carries the guard's error.
func (g *Generator) overCap(rec *metrics.Record, usageTokens int) bool {
	limit := rec.RequestedOSL
	got := max(len(rec.TokenNs), usageTokens)
	if g.noCapGuard || limit <= 0 || got <= CapGuardFactor*limit {
		return false
	}
	g.overrun(rec, got, "tokens, and the cap guard ended it")
	rec.Err = &metrics.Error{Code: http.StatusOK, Type: ErrOverCap, Message: fmt.Sprintf(
		"the response ran past %d× its output cap (%d tokens for a cap of %d): ended by the cap guard instead of running to the request timeout",
		CapGuardFactor, got, limit)}
	return true
}
