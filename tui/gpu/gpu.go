// Package gpu is the dashboard's panel of per-GPU utilisation, memory and
// power, shown when telemetry is present.
package gpu

import (
	"strconv"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/surgebench/surge/telemetry"
	"github.com/surgebench/surge/tui/internal/text"
)

// Msg carries the latest reading per GPU.
type Msg struct {
	GPUs []telemetry.GPUSample
}

// Model is the panel's state.
type Model struct {
	gpus []telemetry.GPUSample
}

// Update applies Msg and ignores other messages.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if msg, ok := msg.(Msg); ok {
		m.gpus = msg.GPUs
	}
	return m, nil
}

// Title is the panel's title.
func (Model) Title() string { return "GPU" }

// Len is the number of GPUs shown (0: the panel is hidden).
func (m Model) Len() int { return len(m.gpus) }

const gib = 1 << 30

// View renders one line per GPU, at most height lines of width cells.
func (m Model) View(width, height int) string {
	return text.Rows(m.gpus, width, height, func(g telemetry.GPUSample) string {
		tail := " " + text.Right(text.Pct(g.SMUtil), 4) +
			"  mem " + text.Right(strconv.FormatFloat(float64(g.MemUsed)/gib, 'f', 0, 64), 3) + "/" +
			strconv.FormatFloat(float64(g.MemTotal)/gib, 'f', 0, 64) + "G" +
			"  " + text.Right(strconv.FormatFloat(g.PowerW, 'f', 0, 64), 4) + "W"
		head := strconv.Itoa(g.Index) + " "
		bw := min(20, width-len(head)-len(tail))
		line := head + text.Good.Render(text.Bar(g.SMUtil/100, bw)) + tail
		if extra := width - bw - len(head) - len(tail); extra > 10 && g.Name != "" {
			line += "  " + text.Dim.Render(g.Name)
		}
		return line
	})
}
