// Package specdecode is the dashboard's panel of speculative decoding,
// shown when a server reports it: the acceptance its answers carried (the
// mean over the requests so far and over the last 10 s), and each /metrics
// endpoint's over its last scrape interval.
package specdecode

import (
	"math"
	"strconv"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/telemetry"
	"github.com/surgebench/surge/tui/internal/text"
)

// Msg carries a snapshot's acceptance quantiles (keyed by metric tag, as
// metrics.Snapshot has them) and the latest scrape per server.
type Msg struct {
	Run, Window map[string]metrics.Quantiles
	Server      []telemetry.ServerSample
}

// Model is the panel's state.
type Model struct {
	rows []row
}

// row is one line: the answers' acceptance or one endpoint's.
type row struct {
	label                  string
	length, rate           float64 // mean acceptance length, draft acceptance %
	winLength, winRate     float64 // the same over the last 10 s (answers only)
	count                  int64
	fromMetrics, hasWindow bool
}

// Update applies Msg and ignores other messages.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	msg2, ok := msg.(Msg)
	if !ok {
		return m, nil
	}
	m.rows = m.rows[:0]
	nan := math.NaN()
	if l := msg2.Run[string(metrics.SpecAcceptanceLength)]; l.Count > 0 {
		r := row{label: "answers", length: l.Avg, rate: nan, winLength: nan, winRate: nan, count: l.Count, hasWindow: true}
		if q := msg2.Run[string(metrics.SpecDraftAcceptanceRate)]; q.Count > 0 {
			r.rate = q.Avg
		}
		if q := msg2.Window[string(metrics.SpecAcceptanceLength)]; q.Count > 0 {
			r.winLength = q.Avg
		}
		if q := msg2.Window[string(metrics.SpecDraftAcceptanceRate)]; q.Count > 0 {
			r.winRate = q.Avg
		}
		m.rows = append(m.rows, r)
	}
	for _, s := range msg2.Server {
		if !(s.SpecAcceptLength >= 1) && !(s.SpecAcceptRate > 0) {
			continue // not reported (NaN), or a server that drafts nothing
		}
		m.rows = append(m.rows, row{label: s.URL, length: s.SpecAcceptLength, rate: 100 * s.SpecAcceptRate, fromMetrics: true})
	}
	return m, nil
}

// Title is the panel's title.
func (Model) Title() string { return "spec decode" }

// Len is the number of lines (0: no server reported speculative
// decoding; the panel is hidden).
func (m Model) Len() int { return len(m.rows) }

// View renders the lines, at most height of width cells: the acceptance
// length (tokens a verify step emits) and the share of draft tokens
// accepted.
func (m Model) View(width, height int) string {
	return text.Rows(m.rows, width, height, func(r row) string {
		line := "accept len " + text.Right(num(r.length, 2), 5) + "  drafts " + text.Right(text.Pct(r.rate), 4)
		switch {
		case r.hasWindow:
			line += "  10s " + num(r.winLength, 2) + " " + text.Pct(r.winRate)
			line += text.Dim.Render("  " + strconv.FormatInt(r.count, 10) + " answers")
		case r.fromMetrics:
			line += text.Dim.Render("  /metrics " + r.label)
		}
		return line
	})
}

func num(v float64, prec int) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}
