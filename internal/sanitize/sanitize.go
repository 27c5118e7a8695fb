// Package sanitize is the one sanitiser of outside strings printed to a
// terminal: a server's error message, a label, a file name, a header. A
// control character could move the cursor, clear the screen, set the
// window title or hide text; each is shown escaped instead, so what is
// printed is what was sent and nothing more.
package sanitize

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Line returns s safe to print inside one terminal line: C0 and C1
// control characters (newlines and tabs too), DEL, Unicode's
// bidirectional overrides and isolates, and invalid UTF-8 are written as
// Go escapes (\n, \x1b, \u202e, \xff). A string that needs none is
// returned as it is, without allocating.
func Line(s string) string { return clean(s, false) }

// Text is Line for text that may span lines: it keeps \n and \t.
func Text(s string) string { return clean(s, true) }

// Index is the index of the first byte of s that Text would escape, or
// -1 when s is safe to print as it is.
func Index(s string) int { return firstUnsafe(s, true) }

func clean(s string, multiline bool) string {
	i := firstUnsafe(s, multiline)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case multiline && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case unsafeRune(r):
			if r < 0x100 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// firstUnsafe is the index of s's first byte that needs escaping, or -1.
func firstUnsafe(s string, multiline bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				if !(multiline && (c == '\n' || c == '\t')) {
					return i
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			return i
		}
		i += size
	}
	return -1
}

// unsafeRune: C0, DEL, C1, and the bidirectional formatting characters
// that reorder what follows them (the "Trojan Source" ones).
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}
