package peers

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/profile"
	"github.com/surgebench/surge/app/spec"
)

// Runner runs surge's engine for a peer's command line: each Run is one
// `surge profile` run of the flags the peer's front end translated its
// command line into.
type Runner struct {
	// Version is surge's version for the exports.
	Version string
	// Log takes surge's own summary and notices (the peer's own output
	// goes to the command's stdout).
	Log io.Writer
	// TTY is whether stdout is a terminal (it picks surge's default UI).
	TTY bool
	// Quiet leaves out the line naming the surge command each run is.
	Quiet bool
}

// Run runs `surge profile` with args and returns the exit code its result
// earns (0 when the error alone decides it, as profile.RunCommand). It
// first says which surge command it runs, so a user can rerun it (or
// compare it with one of their own) as surge's own command line.
func (r Runner) Run(ctx context.Context, args []string) (int, error) {
	if !r.Quiet {
		fmt.Fprintf(r.Log, "surge: running as: surge profile %s\n", Quote(Redacted(args)))
	}
	s, err := r.Spec(args)
	if err != nil {
		return cmdline.ExitUsage, err
	}
	return profile.RunCommand(ctx, s, r.Log, r.Log)
}

// Spec is the run args describe, as `surge profile` parses and checks it.
// A usage error says it is in the translation, since its flag names are
// surge's, not the peer's.
func (r Runner) Spec(args []string) (*spec.Spec, error) {
	c, err := cmdline.ParseProfile(args...)
	if err == nil {
		c.Version = r.Version
		c.StdoutTTY = r.TTY
		c.Signals = true
		c.JobIndex = os.Getenv(cmdline.JobIndexEnv)
		var s *spec.Spec
		if s, err = spec.Parse(c); err == nil {
			return s, nil
		}
	}
	return nil, cmdline.Usagef("%v (in the translation: surge profile %s)", err, Quote(Redacted(args)))
}

// secretFlags are the surge flags whose values may hold a credential.
var secretFlags = map[string]bool{"--api-key": true, "--header": true, "-H": true}

// Redacted is args with every credential-bearing value replaced, for
// printing.
func Redacted(args []string) []string {
	out := append([]string(nil), args...)
	for i := 0; i+1 < len(out); i++ {
		if secretFlags[out[i]] {
			out[i+1] = "<redacted>"
			i++
		}
	}
	return out
}

// Quote joins args as a shell would read them back: a word with a space,
// a quote or another shell character is single-quoted.
func Quote(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`!*?[](){}<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}
