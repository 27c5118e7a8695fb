package spec

import (
	"strings"
	"unicode"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/metrics"
)

// History is where a finished run is remembered (docs/history.md).
type History struct {
	// Path is --history: the database ("": the default one, which the run
	// resolves when it records itself).
	Path string
	// Off is --no-history: the run is recorded nowhere.
	Off bool
	// Label is --history-label: the run's name in the history.
	Label string
}

// maxHistoryLabel bounds --history-label: a name, not a document.
const maxHistoryLabel = 200

// parseHistory reads --history, --no-history, --history-label and
// --cost-per-hour.
func parseHistory(s *Spec, c *cmdline.Config) error {
	h := History{Path: c.History, Off: c.NoHistory, Label: c.HistoryLabel}
	switch {
	case h.Off && strings.TrimSpace(h.Path) != "":
		return cmdline.Usagef("--history %s and --no-history: give one", h.Path)
	case h.Off && h.Label != "":
		return cmdline.Usagef("--history-label %q names the run in the history, which --no-history turns off: give one", h.Label)
	case c.History != "" && strings.TrimSpace(c.History) == "":
		return cmdline.Usagef("--history %q: name a database file", c.History)
	case len(h.Label) > maxHistoryLabel:
		return cmdline.Usagef("--history-label is %d bytes long: at most %d", len(h.Label), maxHistoryLabel)
	case strings.IndexFunc(h.Label, unicode.IsControl) >= 0:
		return cmdline.Usagef("--history-label %q: a name without control characters", h.Label)
	}
	if c.CostPerHour != 0 {
		if err := metrics.CheckCostPerHour(c.CostPerHour); err != nil {
			return cmdline.Usagef("--cost-per-hour: %w", err)
		}
	}
	s.History, s.CostPerHour = h, c.CostPerHour
	return nil
}
