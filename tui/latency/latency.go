// Package latency is the dashboard's table of live latency quantiles for the
// whole run and for the last 10 s.
package latency

import (
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/tui/internal/text"
)

// Msg carries the quantiles of one snapshot, keyed by metric tag.
type Msg struct {
	Run, Window map[string]metrics.Quantiles
	// ReasoningSeen adds the TTFO row.
	ReasoningSeen bool
}

// Model is the table's state.
type Model struct {
	run, window map[string]metrics.Quantiles
	reasoning   bool
}

// Update applies Msg and ignores other messages.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if msg, ok := msg.(Msg); ok {
		m.run, m.window = msg.Run, msg.Window
		m.reasoning = m.reasoning || msg.ReasoningSeen
	}
	return m, nil
}

type row struct {
	label string
	tag   metrics.Tag
}

var rows = []row{
	{"TTFT", metrics.TTFT},
	{"TTFO", metrics.TTFO},
	{"ITL", metrics.ITL},
	{"latency", metrics.RequestLatency},
}

const (
	labelW = 8
	colW   = 8
	// fullW fits the window columns besides the run's.
	fullW = labelW + 6*colW + 2
	// countW adds the sample count.
	countW = fullW + colW
)

// Height is the number of lines View renders.
func (m Model) Height() int {
	if m.reasoning {
		return 1 + len(rows)
	}
	return len(rows)
}

// View renders the table in width cells; the last-10 s columns are dropped
// when they do not fit.
func (m Model) View(width int) string {
	wide := width >= fullW
	var b strings.Builder
	head := text.Fit("ms", labelW) + text.Right("p50", colW) + text.Right("p90", colW) + text.Right("p99", colW)
	if wide {
		head += "  " + text.Right("10s p50", colW) + text.Right("p90", colW) + text.Right("p99", colW)
		if width >= countW {
			head += text.Right("n", colW)
		}
	}
	b.WriteString(text.Fit(text.Dim.Render(head), width))
	for _, r := range rows {
		if r.tag == metrics.TTFO && !m.reasoning {
			continue
		}
		q, w := m.run[string(r.tag)], m.window[string(r.tag)]
		line := text.Fit(r.label, labelW) + text.Right(text.Ms(q.P50), colW) + text.Right(text.Ms(q.P90), colW) + text.Right(text.Bold.Render(text.Ms(q.P99)), colW)
		if wide {
			line += "  " + text.Right(text.Ms(w.P50), colW) + text.Right(text.Ms(w.P90), colW) + text.Right(text.Ms(w.P99), colW)
			if width >= countW {
				line += text.Dim.Render(text.Right(strconv.FormatInt(q.Count, 10), colW))
			}
		}
		b.WriteString("\n")
		b.WriteString(text.Fit(line, width))
	}
	return b.String()
}
