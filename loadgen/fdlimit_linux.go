package loadgen

import "golang.org/x/sys/unix"

// RaiseFDLimit raises the soft RLIMIT_NOFILE to the hard limit (the Go
// runtime does so at start, but a limit lowered since, or set by a parent
// that runs this in-process, is raised again here) and reports whether
// concurrency connections fit it beside the client's own files.
func RaiseFDLimit(concurrency int) (FDLimit, error) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return FDLimit{}, err
	}
	var err error
	if lim.Cur < lim.Max {
		want := lim
		want.Cur = lim.Max
		if err = unix.Setrlimit(unix.RLIMIT_NOFILE, &want); err == nil {
			lim = want
		}
	}
	return FDLimit{Soft: lim.Cur, Hard: lim.Max, Need: uint64(max(concurrency, 0)) + FDMargin, Known: true}, err
}
