// Package stages is the dashboard's table of sweep and ramp stages. It
// fills in as each stage ends and highlights the knee: the recommended
// operating point.
package stages

import (
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/tui/internal/text"
)

// PlanMsg lists the planned stage values (sweep targets) and the mode they
// set; it arrives once, before the first snapshot.
type PlanMsg struct {
	Mode   string
	Values []float64
	// Labels, when set, name the stages in place of Values (a sweep over
	// several parameters: "128×4").
	Labels []string
}

// Msg carries the stages finished so far and the index of the one running.
type Msg struct {
	Stages  []metrics.StageSummary
	Current int
	// Done marks the run as finished: no stage is running any more.
	Done bool
}

// Model is the table's state.
type Model struct {
	plan    PlanMsg
	done    []metrics.StageSummary
	current int
	ended   bool
}

// Update applies PlanMsg and Msg and ignores other messages.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case PlanMsg:
		m.plan = msg
	case Msg:
		m.done, m.current, m.ended = msg.Stages, msg.Current, msg.Done
	}
	return m, nil
}

// stage finds the finished stage with index i; stages arrive in order, so
// it is usually at position i.
func (m Model) stage(i int) (metrics.StageSummary, bool) {
	if i < len(m.done) && m.done[i].Index == i {
		return m.done[i], true
	}
	for _, s := range m.done {
		if s.Index == i {
			return s, true
		}
	}
	return metrics.StageSummary{}, false
}

// Len is the number of rows the table has (0: the panel is hidden).
func (m Model) Len() int { return max(len(m.plan.Values), len(m.done)) }

// Knee is the index of the stage flagged as the knee, or -1.
func (m Model) Knee() int {
	for _, s := range m.done {
		if s.Knee {
			return s.Index
		}
	}
	return -1
}

type col struct {
	head string
	w    int
}

var cols = []col{{"#", 3}, {"target", 8}, {"reqs", 7}, {"err", 6}, {"tok/s", 8}, {"req/s", 7}, {"TTFT p99", 9}, {"ITL p50", 8}, {"lat p99", 9}}

// View renders a header and at most height-1 stage rows in width cells,
// keeping the running stage in view; columns that do not fit are dropped
// from the right.
func (m Model) View(width, height int) string {
	if height <= 0 || m.Len() == 0 {
		return ""
	}
	ncol, used := 0, 0
	for _, c := range cols {
		if used+c.w > width-7 && ncol >= 4 {
			break
		}
		used += c.w
		ncol++
	}
	var b strings.Builder
	var head strings.Builder
	for _, c := range cols[:ncol] {
		head.WriteString(text.Right(c.head, c.w))
	}
	b.WriteString(text.Fit(text.Dim.Render(head.String()), width))

	lines := make([]string, 0, m.Len())
	focus := len(m.done)
	for i := range m.Len() {
		s, finished := m.stage(i)
		cells := make([]string, 0, ncol)
		value := s.Value
		if !finished && i < len(m.plan.Values) {
			value = m.plan.Values[i]
		}
		label := text.Num(value)
		if i < len(m.plan.Labels) {
			label = m.plan.Labels[i]
			if r := []rune(label); len(r) > cols[1].w-1 {
				label = string(r[:cols[1].w-2]) + "…"
			}
		}
		cells = append(cells, strconv.Itoa(i+1), label)
		if finished {
			cells = append(cells, strconv.FormatInt(s.RequestCount, 10), strconv.FormatInt(s.ErrorRequestCount, 10),
				text.Num(s.OutputTokenThroughput), text.Num(s.RequestThroughput), text.Ms(s.TTFT.P99), text.Ms(s.ITL.P50), text.Ms(s.Latency.P99))
		} else {
			state := "pending"
			if i == m.current && !m.ended {
				state, focus = "running…", i
			}
			cells = append(cells, state)
		}
		var line strings.Builder
		for j, c := range cells {
			if j >= ncol {
				break
			}
			if !finished && j == 2 {
				line.WriteString("  " + text.Dim.Render(c))
				continue
			}
			line.WriteString(text.Right(c, cols[j].w))
		}
		l := line.String()
		if finished && s.Knee {
			l = text.Knee.Render(l) + text.Warn.Render(" ◀ knee")
		} else if finished && s.ErrorRequestCount > 0 {
			l = strings.Replace(l, text.Right(strconv.FormatInt(s.ErrorRequestCount, 10), cols[3].w), text.Bad.Render(text.Right(strconv.FormatInt(s.ErrorRequestCount, 10), cols[3].w)), 1)
		}
		lines = append(lines, text.Fit(l, width))
	}
	avail := height - 1
	start, end := 0, len(lines)
	if len(lines) > avail {
		end = min(len(lines), focus+2)
		start = max(0, end-avail)
		end = start + avail
	}
	shown := lines[start:end]
	// Keep the knee in view: it is the row the run was for.
	if k := m.Knee(); k >= 0 && k < start && avail >= 2 {
		shown = append([]string{lines[k]}, lines[start+1:end]...)
	}
	for _, l := range shown {
		b.WriteString("\n")
		b.WriteString(l)
	}
	return b.String()
}
