package tokenizer

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// longPieces are single pre-tokens far longer than longWindow, of every
// kind a pre-tokenizer leaves whole: letters (one, two, a few, many,
// non-Latin), spaces and symbols.
func longPieces(size int) map[string]string {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(alphabet []string) string {
		var b strings.Builder
		for b.Len() < size {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	letters := strings.Split("abcdefghijklmnopqrstuvwxyz", "")
	return map[string]string{
		"one letter":       strings.Repeat("a", size),
		"two letters":      strings.Repeat("ab", size/2),
		"syllables":        strings.Repeat("tokenization", size/12),
		"random ab":        random([]string{"a", "b"}),
		"random lowercase": random(letters),
		"random mixed":     random(append(letters, "E", "T", "Q", "é", "ß")),
		"han":              random(strings.Split("的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年", "")),
		"spaces":           strings.Repeat(" ", size),
		"equals":           strings.Repeat("=", size),
		"random symbols":   random(strings.Split("=-_*#~+<>/|.", "")),
	}
}

// TestLongPieceWindows: merging a long pre-token a window at a time gives
// the ids of merging it whole, with the real margin and a window small
// enough to cut each piece many times (and, through Encode, the real one).
func TestLongPieceWindows(t *testing.T) {
	t.Parallel()
	for _, tk := range []struct {
		name string
		tok  func(testing.TB) *Tokenizer
	}{{"qwen3", qwen3}, {"llama3", llama3}} {
		t.Run(tk.name, func(t *testing.T) {
			tok := tk.tok(t)
			for name, p := range longPieces(3*longWindow + 777) {
				if j := tok.split(p, 0); j != len(p) {
					t.Fatalf("%s: not one pre-token (first ends at %d of %d)", name, j, len(p))
				}
				whole := slices.Clone(tok.merge(p, &scratch{}))
				for _, window := range []int{2 * longMargin, 3 * longMargin, longWindow} {
					got := tok.encodeLong(p, window, longMargin, nil, &scratch{})
					if !slices.Equal(got, whole) {
						i := 0
						for i < min(len(got), len(whole)) && got[i] == whole[i] {
							i++
						}
						t.Errorf("%s, window %d: %d ids, whole merge %d; first difference at id %d", name, window, len(got), len(whole), i)
					}
				}
				ids := tok.Encode(p)
				if len(ids) != len(whole) {
					t.Errorf("%s: Encode gives %d ids, whole merge %d", name, len(ids), len(whole))
				}
				if n := tok.Count(p); n != len(whole) {
					t.Errorf("%s: Count = %d, whole merge %d ids", name, n, len(whole))
				}
				if tok.Decode(ids) != p {
					t.Errorf("%s: Decode(Encode(p)) != p", name)
				}
			}
		})
	}
}

// TestLongWordMemory: counting one 4 MiB word of a single letter allocates
// a bounded scratch, not a multiple of the word (90 bytes a byte before
// long pre-tokens were merged in windows), and encoding it allocates little
// beyond its ids.
func TestLongWordMemory(t *testing.T) {
	tok := qwen3(t)
	const size = 4 << 20
	word := strings.Repeat("a", size)
	allocated := func(f func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	var n int
	if got := allocated(func() { n = tok.Count(word) }); got > 2<<20 {
		t.Errorf("Count of a %d-byte word allocated %d bytes (%.2f a byte), want ≤ 2 MiB", size, got, float64(got)/size)
	}
	if n < size/16 || n > size/2 {
		t.Errorf("Count = %d tokens for %d letters", n, size)
	}
	var ids []int
	got := allocated(func() { ids = tok.Encode(word) })
	// The result (8 bytes an id) and the ids as append grows them (4 bytes
	// an id, 1.25× a step for large slices: ~20 bytes an id in all).
	if limit := uint64(32*len(ids)) + 2<<20; got > limit {
		t.Errorf("Encode of a %d-byte word allocated %d bytes for %d ids, want ≤ %d", size, got, len(ids), limit)
	}
	if len(ids) != n {
		t.Errorf("Encode gives %d ids, Count %d", len(ids), n)
	}
}

// FuzzLongPiece repeats the input into one long pre-token and merges it in
// windows cut every longMargin bytes: the windows must give the text back
// byte for byte and the ids of merging it whole.
func FuzzLongPiece(f *testing.F) {
	for _, s := range []string{"a", "ab", "tokenization", "=", " ", "é", "的一是", "\xff"} {
		f.Add(s)
	}
	tok := qwen3(f)
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" {
			return
		}
		p := strings.Repeat(s, 3*longMargin/len(s)+1)
		p = p[:tok.split(p, 0)] // its first pre-token
		got := tok.encodeLong(p, 2*longMargin, longMargin, nil, &scratch{})
		ids := make([]int, len(got))
		for i, id := range got {
			ids[i] = int(id)
		}
		if tok.Decode(ids) != p {
			t.Fatalf("%q×%d: the windows' ids do not spell the piece", s, len(p)/len(s))
		}
		if whole := tok.merge(p, &scratch{}); !slices.Equal(got, whole) {
			t.Fatalf("%q (%d bytes): windows give %d ids, the whole merge %d", s, len(p), len(got), len(whole))
		}
	})
}
