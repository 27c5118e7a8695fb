// Package peers is what the peer tools' front ends share: a reader of
// another tool's command line (its flags as that tool defines them, each
// taken or refused with its reason), the run of surge's engine their
// translation asks for, the finished run read back for their result files,
// and the statistics those files define (numpy's percentiles and
// population standard deviation). Each peer's own package
// (vllmbench, guidellm, inferenceperf) holds its flags, their translation
// into `surge profile` flags, and its writers of result files; nothing below
// the Spec knows which front end made it.
package peers

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/surgebench/surge/app/cmdline"
)

// Kind is how many command-line words a flag takes.
type Kind int

// The kinds of flags the peers' parsers (argparse, click) define.
const (
	// Value takes one word: --rate 10, --rate=10. Given again, the last
	// wins (Args.Value), every one is kept (Args.Values: click's
	// multiple=True).
	Value Kind = iota
	// Switch takes none: --save-result (argparse's store_true, click's
	// is_flag).
	Switch
	// Many takes every word up to the next flag (argparse's nargs="+" or
	// "*"): --goodput ttft:100 tpot:50.
	Many
)

// Flag is one flag of a peer tool's command line, as that tool defines it.
type Flag struct {
	// Name is the flag's long name without dashes ("request-rate");
	// Aliases are its other spellings (a one-letter one is -x).
	Name    string
	Aliases []string
	Kind    Kind
	// Default is the tool's default as its --help shows it ("": none).
	Default string
	// Usage says what surge does with the flag (its --help line).
	Usage string
	// Refused, when set, is why surge refuses the flag: given, it is an
	// error (exit 2) before any work.
	Refused string
}

// Dialect is how a peer's parser reads its command line.
type Dialect struct {
	// Tool names the peer in messages ("vllm bench serve").
	Tool string
	// Underscores reads --foo_bar as --foo-bar (vLLM's
	// FlexibleArgumentParser).
	Underscores bool
}

// Args is a command line as a peer's parser read it: each flag given,
// under its Name, with its values in order.
type Args struct {
	values map[string][]string
	order  []string
}

// Has reports whether the flag was given.
func (a Args) Has(name string) bool { _, ok := a.values[name]; return ok }

// Value is the flag's last value and whether it was given.
func (a Args) Value(name string) (string, bool) {
	v, ok := a.values[name]
	if !ok || len(v) == 0 {
		return "", ok
	}
	return v[len(v)-1], true
}

// Values are every value the flag was given, in order.
func (a Args) Values(name string) []string { return a.values[name] }

// Names are the flags given, in the order first given.
func (a Args) Names() []string { return a.order }

// Parse reads args (after the command's name) as the peer's parser would,
// by its flags. An unknown flag (with the nearest known name), a flag
// surge refuses (with its reason), a value missing, or a word no flag
// takes is a usage error (exit 2).
func Parse(args []string, flags []Flag, d Dialect) (Args, error) {
	byName := map[string]*Flag{}
	var long []string
	for i := range flags {
		f := &flags[i]
		for _, n := range append([]string{f.Name}, f.Aliases...) {
			byName[n] = f
			if len(n) > 1 {
				long = append(long, n)
			}
		}
	}
	slices.Sort(long)
	a := Args{values: map[string][]string{}}
	for i := 0; i < len(args); i++ {
		word := args[i]
		if !IsFlag(word) {
			return a, cmdline.Usagef("%s: unexpected argument %q (%s takes flags only; quote a value that holds spaces)", d.Tool, word, d.Tool)
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(word, "-"), "=")
		if d.Underscores && strings.HasPrefix(word, "--") {
			name = strings.ReplaceAll(name, "_", "-")
		}
		f := byName[name]
		if f == nil {
			return a, cmdline.Usagef("%s: unknown flag %s%s", d.Tool, word, cmdline.DidYouMean(name, long, "--"))
		}
		if f.Refused != "" {
			return a, cmdline.Usagef("%s: --%s is refused: %s", d.Tool, f.Name, f.Refused)
		}
		var vals []string
		switch f.Kind {
		case Switch:
			if hasValue {
				return a, cmdline.Usagef("%s: --%s takes no value (got %q)", d.Tool, f.Name, value)
			}
		case Value:
			switch {
			case hasValue:
				vals = []string{value}
			case i+1 < len(args) && !IsFlag(args[i+1]):
				vals = []string{args[i+1]}
				i++
			default:
				return a, cmdline.Usagef("%s: --%s needs a value", d.Tool, f.Name)
			}
		case Many:
			if hasValue {
				vals = append(vals, value)
			}
			for i+1 < len(args) && !IsFlag(args[i+1]) {
				vals = append(vals, args[i+1])
				i++
			}
		}
		if !a.Has(f.Name) {
			a.order = append(a.order, f.Name)
		}
		a.values[f.Name] = append(a.values[f.Name], vals...)
		if f.Kind == Switch {
			a.values[f.Name] = append(a.values[f.Name], "true")
		}
	}
	return a, nil
}

// IsFlag reports whether a word is a flag rather than a value: it starts
// with a dash and is not a number (argparse's and click's reading).
func IsFlag(w string) bool {
	if len(w) < 2 || w[0] != '-' {
		return false
	}
	_, err := strconv.ParseFloat(w, 64)
	return err != nil
}

// WriteHelp writes a peer command's --help: what it is, then its flags
// surge takes (with what it does with each), then those it refuses, each
// with its reason.
func WriteHelp(w io.Writer, head string, flags []Flag) {
	fmt.Fprintln(w, strings.TrimRight(head, "\n"))
	spell := func(f Flag) string {
		s := "--" + f.Name
		for _, al := range f.Aliases {
			if len(al) == 1 {
				s += ", -" + al
			} else {
				s += ", --" + al
			}
		}
		switch f.Kind {
		case Value:
			s += " V"
		case Many:
			s += " V…"
		}
		return s
	}
	fmt.Fprintln(w, "\nFlags surge takes (done as the tool does them):")
	for _, f := range flags {
		if f.Refused != "" {
			continue
		}
		line := "  " + spell(f)
		if f.Default != "" {
			line += " (default " + f.Default + ")"
		}
		fmt.Fprintf(w, "%s\n      %s\n", line, f.Usage)
	}
	fmt.Fprintln(w, "\nFlags surge refuses (exit 2 before any work), each with its reason:")
	for _, f := range flags {
		if f.Refused != "" {
			fmt.Fprintf(w, "  %s\n      %s\n", spell(f), f.Refused)
		}
	}
}
