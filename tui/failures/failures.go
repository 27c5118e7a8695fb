// Package failures is the dashboard's panel of failed requests by error type.
package failures

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/surgebench/surge/internal/sanitize"
	"github.com/surgebench/surge/tui/internal/text"
)

// Msg carries a snapshot's error counts by type and the finished total.
type Msg struct {
	Errors   map[string]int64
	Finished int64
}

// Model is the panel's state: the error types, most frequent first.
type Model struct {
	rows     []row
	total    int64
	finished int64
}

type row struct {
	typ string
	n   int64
}

// Update applies Msg and ignores other messages. It sorts here, not in
// View, since snapshots arrive less often than frames may be drawn.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if msg, ok := msg.(Msg); ok {
		m.rows = m.rows[:0:0]
		m.total = 0
		for t, n := range msg.Errors {
			if n > 0 {
				m.rows = append(m.rows, row{sanitize.Line(t), n}) // a server's error type, shown
				m.total += n
			}
		}
		slices.SortFunc(m.rows, func(a, b row) int {
			return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.typ, b.typ))
		})
		m.finished = msg.Finished
	}
	return m, nil
}

// Types is the number of distinct error types seen.
func (m Model) Types() int { return len(m.rows) }

// View renders at most height lines of width cells, the most frequent error
// types first; the rest are summed in a last line.
func (m Model) View(width, height int) string {
	if height <= 0 {
		return ""
	}
	if len(m.rows) == 0 {
		return text.Fit(text.Good.Render("no errors"), width)
	}
	if height == 1 && len(m.rows) > 1 {
		top := m.rows[0]
		return text.Fit(text.Bad.Render(text.Right(strconv.FormatInt(top.n, 10), 7))+"  "+top.typ+
			text.Dim.Render("  +"+strconv.FormatInt(m.total-top.n, 10)+" in "+strconv.Itoa(len(m.rows)-1)+" more types"), width)
	}
	var b strings.Builder
	shown := m.rows
	if len(shown) > height {
		shown = shown[:height-1]
	}
	for i, r := range shown {
		if i > 0 {
			b.WriteString("\n")
		}
		share := ""
		if m.finished > 0 {
			share = text.Dim.Render(" " + text.Right(strconv.FormatFloat(100*float64(r.n)/float64(m.finished), 'f', 1, 64)+"%", 6))
		}
		b.WriteString(text.Fit(text.Bad.Render(text.Right(strconv.FormatInt(r.n, 10), 7))+share+"  "+r.typ, width))
	}
	if rest := m.rows[len(shown):]; len(rest) > 0 {
		var n int64
		for _, r := range rest {
			n += r.n
		}
		if len(shown) > 0 {
			b.WriteString("\n")
		}
		b.WriteString(text.Fit(text.Dim.Render(text.Right(strconv.FormatInt(n, 10), 7)+"  in "+strconv.Itoa(len(rest))+" more types (tab: errors view)"), width))
	}
	return b.String()
}
