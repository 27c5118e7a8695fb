// Package models is the dashboard's panel of a run that shares its
// requests among several models (or LoRA adapters): one line per model,
// its requests, errors, throughput and latencies so far.
package models

import (
	"strconv"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/tui/internal/text"
)

// Msg carries each model's requests so far.
type Msg struct {
	Models []metrics.ModelLive
}

// Model is the panel's state.
type Model struct {
	models []metrics.ModelLive
}

// Update applies Msg and ignores other messages.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if msg, ok := msg.(Msg); ok {
		m.models = msg.Models
	}
	return m, nil
}

// Title is the panel's title.
func (Model) Title() string { return "models" }

// Len is the number of models shown (0: a run of one model, hidden).
func (m Model) Len() int { return len(m.models) }

// View renders one line per model, at most height lines of width cells.
func (m Model) View(width, height int) string {
	name := 0
	for _, x := range m.models {
		name = max(name, len(x.Model))
	}
	name = min(name, max(8, width/3))
	return text.Rows(m.models, width, height, func(x metrics.ModelLive) string {
		line := text.Clip(x.Model, name) + pad(name-len(x.Model)) +
			" " + text.Right(strconv.FormatInt(x.Finished, 10), 6) + " req"
		if x.Failed > 0 {
			line += " " + text.Bad.Render(strconv.FormatInt(x.Failed, 10)+" err")
		}
		line += "  " + text.Right(strconv.FormatFloat(x.OutputTokenThroughput, 'f', 0, 64), 5) + " tok/s"
		if x.TTFT.Count > 0 {
			line += "  TTFT p99 " + strconv.FormatFloat(x.TTFT.P99, 'f', 1, 64)
		}
		return line
	})
}

func pad(n int) string {
	if n <= 0 {
		return ""
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = ' '
	}
	return string(b)
}
