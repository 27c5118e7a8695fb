package cmdline

import (
	"fmt"
	"io"
	"strconv"
	"strings"

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
	kinds := map[string]argKind{}
	for _, f := range flags {
		for _, n := range f.Names() {
			kinds[n] = kindOf(f)
		}
	}
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
		prev = fmt.Sprintf("it follows %s, which takes one value", a)
		if kind == argSwitch {
			prev = fmt.Sprintf("it follows %s, which takes no value (write %s=false to turn it off)", a, a)
		}
		switch {
		case !known || kind == argSwitch || (kind == argValue && hasValue):
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

// CommandArgs finds the command in args (the program's name first) and,
// for the commands that take AIPerf's flags, rewrites what follows it with
// expandArgs.
func CommandArgs(args []string, cmds []*cli.Command) ([]string, error) {
	for i := 1; i < len(args); i++ {
		if isFlag(args[i]) {
			continue
		}
		for _, c := range cmds {
			if c.Name != args[i] || (c.Name != "profile" && c.Name != "search") {
				continue
			}
			rest, err := expandArgs(args[i+1:], c.Flags)
			if err != nil {
				return nil, &UsageError{Err: err}
			}
			return append(append([]string{}, args[:i+1]...), rest...), nil
		}
		return args, nil
	}
	return args, nil
}

// ParseProfile parses args as `surge profile` would: expanded as AIPerf
// reads them, then by urfave/cli, then completed from the context.
func ParseProfile(args ...string) (Config, error) {
	var got Config
	cfg := &Config{}
	app := &cli.App{Name: "surge", Writer: io.Discard, ErrWriter: io.Discard, Commands: []*cli.Command{{
		Name: "profile", Flags: ProfileFlags(cfg), OnUsageError: OnUsageError,
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
