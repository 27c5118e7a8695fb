package tokenizer

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// addedToken is an entry of tokenizer.json's added_tokens that is matched in
// text before pre-tokenization (non-special tokens such as Qwen's <think>).
type addedToken struct {
	content                   string
	id                        int32
	lstrip, rstrip, singleWrd bool
}

// addedMatcher finds added tokens in text, leftmost first and longest first
// at a position, like Hugging Face's AddedVocabulary.
type addedMatcher struct {
	byFirst [256][]addedToken // by first byte, longest content first
}

func newAddedMatcher(tokens []addedToken) *addedMatcher {
	if len(tokens) == 0 {
		return nil
	}
	m := &addedMatcher{}
	for _, tok := range tokens {
		if tok.content == "" {
			continue
		}
		c := tok.content[0]
		m.byFirst[c] = append(m.byFirst[c], tok)
	}
	for i := range m.byFirst {
		l := m.byFirst[i]
		sort.SliceStable(l, func(a, b int) bool { return len(l[a].content) > len(l[b].content) })
	}
	return m
}

// find returns the first added token in s at or after from: the span it
// covers (including whitespace absorbed by lstrip/rstrip) and its id.
func (m *addedMatcher) find(s string, from int) (start, end int, id int32, ok bool) {
	for i := from; i < len(s); i++ {
		cands := m.byFirst[s[i]]
		if cands == nil {
			continue
		}
		for _, tok := range cands {
			if !strings.HasPrefix(s[i:], tok.content) {
				continue
			}
			e := i + len(tok.content)
			if tok.singleWrd && (endsWithWordChar(s[:i]) || startsWithWordChar(s[e:])) {
				continue
			}
			b := i
			if tok.lstrip {
				b = from + len(strings.TrimRightFunc(s[from:i], unicode.IsSpace))
			}
			if tok.rstrip {
				e = len(s) - len(strings.TrimLeftFunc(s[e:], unicode.IsSpace))
			}
			return b, e, tok.id, true
		}
	}
	return 0, 0, 0, false
}

// split appends the ids of s to out: each added token as its id, the text
// between them encoded by between (all of s when m is nil: no added
// tokens). between is a method expression, not a closure, so the hot path
// allocates nothing for it.
func (m *addedMatcher) split(t *Tokenizer, s string, out []int32, sc *scratch, between func(*Tokenizer, string, []int32, *scratch) []int32) []int32 {
	if m == nil {
		return between(t, s, out, sc)
	}
	for from := 0; from < len(s); {
		start, end, id, ok := m.find(s, from)
		if !ok {
			return between(t, s[from:], out, sc)
		}
		out = between(t, s[from:start], out, sc)
		out = append(out, id)
		from = end
	}
	return out
}

func isWordChar(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) }

func endsWithWordChar(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return s != "" && isWordChar(r)
}

func startsWithWordChar(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return s != "" && isWordChar(r)
}
