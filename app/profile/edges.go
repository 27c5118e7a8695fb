package profile

import (
	"fmt"
	"io"
	"sync"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/metrics/export"
)

// The network and disk edges of a run (docs/network-edges.md): redirects,
// the response bound, connection retries, the open-file limit, the control
// port's token and write faults.

// edgeOptions are the generator's options for the edges.
func edgeOptions(r *spec.Request) []loadgen.Option {
	opts := []loadgen.Option{
		loadgen.WithMaxResponseBytes(r.MaxResponseBytes), // 0: the default
		loadgen.WithConnectionRetries(r.Retries),
	}
	if r.FollowRedirects {
		opts = append(opts, loadgen.WithFollowRedirects())
	}
	return opts
}

// redirectWarning is the summary's line for n responses that were
// redirects and came back unfollowed: off by default, or (with
// --follow-redirects) ones net/http would resend as a GET without the body.
func redirectWarning(n int64, follow bool) string {
	what := "responses were redirects"
	if n == 1 {
		what = "response was a redirect"
	}
	if follow {
		return fmt.Sprintf("%d %s not followed: following would resend the request as a GET without its body", n, what)
	}
	return fmt.Sprintf("%d %s (not followed: --follow-redirects)", n, what)
}

// checkFDLimit raises the open-file limit to its hard bound and warns, before
// anything is sent, when the concurrency still cannot fit: requests past it
// would fail on the client's side (client_fd_exhausted).
func checkFDLimit(maxConc int, l cmdline.Logger, log io.Writer) {
	if maxConc <= 0 {
		return
	}
	lim, err := loadgen.RaiseFDLimit(maxConc)
	if err != nil {
		l.Debugf("raising the open-file limit: %v", err)
	}
	if !lim.Fits() {
		fmt.Fprint(log, export.FormatWarning(fmt.Sprintf("--concurrency %d may not fit: %s; requests past it fail on the client's side (client_fd_exhausted): raise ulimit -n (the hard limit too) or lower the concurrency",
			maxConc, lim), l.Enabled("DEBUG"), 0))
	}
}

// writeFault is the run's first failed write to a per-request file: it
// stops issuing at once (what is in flight finishes, and the summary is
// still written where it can be).
type writeFault struct {
	once sync.Once
	log  io.Writer
	stop func()
	mu   sync.Mutex
	path string
	err  error
}

// reporter is the fault callback of the file at path.
func (w *writeFault) reporter(path string) export.WriteFault {
	return func(err error) {
		w.once.Do(func() {
			w.mu.Lock()
			w.path, w.err = path, err
			w.mu.Unlock()
			fmt.Fprintf(w.log, "error: writing %s: %v: stopping the run (exit code %d)\n", path, err, cmdline.ExitWriteFault)
			w.stop()
		})
	}
}

// Err is the fault, naming its file, or nil.
func (w *writeFault) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		return nil
	}
	return &WriteFaultError{Path: w.path, Err: w.err}
}

// WriteFaultError is a run stopped by a failed write to one of its files
// (exit code cmdline.ExitWriteFault).
type WriteFaultError struct {
	Path string
	Err  error
}

func (e *WriteFaultError) Error() string {
	return fmt.Sprintf("stopped: writing %s: %v", e.Path, e.Err)
}

func (e *WriteFaultError) Unwrap() error { return e.Err }
