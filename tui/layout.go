package tui

import (
	"strconv"
	"strings"

	"github.com/surgebench/surge/tui/header"
	"github.com/surgebench/surge/tui/internal/text"
	"github.com/surgebench/surge/tui/throughput"
)

// Layout bounds. From 80×24 up every panel fits; below, the dashboard
// degrades (panels cut from the bottom, columns from the right).
const (
	// twoCol is the width from which the chart and the side panels sit
	// side by side.
	twoCol = 80
	// wideTop is the width from which latency and load share a row.
	wideTop = 120
	gap     = 2
)

// View lays out the components for the terminal's size. Every line is cut
// to the width and the whole to the height, so nothing wraps or scrolls.
func (m model) View() string {
	w, h := m.width, m.height
	if w < 20 || h < 6 {
		return text.Clip("surge: terminal too small ("+strconv.Itoa(w)+"×"+strconv.Itoa(h)+")", w)
	}
	lines := make([]string, 0, h)
	lines = append(lines, text.Lines(m.header.View(w), w, header.Height, true)...)
	bodyH := h - header.Height - 1
	var body []string
	switch {
	case m.help:
		body = m.helpView(w, bodyH)
	case m.page == detail:
		body = m.detailView(w, bodyH)
	default:
		body = m.overview(w, bodyH)
	}
	lines = append(lines, fill(body, w, bodyH)...)
	lines = append(lines, text.Fit(text.Dim.Render(m.footer()), w))
	return strings.Join(lines, "\n")
}

// panel renders a titled panel of exactly height lines (0: none).
func panel(title, body string, width, height int) []string {
	if height <= 0 {
		return nil
	}
	out := make([]string, 0, height)
	out = append(out, text.Rule(title, width))
	return append(out, text.Lines(body, width, height-1, true)...)
}

// fill cuts or pads lines to exactly height lines of width cells.
func fill(lines []string, width, height int) []string {
	height = max(0, height)
	if len(lines) > height {
		return lines[:height]
	}
	blank := strings.Repeat(" ", width)
	for len(lines) < height {
		lines = append(lines, blank)
	}
	return lines
}

// hjoin puts two columns of lines side by side.
func hjoin(left []string, lw int, right []string, rw int, height int) []string {
	if height <= 0 {
		return nil
	}
	left, right = fill(left, lw, height), fill(right, rw, height)
	sep := strings.Repeat(" ", gap)
	out := make([]string, height)
	for i := range out {
		out[i] = left[i] + sep + right[i]
	}
	return out
}

func (m model) overview(w, h int) []string {
	out := make([]string, 0, h)
	wide := w >= wideTop
	latW := w
	if wide {
		latW = w / 2
	}
	latTitle := "latency (ms) · whole run · last 10 s"
	if latW < 58 {
		latTitle = "latency (ms)"
	}
	lat := panel(latTitle, m.latency.View(latW), latW, 1+m.latency.Height())
	if wide {
		rw := w - latW - gap
		lat = hjoin(lat, latW, panel("load", m.load.View(rw), rw, 1+3), rw, len(lat))
	}
	out = append(out, lat...)

	rest := h - len(out)
	stagesH := 0
	if n := m.stages.Len(); n > 0 {
		stagesH = max(0, min(n+2, max(4, rest/3), rest))
	}
	// The chart gets its most useful height and the side panels their
	// content first, then the stage table its rows; the chart takes what is
	// left, so no row stays blank.
	sideW, chartW := w, w
	if w >= twoCol {
		chartW = w * 11 / 20
		sideW = w - chartW - gap
	}
	want := throughput.MaxHeight + 1
	if sideH := len(m.side(sideW, h, !wide)); w >= twoCol {
		want = max(want, sideH)
	} else {
		want += sideH
	}
	mid := max(0, min(rest-stagesH, want))
	if n := m.stages.Len(); n > 0 {
		stagesH = max(0, min(n+2, rest-mid))
	}
	mid = max(0, rest-stagesH)

	if w >= twoCol {
		lw := w * 11 / 20
		rw := w - lw - gap
		chart := panel("throughput", m.throughput.View(lw, mid-1), lw, mid)
		out = append(out, hjoin(chart, lw, m.side(rw, mid, !wide), rw, mid)...)
	} else {
		// The chart keeps at least four lines; the side panels get the rest.
		side := m.side(w, mid-4, true)
		chartH := mid - len(side)
		out = append(out, panel("throughput", m.throughput.View(w, chartH-1), w, chartH)...)
		out = append(out, side...)
	}
	if stagesH > 0 {
		out = append(out, m.stagesPanel(w, stagesH)...)
	}
	return out
}

// gauge is a panel of one line per thing it watches (a GPU, a server
// endpoint), hidden while it watches none. The GPU and server panels are
// gauges; the layout treats them alike.
type gauge interface {
	Title() string
	Len() int
	View(width, height int) string
}

// gauges are the gauge panels in order of importance: the precision
// targets first (they say when the run ends), then where the time went.
func (m model) gauges() []gauge { return []gauge{m.precision, m.breakdown, m.server, m.gpu} }

// side stacks the small panels in order of importance: load (unless it
// sits by the latency table), errors, server gauges, GPUs. A panel that
// does not fit whole is left out; errors shrink to what is left.
func (m model) side(w, h int, withLoad bool) []string {
	if h <= 0 {
		return nil
	}
	var out []string
	if withLoad && h >= 4 {
		out = append(out, panel("load", m.load.View(w), w, 1+3)...)
	}
	errWant := max(1, min(m.failures.Types(), 4))
	var gauges [][]string
	room := h - len(out) - 1 - min(errWant, 2)
	for _, g := range m.gauges() {
		if n := g.Len(); n > 0 && 1+n <= room {
			gauges = append(gauges, panel(g.Title(), g.View(w, n), w, 1+n))
			room -= 1 + n
		}
	}
	gaugeLines := 0
	for _, g := range gauges {
		gaugeLines += len(g)
	}
	if avail := h - len(out) - gaugeLines; avail >= 2 {
		errRows := min(errWant, avail-1)
		out = append(out, panel(m.errTitle(), m.failures.View(w, errRows), w, 1+errRows)...)
	}
	for _, g := range gauges {
		out = append(out, g...)
	}
	if len(out) > h {
		out = out[:h]
	}
	return out
}

func (m model) errTitle() string {
	if t := m.failures.Types(); t > 0 {
		return "errors (" + strconv.Itoa(t) + " types)"
	}
	return "errors"
}

func (m model) stagesPanel(w, h int) []string {
	title := "stages"
	if k := m.stages.Knee(); k >= 0 {
		title += " · knee at stage " + strconv.Itoa(k+1)
	}
	return panel(title, m.stages.View(w, h-1), w, h)
}

// detailView is the tab page: every stage, every error type, the gauges.
func (m model) detailView(w, h int) []string {
	var out []string
	var tail []string
	for _, g := range m.gauges() {
		if n := g.Len(); n > 0 {
			tail = append(tail, panel(g.Title(), g.View(w, n), w, 1+n)...)
		}
	}
	room := max(4, h-len(tail))
	errRows := max(1, m.failures.Types())
	if n := m.stages.Len(); n > 0 {
		stH := min(n+2, max(3, room-min(errRows, room/2)-1))
		out = append(out, m.stagesPanel(w, stH)...)
	} else {
		out = append(out, panel("stages", text.Dim.Render("no sweep or ramp in this run"), w, 2)...)
	}
	errH := max(2, min(errRows+1, room-len(out)))
	out = append(out, panel(m.errTitle(), m.failures.View(w, errH-1), w, errH)...)
	out = append(out, tail...)
	// The throughput chart (the stages marked on it) takes the rows left,
	// so the page has no blank half.
	if left := h - len(out); left >= 5 {
		out = append(out, panel("throughput", m.throughput.View(w, left-1), w, left)...)
	}
	return out
}

func (m model) helpView(w, h int) []string {
	var b strings.Builder
	// FullHelpView pads every line to the longest description; cut the
	// padding so only a line that is really too long gets an ellipsis.
	groups := keys.FullHelp()
	if m.control != nil {
		groups = liveHelp()
	}
	for i, l := range strings.Split(newHelp().FullHelpView(groups), "\n") {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(strings.TrimRight(l, " "))
	}
	b.WriteString("\n\n" + text.Dim.Render("Latencies are in ms: p50/p90/p99 over the whole run and the last 10 s."))
	b.WriteString("\n" + text.Dim.Render("The knee is where latency blows up; the stage before it is the operating point."))
	b.WriteString("\n" + text.Dim.Render("Scheduler lag above 10 ms at p99 means the load generator fell behind."))
	return panel("help", b.String(), w, h)
}
