// Package server is the dashboard's panel of the inference server's own
// gauges (running and waiting requests, KV-cache use), shown when scraped.
package server

import (
	"math"
	"strconv"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/surgebench/surge/telemetry"
	"github.com/surgebench/surge/tui/internal/text"
)

// Msg carries the latest scrape per server metrics endpoint, and how many
// requests the client has in flight.
type Msg struct {
	Server []telemetry.ServerSample
	// InFlight is the client's requests in flight (sent, not yet
	// answered in full).
	InFlight int64
}

// Model is the panel's state.
type Model struct {
	servers  []telemetry.ServerSample
	inFlight int64
}

// Update applies Msg and ignores other messages.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if msg, ok := msg.(Msg); ok {
		m.servers, m.inFlight = msg.Server, msg.InFlight
	}
	return m, nil
}

// Unaccepted is how many of the client's requests in flight one server
// neither runs nor counts as waiting: requests it has not taken in yet.
// llama.cpp's requests_deferred counts only the requests its HTTP threads
// have read (n_threads_http: max(parallel + 2, cores − 1) by default in
// early-2025 builds, one of them busy answering /metrics), so with its slots full the rest wait
// unseen in the listen backlog. 0 when a gauge is missing.
func Unaccepted(s telemetry.ServerSample, inFlight int64) int64 {
	if math.IsNaN(s.Running) || math.IsNaN(s.Waiting) {
		return 0
	}
	return max(0, inFlight-int64(s.Running)-int64(s.Waiting))
}

// Title is the panel's title.
func (Model) Title() string { return "server" }

// Len is the number of endpoints shown (0: the panel is hidden).
func (m Model) Len() int { return len(m.servers) }

// View renders one line per endpoint, at most height lines of width cells.
// A gauge the server does not export (NaN) reads "n/a".
func (m Model) View(width, height int) string {
	return text.Rows(m.servers, width, height, func(s telemetry.ServerSample) string {
		kv := "n/a"
		if !math.IsNaN(s.KVCacheUsage) {
			kv = text.Pct(100 * s.KVCacheUsage)
		}
		line := "run " + text.Right(count(s.Running), 4) + "  wait " + text.Right(count(s.Waiting), 4)
		if len(m.servers) == 1 { // the client's in-flight count is one server's only then
			if n := Unaccepted(s, m.inFlight); n > 0 {
				line += text.Warn.Render(" +" + strconv.FormatInt(n, 10) + " unaccepted")
			}
		}
		line += "  kv " + text.Right(kv, 4)
		if !math.IsNaN(s.KVCacheUsage) && width-len(line) > 12 {
			line += " " + text.Good.Render(text.Bar(s.KVCacheUsage, min(10, width-len(line)-12)))
		}
		if len(m.servers) > 1 || width-len(line) > 12 {
			line += "  " + text.Dim.Render(s.URL)
		}
		return line
	})
}

func count(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}
