package cmdline

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"
)

// argKind is how many command-line tokens a flag takes.
type argKind int

const (
	argValue  argKind = iota // exactly one: --isl 128, --isl=128
	argSwitch                // none: --streaming (a value only as --streaming=false)
	argMany                  // one or more, until the next flag: --extra-inputs a:1 b:2
)

// manyValued is a flag value that takes every token up to the next flag,
// as AIPerf's list options do (--extra-inputs a:1 b:2, --url A B). A bare
// one (no token before the next flag) is given the empty string.
type manyValued interface{ TakesMany() bool }

// kindOf says how many tokens f takes.
func kindOf(f cli.Flag) argKind {
	switch f := f.(type) {
	case *cli.BoolFlag, *boolFlag:
		return argSwitch
	case *repeatableFlag:
		if m, ok := f.Value.(manyValued); ok && m.TakesMany() {
			return argMany
		}
	case *switchFlag:
		return argSwitch
	case *ValueFlag:
		if m, ok := f.Value.(manyValued); ok && m.TakesMany() {
			return argMany
		}
	}
	return argValue
}

// expandArgs rewrites a command's arguments (after its name) so that Go's
// flag parsing, which urfave/cli uses, reads them as AIPerf's parser does:
// a list flag takes every value up to the next flag (--extra-inputs a:1
// b:2 becomes --extra-inputs=a:1 --extra-inputs=b:2), a bare list flag is
// not handed the flag after it (--gpu-telemetry --streaming), a value
// flag followed by another flag is an error instead of taking the flag
// as its value, and an argument that belongs to no flag is an error
// (urfave/cli would stop reading flags there and drop the rest).
func expandArgs(args []string, flags []cli.Flag) ([]string, error) {
	kinds := flagKinds(flags)
	out := make([]string, 0, len(args))
	prev := "" // what the last flag took, for a stray argument's message
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			// Everything after "--" is an argument; the command refuses it.
			return append(out, args[i:]...), nil
		}
		if !isFlag(a) {
			return nil, strayArg(a, prev)
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		kind, known := kinds[name]
		if !known {
			return nil, unknownFlag(a, kinds)
		}
		prev = fmt.Sprintf("it follows %s, which takes one value", a)
		if kind == argSwitch {
			prev = fmt.Sprintf("it follows %s, which takes no value (write %s=false to turn it off)", a, a)
		}
		switch {
		case kind == argSwitch || (kind == argValue && hasValue):
			out = append(out, a)
		case kind == argValue:
			if i+1 == len(args) {
				out = append(out, a) // urfave/cli says the flag needs a value
				continue
			}
			next := args[i+1]
			if n, ok := flagName(next); ok {
				if _, isOurs := kinds[n]; isOurs {
					return nil, fmt.Errorf("--%s needs a value (got the flag %s)", name, next)
				}
			}
			out = append(out, a, next)
			i++
		default: // argMany
			var values []string
			if hasValue {
				values = append(values, value)
			}
			for i+1 < len(args) && args[i+1] != "--" && !isFlag(args[i+1]) {
				values = append(values, args[i+1])
				i++
			}
			if len(values) == 0 {
				values = []string{""}
			}
			for _, v := range values {
				out = append(out, "--"+name+"="+v)
			}
		}
	}
	return out, nil
}

// strayArg is the error for an argument no flag takes; prev says what
// the flag before it took.
func strayArg(a, prev string) error {
	if prev == "" {
		prev = "the command takes flags only"
	}
	return fmt.Errorf("unexpected argument %q: %s (quote a value that holds spaces)", a, prev)
}

// isFlag reports whether a is a flag rather than a value: it starts with
// a dash and is not a negative number.
func isFlag(a string) bool {
	if len(a) < 2 || a[0] != '-' {
		return false
	}
	_, err := strconv.ParseFloat(a, 64)
	return err != nil
}

// flagName returns the name a flag token gives (--name=value: name).
func flagName(a string) (string, bool) {
	if !isFlag(a) {
		return "", false
	}
	n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
	return n, true
}

// flagKinds maps every name of flags (and the help flag urfave/cli adds
// to each command) to how many tokens it takes.
func flagKinds(flags []cli.Flag) map[string]argKind {
	kinds := map[string]argKind{"help": argSwitch, "h": argSwitch}
	for _, f := range flags {
		for _, n := range f.Names() {
			kinds[n] = kindOf(f)
		}
	}
	return kinds
}

// unknownFlag is the error for a flag token no flag of the command takes,
// with the nearest name when one is close, or what to use instead of a
// GenAI-Perf flag.
func unknownFlag(a string, kinds map[string]argKind) error {
	name, _ := flagName(a)
	given, _, _ := strings.Cut(a, "=")
	if hint := genaiPerf[name]; hint != "" {
		return fmt.Errorf("%s is GenAI-Perf's flag, not surge's or AIPerf's: %s", given, hint)
	}
	var long []string
	for n := range kinds {
		if len(n) > 1 {
			long = append(long, n)
		}
	}
	slices.Sort(long) // the same suggestion for a tie, every time
	return fmt.Errorf("unknown flag %s%s", given, didYouMean(name, long, "--"))
}

// flagsFirst moves a command's flags before its arguments, so that
// `surge report DIR -o out.html` reads as `surge report -o out.html DIR`
// (Go's flag parsing, which urfave/cli uses, stops at the first argument).
// The arguments follow a "--", so that a folder named like a flag stays a
// folder; an unknown flag is an error naming the nearest known one.
func flagsFirst(args []string, flags []cli.Flag) ([]string, error) {
	kinds := flagKinds(flags)
	var fl, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if !isFlag(a) {
			pos = append(pos, a)
			continue
		}
		name, _ := flagName(a)
		kind, known := kinds[name]
		if !known {
			return nil, unknownFlag(a, kinds)
		}
		fl = append(fl, a)
		if kind != argSwitch && !strings.Contains(a, "=") {
			if i+1 == len(args) || args[i+1] == "--" {
				return nil, fmt.Errorf("%s needs a value", a)
			}
			fl = append(fl, args[i+1])
			i++
		}
	}
	if len(pos) == 0 {
		return fl, nil
	}
	return append(append(fl, "--"), pos...), nil
}

// CommandArgs finds the command in args (the program's name first) and
// rewrites what follows it: for the commands that take AIPerf's flags
// (profile, search) as AIPerf's parser reads them (expandArgs), for the
// others with their flags first (flagsFirst). An unknown command or flag
// is a usage error that names the nearest known one.
func CommandArgs(args []string, cmds []*cli.Command) ([]string, error) {
	for i := 1; i < len(args); i++ {
		if isFlag(args[i]) {
			continue // the app's own: --help, --version
		}
		var c *cli.Command
		var known []string
		for _, cmd := range cmds {
			if cmd.HasName(args[i]) {
				c = cmd
			}
			known = append(known, cmd.Name)
		}
		if c == nil {
			if args[i] == "help" || args[i] == "h" {
				return args, nil
			}
			return nil, &UsageError{Err: fmt.Errorf("unknown command %q%s; the commands are %s (surge --help)",
				args[i], didYouMean(args[i], known, ""), strings.Join(known, ", "))}
		}
		if c.SkipFlagParsing {
			return args, nil // a command that reads another tool's command line itself
		}
		rewrite := flagsFirst
		if c.Name == "profile" || c.Name == "search" {
			rewrite = expandArgs
		}
		cmdArgs, err := helpTopic(c, args[i+1:])
		if err != nil {
			return nil, &UsageError{Err: err}
		}
		rest, err := rewrite(cmdArgs, c.Flags)
		if err != nil {
			return nil, &UsageError{Err: err}
		}
		return append(append([]string{}, args[:i+1]...), rest...), nil
	}
	return args, nil
}

// parseMu serialises ParseProfile: urfave/cli writes its global help
// flag on every parse, a race between parallel tests.
var parseMu sync.Mutex

// ParseProfile parses args as `surge profile` would: expanded as AIPerf
// reads them, then by urfave/cli, then completed from the context.
func ParseProfile(args ...string) (Config, error) {
	parseMu.Lock()
	defer parseMu.Unlock()
	var got Config
	cfg := &Config{}
	// HideHelp: urfave's help flag is one global that every parse writes,
	// and tests parse in parallel.
	app := &cli.App{Name: "surge", Writer: io.Discard, ErrWriter: io.Discard, HideHelp: true, Commands: []*cli.Command{{
		Name: "profile", Flags: ProfileFlags(cfg), OnUsageError: OnUsageError, HideHelp: true,
		Action: func(cc *cli.Context) error {
			if err := cfg.FromContext(cc); err != nil {
				return err
			}
			got = *cfg
			return nil
		},
	}}}
	full, err := CommandArgs(append([]string{"surge", "profile"}, args...), app.Commands)
	if err != nil {
		return got, err
	}
	return got, app.Run(full)
}
