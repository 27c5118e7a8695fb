package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizers split text into pieces the BPE model encodes one by
// one. Hugging Face expresses them as regular expressions with a lookahead
// ("\s+(?!\S)") that Go's regexp cannot run, so each supported pattern is a
// hand-written scanner with the same leftmost-first alternation semantics as
// Oniguruma (the engine the Rust tokenizers use). Character classes follow
// Oniguruma's Unicode definitions: \s is White_Space (unicode.IsSpace), \p{L}
// and \p{N} are the general categories from Go's unicode tables.

// Regex sources of the supported Split pre-tokenizers, byte-for-byte as they
// appear in tokenizer.json.
const (
	// patternGPT4Digits1 is Qwen2/Qwen3's pattern: one digit per piece.
	patternGPT4Digits1 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// patternGPT4Digits3 is Llama 3's (and cl100k's) pattern: up to three
	// digits per piece.
	patternGPT4Digits3 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// patternGPT2 is the ByteLevel pre-tokenizer's built-in pattern
	// (use_regex: true).
	patternGPT2 = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
)

// splitterFor returns the scanner of a supported pattern, or nil.
func splitterFor(pattern string) splitter {
	switch pattern {
	case patternGPT4Digits1:
		return gpt4Splitter(1)
	case patternGPT4Digits3:
		return gpt4Splitter(3)
	case patternGPT2:
		return gpt2Split
	}
	return nil
}

// splitter returns the end of the piece that starts at byte offset i of s
// (i < len(s)); the result is always > i, so every byte lands in a piece.
type splitter func(s string, i int) int

// Character classes of the patterns.
const (
	classOther   uint8 = iota // none of the below: [^\s\p{L}\p{N}]
	classLetter               // \p{L}
	classNumber               // \p{N}
	classSpace                // \s other than CR and LF
	classNewline              // \r or \n
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := 0; c < utf8.RuneSelf; c++ {
		t[c] = classOf(rune(c))
	}
	return t
}()

func classOf(r rune) uint8 {
	switch {
	case r == '\r' || r == '\n':
		return classNewline
	case unicode.IsSpace(r):
		return classSpace
	case unicode.IsLetter(r):
		return classLetter
	case unicode.IsNumber(r):
		return classNumber
	}
	return classOther
}

// at decodes the rune at s[i] and returns its class and width. An invalid
// byte counts as one classOther rune of width 1 (it is U+FFFD, a symbol).
func at(s string, i int) (class uint8, width int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	return classOf(r), w
}

// runEnd returns the end of the run of runes of class c starting at i.
func runEnd(s string, i int, c uint8) int {
	for i < len(s) {
		cl, w := at(s, i)
		if cl != c {
			break
		}
		i += w
	}
	return i
}

// contraction returns the length of the contraction suffix ('s 't 're 've 'm
// 'll 'd) at s[i:] where s[i] is an apostrophe, or 0. With fold set it
// matches case-insensitively the way Oniguruma's (?i) does, which includes
// U+017F LATIN SMALL LETTER LONG S as a case variant of 's'.
func contraction(s string, i int, fold bool) int {
	if i+1 >= len(s) {
		return 0
	}
	lower := func(c byte) byte {
		if fold && c >= 'A' && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	switch lower(s[i+1]) {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if i+2 < len(s) && lower(s[i+2]) == 'e' {
			return 3
		}
	case 'l':
		if i+2 < len(s) && lower(s[i+2]) == 'l' {
			return 3
		}
	case 0xC5: // U+017F is C5 BF in UTF-8.
		if fold && i+2 < len(s) && s[i+2] == 0xBF {
			return 3
		}
	}
	return 0
}

// whitespaceEnd handles the whitespace alternatives shared by the patterns,
// at a whitespace rune s[i]: "\s+(?!\S)|\s+" — a run of whitespace followed
// by a non-space keeps its last rune for the next piece (so " word" stays
// together), unless the run is a single rune. With newlines set it first
// tries "\s*[\r\n]+": a run containing CR/LF ends after its last CR/LF.
func whitespaceEnd(s string, i int, newlines bool) int {
	j, last, lastNL := i, i, -1
	for j < len(s) {
		cl, w := at(s, j)
		if cl != classSpace && cl != classNewline {
			break
		}
		last = j
		j += w
		if cl == classNewline {
			lastNL = j
		}
	}
	switch {
	case newlines && lastNL > 0:
		return lastNL
	case j == len(s) || last == i:
		return j
	default:
		return last
	}
}

// gpt4Splitter returns the scanner for patternGPT4Digits1 (maxDigits 1) or
// patternGPT4Digits3 (maxDigits 3).
func gpt4Splitter(maxDigits int) splitter {
	return func(s string, i int) int {
		c, w := at(s, i)
		// (?i:'s|'t|'re|'ve|'m|'ll|'d)
		if s[i] == '\'' {
			if n := contraction(s, i, true); n > 0 {
				return i + n
			}
		}
		// [^\r\n\p{L}\p{N}]?\p{L}+
		if c == classLetter {
			return runEnd(s, i+w, classLetter)
		}
		if c != classNumber && c != classNewline && i+w < len(s) {
			if c2, w2 := at(s, i+w); c2 == classLetter {
				return runEnd(s, i+w+w2, classLetter)
			}
		}
		// \p{N}{1,maxDigits}
		if c == classNumber {
			j := i + w
			for k := 1; k < maxDigits && j < len(s); k++ {
				c2, w2 := at(s, j)
				if c2 != classNumber {
					break
				}
				j += w2
			}
			return j
		}
		// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
		if c == classOther {
			return symbolsEnd(s, i)
		}
		if s[i] == ' ' && i+1 < len(s) {
			if c2, _ := at(s, i+1); c2 == classOther {
				return symbolsEnd(s, i+1)
			}
		}
		// \s*[\r\n]+|\s+(?!\S)|\s+
		return whitespaceEnd(s, i, true)
	}
}

// symbolsEnd matches "[^\s\p{L}\p{N}]+[\r\n]*" at a classOther rune s[i].
func symbolsEnd(s string, i int) int {
	return runEnd(s, runEnd(s, i, classOther), classNewline)
}

// gpt2Split is the scanner for patternGPT2.
func gpt2Split(s string, i int) int {
	c, _ := at(s, i)
	// 's|'t|'re|'ve|'m|'ll|'d
	if s[i] == '\'' {
		if n := contraction(s, i, false); n > 0 {
			return i + n
		}
	}
	// ' ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+'
	start := i
	if s[i] == ' ' && i+1 < len(s) {
		if c2, _ := at(s, i+1); c2 == classLetter || c2 == classNumber || c2 == classOther {
			c, start = c2, i+1
		}
	}
	if c == classLetter || c == classNumber || c == classOther {
		return runEnd(s, start, c)
	}
	// \s+(?!\S)|\s+
	return whitespaceEnd(s, i, false)
}
