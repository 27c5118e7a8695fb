// Package header is the dashboard's top panel: what is being benchmarked,
// how far the run has got and how long it has left.
package header

import (
	"strconv"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/surgebench/surge/tui/internal/text"
)

// InfoMsg describes the run; it arrives once, before the first snapshot.
type InfoMsg struct {
	Model, URL, Endpoint string
	// Mode and Target say how load is applied, e.g. "concurrency" and "64".
	Mode, Target string
	// TotalRequests and Duration bound the run (0: unbounded).
	TotalRequests int
	Duration      time.Duration
	// Stages is the number of planned sweep stages (0 without a sweep).
	Stages int
	// Shard is "i/N" when this host runs shard i of N of a plan; the
	// request count and progress are then the shard's own.
	Shard string
}

// ProgressMsg carries the run's progress from a snapshot.
type ProgressMsg struct {
	Elapsed  time.Duration
	Phase    string
	Started  int64
	Finished int64
	InFlight int64
	// Stage is the index of the stage in progress.
	Stage int
	// Warning is the latest caveat found while running ("" when none); it
	// takes the progress bar's line, the percentage moving up a line.
	Warning string
	// ETA is the estimated time left, shown when HasETA (the dashboard
	// estimates it from the plan and the measured rates).
	ETA    time.Duration
	HasETA bool
}

// TargetMsg is the load's setting as a live control changed it (a key, the
// control port): the header names it instead of the one the run started
// with.
type TargetMsg struct{ Mode, Target string }

// StoppingMsg tells the header the user asked to stop: the run is draining.
type StoppingMsg struct{}

// AbortingMsg tells the header the user asked again: in-flight requests
// are being cancelled.
type AbortingMsg struct{}

// DoneMsg tells the header the run has finished.
type DoneMsg struct{}

// Model is the header's state.
type Model struct {
	info     InfoMsg
	prog     ProgressMsg
	stopping bool
	aborting bool
	done     bool
}

// Update applies the header's messages and ignores all others.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case InfoMsg:
		m.info = msg
	case ProgressMsg:
		m.prog = msg
	case TargetMsg:
		m.info.Mode, m.info.Target = msg.Mode, msg.Target
	case StoppingMsg:
		m.stopping = true
	case AbortingMsg:
		m.aborting = true
	case DoneMsg:
		m.done = true
	}
	return m, nil
}

// Fraction is the run's progress (0–1) by request count when the run is
// bounded by one, else by duration (each stage's); ok is false for an
// unbounded run.
func (m Model) Fraction() (frac float64, ok bool) {
	switch {
	case m.info.TotalRequests > 0:
		return min(1, float64(m.prog.Finished)/float64(m.info.TotalRequests)), true
	case m.info.Duration > 0:
		return min(1, float64(m.prog.Elapsed)/float64(m.info.Duration*time.Duration(max(1, m.info.Stages)))), true
	}
	return 0, false
}

// ETA is the estimated time left; ok is false when there is none.
func (m Model) ETA() (time.Duration, bool) { return m.prog.ETA, m.prog.HasETA }

// Height is the number of lines View renders.
const Height = 3

// View renders the header in three lines of width cells.
func (m Model) View(width int) string {
	var b strings.Builder
	b.WriteString(text.Title.Render("surge"))
	if i, n, ok := strings.Cut(m.info.Shard, "/"); ok {
		b.WriteString("  ")
		b.WriteString(text.Warn.Render("shard " + i + " of " + n))
	}
	for _, s := range []string{m.info.Model, m.info.URL, m.info.Endpoint, strings.TrimSpace(m.info.Mode + " " + m.info.Target)} {
		if s != "" {
			b.WriteString("  ")
			b.WriteString(s)
		}
	}
	line1 := b.String()

	b.Reset()
	b.WriteString("elapsed ")
	b.WriteString(text.Bold.Render(text.Dur(m.prog.Elapsed)))
	if eta, ok := m.ETA(); ok && !m.done {
		b.WriteString("  ETA ")
		b.WriteString(text.Dur(eta))
	}
	b.WriteString("  ")
	b.WriteString(orDefault(m.prog.Phase, "profile"))
	if m.info.Stages > 0 {
		b.WriteString("  stage ")
		b.WriteString(strconv.Itoa(min(m.prog.Stage+1, m.info.Stages)))
		b.WriteString("/")
		b.WriteString(strconv.Itoa(m.info.Stages))
	}
	b.WriteString("  ")
	b.WriteString(strconv.FormatInt(m.prog.Finished, 10))
	if m.info.TotalRequests > 0 {
		b.WriteString("/")
		b.WriteString(strconv.Itoa(m.info.TotalRequests))
	}
	b.WriteString(" req")
	frac, bounded := m.Fraction()
	if m.prog.Warning != "" && bounded {
		b.WriteString("  " + strconv.Itoa(int(frac*100)) + "%")
	}
	switch {
	case m.done:
		b.WriteString("  " + text.Good.Render("finished"))
	case m.aborting:
		b.WriteString("  " + text.Warn.Render("aborting: cancelling "+strconv.FormatInt(m.prog.InFlight, 10)+" in flight"))
	case m.stopping:
		b.WriteString("  " + text.Warn.Render("stopping: draining "+strconv.FormatInt(m.prog.InFlight, 10)+" in flight"))
	}
	line2 := b.String()

	line3 := text.Dim.Render("no request or duration limit: runs until stopped")
	if m.prog.Warning != "" {
		line3 = text.Warn.Render("warning: " + m.prog.Warning)
	} else if bounded {
		pct := strconv.Itoa(int(frac*100)) + "%"
		line3 = text.Good.Render(text.Bar(frac, max(1, width-len(pct)-1))) + " " + pct
	}
	return text.Fit(line1, width) + "\n" + text.Fit(line2, width) + "\n" + text.Fit(line3, width)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
