package tui

import (
	"strconv"

	"github.com/charmbracelet/bubbles/help"
	binding "github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"

	"github.com/surgebench/surge/tui/internal/text"
)

// keyMap is every key the dashboard answers, with its help text: the ?
// overlay (FullHelp) and the footer (short help, see footer) are both
// rendered from these bindings, so a key and its help cannot drift apart.
type keyMap struct {
	Stop, Next, Prev, Zoom, Help, Close binding.Binding
}

var keys = keyMap{
	Stop:  binding.NewBinding(binding.WithKeys("q", "ctrl+c"), binding.WithHelp("q, ctrl+c", "stop: send no new requests, let in-flight ones finish within the grace period, write the exports; again: cancel them now")),
	Next:  binding.NewBinding(binding.WithKeys("tab"), binding.WithHelp("tab", "switch between the overview and the stages & errors view")),
	Prev:  binding.NewBinding(binding.WithKeys("shift+tab"), binding.WithHelp("shift+tab", "switch back")),
	Zoom:  binding.NewBinding(binding.WithKeys("z"), binding.WithHelp("z", "zoom the throughput axis to the data's band; again: from 0")),
	Help:  binding.NewBinding(binding.WithKeys("?"), binding.WithHelp("?", "show or hide this help")),
	Close: binding.NewBinding(binding.WithKeys("esc"), binding.WithHelp("esc", "close this help")),
}

// ShortHelp is the footer's bindings with their short names; the page
// name of tab comes from the model (see footer).
func (k keyMap) ShortHelp() []binding.Binding {
	stop, next, hlp := k.Stop, k.Next, k.Help
	stop.SetHelp("q", "stop")
	next.SetHelp("tab", "next page")
	hlp.SetHelp("?", "help")
	return []binding.Binding{stop, next, hlp}
}

// FullHelp is the ? overlay: one column of every key, then the live
// controls.
func (k keyMap) FullHelp() [][]binding.Binding {
	return [][]binding.Binding{{k.Stop, k.Next, k.Prev, k.Zoom, k.Help, k.Close}}
}

// liveHelp is FullHelp with the live-control keys (a live run's overlay).
func liveHelp() [][]binding.Binding {
	col := keys.FullHelp()[0]
	for _, lk := range liveKeys {
		col = append(col, lk.b)
	}
	return [][]binding.Binding{col}
}

// newHelp renders help plainly: the footer is dimmed as a whole, and the
// overlay's keys are bold in a column wide enough for "shift+tab".
func newHelp() help.Model {
	h := help.New()
	plain := lipgloss.NewStyle()
	h.ShortSeparator = "  "
	h.Styles = help.Styles{
		ShortKey: plain, ShortDesc: plain, ShortSeparator: plain, Ellipsis: plain,
		FullKey: text.Bold.Width(11), FullDesc: plain, FullSeparator: plain,
	}
	return h
}

// footer names the keys.
func (m model) footer() string {
	h := newHelp()
	short := keys.ShortHelp()
	if m.aborting && !m.done {
		return "aborting: in-flight requests are cancelled; the exports are still written  " + h.ShortHelpView(short[2:])
	}
	if m.stopping && !m.done {
		return "stopping: in-flight requests drain (ctrl+c again cancels them)  " + h.ShortHelpView(short[2:])
	}
	if m.note != "" {
		return m.note
	}
	p := "overview"
	if m.page == detail {
		p = "stages & errors"
	}
	short[1].SetHelp("tab", p+" ("+strconv.Itoa(int(m.page)+1)+"/"+strconv.Itoa(int(pages))+")")
	return h.ShortHelpView(short)
}
