package cmdline

import (
	"io"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/term"
	"github.com/urfave/cli/v2"
)

// CatSearch groups `surge search`'s own flags in --help.
const CatSearch = "Search"

// helpOrder is the order of the flag groups in --help: what people set
// first (the server, the load, what to send, where results go), then the
// rest; a group not listed follows these, and the flags of no group last.
var helpOrder = []string{catTarget, CatSearch, catLoad, catWorkload, catOutput, catRequest, catTelemetry, catShard, catMedia, catAIPerf}

// defaultHelpWidth is the width help is wrapped to when stdout is not a
// terminal (a pipe, a file, a test).
const defaultHelpWidth = 80

// PrintHelp is surge's urfave/cli HelpPrinter: a command's flags in
// groups in helpOrder, every line wrapped to the terminal's width
// (defaultHelpWidth when w is not a terminal); the app's help is
// urfave's template wrapped to the same width.
func PrintHelp(w io.Writer, templ string, data any) {
	width := helpWidth(w)
	if c, ok := data.(*cli.Command); ok {
		writeCommandHelp(w, c, width)
		return
	}
	cli.HelpPrinterCustom(w, templ, data, map[string]any{"wrapAt": func() int { return width }})
}

// helpWidth is the width of the terminal w writes to, or defaultHelpWidth
// when it is not one.
func helpWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return defaultHelpWidth
	}
	if cols, _, err := term.GetSize(f.Fd()); err == nil && cols >= 40 {
		return cols
	}
	return defaultHelpWidth
}

// writeCommandHelp writes c's help wrapped to width: its name and
// summary, usage, description, then its flags group by group.
func writeCommandHelp(w io.Writer, c *cli.Command, width int) {
	var b strings.Builder
	b.WriteString("NAME:\n")
	name := c.HelpName
	if name == "" {
		name = c.Name
	}
	b.WriteString(wrapText(name+" - "+c.Usage, width, 3, 6))
	b.WriteString("\nUSAGE:\n")
	usage := c.UsageText
	if usage == "" {
		usage = name
		if len(c.VisibleFlags()) > 0 {
			usage += " [command options]"
		}
		if c.ArgsUsage != "" {
			usage += " " + c.ArgsUsage
		}
	}
	b.WriteString(wrapText(usage, width, 3, 6))
	if c.Description != "" {
		b.WriteString("\nDESCRIPTION:\n")
		for i, para := range strings.Split(c.Description, "\n\n") {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString(wrapText(strings.Join(strings.Fields(para), " "), width, 3, 3))
		}
	}
	if groups := flagGroups(c); len(groups) > 0 {
		b.WriteString("\nOPTIONS:\n")
		for i, g := range groups {
			if i > 0 {
				b.WriteString("\n")
			}
			if g.name != "" {
				b.WriteString(wrapText(g.name, width, 3, 3))
				b.WriteString("\n")
			}
			for _, f := range g.flags {
				b.WriteString(flagHelp(f, width))
			}
		}
	}
	_, _ = io.WriteString(w, b.String())
}

// flagGroup is one group of --help: its name ("" for the flags of no
// group) and flags.
type flagGroup struct {
	name  string
	flags []cli.VisibleFlag
}

// flagGroups are c's visible flags by group, the groups in helpOrder and
// the flags of each as declared (the table puts the common ones first).
func flagGroups(c *cli.Command) []flagGroup {
	var groups []flagGroup
	var none []cli.VisibleFlag
	for _, f := range c.VisibleFlags() {
		vf, ok := f.(cli.VisibleFlag)
		if !ok {
			continue
		}
		cat := ""
		if cf, ok := f.(cli.CategorizableFlag); ok {
			cat = cf.GetCategory()
		}
		if cat == "" {
			none = append(none, vf)
			continue
		}
		i := slices.IndexFunc(groups, func(g flagGroup) bool { return g.name == cat })
		if i < 0 {
			groups, i = append(groups, flagGroup{name: cat}), len(groups)
		}
		groups[i].flags = append(groups[i].flags, vf)
	}
	rank := func(name string) int {
		if i := slices.Index(helpOrder, name); i >= 0 {
			return i
		}
		return len(helpOrder)
	}
	slices.SortStableFunc(groups, func(a, b flagGroup) int {
		if d := rank(a.name) - rank(b.name); d != 0 {
			return d
		}
		return strings.Compare(a.name, b.name)
	})
	if len(none) > 0 {
		groups = append(groups, flagGroup{"", none})
	}
	return groups
}

// flagHelp is one flag's entry: its names ("value" once, after the
// last), then its usage and a default that says something, on the same
// line as far as it fits, continued indented below.
func flagHelp(f cli.VisibleFlag, width int) string {
	_, usage, _ := strings.Cut(f.String(), "\t")
	for _, none := range []string{" (default: false)", " (default: 0)", ` (default: "")`} {
		usage = strings.Replace(usage, none, "", 1)
	}
	names := make([]string, 0, len(f.Names()))
	for _, n := range f.Names() {
		if len(n) == 1 {
			names = append(names, "-"+n)
		} else {
			names = append(names, "--"+n)
		}
	}
	head := strings.Join(names, ", ")
	if tv, ok := f.(interface{ TakesValue() bool }); !ok || tv.TakesValue() {
		head += " value"
	}
	return wrapText(head+"  "+strings.TrimSpace(usage), width, 3, 8)
}

// wrapText wraps s to width: its first line indented by first, the
// others by rest, breaking at spaces (a word longer than a line stands
// alone; two spaces in s stay two within a line). It ends with a newline.
func wrapText(s string, width, first, rest int) string {
	var lines []string
	line := strings.Repeat(" ", first)
	empty := true // nothing but the indent on line yet
	for _, word := range strings.Split(s, " ") {
		n := utf8.RuneCountInString(word)
		switch {
		case empty:
		case utf8.RuneCountInString(line)+1+n > width && word != "":
			lines = append(lines, strings.TrimRight(line, " "))
			line, empty = strings.Repeat(" ", rest), true
		default:
			line += " "
		}
		line += word
		empty = empty && word == ""
	}
	lines = append(lines, strings.TrimRight(line, " "))
	return strings.Join(lines, "\n") + "\n"
}
