package datasets

import (
	"math"
	"strings"
)

// Prompt is a generated prompt kept as what it is made of, not as text:
// blocks of the corpus named by ids, spelled out when the text is needed
// (Turn.Content, once per request sent). A trace row of a million tokens
// then holds a few dozen bytes (and 8 a hash id), where its text would be
// megabytes and its parts tens of kilobytes; equal ids spell equal text,
// so prompts that share hash ids share their prefix on the wire.
type Prompt struct {
	src *blockSource
	// ids are the blocks' ids, one per block (a trace's hash_ids); nil:
	// first, first+1, … (blocks of the prompt's own).
	ids   []int64
	first int64
	// tokens is the prompt's length: full blocks of src.size tokens, the
	// last block the rest (src.size 0: one block of them all).
	tokens int
}

// blockSource spells the blocks of a dataset's prompts: block id of n
// tokens is the prompter's prompt for id (a head of digits words), its body
// starting at a sentence drawn from the id and the seed. It holds nothing
// per block, so spelling a block twice gives the same text.
type blockSource struct {
	p      *prompter
	size   int // tokens in a full block (0: a prompt is one block)
	digits int
	seed   uint64
}

// blocks is how many blocks the prompt has.
func (pr *Prompt) blocks() int {
	if pr.src.size <= 0 || pr.tokens <= 0 {
		return 1
	}
	return (pr.tokens + pr.src.size - 1) / pr.src.size
}

// block is block j's id and token count.
func (pr *Prompt) block(j int) (id int64, n int) {
	id = pr.first + int64(j)
	if pr.ids != nil {
		id = pr.ids[j]
	}
	if pr.src.size <= 0 {
		return id, pr.tokens
	}
	n = pr.src.size
	if j == pr.blocks()-1 {
		n = pr.tokens - j*pr.src.size
	}
	return id, n
}

// String spells the prompt out.
func (pr *Prompt) String() string {
	var b strings.Builder
	b.Grow(pr.src.p.bytesFor(pr.tokens) + 16)
	for j := range pr.blocks() {
		id, n := pr.block(j)
		pr.src.write(&b, id, n, math.MaxInt)
	}
	return b.String()
}

// prefix spells the prompt's first max bytes.
func (pr *Prompt) prefix(max int) string {
	var b strings.Builder
	for j := range pr.blocks() {
		if b.Len() >= max {
			break
		}
		id, n := pr.block(j)
		pr.src.write(&b, id, n, max)
	}
	return b.String()
}

// short is how many of the prompt's blocks come out a token short.
func (pr *Prompt) short() int {
	k := 0
	for j := range pr.blocks() {
		id, n := pr.block(j)
		if pr.src.got(id, n) != n {
			k++
		}
	}
	return k
}

// start is the sentence block id's body starts from.
func (s *blockSource) start(id int64) int {
	return int(mix64(uint64(id)^s.seed) % uint64(len(s.p.starts)))
}

// write spells block id of n tokens into b, up to limit bytes in b.
func (s *blockSource) write(b *strings.Builder, id int64, n, limit int) {
	k := min(n, s.digits)
	s.p.writeHead(b, id, s.digits, k)
	if b.Len() > limit {
		cut := b.String()[:limit]
		b.Reset()
		b.WriteString(cut)
		return
	}
	if at, m := s.p.resolve(s.start(id), n-k); m > 0 {
		s.p.writeSpan(b, at, m, limit)
	}
}

// got is how many tokens block id of n tokens really has.
func (s *blockSource) got(id int64, n int) int {
	k := min(n, s.digits)
	_, m := s.p.resolve(s.start(id), n-k)
	return k + m
}
