package tui

import (
	"strconv"
	"time"

	binding "github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/tui/breakdown"
	"github.com/surgebench/surge/tui/failures"
	"github.com/surgebench/surge/tui/gpu"
	"github.com/surgebench/surge/tui/header"
	"github.com/surgebench/surge/tui/internal/eta"
	"github.com/surgebench/surge/tui/latency"
	"github.com/surgebench/surge/tui/load"
	"github.com/surgebench/surge/tui/precision"
	"github.com/surgebench/surge/tui/server"
	"github.com/surgebench/surge/tui/stages"
	"github.com/surgebench/surge/tui/throughput"
)

// snapshotMsg delivers the newest snapshot to the model.
type snapshotMsg struct{ snap Frame }

// doneMsg says the snapshot channel closed: the run (and its drain) is over.
type doneMsg struct{}

// stoppedMsg says stop() has returned.
type stoppedMsg struct{}

// page is the dashboard's view, switched with tab.
type page int

const (
	overview page = iota
	detail
	pages
)

// model is the root of the dashboard: it owns the components, routes
// messages to them and does all layout. It is plain data; Update is pure
// apart from the commands it returns.
type model struct {
	width, height int
	page          page
	help          bool
	stopping      bool
	aborting      bool // stop was asked twice: the drain is cut short
	done          bool
	// stop ends issuing; it runs in a command, never in Update.
	stop func()
	// control applies the live keys (nil: the run is not live).
	control Control

	header     header.Model
	latency    latency.Model
	throughput throughput.Model
	load       load.Model
	failures   failures.Model
	stages     stages.Model
	gpu        gpu.Model
	server     server.Model
	precision  precision.Model
	breakdown  breakdown.Model

	// lastStages is the newest snapshot's finished stages.
	lastStages []metrics.StageSummary
	// eta follows the stages for the ETA and the chart's stage marks.
	eta eta.Tracker
	// note is the status line's answer to a key that does nothing now
	// ("" when none); the next key clears it.
	note string
	// noLive says why the live-control keys do nothing in this run.
	noLive string
}

// newModel returns the dashboard for info before any snapshot.
func newModel(info Info, stop func()) model {
	m := model{width: 80, height: 24, stop: stop, control: info.Control}
	m.header, _ = m.header.Update(header.InfoMsg{
		Model: info.Model, URL: info.URL, Endpoint: info.Endpoint, Mode: info.Mode, Target: info.Target,
		TotalRequests: info.TotalRequests, Duration: info.Duration, Stages: len(info.Stages), Shard: info.Shard,
	})
	m.stages, _ = m.stages.Update(stages.PlanMsg{Mode: info.Mode, Values: info.Stages, Labels: info.StageLabels})
	m.eta = eta.New(info.Mode, plan(info))
	m.noLive = noLiveReason(info)
	return m
}

// plan is the run's stages as the ETA needs them: values, requests and
// duration per stage.
func plan(info Info) []eta.Stage {
	values := info.Stages
	if len(values) == 0 {
		v, _ := strconv.ParseFloat(info.Target, 64)
		values = []float64{v}
	}
	out := make([]eta.Stage, len(values))
	for i, v := range values {
		out[i] = eta.Stage{Value: v, Duration: info.Duration}
		switch {
		case i < len(info.StageRequests):
			out[i].Requests = info.StageRequests[i]
		case info.TotalRequests > 0:
			// Split evenly, the remainder to the first stages.
			n := info.TotalRequests / len(values)
			if i < info.TotalRequests%len(values) {
				n++
			}
			out[i].Requests = n
		}
	}
	return out
}

// Init starts nothing: snapshots come from outside.
func (m model) Init() tea.Cmd { return nil }

// Update routes a message to the components that render it.
func (m model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case tea.KeyMsg:
		m.note = ""
		if cmd, ok := m.liveKey(msg); ok {
			return m, cmd
		}
		return m.key(msg)
	case noteMsg:
		m.note = string(msg)
	case liveMsg:
		lm := load.LiveMsg{Live: msg.state}
		if msg.err != nil {
			lm.Err = msg.err.Error()
		}
		m.load, _ = m.load.Update(lm)
		m = m.liveTarget(msg.state)
	case snapshotMsg:
		m = m.apply(msg.snap)
	case doneMsg:
		m.done = true
		m.header, _ = m.header.Update(header.DoneMsg{})
		m.stages, _ = m.stages.Update(stages.Msg{Stages: m.stagesDone(), Current: -1, Done: true})
		return m, tea.Quit
	}
	return m, nil
}

// liveTarget names a live run's current setting in the header (a
// search's probes are the search's: its header stays).
func (m model) liveTarget(l LiveState) model {
	if l.Mode != "" && l.Search == "" {
		m.header, _ = m.header.Update(header.TargetMsg{Mode: l.Mode, Target: strconv.FormatFloat(l.Value, 'g', 6, 64)})
	}
	return m
}

// stagesDone is kept apart from apply so doneMsg can re-send the last list.
func (m model) stagesDone() []metrics.StageSummary { return m.lastStages }

func (m model) key(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch {
	case binding.Matches(k, keys.Stop):
		if m.done || m.aborting {
			return m, nil
		}
		if m.stopping { // asked again: stop calls after the first abort the drain
			m.aborting = true
			m.header, _ = m.header.Update(header.AbortingMsg{})
			stop := m.stop
			return m, func() tea.Msg {
				if stop != nil {
					stop()
				}
				return stoppedMsg{}
			}
		}
		m.stopping = true
		m.header, _ = m.header.Update(header.StoppingMsg{})
		stop := m.stop
		return m, func() tea.Msg {
			if stop != nil {
				stop()
			}
			return stoppedMsg{}
		}
	case binding.Matches(k, keys.Zoom):
		m.throughput, _ = m.throughput.Update(throughput.ZoomMsg{})
	case binding.Matches(k, keys.Help):
		m.help = !m.help
	case binding.Matches(k, keys.Close):
		m.help = false
	case binding.Matches(k, keys.Next):
		m.page = (m.page + 1) % pages
		m.help = false
	case binding.Matches(k, keys.Prev):
		m.page = (m.page + pages - 1) % pages
		m.help = false
	}
	return m, nil
}

// apply fans a snapshot out to the components as their own messages.
func (m model) apply(s Frame) model {
	var warning string
	if len(s.Warnings) > 0 {
		warning = s.Warnings[len(s.Warnings)-1]
	}
	prog := eta.Progress{Elapsed: s.Elapsed, Finished: s.Finished, Stage: s.Stage, Profile: s.Phase == metrics.Profile}
	m.eta = m.eta.Observe(prog)
	done := make([]eta.Done, 0, len(s.Stages))
	for _, st := range s.Stages {
		done = append(done, eta.Done{Requests: st.RequestCount, Seconds: st.DurationSec})
	}
	left, hasETA := m.eta.Left(prog, done)
	m.header, _ = m.header.Update(header.ProgressMsg{
		Elapsed: s.Elapsed, Phase: s.Phase.String(), Started: s.Started, Finished: s.Finished, InFlight: s.InFlight, Stage: s.Stage,
		Warning: warning, ETA: left, HasETA: hasETA,
	})
	m.latency, _ = m.latency.Update(latency.Msg{Run: s.Run, Window: s.Window, ReasoningSeen: s.ReasoningSeen})
	var marks []int
	for i, at := range m.eta.Starts() {
		if i > 0 && at >= 0 {
			marks = append(marks, int(at/time.Second))
		}
	}
	m.throughput, _ = m.throughput.Update(throughput.Msg{Timeline: s.Timeline, StageStarts: marks})
	m.load, _ = m.load.Update(load.Msg{
		Started: s.Started, Finished: s.Finished, Failed: s.Failed, InFlight: s.InFlight, Concurrency: s.Concurrency, Lag: s.SchedulerLag,
		ReadDelay: s.ReadDelay, InPrefill: s.InPrefill, PrefillCap: s.PrefillCap,
	})
	if s.Live != nil {
		m.load, _ = m.load.Update(load.LiveMsg{Live: *s.Live})
		m = m.liveTarget(*s.Live)
	}
	m.failures, _ = m.failures.Update(failures.Msg{Errors: s.Errors, Finished: s.Finished})
	m.lastStages = s.Stages
	m.stages, _ = m.stages.Update(stages.Msg{Stages: s.Stages, Current: s.Stage})
	m.gpu, _ = m.gpu.Update(gpu.Msg{GPUs: s.GPUs})
	m.server, _ = m.server.Update(server.Msg{Server: s.Server, InFlight: s.InFlight})
	m.precision, _ = m.precision.Update(precision.Msg{Status: s.Precision})
	m.breakdown, _ = m.breakdown.Update(breakdown.Msg{Breakdown: s.TimeBreakdown})
	return m
}
