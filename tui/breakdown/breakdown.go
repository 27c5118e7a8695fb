// Package breakdown is the dashboard's "where the time went" panel: each
// part of the requests' time (client, network, server queue, prefill,
// decode, delivery), its p50 so far, its share of its side of the first
// token as a bar, and its source; shown once a request has a breakdown
// (its server gave an account of its time).
package breakdown

import (
	"strconv"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/tui/internal/text"
)

// Msg carries the breakdown so far (nil: none yet).
type Msg struct {
	Breakdown *metrics.TimeBreakdown
}

// Model is the panel's state.
type Model struct {
	tb *metrics.TimeBreakdown
}

// Update applies Msg and ignores other messages.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if msg, ok := msg.(Msg); ok && msg.Breakdown != nil {
		m.tb = msg.Breakdown
	}
	return m, nil
}

// Title is the panel's title: the requests broken down so far.
func (m Model) Title() string {
	if m.tb == nil {
		return "where the time went"
	}
	return "where the time went · " + strconv.FormatInt(m.tb.Requests, 10) + " req"
}

// Len is the number of parts shown (0: the panel is hidden).
func (m Model) Len() int {
	if m.tb == nil {
		return 0
	}
	return int(metrics.NumParts)
}

// names are the parts as the panel labels them.
var names = [metrics.NumParts]string{"client", "network", "queue", "prefill", "decode", "delivery"}

// View renders one line per part: its name, p50 in ms, a bar of its share
// (of the time to the first token for the parts before it, of the rest
// after it) and its source; "-" for a part no server gave.
func (m Model) View(width, height int) string {
	if m.tb == nil {
		return ""
	}
	parts := make([]metrics.Part, metrics.NumParts)
	for i := range parts {
		parts[i] = metrics.Part(i)
	}
	return text.Rows(parts, width, height, func(p metrics.Part) string {
		ps := m.tb.Parts[p]
		line := text.Fit(names[p], 9) + text.Right(text.Ms(ps.P50), 6) + " ms"
		if ps.Count == 0 {
			return line + "  " + text.Dim.Render("unknown")
		}
		share := ""
		if ps.Share == ps.Share { // not NaN
			share = text.Pct(100 * ps.Share)
		}
		line += text.Right(share, 5)
		if room := width - len([]rune(line)) - 2 - len(ps.Source) - 2; room >= 4 {
			line += "  " + text.Bar(ps.Share, min(room, 12))
		}
		return line + "  " + text.Dim.Render(ps.Source)
	})
}
