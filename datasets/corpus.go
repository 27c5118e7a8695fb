package datasets

import (
	"context"
	_ "embed"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"unicode"

	"github.com/surgebench/surge/datasets/tokenizer"
	"github.com/surgebench/surge/internal/bounded"
)

// corpusText is the text synthetic prompts are cut from: plain English
// sentences, one per line, written for this project and released with it
// under the project's licence (no third-party text, so no licence question).
//
//go:embed corpus/corpus.txt
var corpusText string

// Tokenizer is what prompt building needs from a tokenizer. It is satisfied
// by *tokenizer.Tokenizer (datasets/tokenizer) and by anything else that can
// round-trip text and token ids without special tokens.
type Tokenizer interface {
	Encode(string) []int
	Decode([]int) string
}

// sentence is one corpus sentence with its clean cut points.
type sentence struct {
	text string // with a leading space, so sentences concatenate at a word boundary
	ntok int
	// cut[k] is the byte length of the first k tokens' text when that text
	// encodes back to exactly k tokens, or -1 when it does not (a cut inside
	// a word that BPE would merge differently).
	cut []int32
}

// prompter builds prompts of an exact token length from the corpus.
//
// A prompt is a head of single-token words that spells a unique id in base
// len(words), followed by a body: a span of the ring, the corpus sentences
// in seeded order, cut at a clean token boundary. Every piece starts with a
// space before a letter, which every byte-level BPE pre-tokenizer in use
// (GPT-2, Llama 3, Qwen) splits on, so the token count of a concatenation
// is the sum of the pieces' counts. Unique heads keep distinct prompts (and
// distinct Mooncake blocks) from sharing a cached prefix by accident, while
// the body repeats freely: prefix caches match only from the start.
type prompter struct {
	ring    string
	ringTok int
	off     []int32 // off[p]: byte offset of token position p in ring; -1 where a cut is not clean
	starts  []int32 // token positions where sentences start
	words   []string
}

// ringPasses is how many shuffled copies of the corpus the ring holds, so
// that bodies starting at different sentences differ for a long stretch.
const ringPasses = 4

// corpusTokens is a tokenizer's view of the corpus: every sentence with its
// clean cuts, and the corpus words that are one token each (sorted).
type corpusTokens struct {
	sents []sentence
	words []string
}

// tokenizeCorpus works out the embedded corpus's sentences and
// single-token words under tok.
func tokenizeCorpus(tok Tokenizer) (*corpusTokens, error) {
	return tokenizeText(context.Background(), tok, corpusText)
}

// tokenizeText works out the sentences (one a line) and single-token words
// of text under tok.
func tokenizeText(ctx context.Context, tok Tokenizer, text string) (*corpusTokens, error) {
	ct := &corpusTokens{}
	for _, line := range strings.Split(text, "\n") {
		// A sentence costs a decode and an encode per token: a corpus of
		// long lines (up to 64 MiB) looks at ctx every line.
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("prompt corpus: %w", err)
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		s := sentence{text: " " + line}
		ids := tok.Encode(s.text)
		s.ntok = len(ids)
		if s.ntok == 0 {
			return nil, fmt.Errorf("prompt corpus: tokenizer returned no tokens for %q", s.text)
		}
		s.cut = make([]int32, s.ntok+1)
		s.cut[s.ntok] = int32(len(s.text))
		for k := 1; k < s.ntok; k++ {
			p := tok.Decode(ids[:k])
			s.cut[k] = -1
			if strings.HasPrefix(s.text, p) && len(tok.Encode(p)) == k {
				s.cut[k] = int32(len(p))
			}
		}
		ct.sents = append(ct.sents, s)
	}
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) }) {
		w = " " + strings.ToLower(w)
		if seen[w] {
			continue
		}
		seen[w] = true
		if ids := tok.Encode(w); len(ids) == 1 && tok.Decode(ids) == w {
			ct.words = append(ct.words, w)
		}
	}
	slices.Sort(ct.words)
	return ct, nil
}

// newPrompter lays out the ring by seed from tok's view of the corpus. The
// embedded default tokenizer's view (tok nil, or that tokenizer) is
// precomputed (defaultCorpus): building prompts does not parse its tables.
func newPrompter(tok Tokenizer, seed uint64) (*prompter, error) {
	var ct *corpusTokens
	var err error
	if t, ok := tok.(*tokenizer.Tokenizer); tok == nil || ok && t.Name() == tokenizer.DefaultName {
		ct, err = defaultCorpus()
	} else {
		ct, err = tokenizeCorpus(tok)
	}
	if err != nil {
		return nil, err
	}
	return layOut(ct, seed)
}

// newCorpusPrompter is newPrompter for corpus text ("": the embedded
// corpus).
func newCorpusPrompter(ctx context.Context, tok Tokenizer, seed uint64, text string) (*prompter, error) {
	if text == "" {
		return newPrompter(tok, seed)
	}
	t, err := tokenizerOrDefault(tok)
	if err != nil {
		return nil, err
	}
	ct, err := tokenizeText(ctx, t, text)
	if err != nil {
		return nil, err
	}
	return layOut(ct, seed)
}

// layOut builds the ring of a tokenizer's view of the corpus, by seed.
func layOut(ct *corpusTokens, seed uint64) (*prompter, error) {
	sents := ct.sents
	if len(sents) < 2 {
		return nil, fmt.Errorf("prompt corpus: %d sentences, need at least 2", len(sents))
	}

	rng := rand.New(rand.NewPCG(seed, 0xc0de))
	p := &prompter{}
	var b strings.Builder
	for pass := 0; pass < ringPasses; pass++ {
		for _, i := range rng.Perm(len(sents)) {
			s := &sents[i]
			base := int32(b.Len())
			p.starts = append(p.starts, int32(p.ringTok))
			for k := 0; k < s.ntok; k++ {
				o := s.cut[k]
				if o >= 0 {
					o += base
				}
				p.off = append(p.off, o)
			}
			p.ringTok += s.ntok
			b.WriteString(s.text)
		}
	}
	p.ring = b.String()
	p.off = append(p.off, int32(len(p.ring)))

	p.words = slices.Clone(ct.words)
	if len(p.words) < 16 {
		return nil, fmt.Errorf("prompt corpus: only %d words are single tokens under this tokenizer, need 16", len(p.words))
	}
	rng.Shuffle(len(p.words), func(i, j int) { p.words[i], p.words[j] = p.words[j], p.words[i] })
	return p, nil
}

// digits returns how many head words spell every id in [0, n).
func (p *prompter) digits(n int64) int {
	w := int64(len(p.words))
	d, span := 1, w
	for span < n && span <= (1<<62)/w {
		span *= w
		d++
	}
	return d
}

// head spells id in base len(words), least significant word first so that
// neighbouring ids differ at their first token, using at most n words.
func (p *prompter) head(id int64, d, n int) string {
	var b strings.Builder
	p.writeHead(&b, id, d, n)
	return b.String()
}

// writeHead writes head(id, d, n) to b.
func (p *prompter) writeHead(b *strings.Builder, id int64, d, n int) {
	if n > d {
		n = d
	}
	w := int64(len(p.words))
	for i := 0; i < n; i++ {
		b.WriteString(p.words[id%w])
		id /= w
	}
}

// body appends to parts a span of the ring of n tokens that begins at a
// sentence start, trying the starts from startIdx on until the end of the
// span is a clean cut. It returns the parts and the tokens the span really
// holds: n, or n-1 (very rarely less) when no start gives a clean cut.
// Spans longer than the ring wrap around, reusing the ring string itself.
func (p *prompter) body(parts []string, startIdx, n int) ([]string, int) {
	s, m := p.resolve(startIdx, n)
	if m <= 0 {
		return parts, 0
	}
	return p.appendSpan(parts, s, m), m
}

// resolve is where body's span of n tokens from sentence startIdx on
// begins in the ring, and how many tokens it has (see body).
func (p *prompter) resolve(startIdx, n int) (at, m int) {
	if n <= 0 {
		return 0, 0
	}
	R := p.ringTok
	for try := 0; try < len(p.starts); try++ {
		s := int(p.starts[(startIdx+try)%len(p.starts)])
		if p.off[(s+n)%R] >= 0 {
			return s, n
		}
	}
	s := int(p.starts[startIdx%len(p.starts)])
	m = n - 1
	for m > 0 && p.off[(s+m)%R] < 0 {
		m--
	}
	return s, m
}

// writeSpan writes the ring's tokens [s, s+n) (wrapping) to b, what
// appendSpan's parts spell, stopping once b holds limit bytes.
func (p *prompter) writeSpan(b *strings.Builder, s, n, limit int) {
	put := func(str string) bool {
		if room := limit - b.Len(); len(str) > room {
			b.WriteString(str[:max(room, 0)])
			return false
		}
		b.WriteString(str)
		return true
	}
	R := p.ringTok
	if s+n <= R {
		put(p.ring[p.off[s]:p.off[s+n]])
		return
	}
	if !put(p.ring[p.off[s]:]) {
		return
	}
	n -= R - s
	for n >= R {
		if !put(p.ring) {
			return
		}
		n -= R
	}
	if n > 0 {
		put(p.ring[:p.off[n]])
	}
}

// bytesFor is about how many bytes n tokens of the ring spell.
func (p *prompter) bytesFor(n int) int {
	return int(int64(n) * int64(len(p.ring)) / int64(max(p.ringTok, 1)))
}

// appendSpan appends the ring's tokens [s, s+n) (wrapping) as strings.
func (p *prompter) appendSpan(parts []string, s, n int) []string {
	R := p.ringTok
	if s+n <= R {
		return append(parts, p.ring[p.off[s]:p.off[s+n]])
	}
	parts = append(parts, p.ring[p.off[s]:])
	n -= R - s
	for n >= R {
		parts = append(parts, p.ring)
		n -= R
	}
	if n > 0 {
		parts = append(parts, p.ring[:p.off[n]])
	}
	return parts
}

// prompt appends a prompt of n tokens: the head for id (d words) and a body
// starting at sentence startIdx. It returns the parts and the token count.
func (p *prompter) prompt(parts []string, id int64, d, n, startIdx int) ([]string, int) {
	h := p.head(id, d, n)
	parts = append(parts, h)
	k := min(n, d)
	parts, got := p.body(parts, startIdx, n-k)
	return parts, k + got
}

// mix64 is SplitMix64's finaliser: a cheap, well-spread hash of an id.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// codingText is a second embedded corpus of programming talk (code,
// errors, tool calls), for prompts that look like a coding agent's;
// written for this project like corpus.txt.
//
//go:embed corpus/coding.txt
var codingText string

// Prompt corpora by name (AIPerf's --prompt-corpus values).
const (
	// CorpusSonnet is AIPerf's default corpus name; surge's default
	// corpus (plain English prose, not Shakespeare) stands in for it.
	CorpusSonnet = "sonnet"
	// CorpusCoding is programming talk.
	CorpusCoding = "coding"
)

// promptCorpus resolves a corpus name or a text file (one sentence a line)
// to corpus text; "" and "sonnet" are the embedded default ("").
func promptCorpus(name string) (string, error) {
	switch name {
	case "", CorpusSonnet:
		return "", nil
	case CorpusCoding:
		return codingText, nil
	}
	if _, err := os.Stat(name); err != nil {
		return "", &OptionError{Option: "PromptCorpus", Reason: fmt.Sprintf("%q: not %s, %s or a readable text file: %v", name, CorpusSonnet, CorpusCoding, err), Err: err}
	}
	const maxCorpus = 64 << 20
	b, err := bounded.ReadFile(context.Background(), name, maxCorpus)
	if err != nil {
		return "", &OptionError{Option: "PromptCorpus", Reason: err.Error(), Err: err}
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", optionErrorf("PromptCorpus", "%s is empty", name)
	}
	return string(b), nil
}
