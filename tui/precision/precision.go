// Package precision is the dashboard's panel of a run's precision targets
// (--precision): each target's interval half-width now against its bound,
// shown while the run is judged on them.
package precision

import (
	"strconv"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/tui/internal/text"
)

// Msg carries the newest judgement of the targets (nil: none are set).
type Msg struct {
	Status *metrics.PrecisionStatus
}

// Model is the panel's state.
type Model struct {
	status *metrics.PrecisionStatus
}

// Update applies Msg and ignores other messages.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if msg, ok := msg.(Msg); ok && msg.Status != nil {
		m.status = msg.Status
	}
	return m, nil
}

// Title is the panel's title: the requests judged so far.
func (m Model) Title() string {
	if m.status == nil {
		return "precision"
	}
	return "precision · " + strconv.FormatInt(m.status.Requests, 10) + " req"
}

// Len is the number of targets shown (0: the panel is hidden).
func (m Model) Len() int {
	if m.status == nil {
		return 0
	}
	return len(m.status.Targets)
}

// short names a target's metric as the latency table does.
var short = map[metrics.Tag]string{
	metrics.TTFT: "TTFT", metrics.ITL: "ITL", metrics.RequestLatency: "latency",
	metrics.OutputTokenThroughput: "out tok/s", metrics.RequestThroughput: "req/s",
}

// View renders one line per target: the metric and statistic, the
// half-width now, the bound, a bar of how far it has come, and ✓ once met.
func (m Model) View(width, height int) string {
	if m.status == nil {
		return ""
	}
	return text.Rows(m.status.Targets, width, height, func(t metrics.TargetStatus) string {
		name := short[t.Metric]
		if name == "" {
			name = string(t.Metric)
		}
		now := metrics.FormatHalfWidth(t.HalfWidth)
		line := text.Fit(name+" "+t.Stat(), 14) + text.Right(now, 7) + " → " + text.Right(metrics.FormatHalfWidth(t.Bound), 6)
		if t.Met {
			return line + "  " + text.Good.Render("✓")
		}
		// The bar fills as the half-width comes down to its bound.
		if room := width - len([]rune(line)) - 2; room >= 6 {
			frac := 0.0
			if t.HalfWidth > 0 {
				frac = t.Bound / t.HalfWidth
			}
			line += "  " + text.Warn.Render(text.Bar(frac, min(room, 12)))
		}
		return line
	})
}
