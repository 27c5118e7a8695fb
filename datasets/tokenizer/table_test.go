package tokenizer

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// smallTokenizer is a hand-made tokenizer.json's tokenizer: the byte
// alphabet, four merges, NFC and two non-special added tokens (one matched
// in raw text, one in normalized text, with lstrip and single_word).
func smallTokenizer(t testing.TB) *Tokenizer {
	t.Helper()
	var vocab []string
	for b := range 256 {
		vocab = append(vocab, fmt.Sprintf("%q: %d", string(byteToRune[b]), b))
	}
	vocab = append(vocab, `"ab": 256`, `"abc": 257`, `"bc": 258`, `"Ġab": 259`)
	file := fmt.Sprintf(`{"normalizer": {"type": "NFC"},
"added_tokens": [{"id": 260, "content": "<think>", "normalized": false},
  {"id": 261, "content": "tool", "normalized": true, "lstrip": true, "single_word": true},
  {"id": 262, "content": "<|end|>", "special": true}],
"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
"decoder": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {%s}, "merges": [["a","b"], ["ab","c"], ["Ġ","ab"], ["b","c"]]}}`,
		strings.Join(vocab, ", "))
	tok, err := parse([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// tableOf is t written as a table.
func tableOf(t testing.TB, tok *Tokenizer) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := tok.writeTable(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestTableRoundTrip: a tokenizer read from its table is the tokenizer
// that wrote it and encodes alike.
func TestTableRoundTrip(t *testing.T) {
	t.Parallel()
	want := smallTokenizer(t)
	got, err := readTable(tableOf(t, want))
	if err != nil {
		t.Fatal(err)
	}
	if diff := tokenizerDiff(want, got); diff != "" {
		t.Fatalf("read back (-wrote +read):\n%s", diff)
	}
	for _, s := range []string{"abc ab abd", "x<think>y tool abc", "café <|end|>"} {
		if w, g := want.Encode(s), got.Encode(s); !cmp.Equal(w, g) {
			t.Errorf("Encode(%q): wrote %v, read %v", s, w, g)
		}
	}
	if want.Digest() != got.Digest() {
		t.Error("digests differ")
	}
}

// TestEmbeddedTableInPlace: the embedded tokenizer's arrays are the
// table's own bytes, not copies of them.
func TestEmbeddedTableInPlace(t *testing.T) {
	t.Parallel()
	tok := qwen3(t)
	within := func(name string, p []byte) {
		if len(p) == 0 || !overlaps(p, qwen3Table) {
			t.Errorf("%s is not a slice of the embedded table", name)
		}
	}
	within("text", tok.text)
	within("offs", tok.offs)
	within("known", tok.known)
	within("pair slots", tok.pairs.slots)
}

// overlaps reports whether p lies inside whole.
func overlaps(p, whole []byte) bool {
	for i := range whole {
		if &whole[i] == &p[0] {
			return i+len(p) <= len(whole)
		}
	}
	return false
}

// TestReadTableRefusesUnsafe: tables that would make a lookup run out of
// bounds or forever are refused, whatever the writer put in them.
func TestReadTableRefusesUnsafe(t *testing.T) {
	t.Parallel()
	used := func(p *pairTable) []byte { // the first merge's slot
		for i := 0; i < len(p.slots); i += slotSize {
			if binary.LittleEndian.Uint64(p.slots[i:]) != emptyKey {
				return p.slots[i : i+slotSize]
			}
		}
		t.Fatal("no merge in the table")
		return nil
	}
	for _, tc := range []struct {
		name  string
		spoil func(tok *Tokenizer)
	}{
		{"merged id out of range", func(tok *Tokenizer) {
			binary.LittleEndian.PutUint32(used(tok.pairs)[8:], uint32(tok.VocabSize()))
		}},
		{"rank out of range", func(tok *Tokenizer) {
			binary.LittleEndian.PutUint32(used(tok.pairs)[12:], uint32(noRank))
		}},
		{"no free slot", func(tok *Tokenizer) {
			for i := 0; i < len(tok.pairs.slots); i += slotSize {
				binary.LittleEndian.PutUint64(tok.pairs.slots[i:], pairKey(1, int32(i)))
			}
		}},
		{"slot count not a power of two", func(tok *Tokenizer) {
			tok.pairs = pairTableOf(bytes.Repeat([]byte{0xff}, 3*slotSize))
		}},
		{"offsets decrease", func(tok *Tokenizer) {
			binary.LittleEndian.PutUint32(tok.offs[4*100:], tok.off(102))
		}},
		{"first offset not 0", func(tok *Tokenizer) {
			binary.LittleEndian.PutUint32(tok.offs, 1)
		}},
	} {
		tok := smallTokenizer(t)
		tc.spoil(tok)
		if _, err := readTable(tableOf(t, tok)); err == nil {
			t.Errorf("%s: readTable accepted it", tc.name)
		}
	}
	raw := tableOf(t, smallTokenizer(t))
	if _, err := readTable(raw); err != nil {
		t.Fatalf("the unspoiled table: %v", err)
	}
	// Every cut and every flipped byte is refused or read without harm.
	for i := range raw {
		if tok, err := readTable(raw[:i]); err == nil {
			t.Fatalf("cut at %d: read as %d ids", i, tok.VocabSize())
		}
		spoiled := bytes.Clone(raw)
		spoiled[i] ^= 0x5a
		if tok, err := readTable(spoiled); err == nil {
			useTable(tok)
		}
	}
}

// useTable encodes and decodes with tok: none of it may panic or hang.
func useTable(tok *Tokenizer) {
	tok.cache.off = true // a cache's maps per table: most of the time
	for _, s := range []string{"abc ab abd", "x<think>y tool abc", "café <|end|>", strings.Repeat("ab", 40)} {
		ids := tok.Encode(s)
		tok.Count(s)
		tok.Decode(ids)
	}
	all := make([]int, tok.VocabSize()+2)
	for i := range all {
		all[i] = i - 1
	}
	tok.Decode(all)
	tok.Digest()
}

// FuzzReadTable: readTable refuses a malformed table with an error, and
// what it accepts encodes and decodes without panicking.
func FuzzReadTable(f *testing.F) {
	raw := tableOf(f, smallTokenizer(f))
	f.Add(raw)
	f.Add(raw[:len(raw)/2])
	f.Add([]byte(tableMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		if tok, err := readTable(data); err == nil {
			useTable(tok)
		}
	})
}
