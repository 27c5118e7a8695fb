package cmdline

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
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
var helpOrder = []string{catTarget, CatSearch, catLoad, catWorkload, catOutput, catExport, catRequest, catCloud, catTelemetry, catShard, catMedia, catAIPerf}

// defaultHelpWidth is the width help is wrapped to when stdout is not a
// terminal (a pipe, a file, a test).
const defaultHelpWidth = 80

// PrintHelp is surge's urfave/cli HelpPrinter: a command's flags in
// groups in helpOrder, every line wrapped to the terminal's width
// (defaultHelpWidth when w is not a terminal); the app's help is
// urfave's template wrapped to the same width. A command with a short
// help (profile, search) shows what a first run needs and names its
// groups; --help GROUP shows one group, --help-all every flag (helpTopic
// passes the topic in the command's help template).
func PrintHelp(w io.Writer, templ string, data any) {
	width := helpWidth(w)
	if c, ok := data.(*cli.Command); ok {
		topic, _ := strings.CutPrefix(templ, topicPrefix)
		if topic == templ {
			topic = ""
		}
		writeCommandHelp(w, c, width, topic)
		return
	}
	cli.HelpPrinterCustom(w, templ, data, map[string]any{"wrapAt": func() int { return width }})
}

// helpWidth is the width of the terminal w writes to, or defaultHelpWidth
// when it is not one.
func helpWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return defaultHelpWidth
	}
	if cols := TerminalColumns(f); cols > 0 {
		return cols
	}
	return defaultHelpWidth
}

// TerminalColumns is the width output to f should fit: $COLUMNS when it
// is set (to 40 or more), else the terminal's width when f is one, else 0
// (unknown: the caller's default, 80 columns). Output that is no file (a
// buffer) is 0 whatever $COLUMNS says.
func TerminalColumns(f *os.File) int {
	if f == nil {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("COLUMNS"))); err == nil && n >= 40 {
		return n
	}
	if f == nil || !term.IsTerminal(f.Fd()) {
		return 0
	}
	if cols, _, err := term.GetSize(f.Fd()); err == nil && cols >= 40 {
		return cols
	}
	return 0
}

// writeCommandHelp writes c's help wrapped to width: its name and
// summary, usage, description, then its flags group by group: for a
// command with a short help and no topic, only its firstRun flags and the
// groups' names; topic "all" every flag; a group's key its flags.
func writeCommandHelp(w io.Writer, c *cli.Command, width int, topic string) {
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
	groups := flagGroups(c)
	short := topic == "" && hasShortHelp(c)
	all := groups
	switch {
	case short:
		groups = firstRunGroups(groups)
	case topic != "" && topic != topicAll:
		groups = slices.DeleteFunc(slices.Clone(groups), func(g flagGroup) bool { return groupKey(g.name) != topic })
	}
	if len(groups) > 0 {
		switch {
		case short:
			b.WriteString("\nOPTIONS (what a first run needs):\n")
		case topic != "" && topic != topicAll:
			b.WriteString("\nOPTIONS (" + topic + "):\n")
		default:
			b.WriteString("\nOPTIONS:\n")
		}
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
	if short {
		b.WriteString("\nMORE OPTIONS:\n")
		var keys []string
		for _, g := range all {
			if k := groupKey(g.name); k != "" {
				// A group's name and count stay on one line ("\x00" is
				// a space the wrapping keeps).
				keys = append(keys, fmt.Sprintf("%s\x00(%d)", k, len(g.flags)))
			}
		}
		name := c.HelpName
		if name == "" {
			name = c.Name
		}
		groups := wrapText(fmt.Sprintf("%s --help GROUP shows one group's options: %s.", name, strings.Join(keys, ", ")), width, 3, 3)
		b.WriteString(strings.ReplaceAll(groups, "\x00", " "))
		b.WriteString(wrapText(fmt.Sprintf("%s --help-all shows every option, --help-aiperf AIPerf's flags surge does not implement.", name), width, 3, 3))
	}
	_, _ = io.WriteString(w, b.String())
}

// topicPrefix marks a command's help template as a help topic (helpTopic
// sets it, PrintHelp reads it): urfave/cli hands the template to the help
// printer, which draws every command's help itself.
const topicPrefix = "surge-help-topic:"

// topicAll is --help-all's topic: every flag.
const topicAll = "all"

// firstRun are the flags the short help of profile and search shows:
// what a first run needs (the target, the load, the dataset's basics,
// where results go).
var firstRun = map[string]bool{
	"url": true, "model": true, "streaming": true, "endpoint-type": true, "api-key": true,
	"concurrency": true, "request-rate": true, "request-count": true, "benchmark-duration": true, "warmup-request-count": true,
	"isl": true, "osl": true, "input-file": true, "custom-dataset-type": true, "public-dataset": true, "tokenizer": true, "random-seed": true,
	"output-artifact-dir": true, "ui": true, "wide": true, "config": true, "verbose": true, "goodput": true,
	"slo": true, "max-concurrency": true, "max-request-rate": true,
}

// hasShortHelp reports whether c's --help shows only what a first run
// needs: the commands with more options than a screen holds.
func hasShortHelp(c *cli.Command) bool { return c.Name == "profile" || c.Name == "search" }

// firstRunGroups are groups with only their firstRun flags, the groups
// left empty dropped.
func firstRunGroups(groups []flagGroup) []flagGroup {
	var out []flagGroup
	for _, g := range groups {
		var fs []cli.VisibleFlag
		for _, f := range g.flags {
			if firstRun[f.Names()[0]] {
				fs = append(fs, f)
			}
		}
		if len(fs) > 0 {
			out = append(out, flagGroup{g.name, fs})
		}
	}
	return out
}

// groupKey is how --help names a group: the first word of its name, in
// lower case ("Sharding (several load hosts)" → sharding); "" for the
// flags of no group.
func groupKey(name string) string {
	f := strings.Fields(name)
	if len(f) == 0 {
		return ""
	}
	return strings.ToLower(f[0])
}

// helpTopic reads the help topic out of a command's arguments: for a
// command with a short help, --help GROUP (or --help=GROUP, -h GROUP)
// keeps --help and marks the group; for every command
// --help-all becomes --help marking every flag; a GROUP c lacks is a
// usage error naming its groups. The topic travels in c's help template
// (topicPrefix), which urfave/cli hands to PrintHelp.
func helpTopic(c *cli.Command, args []string) ([]string, error) {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...), nil
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
			continue
		}
		switch {
		case name == "help-all" && !hasValue:
			c.CustomHelpTemplate = topicPrefix + topicAll
			out = append(out, "--help")
			continue
		case name != "help" && name != "h" || !hasShortHelp(c):
			out = append(out, a)
			continue
		}
		if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			value, hasValue = args[i+1], true
			i++
		}
		out = append(out, "--help")
		if !hasValue {
			continue
		}
		var keys []string
		for _, g := range flagGroups(c) {
			if k := groupKey(g.name); k != "" {
				keys = append(keys, k)
			}
		}
		topic := strings.ToLower(strings.TrimSpace(value))
		if !slices.Contains(keys, topic) && topic != topicAll {
			return nil, fmt.Errorf("--help %s: no such group of options; the groups are %s (or --help-all)", value, strings.Join(keys, ", "))
		}
		c.CustomHelpTemplate = topicPrefix + topic
	}
	return out, nil
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
