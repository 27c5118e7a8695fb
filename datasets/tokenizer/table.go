package tokenizer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// A table is a tokenizer as built, not as written in tokenizer.json: its
// settings and added tokens, then the arrays the tokenizer works with
// (the merges' hash table, each id's offset and bytes, which ids exist),
// stored exactly as the tokenizer holds them. Reading one decodes only
// the short header: the tokenizer's arrays are slices of the table, so
// the embedded Qwen3 is used where it lies in the binary. Format 1 held
// the merges as a list, and reading it (building the pair table, 151k
// inserts) took ≈ 19 ms of CPU, a fifth of a two-request surge run;
// reading this one takes ≈ 0.8 ms, the safety checks over every slot and
// offset. The price is size: Qwen3's table is 5.8 MB where format 1's was
// 2.4 MB, the pair table's slots most of it. TestEmbeddedTable keeps the
// table the tokenizer qwen3.json.gz describes. It is not compressed, or
// it could not be used in place.
//
// Layout (the header's numbers are uvarints):
//
//	"surge-tokenizer 2\n"
//	flags (1: NFC)  pattern length, pattern
//	256 byte ids
//	id count n
//	twice (added tokens matched in raw text, then in normalized text):
//	  count, each: id, content length, content, flags (1 lstrip, 2 rstrip, 4 single word)
//	the pair table's slot count (a power of two)
//	zero bytes up to a multiple of slotSize from the table's start (so
//	  that no slot straddles two cache lines: the linker aligns the table)
//	the pair table's slots (see pairTable)
//	n+1 offsets, little-endian uint32 (id's bytes are text[offset id:offset id+1])
//	the known bitmap, (n+7)/8 bytes: bit id%8 of byte id/8 is set when id exists
//	text: every id's bytes, offset n bytes
const tableMagic = "surge-tokenizer 2\n"

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
	u(uint64(t.VocabSize()))
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
	u(uint64(len(t.pairs.slots) / slotSize))
	for len(b)%slotSize != 0 {
		b = append(b, 0)
	}
	b = append(b, t.pairs.slots...)
	b = append(b, t.offs...)
	b = append(b, t.known...)
	b = append(b, t.text...)
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

// bytes returns the next n bytes, capped so that appending to them cannot
// write over what follows.
func (r *tableReader) bytes(n int) []byte {
	if r.err != nil || n > len(r.b) {
		r.err = errTable
		return nil
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	return p
}

// readTable returns the tokenizer of a table. Its arrays are raw's bytes,
// not copies: raw must not change afterwards. A malformed table is an
// error, whatever its bytes: readTable checks every offset and every slot
// of the pair table (≈ 0.7 ms for Qwen3's), so that no lookup goes out of
// bounds or probes forever.
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
	if r.err == nil && n == 0 {
		r.err = errTable
	}
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
	slots := r.count(len(r.b) / slotSize)
	if r.err == nil && (slots == 0 || slots&(slots-1) != 0) {
		r.err = errTable
	}
	for _, c := range r.bytes((slotSize - (len(raw)-len(r.b))%slotSize) % slotSize) {
		if c != 0 {
			r.err = errTable
		}
	}
	if r.err == nil && (n+1 > len(r.b)/4) {
		r.err = errTable // checked before 4*(n+1) could overflow
	}
	t.pairs = pairTableOf(r.bytes(slots * slotSize))
	t.offs = r.bytes(4 * (n + 1))
	t.known = r.bytes((n + 7) / 8)
	if r.err != nil {
		return nil, r.err
	}
	end, ok := uint32(0), t.off(0) == 0
	for o := t.offs; len(o) >= 4; o = o[4:] {
		v := binary.LittleEndian.Uint32(o)
		ok = ok && v >= end
		end = v
	}
	if !ok {
		return nil, errTable
	}
	t.text = r.bytes(int(end))
	if r.err != nil || len(r.b) != 0 || !t.pairs.valid(n) {
		return nil, errTable
	}
	return t, nil
}
