// Package tokenizer is a pure-Go reader of Hugging Face tokenizer.json files
// for byte-level BPE models (Qwen2/3, Llama 3, GPT-2 style), used to count
// input and output sequence lengths the way the server's own tokenizer does.
//
// Encode follows the Rust tokenizers library step by step: split the text on
// non-special added tokens, normalize (NFC where the file asks for it),
// pre-tokenize with the file's Split pattern (a hand-written scanner; see
// pretokenize.go), map bytes through the GPT-2 byte alphabet and apply the
// BPE merges lowest rank first. Reference ids from an independent
// implementation are checked in testdata/.
//
// Choices, because surge counts what was sent and received as plain text:
//   - No special tokens are added (no BOS, no chat template), and special
//     added tokens (<|im_end|>, <|begin_of_text|>, ...) are NOT recognised
//     in text: "<|im_end|>" in a prompt is encoded as the characters it is
//     made of. Non-special added tokens (Qwen's <think>, <tool_call>) are
//     matched, as the server's tokenizer matches them.
//   - The post_processor is ignored (it only adds special tokens).
//   - Decode returns the raw bytes of the tokens, which may be invalid UTF-8
//     when ids split a character (Hugging Face would write U+FFFD), so that
//     Decode(Encode(s)) == s for every s the normalizer leaves unchanged.
package tokenizer

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Tokenizer encodes text to token ids and back. It is immutable after Load
// and safe for concurrent use by any number of goroutines.
type Tokenizer struct {
	name         string
	pattern      string // the pre-tokenizer's split pattern
	split        splitter
	nfc          bool
	ignoreMerges bool
	byteID       [256]int32
	pairs        *pairTable
	whole        map[string]int32 // raw bytes → id, for ignore_merges
	added        *addedMatcher    // non-special added tokens, raw text
	addedNorm    *addedMatcher    // non-special added tokens, normalized text
	// The vocabulary, in the embedded tokenizer's table layout (they are
	// slices of it there; see table.go): known has bit id%8 of byte id/8
	// set when id is in the vocab or added_tokens; text holds the raw
	// bytes of every id, concatenated; offs is VocabSize+1 little-endian
	// uint32s, id's bytes being text[off(id):off(id+1)].
	known  []byte
	text   []byte
	offs   []byte
	cache  pieceCache
	digest *[32]byte // Digest when precomputed (the embedded tokenizer's), or nil
}

// Name says which tokenizer this is: the folder it was loaded from, or
// "qwen3 (embedded)" for Default.
func (t *Tokenizer) Name() string { return t.name }

// VocabSize is the number of ids, added tokens included (the largest id + 1).
func (t *Tokenizer) VocabSize() int { return len(t.offs)/4 - 1 }

// off returns offs[i].
func (t *Tokenizer) off(i int) uint32 { return binary.LittleEndian.Uint32(t.offs[4*i:]) }

// bytesOf returns the raw bytes of id, which must be < VocabSize.
func (t *Tokenizer) bytesOf(id int) []byte { return t.text[t.off(id):t.off(id+1)] }

// scratch is the per-call working memory, pooled so that Count allocates
// nothing in steady state.
type scratch struct {
	ids   []int32
	syms  []int32
	ranks []int32
	list  []symbol    // mergeLarge's linked list
	heap  []candidate // mergeLarge's queue
	// counting is set by Count: the ids need not be kept, so encodePlain
	// moves them into counted a batch at a time and the memory of counting
	// a text does not grow with it.
	counting bool
	counted  int
}

var scratchPool = sync.Pool{New: func() any { return &scratch{ids: make([]int32, 0, 256)} }}

// Encode returns the token ids of text, without special tokens.
func (t *Tokenizer) Encode(text string) []int {
	sc := scratchPool.Get().(*scratch)
	sc.ids = t.encode(text, sc.ids[:0], sc)
	out := make([]int, len(sc.ids))
	for i, id := range sc.ids {
		out[i] = int(id)
	}
	scratchPool.Put(sc)
	return out
}

// Count returns len(t.Encode(text)) without building the result.
func (t *Tokenizer) Count(text string) int {
	sc := scratchPool.Get().(*scratch)
	sc.counting, sc.counted = true, 0
	sc.ids = t.encode(text, sc.ids[:0], sc)
	n := sc.counted + len(sc.ids)
	sc.counting, sc.counted = false, 0
	if cap(sc.ids) > 1<<16 {
		sc.ids = nil // do not pin the memory of one huge text
	}
	scratchPool.Put(sc)
	return n
}

// Decode returns the text of ids: the bytes of each token, concatenated.
// Ids outside the vocabulary are skipped.
func (t *Tokenizer) Decode(ids []int) string {
	n := 0
	for _, id := range ids {
		if t.valid(id) {
			n += len(t.bytesOf(id))
		}
	}
	b := make([]byte, 0, n)
	for _, id := range ids {
		if t.valid(id) {
			b = append(b, t.bytesOf(id)...)
		}
	}
	return string(b)
}

// Digest identifies the tokenizer for a run's fingerprint: a SHA-256 of
// its vocabulary (every id's bytes, in id order, and which ids exist) and
// its normalization. The same tokenizer digests alike however its file is
// formatted or compressed (the embedded Qwen3 and Qwen3's own
// tokenizer.json do); the merges are left out, as a byte-level BPE's
// vocabulary already names its model.
//
// The embedded tokenizer's is precomputed (defaultDigestHex): hashing its
// vocabulary again took ≈ 4 % of the CPU of a two-request surge run.
func (t *Tokenizer) Digest() [32]byte {
	if t.digest != nil {
		return *t.digest
	}
	return t.hashVocab()
}

// hashVocab computes Digest.
func (t *Tokenizer) hashVocab() [32]byte {
	h := sha256.New()
	var buf [4]byte
	binary.LittleEndian.PutUint32(buf[:], uint32(len(t.offs)/4))
	h.Write(buf[:])
	h.Write(t.offs) // each offset, little-endian
	n := t.VocabSize()
	known := make([]byte, n) // one byte an id: 1 known, 0 not
	for id := range n {
		if t.valid(id) {
			known[id] = 1
		}
	}
	h.Write(known)
	fmt.Fprintf(h, "nfc=%t ignore_merges=%t\n", t.nfc, t.ignoreMerges)
	h.Write(t.text)
	var d [32]byte
	h.Sum(d[:0])
	return d
}

func (t *Tokenizer) valid(id int) bool {
	return id >= 0 && id < t.VocabSize() && t.known[id/8]&(1<<(id%8)) != 0
}

// encode appends the ids of text to out.
func (t *Tokenizer) encode(text string, out []int32, sc *scratch) []int32 {
	return t.added.split(t, text, out, sc, (*Tokenizer).encodeSegment)
}

// encodeSegment encodes text that holds no raw added token.
func (t *Tokenizer) encodeSegment(s string, out []int32, sc *scratch) []int32 {
	if s == "" {
		return out
	}
	if t.nfc && !isASCII(s) && !norm.NFC.IsNormalString(s) {
		s = norm.NFC.String(s)
	}
	return t.addedNorm.split(t, s, out, sc, (*Tokenizer).encodePlain)
}

// encodePlain pre-tokenizes s and encodes each piece.
func (t *Tokenizer) encodePlain(s string, out []int32, sc *scratch) []int32 {
	for i := 0; i < len(s); {
		j := t.split(s, i)
		out = t.encodePiece(s[i:j], out, sc)
		i = j
		out = sc.flush(out)
	}
	return out
}

// flush, when counting, counts the ids in out and empties it.
func (sc *scratch) flush(out []int32) []int32 {
	if sc.counting && len(out) >= countBatch {
		sc.counted += len(out)
		return out[:0]
	}
	return out
}

// countBatch is how many ids Count holds before it counts them.
const countBatch = 4096

// A pre-token longer than longWindow bytes (a run of one letter, a wall of
// '=', a blob without digits or spaces; never ordinary text, whose longest
// pre-tokens are a few dozen bytes) is merged a window at a time, so the
// work and memory of one piece stay bounded whatever its length: the
// window's ids that end more than longMargin bytes before its end are
// kept, and the next window starts where they end. The kept ids are the
// whole piece's unless a merge's outcome depends on bytes more than
// longMargin ahead, which BPE's local merges do not do in practice (the
// tests compare windowed and whole merges of long runs of every kind);
// tokenizers that merge such a piece whole need memory and time far beyond
// its size (90 bytes a byte here before this bound).
const (
	longWindow = 16 << 10
	longMargin = 1 << 10
)

// encodePiece runs BPE on one pre-token.
func (t *Tokenizer) encodePiece(p string, out []int32, sc *scratch) []int32 {
	if len(p) == 1 {
		return append(out, t.byteID[p[0]])
	}
	if t.whole != nil {
		if id, ok := t.whole[p]; ok {
			return append(out, id)
		}
	}
	if ids, ok := t.cache.get(p); ok {
		return append(out, ids...)
	}
	if len(p) > longWindow {
		return t.encodeLong(p, longWindow, longMargin, out, sc)
	}
	syms := t.merge(p, sc)
	if len(p) <= smallPiece {
		t.cache.put(p, syms)
	}
	return append(out, syms...)
}

// merge runs BPE on the bytes of p; the result lives in sc.syms.
func (t *Tokenizer) merge(p string, sc *scratch) []int32 {
	syms := sc.syms[:0]
	for i := 0; i < len(p); i++ {
		syms = append(syms, t.byteID[p[i]])
	}
	if len(p) <= smallPiece {
		if cap(sc.ranks) < len(syms) {
			sc.ranks = make([]int32, smallPiece)
		}
		syms = t.pairs.mergeSmall(syms, sc.ranks)
	} else {
		syms = t.pairs.mergeLarge(syms, sc)
	}
	sc.syms = syms
	return syms
}

// encodeLong encodes a pre-token longer than window a window at a time
// (see longWindow); margin is how far from a window's end its ids are
// dropped and merged again with the next window.
//
// A window equal to the one before (a run of one letter, any text that
// repeats in step with the windows: a model stuck in a loop) takes the
// ids kept from that one instead of merging again.
func (t *Tokenizer) encodeLong(p string, window, margin int, out []int32, sc *scratch) []int32 {
	var last string // the window before
	var lastIDs []int32
	lastEnd := 0
	for len(p) > window {
		if p[:window] == last {
			out = sc.flush(append(out, lastIDs...))
			p = p[lastEnd:]
			continue
		}
		ids := t.merge(p[:window], sc)
		n, end := 0, 0
		for ; n < len(ids); n++ {
			l := len(t.bytesOf(int(ids[n])))
			if end+l > window-margin && n > 0 {
				break
			}
			end += l
		}
		out = sc.flush(append(out, ids[:n]...))
		last, lastIDs, lastEnd = p[:window], append(lastIDs[:0], ids[:n]...), end
		p = p[end:]
	}
	return append(out, t.merge(p, sc)...)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
