// Package text holds the small formatting helpers the dashboard's components
// share: fitting lines to a width, numbers in display units and bars.
package text

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// Styles shared by every component. They are built once: building a
// lipgloss style per frame would cost more than rendering it.
var (
	Title = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.AdaptiveColor{Light: "25", Dark: "75"})
	Dim   = lipgloss.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "245", Dark: "241"})
	Bold  = lipgloss.NewStyle().Bold(true)
	Warn  = lipgloss.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "166", Dark: "214"})
	Bad   = lipgloss.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "160", Dark: "203"})
	Good  = lipgloss.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "28", Dark: "78"})
	Knee  = lipgloss.NewStyle().Bold(true).Reverse(true)
)

// Fit truncates s to width cells (ANSI-aware) and pads it with spaces to
// exactly width, so columns line up and nothing wraps.
func Fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	w := ansi.StringWidth(s)
	if w > width {
		return ansi.Truncate(s, width, "…")
	}
	return s + strings.Repeat(" ", width-w)
}

// Clip truncates s to at most width cells without padding.
func Clip(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > width {
		return ansi.Truncate(s, width, "…")
	}
	return s
}

// Lines cuts block into at most height lines, each fitted to width, padding
// with blank lines to exactly height when pad is set.
func Lines(block string, width, height int, pad bool) []string {
	if height <= 0 || width <= 0 {
		return nil
	}
	var out []string
	if block != "" {
		for line := range strings.SplitSeq(block, "\n") {
			if len(out) == height {
				break
			}
			out = append(out, Fit(line, width))
		}
	}
	if pad {
		blank := strings.Repeat(" ", width)
		for len(out) < height {
			out = append(out, blank)
		}
	}
	return out
}

// Rule renders a panel title as "── title ─────" across width.
func Rule(title string, width int) string {
	if width <= 0 {
		return ""
	}
	head := "─ " + title + " "
	n := width - ansi.StringWidth(head)
	if n < 0 {
		return Title.Render(Clip(head, width))
	}
	return Title.Render(head) + Dim.Render(strings.Repeat("─", n))
}

// Ms formats a latency in milliseconds with three significant figures;
// zero and NaN render as "-", since a live digest without samples says
// nothing yet.
func Ms(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	a := math.Abs(v)
	switch {
	case a >= 100_000:
		return strconv.FormatFloat(v/1000, 'f', 0, 64) + "s"
	case a >= 10_000:
		return strconv.FormatFloat(v/1000, 'f', 1, 64) + "s"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// Num formats a rate or count compactly: 950, 9.5k, 1.2M.
func Num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	a := math.Abs(v)
	switch {
	case a >= 10_000_000:
		return strconv.FormatFloat(v/1e6, 'f', 0, 64) + "M"
	case a >= 1_000_000:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + "M"
	case a >= 10_000:
		return strconv.FormatFloat(v/1e3, 'f', 0, 64) + "k"
	case a >= 1_000:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + "k"
	case a >= 100 || v == math.Trunc(v):
		return strconv.FormatFloat(v, 'f', 0, 64)
	default:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
}

// Dur formats a duration for the header: 42s, 3m07s, 1h02m.
func Dur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return strconv.FormatInt(s, 10) + "s"
	case s < 3600:
		return strconv.FormatInt(s/60, 10) + "m" + pad2(s%60) + "s"
	default:
		return strconv.FormatInt(s/3600, 10) + "h" + pad2(s/60%60) + "m"
	}
}

func pad2(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

// Bar draws frac (0–1) as a bar of width cells with eighth-cell precision.
func Bar(frac float64, width int) string {
	if width <= 0 {
		return ""
	}
	if math.IsNaN(frac) || frac < 0 {
		frac = 0
	}
	frac = min(frac, 1)
	eighths := int(math.Round(frac * float64(width*8)))
	full := eighths / 8
	var b strings.Builder
	b.Grow(width * 3)
	b.WriteString(strings.Repeat("█", full))
	if rem := eighths % 8; rem > 0 {
		b.WriteRune([]rune(" ▏▎▍▌▋▊▉")[rem])
		full++
	}
	b.WriteString(strings.Repeat("·", width-full))
	return b.String()
}

// Pct formats a 0–100 value as "87%", NaN as "n/a".
func Pct(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + "%"
}

// Right pads s on the left to width cells (for numeric columns).
func Right(s string, width int) string {
	w := ansi.StringWidth(s)
	if w >= width {
		return Clip(s, width)
	}
	return strings.Repeat(" ", width-w) + s
}

// Rows renders one line per item, at most height lines, each fitted to
// width: the body of a panel that lists things (GPUs, server endpoints).
func Rows[T any](items []T, width, height int, line func(T) string) string {
	var b strings.Builder
	for i, it := range items {
		if i == height {
			break
		}
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(Fit(line(it), width))
	}
	return b.String()
}
