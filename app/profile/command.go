package profile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
)

// RunCommand is Run as `surge profile` and `surge search` run it: under
// SIGINT/SIGTERM, the summary to out and notices to log, and the exit code
// its result earns (0 when the error alone decides it).
func RunCommand(ctx context.Context, s *spec.Spec, out, log io.Writer) (code int, err error) {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := Run(ctx, s, out, log)
	switch {
	case res == nil && err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return cmdline.ExitInterrupted, err // before the run started (loading the dataset)
	case res == nil:
		return cmdline.ExitOK, err
	case res.WriteFault != nil:
		return cmdline.ExitWriteFault, err
	case res.Cancelled:
		return cmdline.ExitInterrupted, err
	case ctx.Err() != nil:
		// A signal after the run, while it was being recorded (waiting on
		// a locked history): the exports are written, the wait cut short.
		return cmdline.ExitInterrupted, err
	case res.AllFailed():
		fmt.Fprintln(log, "surge: every request failed (see the error summary above)")
		return cmdline.ExitFailed, err
	}
	return cmdline.ExitOK, err
}
