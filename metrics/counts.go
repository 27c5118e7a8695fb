package metrics

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// Counting says where token counts come from when a tokenizer is loaded
// and the server also reports usage. The zero value is the default: a
// response's own usage.completion_tokens gives its OSL (and so its ITL and
// per-user throughput), the tokenizer counts only what usage leaves out.
// The server knows what it generated; re-tokenizing the streamed text is
// not an identity for BPE vocabularies (a detokenized sequence can merge
// into fewer or more tokens) and uses the client's tokenizer, which may not
// be the server's.
type Counting struct {
	// Retokenize counts the output with the tokenizer even when the
	// response carried the server's count (AIPerf's default). The OSL
	// mismatch check still compares the server's count with the cap.
	Retokenize bool
	// ServerInput takes ISL from usage.prompt_tokens when the response
	// carried it, rather than from the dataset's or the tokenizer's count
	// of what was sent (the server's count includes its chat template).
	ServerInput bool
}

// WithLiveWarning sees each caveat the collector finds itself while the
// run goes on (a prompt the server cut), once, from a shard goroutine; the
// snapshots and the summary carry it too.
func WithLiveWarning(f func(msg string)) Option { return func(c *Collector) { c.onWarn = f } }

// WithCounting sets where token counts come from (default: Counting{}).
func WithCounting(c Counting) Option { return func(col *Collector) { col.counting = c } }

// TruncationMargin is how many tokens fewer than surge sent the server may
// count in a prompt before the prompt counts as cut: a chat template only
// adds tokens, but the server's tokenizer may not be surge's (a quarter: a
// larger vocabulary counts fewer tokens), and a short prompt's count moves
// by a few tokens either way (8). llama.cpp's silent cut drops half a
// slot's context at a time, a third of the prompt or more, well past it.
func TruncationMargin(sent float64) float64 { return max(8, 0.25*sent) }

// sentLength is the prompt's length as surge counted what it sent (the
// dataset's count, else the tokenizer's), NaN when unknown.
func sentLength(r *Record, tok TokenCounter) float64 {
	if n, ok := chatLength(r, tok); ok {
		if n > 0 {
			return n
		}
		return math.NaN()
	}
	switch {
	case r.InputTokens > 0:
		return float64(r.InputTokens)
	case tok != nil && r.InputText != "":
		return float64(tok.Count(r.InputText))
	}
	return math.NaN()
}

// truncated reports whether the server counted fewer prompt tokens than
// surge sent, by more than TruncationMargin: it cut the prompt (llama.cpp
// does so silently when a prompt is longer than a slot's context).
func truncated(r *Record, tok TokenCounter) bool {
	if !r.Usage.Present || !r.Usage.Has(UsagePromptField) || r.NoOutput {
		return false
	}
	sent := sentLength(r, tok)
	return float64(r.Usage.PromptTokens) < sent-TruncationMargin(sent)
}

// countChecks is what the token-count checks found over a set of records:
// prompts the server cut, chunks that carried several tokens, where ISL
// came from.
type countChecks struct {
	// PromptChecked counts records whose prompt length both surge and the
	// server's usage gave; Truncated those the server cut, SentTruncated
	// and ServerTruncated the two counts' sums over them.
	PromptChecked   int64   `json:"prompt_checked,omitempty"`
	Truncated       int64   `json:"prompt_truncated,omitempty"`
	SentTruncated   float64 `json:"sent_truncated,omitempty"`
	ServerTruncated float64 `json:"server_truncated,omitempty"`
	// Chunks and ChunkTokens total the text chunks and OSL of streamed
	// records; MultiTokenRequests counts those with more tokens than
	// chunks.
	Chunks             int64   `json:"chunks,omitempty"`
	ChunkTokens        float64 `json:"chunk_tokens,omitempty"`
	MultiTokenRequests int64   `json:"multi_token_requests,omitempty"`
	// MultiTokenUTF8 counts those whose extra tokens fit in their text's
	// multi-byte characters: each could be a token the server held back
	// until the next one completed its character (heldBackBound).
	MultiTokenUTF8 int64 `json:"multi_token_utf8,omitempty"`
	// MultiTokenCounted counts those whose chunks the tokenizer counted one
	// by one: their first chunk's tokens are out of ITL already.
	MultiTokenCounted int64 `json:"multi_token_counted,omitempty"`
	// RetokChunks and RetokTokens total the chunks and OSL of the streamed
	// records whose OSL the tokenizer counted, RetokMulti those among
	// them with more tokens than chunks: re-tokenized text counts a few
	// tokens more or fewer than the server generated, so a few extra
	// tokens there are noise, not chunks of several tokens.
	RetokChunks int64   `json:"retok_chunks,omitempty"`
	RetokTokens float64 `json:"retok_tokens,omitempty"`
	RetokMulti  int64   `json:"retok_multi,omitempty"`
	// UsageChunks and MultiTokenChunks total Record's: chunks with
	// per-chunk usage, and those among them with several tokens.
	UsageChunks      int64 `json:"usage_chunks,omitempty"`
	MultiTokenChunks int64 `json:"multi_token_chunks,omitempty"`
	// InputSources counts records by where their ISL came from.
	InputSources map[string]int64 `json:"input_sources,omitempty"`
	// Batches is what the tokens-per-event checks found.
	Batches batchChecks `json:"batches"`
	// UsageIgnored counts the records whose usage was not believed, and
	// Distrust is the verdict (the first one seen).
	UsageIgnored int64          `json:"usage_ignored,omitempty"`
	Distrust     *UsageDistrust `json:"usage_distrust,omitempty"`
}

// add folds one successful record's values in.
func (k *countChecks) add(r *Record, v *Values, tok TokenCounter) {
	if v.InputSource != "" {
		if k.InputSources == nil {
			k.InputSources = map[string]int64{}
		}
		k.InputSources[v.InputSource]++
	}
	if r.Usage.Present && r.Usage.Has(UsagePromptField) && !r.NoOutput && (r.InputTokens > 0 || r.InputText != "" || r.Chat != nil) {
		k.PromptChecked++
	}
	if v.Truncated {
		k.Truncated++
		k.SentTruncated += sentLength(r, tok)
		k.ServerTruncated += float64(r.Usage.PromptTokens)
	}
	if r.Streamed && len(r.TokenNs) > 0 && !math.IsNaN(v.OSL) {
		k.Chunks += int64(len(r.TokenNs))
		k.ChunkTokens += v.OSL
		retok := v.Source == SourceTokenizer
		if retok {
			k.RetokChunks += int64(len(r.TokenNs))
			k.RetokTokens += v.OSL
		}
		if extra := v.OSL - float64(len(r.TokenNs)); extra > 0 {
			k.MultiTokenRequests++
			if retok {
				k.RetokMulti++
			}
			if extra <= float64(heldBackBound(r.Text)+heldBackBound(r.ReasoningText)) {
				k.MultiTokenUTF8++
			}
			if v.Events.Counted {
				k.MultiTokenCounted++
			}
		}
	}
	k.UsageChunks += int64(r.UsageChunks)
	k.MultiTokenChunks += int64(r.MultiTokenChunks)
	k.Batches.add(r, v)
	if v.Distrust != nil {
		k.UsageIgnored++
		if k.Distrust == nil {
			k.Distrust = v.Distrust
		}
	}
}

// valid checks counts read from outside: none negative or past maxCount.
func (k *countChecks) valid() error {
	counts := []int64{k.PromptChecked, k.Truncated, k.Chunks, k.MultiTokenRequests, k.MultiTokenUTF8, k.MultiTokenCounted, k.RetokChunks, k.RetokMulti, k.UsageChunks, k.MultiTokenChunks, k.UsageIgnored}
	for _, n := range k.InputSources {
		counts = append(counts, n)
	}
	for _, n := range counts {
		if n < 0 || n > maxCount {
			return fmt.Errorf("count checks: a count of %d", n)
		}
	}
	if d := k.Distrust; d != nil && d.Sign != SignOverCap && d.Sign != SignSameUsage && d.Sign != SignSamePrompt {
		return fmt.Errorf("count checks: an unknown usage sign %q", d.Sign)
	}
	return k.Batches.valid()
}

// merge folds o in.
func (k *countChecks) merge(o *countChecks) {
	k.PromptChecked += o.PromptChecked
	k.Truncated += o.Truncated
	k.SentTruncated += o.SentTruncated
	k.ServerTruncated += o.ServerTruncated
	k.Chunks += o.Chunks
	k.ChunkTokens += o.ChunkTokens
	k.RetokChunks += o.RetokChunks
	k.RetokTokens += o.RetokTokens
	k.RetokMulti += min(o.RetokMulti, o.MultiTokenRequests)
	k.MultiTokenRequests += o.MultiTokenRequests
	k.MultiTokenUTF8 += min(o.MultiTokenUTF8, o.MultiTokenRequests)
	k.MultiTokenCounted += min(o.MultiTokenCounted, o.MultiTokenRequests)
	k.UsageChunks += o.UsageChunks
	k.MultiTokenChunks += o.MultiTokenChunks
	k.Batches.merge(&o.Batches)
	k.UsageIgnored += o.UsageIgnored
	if k.Distrust == nil {
		k.Distrust = o.Distrust
	}
	for s, n := range o.InputSources {
		if k.InputSources == nil {
			k.InputSources = map[string]int64{}
		}
		k.InputSources[s] += n
	}
}

// inputSource names where ISL came from over the records: one source, or
// "mixed" (several, listed with their counts), "" when none.
func (k *countChecks) inputSource() string {
	switch len(k.InputSources) {
	case 0:
		return ""
	case 1:
		for s := range k.InputSources {
			return s
		}
	}
	var parts []string
	for _, s := range slices.Sorted(maps.Keys(k.InputSources)) {
		parts = append(parts, fmt.Sprintf("%s %d", s, k.InputSources[s]))
	}
	return "mixed (" + strings.Join(parts, ", ") + ")"
}

// TruncationWarning is the caveat for prompts the server cut: how many of
// the requests checked, both counts, the likely cause and which count the
// throughputs use.
func TruncationWarning(truncated, checked int64, sentAvg, serverAvg float64, inputSource string) string {
	uses := "surge's counts of what it sent"
	if inputSource == InputFromUsage {
		uses = "the server's counts"
	}
	return fmt.Sprintf("the server cut the prompt of %d of %d requests: it counted %.0f prompt tokens on average (usage.prompt_tokens) where surge sent %.0f; "+
		"the likely cause is the server's context length (per slot: llama.cpp divides its context among its parallel slots); ISL and the token throughputs use %s",
		truncated, checked, serverAvg, sentAvg, uses)
}

// retokNoise bounds re-tokenized OSL over the chunks that carried it
// where every chunk carried one token: the text of random tokens
// re-tokenizes to a few percent more (3% against distributed-llama).
const retokNoise = 1.10

// heldBackBound is how many tokens of s a server can have held back, each
// until the next completed a multi-byte UTF-8 character, and then sent
// with it in one chunk (llama.cpp's server sends only whole characters): a
// character of n bytes split over tokens hides at most n − 1 of them.
func heldBackBound(s string) int {
	n := 0
	for _, r := range s {
		if r >= utf8.RuneSelf {
			n += utf8.RuneLen(r) - 1
		}
	}
	return n
}

// chunkWarning says how many chunks carried more than one token, or, with
// no per-chunk usage to tell, how many requests had more tokens than
// chunks, and the likely cause ("" when none did): a token held back until
// the next completed a multi-byte character (llama.cpp's server does so)
// when the extra tokens fit in the text's multi-byte characters, else
// speculative decoding or batched sends.
func (k *countChecks) chunkWarning() string {
	const after = "ITL and per-user throughput are per token (the decode time over the tokens after the first chunk's), inter_chunk_latency per chunk"
	if k.UsageChunks > 0 {
		if k.MultiTokenChunks == 0 {
			return ""
		}
		return fmt.Sprintf("%d of %d chunks carried more than one token (by the server's per-chunk usage: speculative decoding, batched sends, or a token held back until the next completed a multi-byte character): %s",
			k.MultiTokenChunks, k.UsageChunks, after)
	}
	if k.MultiTokenRequests == 0 {
		return ""
	}
	if k.RetokMulti >= k.MultiTokenRequests && k.RetokTokens <= retokNoise*float64(k.RetokChunks) {
		// Every extra token is the tokenizer's: re-tokenizing the text
		// counted a few more than the chunks, as it does of text whose
		// chunks carried one token each (distributed-llama's).
		return ""
	}
	var cause string
	switch held := min(k.MultiTokenUTF8, k.MultiTokenRequests); {
	case held == k.MultiTokenRequests:
		cause = "their text has multi-byte characters, and a server that sends only whole characters (llama.cpp's) holds a token back until the next one completes its character, then sends both in one chunk"
	case held == 0:
		cause = "some chunks carried several tokens (speculative decoding or batched sends)"
	default:
		cause = fmt.Sprintf("in %d of them the extra tokens fit in their multi-byte characters (a token held back until the next completes its character, as llama.cpp's server does); the rest carried several tokens a chunk (speculative decoding or batched sends)", held)
	}
	first := "without per-chunk usage the first chunk counts as one token, so ITL may be a little short"
	if k.MultiTokenCounted >= k.MultiTokenRequests {
		first = "the tokenizer's count of each chunk leaves the first chunk's tokens out of ITL"
	}
	return fmt.Sprintf("%d requests had more tokens than chunks (%.0f tokens in %d chunks in all): %s; %s; %s",
		k.MultiTokenRequests, k.ChunkTokens, k.Chunks, cause, first, after)
}
