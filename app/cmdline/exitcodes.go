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
	// ExitWriteFault: a file of the run could not be written (a full or
	// failing disk); the run stopped when it happened.
	ExitWriteFault = 4
)

// OnUsageError types urfave/cli's parse failures (unknown flag, bad
// number) as usage errors, so they exit 2. Each command needs it: urfave
// does not hand the app's to its commands.
func OnUsageError(_ *cli.Context, err error, _ bool) error {
	// The flag package names flags with one dash; ours take two.
	msg := strings.NewReplacer("flag -", "flag --", "defined: -", "defined: --", "argument: -", "argument: --").Replace(err.Error())
	return &UsageError{Err: errors.New(msg)}
}
