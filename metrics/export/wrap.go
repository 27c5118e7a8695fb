package export

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"
)

// DefaultWidth is the console's width when the terminal's is unknown (a
// pipe, a file, CI): the summary, the stage table and each line under them
// fit it.
const DefaultWidth = 80

// minWidth is the narrowest width lines are wrapped to: below it a table's
// rows could not fit anyway.
const minWidth = 40

// widthOr is width, or DefaultWidth when it is not given (≤ 0), at least
// minWidth.
func widthOr(width int) int {
	if width <= 0 {
		return DefaultWidth
	}
	return max(width, minWidth)
}

// Wrap breaks s into lines of at most width columns at spaces, the lines
// after the first indented by indent spaces; a word longer than a line
// stands alone on its own (a path, a URL), never cut. Every line ends with
// a newline; s's own newlines start new lines.
func Wrap(s string, width, indent int) string {
	var b strings.Builder
	for _, para := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		wrapLine(&b, para, widthOr(width), indent)
	}
	return b.String()
}

func wrapLine(b *strings.Builder, s string, width, indent int) {
	if utf8.RuneCountInString(s) <= width {
		b.WriteString(strings.TrimRight(s, " "))
		b.WriteByte('\n')
		return
	}
	// The line's own leading spaces stay, and its continuation lines go
	// further in by indent.
	lead := len(s) - len(strings.TrimLeft(s, " "))
	pad := strings.Repeat(" ", min(lead+indent, width/2))
	line, n := s[:lead], lead
	empty := true
	for _, word := range strings.Split(s[lead:], " ") {
		wn := utf8.RuneCountInString(word)
		switch {
		case empty:
		case n+1+wn > width && word != "":
			b.WriteString(strings.TrimRight(line, " "))
			b.WriteByte('\n')
			line, n, empty = pad, len(pad), true
		default:
			line += " "
			n++
		}
		line += word
		n += wn
		empty = empty && word == ""
	}
	b.WriteString(strings.TrimRight(line, " "))
	b.WriteByte('\n')
}

// wrapWriter wraps each line written through it to width (its
// continuation lines indented by two), for the console's lines of prose
// under its tables. Whole lines are written at once: a Write ends with
// its newline.
type wrapWriter struct {
	w     io.Writer
	width int
	buf   []byte
}

func (ww *wrapWriter) Write(p []byte) (int, error) {
	ww.buf = append(ww.buf, p...)
	for {
		i := bytes.IndexByte(ww.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(ww.buf[:i])
		ww.buf = ww.buf[i+1:]
		if _, err := io.WriteString(ww.w, Wrap(line, ww.width, 2)); err != nil {
			return 0, err
		}
	}
}
