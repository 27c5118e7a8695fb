package datasets

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// qwen3Cuts is the embedded Qwen3 tokenizer's view of the corpus
// (corpusTokens), precomputed so that building prompts with the default
// tokenizer costs no parse of its 150k-token tables (≈ 0.3–0.6 s of
// start-up). TestDefaultCorpusTable checks it against the tokenizer itself
// and rewrites it with -update when the corpus changes.
//
//go:embed corpus/qwen3.cuts
var qwen3Cuts string

// defaultCorpus is the default tokenizer's view of the corpus: the table
// when it matches the corpus, else worked out with the tokenizer (slow but
// right, for a corpus edited without regenerating the table).
var defaultCorpus = sync.OnceValues(func() (*corpusTokens, error) {
	if ct, err := parseCuts(qwen3Cuts); err == nil {
		return ct, nil
	}
	tok, err := defaultTokenizer()
	if err != nil {
		return nil, err
	}
	return tokenizeCorpus(tok)
})

// formatCuts writes ct as the table parseCuts reads: a line "s" and the
// cuts 1 … ntok−1 of each sentence, in corpus order (-1: not a clean cut),
// then a line "w" and the single-token words without their leading space.
func formatCuts(ct *corpusTokens) string {
	var b strings.Builder
	b.WriteString("# The embedded Qwen3 tokenizer's view of corpus.txt (see corpus_default.go).\n")
	b.WriteString("# Generated: go test ./datasets -run TestDefaultCorpusTable -update\n")
	for _, s := range ct.sents {
		b.WriteString("s")
		for _, c := range s.cut[1:s.ntok] {
			b.WriteByte(' ')
			b.WriteString(strconv.Itoa(int(c)))
		}
		b.WriteByte('\n')
	}
	b.WriteString("w")
	for _, w := range ct.words {
		b.WriteByte(' ')
		b.WriteString(strings.TrimPrefix(w, " "))
	}
	b.WriteByte('\n')
	return b.String()
}

// parseCuts reads formatCuts' table against the corpus it was made from;
// a table that does not fit the corpus is an error.
func parseCuts(table string) (*corpusTokens, error) {
	var texts []string
	for _, line := range strings.Split(corpusText, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			texts = append(texts, " "+line)
		}
	}
	ct := &corpusTokens{}
	for _, line := range strings.Split(table, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		switch fields[0] {
		case "s":
			i := len(ct.sents)
			if i >= len(texts) {
				return nil, fmt.Errorf("corpus table: more sentences than the corpus's %d", len(texts))
			}
			s := sentence{text: texts[i], ntok: len(fields), cut: make([]int32, len(fields)+1)}
			s.cut[s.ntok] = int32(len(s.text))
			prev := int32(0)
			for k, f := range fields[1:] {
				c, err := strconv.Atoi(f)
				if err != nil || c < -1 || c >= len(s.text) || (c >= 0 && c <= int(prev)) {
					return nil, fmt.Errorf("corpus table: sentence %d: bad cut %q", i+1, f)
				}
				s.cut[k+1] = int32(c)
				if c >= 0 {
					prev = int32(c)
				}
			}
			ct.sents = append(ct.sents, s)
		case "w":
			for _, w := range fields[1:] {
				ct.words = append(ct.words, " "+w)
			}
		default:
			return nil, fmt.Errorf("corpus table: unknown line %q", line)
		}
	}
	if len(ct.sents) != len(texts) {
		return nil, fmt.Errorf("corpus table: %d sentences, the corpus has %d", len(ct.sents), len(texts))
	}
	return ct, nil
}
