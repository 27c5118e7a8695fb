package tokenizer

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// A table is a tokenizer as built, not as written in tokenizer.json: the
// bytes of every id, the merges as id triples in rank order, the added
// tokens and the settings. Loading one costs no JSON parse, no vocabulary
// map and no merge lookup by string: the embedded Qwen3 loads from its
// table ≈ 20× faster than from its tokenizer.json (TestEmbeddedTable keeps
// the two the same tokenizer). It is not compressed: inflating it took
// twice as long as reading it.
//
// Layout (numbers are uvarints):
//
//	"surge-tokenizer 1\n"
//	flags (1: NFC)  pattern length, pattern
//	256 byte ids
//	id count, known bitmap ((count+7)/8 bytes), each id's byte length, the bytes
//	twice (added tokens matched in raw text, then in normalized text):
//	  count, each: id, content length, content, flags (1 lstrip, 2 rstrip, 4 single word)
//	merge count, each: rank − previous rank, left id, right id, merged id
const tableMagic = "surge-tokenizer 1\n"

// errTable reports a table that cannot be read.
var errTable = errors.New("tokenizer table: malformed")

// writeTable writes t as a table. A tokenizer with ignore_merges is not
// supported (its whole-token map needs the vocabulary apart from the
// added tokens).
func (t *Tokenizer) writeTable(w io.Writer) error {
	if t.ignoreMerges {
		return errors.New("tokenizer table: ignore_merges is not supported")
	}
	var b []byte
	u := func(v uint64) { b = binary.AppendUvarint(b, v) }
	b = append(b, tableMagic...)
	var flags uint64
	if t.nfc {
		flags |= 1
	}
	u(flags)
	u(uint64(len(t.pattern)))
	b = append(b, t.pattern...)
	for _, id := range t.byteID {
		u(uint64(id))
	}
	n := len(t.known)
	u(uint64(n))
	bits := make([]byte, (n+7)/8)
	for id, k := range t.known {
		if k {
			bits[id/8] |= 1 << (id % 8)
		}
	}
	b = append(b, bits...)
	for id := range n {
		u(uint64(t.offs[id+1] - t.offs[id]))
	}
	b = append(b, t.text...)
	for _, m := range []*addedMatcher{t.added, t.addedNorm} {
		var toks []addedToken
		if m != nil {
			for _, l := range m.byFirst {
				toks = append(toks, l...)
			}
		}
		u(uint64(len(toks)))
		for _, a := range toks {
			u(uint64(a.id))
			u(uint64(len(a.content)))
			b = append(b, a.content...)
			var f uint64
			for i, on := range []bool{a.lstrip, a.rstrip, a.singleWrd} {
				if on {
					f |= 1 << i
				}
			}
			u(f)
		}
	}
	// The merges, from the pair table, in rank order.
	type merge struct{ rank, a, b, merged int32 }
	var ms []merge
	for i, k := range t.pairs.keys {
		if k != emptyKey {
			v := t.pairs.vals[i]
			ms = append(ms, merge{int32(v >> 32), int32(k >> 32), int32(uint32(k)), int32(uint32(v))})
		}
	}
	slices.SortFunc(ms, func(x, y merge) int { return cmp.Compare(x.rank, y.rank) })
	u(uint64(len(ms)))
	prev := int32(0)
	for _, m := range ms {
		u(uint64(m.rank - prev))
		prev = m.rank
		u(uint64(m.a))
		u(uint64(m.b))
		u(uint64(m.merged))
	}
	_, err := w.Write(b)
	return err
}

// tableReader reads a table's numbers and byte runs, remembering the first
// error.
type tableReader struct {
	b   []byte
	err error
}

func (r *tableReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.b) > 0 && r.b[0] < 0x80 { // most numbers: one byte
		v := uint64(r.b[0])
		r.b = r.b[1:]
		return v
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errTable
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a number that must not exceed limit.
func (r *tableReader) count(limit int) int {
	v := r.uvarint()
	if v > uint64(limit) {
		r.err = errTable
		return 0
	}
	return int(v)
}

func (r *tableReader) bytes(n int) []byte {
	if r.err != nil || n > len(r.b) {
		r.err = errTable
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

// readTable builds a tokenizer from a table.
func readTable(raw []byte) (*Tokenizer, error) {
	if !bytes.HasPrefix(raw, []byte(tableMagic)) {
		return nil, errTable
	}
	r := &tableReader{b: raw[len(tableMagic):]}
	t := &Tokenizer{}
	flags := r.uvarint()
	t.nfc = flags&1 != 0
	t.pattern = string(r.bytes(r.count(len(r.b))))
	if t.split = splitterFor(t.pattern); t.split == nil && r.err == nil {
		return nil, fmt.Errorf("tokenizer table: unknown split pattern %q", t.pattern)
	}
	for i := range t.byteID {
		t.byteID[i] = int32(r.count(1<<31 - 2))
	}
	n := r.count(1<<31 - 2)
	if r.err == nil && (n == 0 || (n+7)/8 > len(r.b)) {
		r.err = errTable
	}
	bits := r.bytes((n + 7) / 8)
	if r.err != nil {
		return nil, r.err
	}
	t.known = make([]bool, n)
	t.offs = make([]uint32, n+1)
	for id := range n {
		t.known[id] = bits[id/8]&(1<<(id%8)) != 0
		t.offs[id+1] = t.offs[id] + uint32(r.count(len(r.b)))
	}
	t.text = string(r.bytes(int(t.offs[n])))
	for _, id := range t.byteID {
		if int(id) >= n && r.err == nil {
			r.err = errTable
		}
	}
	var lists [2][]addedToken
	for i := range lists {
		for range r.count(len(r.b)) {
			id := r.count(n - 1)
			content := string(r.bytes(r.count(len(r.b))))
			f := r.uvarint()
			lists[i] = append(lists[i], addedToken{content: content, id: int32(id), lstrip: f&1 != 0, rstrip: f&2 != 0, singleWrd: f&4 != 0})
		}
	}
	t.added, t.addedNorm = newAddedMatcher(lists[0]), newAddedMatcher(lists[1])
	m := r.count(len(r.b))
	t.pairs = newPairTable(m)
	rank := 0
	for range m {
		rank += r.count(1<<31 - 2)
		a, b, merged := r.count(n-1), r.count(n-1), r.count(n-1)
		if rank > 1<<31-2 {
			r.err = errTable
		}
		t.pairs.put(int32(a), int32(b), int32(rank), int32(merged))
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, errTable
	}
	return t, nil
}
