// Package throughput is the dashboard's chart of output tokens/s and
// requests/s over time, one column per second of the run.
package throughput

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/tui/internal/text"
)

// Msg carries a snapshot's per-second timeline, oldest first.
type Msg struct {
	Timeline []metrics.Point
}

// Model is the chart's state.
type Model struct {
	points []metrics.Point
}

// Update applies Msg and ignores other messages.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if msg, ok := msg.(Msg); ok {
		m.points = msg.Timeline
	}
	return m, nil
}

// eighths are the partial blocks, from empty to full.
var eighths = []string{" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"}

const axisW = 6 // "2.4k ┤"

// View renders the chart in width×height cells: a summary line, the
// tokens/s chart and, given room, a requests/s sparkline.
func (m Model) View(width, height int) string {
	if width <= 0 || height <= 0 {
		return ""
	}
	var now, peak, reqNow float64
	for _, p := range m.points {
		peak = max(peak, p.OutputTokens)
	}
	if n := len(m.points); n > 0 {
		now, reqNow = m.points[n-1].OutputTokens, m.points[n-1].Requests
	}
	var b strings.Builder
	b.WriteString(text.Fit("out "+text.Bold.Render(text.Num(now))+" tok/s  "+text.Bold.Render(text.Num(reqNow))+" req/s  "+text.Dim.Render("peak "+text.Num(peak)+" tok/s"), width))
	chartH := height - 1
	withReq := chartH >= 4
	if withReq {
		chartH--
	}
	cols := max(0, width-axisW)
	pts := m.points
	if len(pts) > cols {
		pts = pts[len(pts)-cols:]
	}
	if chartH > 0 {
		top := niceCeil(peak)
		levels := make([]int, len(pts))
		for i, p := range pts {
			if top > 0 {
				levels[i] = int(p.OutputTokens / top * float64(chartH*8))
			}
		}
		for r := chartH - 1; r >= 0; r-- {
			b.WriteString("\n")
			axis := "     │"
			switch r {
			case chartH - 1:
				axis = text.Right(text.Num(top), 5) + "┤"
			case 0:
				axis = text.Right("0", 5) + "┤"
			}
			b.WriteString(text.Dim.Render(axis))
			var row strings.Builder
			for _, lv := range levels {
				row.WriteString(eighths[max(0, min(8, lv-r*8))])
			}
			b.WriteString(text.Fit(text.Good.Render(row.String()), cols))
		}
	}
	if withReq {
		var peakReq float64
		for _, p := range pts {
			peakReq = max(peakReq, p.Requests)
		}
		var row strings.Builder
		for _, p := range pts {
			lv := 0
			if peakReq > 0 {
				lv = int(p.Requests / peakReq * 8)
			}
			row.WriteString(eighths[max(0, min(8, lv))])
		}
		b.WriteString("\n")
		b.WriteString(text.Dim.Render("req/s "))
		b.WriteString(text.Fit(row.String(), cols))
	}
	return b.String()
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten, so the axis reads
// as a round number.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 0
	}
	p := 1.0
	for p*10 <= v {
		p *= 10
	}
	for p > v {
		p /= 10
	}
	for _, m := range []float64{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}
