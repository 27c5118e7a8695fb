// Package throughput is the dashboard's chart of output tokens/s and
// requests/s over time, one column per second of the run.
package throughput

import (
	"math"
	"slices"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/tui/internal/text"
)

// Msg carries a snapshot's per-second timeline, oldest first, and the
// second at which each stage after the first began (a sweep's stage
// boundaries, marked on the chart).
type Msg struct {
	Timeline    []metrics.Point
	StageStarts []int
}

// ZoomMsg toggles the axis between zero-based (the default: bars compare
// as their values do) and zoomed to the data's band (a steady run's small
// swings, readable).
type ZoomMsg struct{}

// Model is the chart's state.
type Model struct {
	points []metrics.Point
	starts []int
	zoom   bool
}

// Update applies Msg and ZoomMsg and ignores other messages.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case Msg:
		m.points, m.starts = msg.Timeline, msg.StageStarts
	case ZoomMsg:
		m.zoom = !m.zoom
	}
	return m, nil
}

// eighths are the partial blocks, from empty to full.
var eighths = []string{" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"}

const axisW = 6 // "2.4k ┤"

// usefulRows is the chart's height past which more rows add little
// reading: the layout gives the chart this much before the other panels'
// extra rows, and whatever is left over after them.
const usefulRows = 16

// MaxHeight is the height (the summary line and usefulRows) the layout
// gives the chart first; View fills any height it is given.
const MaxHeight = 1 + usefulRows

// column is one column of the chart: the mean of the seconds it covers,
// and whether a stage began in them.
type column struct {
	tok, req float64
	stage    bool
}

// columns fits the timeline into at most cols columns: one second each
// while it fits, else the whole run in buckets of several seconds, so a
// sweep's early stages stay on screen. per is the seconds per column.
func (m Model) columns(cols int) (out []column, per int) {
	n := len(m.points)
	if n == 0 || cols <= 0 {
		return nil, 1
	}
	per = (n + cols - 1) / cols
	starts := map[int]bool{}
	for _, s := range m.starts {
		starts[s] = true
	}
	for i := 0; i < n; i += per {
		var c column
		k := 0
		for _, p := range m.points[i:min(n, i+per)] {
			c.tok += p.OutputTokens
			c.req += p.Requests
			c.stage = c.stage || starts[p.Second]
			k++
		}
		c.tok /= float64(k)
		c.req /= float64(k)
		out = append(out, c)
	}
	return out, per
}

// scale is the chart's axis: from zero to a round number over the top;
// zoomed, from the data's range when the data sit in a narrow band (a
// steady run would otherwise be a solid block), values under the floor
// drawn as the lowest eighth.
func scale(cols []column, zoom bool) (lo, hi float64) {
	if len(cols) == 0 {
		return 0, 0
	}
	v := make([]float64, 0, len(cols))
	for _, c := range cols {
		v = append(v, c.tok)
	}
	slices.Sort(v)
	top := v[len(v)-1]
	// The 10th percentile: the ramp of the first seconds does not pull the
	// floor to zero.
	low := v[len(v)/10]
	hi = niceCeil(top)
	if !zoom || top <= 0 || low < 0.4*top {
		return 0, hi
	}
	// A band under a quarter of the top is drawn a quarter high: a steady
	// run's 1% jitter must not fill the chart as if it were a swing.
	step := niceCeil(max(top-low, top/4) / 3)
	lo = max(0, math.Floor(low/step)*step-step)
	hi = math.Ceil(top/step) * step
	return lo, hi
}

// View renders the chart in width×height cells: a summary line, the
// tokens/s chart and, given room, a requests/s sparkline. A sweep's stage
// boundaries are dotted columns.
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
	cols, per := m.columns(max(0, width-axisW))
	var b strings.Builder
	head := "out " + text.Bold.Render(text.Num(now)) + " tok/s  " + text.Bold.Render(text.Num(reqNow)) + " req/s  " + text.Dim.Render("peak "+text.Num(peak)+" tok/s")
	if per > 1 {
		head += text.Dim.Render("  " + strconv.Itoa(per) + " s/col")
	}
	lo, top := scale(cols, m.zoom)
	if lo > 0 {
		head += text.Warn.Render("  zoomed (z)")
	}
	b.WriteString(text.Fit(head, width))
	chartH := height - 1
	withReq := chartH >= 4
	if withReq {
		chartH--
	}
	if chartH > 0 {
		levels := make([]int, len(cols))
		for i, c := range cols {
			if top > lo {
				levels[i] = max(1, int((c.tok-lo)/(top-lo)*float64(chartH*8)))
			}
			if c.tok <= 0 {
				levels[i] = 0
			}
		}
		for r := chartH - 1; r >= 0; r-- {
			b.WriteString("\n")
			axis := "     │"
			switch {
			case r == chartH-1:
				axis = text.Right(text.Num(top), 5) + "┤"
			case r == 0:
				axis = text.Right(text.Num(lo), 5) + "┤"
			case chartH >= 6 && r == chartH/2:
				// The axis's round midpoint, which this row's band holds.
				axis = text.Right(text.Num((lo+top)/2), 5) + "┤"
			case chartH >= 20 && r == chartH/4:
				// A tall chart's quarters, on the rows whose bands hold them.
				axis = text.Right(text.Num(lo+(top-lo)/4), 5) + "┤"
			case chartH >= 20 && r == 3*chartH/4:
				axis = text.Right(text.Num(lo+(top-lo)*3/4), 5) + "┤"
			}
			b.WriteString(text.Dim.Render(axis))
			var row strings.Builder
			for i, lv := range levels {
				cell := eighths[max(0, min(8, lv-r*8))]
				if cell == " " && cols[i].stage {
					row.WriteString(text.Dim.Render("┊"))
					continue
				}
				row.WriteString(text.Good.Render(cell))
			}
			b.WriteString(text.Fit(row.String(), len(cols)))
		}
	}
	if withReq {
		var peakReq float64
		for _, c := range cols {
			peakReq = max(peakReq, c.req)
		}
		var row strings.Builder
		for _, c := range cols {
			lv := 0
			if peakReq > 0 {
				lv = int(c.req / peakReq * 8)
			}
			row.WriteString(eighths[max(0, min(8, lv))])
		}
		b.WriteString("\n")
		b.WriteString(text.Dim.Render("req/s "))
		b.WriteString(text.Fit(row.String(), len(cols)))
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
