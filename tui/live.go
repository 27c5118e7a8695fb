package tui

import (
	"strconv"
	"strings"

	binding "github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/surgebench/surge/tui/load"
)

// Action is a live-control key's request: raise or lower the load by a
// step, double or halve it, pause or resume issuing.
type Action string

// The live-control actions.
const (
	StepUp   Action = "step_up"
	StepDown Action = "step_down"
	Double   Action = "double"
	Halve    Action = "halve"
	Pause    Action = "pause"
	Resume   Action = "resume"
)

// LiveState is a live session's setting and, in a capacity search, its
// progress, as the load panel and the simple lines show it.
type LiveState = load.Live

// Control applies a live-control action and returns the setting after it.
// The app hands one in through Info; the dashboard calls it from a
// command, never from Update.
type Control func(Action) (LiveState, error)

// liveKeys are the live-control bindings, answered only when Info.Control
// is set.
var liveKeys = []struct {
	b binding.Binding
	a Action
}{
	{binding.NewBinding(binding.WithKeys("+", "="), binding.WithHelp("+", "raise the concurrency or request rate by a step (a new stage)")), StepUp},
	{binding.NewBinding(binding.WithKeys("-"), binding.WithHelp("-", "lower it by a step")), StepDown},
	{binding.NewBinding(binding.WithKeys("]"), binding.WithHelp("]", "double it")), Double},
	{binding.NewBinding(binding.WithKeys("["), binding.WithHelp("[", "halve it")), Halve},
	{binding.NewBinding(binding.WithKeys("p"), binding.WithHelp("p", "pause issuing (in-flight requests finish)")), Pause},
	{binding.NewBinding(binding.WithKeys("r"), binding.WithHelp("r", "resume issuing")), Resume},
}

// noteMsg is a line for the status line: why a key did nothing.
type noteMsg string

// liveMsg is a live-control action's outcome.
type liveMsg struct {
	state LiveState
	err   error
}

// noLiveReason says why a run without Control ignores the live keys,
// short enough for an 80-column status line after "+: ".
func noLiveReason(info Info) string {
	switch {
	case info.Control != nil:
		return ""
	case info.Shard != "":
		return "shard " + info.Shard + " only watches; steering one host would skew the plan"
	case len(info.Stages) > 1:
		return "a sweep fixes each stage's " + strings.ReplaceAll(info.Mode, "_", " ") + " (keys steer one-value runs)"
	case info.Mode == "fixed_schedule":
		return "a fixed schedule replays the trace's timing; nothing to steer"
	case info.Mode == "user_centric":
		return "user-centric mode paces each user; nothing to steer"
	}
	return "this run cannot be steered (a ramp, or live control is off)"
}

// liveKey runs the action bound to k, if any, in a command. Without live
// control the key is answered in the status line with the reason.
func (m model) liveKey(k tea.KeyMsg) (tea.Cmd, bool) {
	if m.done || m.stopping {
		return nil, false
	}
	for _, lk := range liveKeys {
		if binding.Matches(k, lk.b) {
			if m.control == nil {
				return func() tea.Msg { return noteMsg(lk.b.Help().Key + ": " + m.noLive) }, true
			}
			ctl, a := m.control, lk.a
			return func() tea.Msg {
				st, err := ctl(a)
				return liveMsg{st, err}
			}, true
		}
	}
	return nil, false
}

// liveLine is the simple UI's live part: "  live concurrency 8 paused".
func liveLine(l *LiveState) string {
	if l == nil {
		return ""
	}
	s := "  live " + l.Mode + " " + strconv.FormatFloat(l.Value, 'g', 6, 64)
	if l.Paused {
		s += " paused"
	}
	if l.Search != "" {
		s += "  search " + l.Search
	}
	return s
}
