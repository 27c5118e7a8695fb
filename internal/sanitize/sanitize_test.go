package sanitize

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	for _, tc := range []struct{ in, line, text string }{
		{"plain text, ünïcode ✓", "plain text, ünïcode ✓", "plain text, ünïcode ✓"},
		{"", "", ""},
		{"title\x1b]0;pwned\x07", `title\x1b]0;pwned\x07`, `title\x1b]0;pwned\x07`},
		{"\x1b[2J\x1b[Hclear", `\x1b[2J\x1b[Hclear`, `\x1b[2J\x1b[Hclear`},
		{"red \x1b[31mtext\x1b[0m", `red \x1b[31mtext\x1b[0m`, `red \x1b[31mtext\x1b[0m`},
		{"two\nlines\tand tab\r", `two\nlines\tand tab\r`, "two\nlines\tand tab\\r"},
		{"del\x7f", `del\x7f`, `del\x7f`},
		{"c1 \u009b31m", `c1 \x9b31m`, `c1 \x9b31m`},
		{"bidi \u202eevil\u2066", `bidi \u202eevil\u2066`, `bidi \u202eevil\u2066`},
		{"bad \xff utf8", `bad \xff utf8`, `bad \xff utf8`},
	} {
		if got := Line(tc.in); got != tc.line {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.line)
		}
		if got := Text(tc.in); got != tc.text {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.text)
		}
	}
}

func TestLineCleanDoesNotAllocate(t *testing.T) {
	s := strings.Repeat("a clean server message ✓ ", 8)
	if n := testing.AllocsPerRun(100, func() { _ = Line(s) }); n != 0 {
		t.Fatalf("Line of a clean string allocates %v times", n)
	}
}

// FuzzLine: whatever comes in, what goes out is valid UTF-8 with no
// control character, and a clean string comes back unchanged.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"", "ok", "\x1b]0;t\x07", "\u202e", "\xff\xfe", "a\nb\tc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Line(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Line(%q) = %q: invalid UTF-8", s, out)
		}
		for _, r := range out {
			if unsafeRune(r) {
				t.Fatalf("Line(%q) = %q keeps %U", s, out, r)
			}
		}
		if firstUnsafe(s, false) < 0 && out != s {
			t.Fatalf("Line changed a clean string %q to %q", s, out)
		}
		text := Text(s)
		for _, r := range text {
			if unsafeRune(r) && r != '\n' && r != '\t' {
				t.Fatalf("Text(%q) = %q keeps %U", s, text, r)
			}
		}
	})
}

func TestIndex(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{{"plain\ttext\n", -1}, {"ab\x1b[2J", 2}, {"é\u202e", 2}, {"ok\r", 2}, {"\xff", 0}} {
		if got := Index(tc.in); got != tc.want {
			t.Errorf("Index(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
