// Package load is the dashboard's panel of requests in flight against the
// concurrency cap, request counts and the scheduler's lag.
package load

import (
	"strconv"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/tui/internal/text"
)

// LagLimitMs is the p99 scheduler lag above which the run is flagged (the
// summary warns at the same bound).
const LagLimitMs = 10

// Msg carries a snapshot's counters.
type Msg struct {
	Started, Finished, Failed, InFlight int64
	// Concurrency is the cap in force (0: unlimited).
	Concurrency int
	// Lag is actual minus intended send time, in ms.
	Lag metrics.Quantiles
	// ReadDelay is the client's read delay per streamed event (read time −
	// kernel receive time), in ms; Count 0 when not measured.
	ReadDelay metrics.Quantiles
	// InPrefill counts the requests in flight not yet past their first
	// token; PrefillCap is --prefill-concurrency (0: none).
	InPrefill  int64
	PrefillCap int
}

// ReadDelayLimitMs is the p99 read delay above which the client is
// flagged as saturated (the summary warns at the same bound).
const ReadDelayLimitMs = metrics.ReadDelayWarnMs

// Live is a live session's setting (the dashboard's +/-/]/[/p/r keys and
// the control port change it) and, in a capacity search, its progress.
type Live struct {
	// Mode is "concurrency" or "request_rate"; Value its setting.
	Mode   string
	Value  float64
	Paused bool
	// Search is the search's progress in one line (phase, bracket, the
	// probe's verdict); "" outside a search.
	Search string
}

// LiveMsg carries the live setting; Err is the last change's error ("":
// none).
type LiveMsg struct {
	Live Live
	Err  string
}

// Model is the panel's state.
type Model struct {
	last Msg
	live *LiveMsg
}

// Update applies Msg and ignores other messages.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case Msg:
		m.last = msg
	case LiveMsg:
		m.live = &msg
	}
	return m, nil
}

// Height is the number of lines View renders.
const Height = 3

// View renders the panel in three lines of width cells. A line that would
// not fit takes a shorter form (the in-flight bar shrinks, then goes; the
// gauges keep their p99s, then their short names) before anything is cut.
func (m Model) View(width int) string {
	s := m.last
	var prefill string
	if s.PrefillCap > 0 || s.InPrefill > 0 {
		prefill = "  prefill " + strconv.FormatInt(s.InPrefill, 10)
		if s.PrefillCap > 0 {
			prefill += " / " + strconv.Itoa(s.PrefillCap)
		}
	}
	var live string
	if l := m.live; l != nil {
		// The live setting leads its line: a key's change shows here at once.
		live = "live " + l.Live.Mode + " " + text.Bold.Render(strconv.FormatFloat(l.Live.Value, 'g', 6, 64))
		if l.Live.Paused {
			live += " " + text.Warn.Render("paused")
		}
		if l.Err != "" {
			live += " " + text.Bad.Render(l.Err)
		}
		if l.Live.Search != "" {
			live += "  " + l.Live.Search
		}
		live += "  "
	}
	flight := "in-flight " + text.Bold.Render(strconv.FormatInt(s.InFlight, 10))
	line1 := live + flight + text.Dim.Render("  no concurrency cap") + prefill
	if s.Concurrency > 0 {
		line1 = live + flight + " / " + strconv.Itoa(s.Concurrency) + prefill
		// The bar takes the room the words leave, up to 30 cells.
		if bw := min(30, width-ansi.StringWidth(line1)-1); bw >= 4 {
			bar := text.Good.Render(text.Bar(float64(s.InFlight)/float64(s.Concurrency), bw))
			line1 = live + flight + " / " + strconv.Itoa(s.Concurrency) + " " + bar + prefill
		}
	}

	ok := s.Finished - s.Failed
	errs := strconv.FormatInt(s.Failed, 10)
	if s.Failed > 0 {
		errs = text.Bad.Render(errs)
	}
	line2 := "sent " + strconv.FormatInt(s.Started, 10) + "  ok " + text.Good.Render(strconv.FormatInt(ok, 10)) + "  err " + errs

	// Both gauges' p50 and p99 where they fit, else the p99s alone (the
	// warnings judge p99), else shorter names: a cut line would hide the
	// read delay.
	gauges := func(form int) string {
		lagName, rdName, ms := "sched lag", "read delay", " ms"
		if form == 2 {
			lagName, rdName, ms = "lag", "read", ""
		}
		l := lagName + " p99 " + text.Ms(s.Lag.P99) + ms
		if form == 0 {
			l = lagName + " p50 " + text.Ms(s.Lag.P50) + "  p99 " + text.Ms(s.Lag.P99) + ms
		}
		if s.Lag.P99 > LagLimitMs {
			flag := "  ! p99 > " + strconv.Itoa(LagLimitMs) + " ms: load generator behind"
			if form > 0 {
				flag = " !"
			}
			l = text.Warn.Render(l + flag)
		}
		if s.ReadDelay.Count == 0 {
			return l
		}
		rd := "  " + rdName + " p99 " + text.Ms(s.ReadDelay.P99) + " ms"
		if form == 0 {
			rd = "  " + rdName + " p50 " + text.Ms(s.ReadDelay.P50) + "  p99 " + text.Ms(s.ReadDelay.P99) + " ms"
		}
		if s.ReadDelay.P99 > ReadDelayLimitMs {
			flag := "  ! client saturated"
			if form > 0 {
				flag = " !"
			}
			rd = text.Warn.Render(rd + flag)
		}
		return l + rd
	}
	line3 := gauges(0)
	for form := 1; form <= 2 && ansi.StringWidth(line3) > width; form++ {
		line3 = gauges(form)
	}
	return text.Fit(line1, width) + "\n" + text.Fit(line2, width) + "\n" + text.Fit(line3, width)
}
