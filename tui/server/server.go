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

// Msg carries the latest scrape per server metrics endpoint.
type Msg struct {
	Server []telemetry.ServerSample
}

// Model is the panel's state.
type Model struct {
	servers []telemetry.ServerSample
}

// Update applies Msg and ignores other messages.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if msg, ok := msg.(Msg); ok {
		m.servers = msg.Server
	}
	return m, nil
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
		line := "run " + text.Right(count(s.Running), 4) + "  wait " + text.Right(count(s.Waiting), 4) + "  kv " + text.Right(kv, 4)
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
