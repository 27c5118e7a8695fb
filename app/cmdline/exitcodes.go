package cmdline

import (
	"errors"
	"strings"

	"github.com/urfave/cli/v2"
)

// Exit codes (design §2).
const (
	ExitOK          = 0
	ExitFailed      = 1
	ExitUsage       = 2
	ExitInterrupted = 130
	// ExitNoBaseline: a regression gate had no baseline it could trust:
	// the history it reads is damaged, unreadable, another application's
	// or a newer surge's, or the baseline it names is missing. A gate
	// that cannot read its history does not pass.
	ExitNoBaseline = 3
	// ExitWriteFault: a file of the run could not be written (a full or
	// failing disk); the run stopped when it happened.
	ExitWriteFault = 4
)

// BaselineError is a gate's baseline that could not be had (exit
// ExitNoBaseline): Err says why, in one line.
type BaselineError struct{ Err error }

func (e *BaselineError) Error() string { return e.Err.Error() }
func (e *BaselineError) Unwrap() error { return e.Err }

// OnUsageError types urfave/cli's parse failures (unknown flag, bad
// number) as usage errors, so they exit 2. Each command needs it: urfave
// does not hand the app's to its commands.
func OnUsageError(_ *cli.Context, err error, _ bool) error {
	// The flag package names flags with one dash; ours take two.
	msg := strings.NewReplacer("flag -", "flag --", "defined: -", "defined: --", "argument: -", "argument: --").Replace(err.Error())
	return &UsageError{Err: errors.New(msg)}
}
