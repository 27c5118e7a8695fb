package loadgen

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/surgebench/surge/metrics"
)

// ErrClientResources is the error type of a request the client could not
// send because it ran out of file descriptors (metrics.ErrClientResources).
const ErrClientResources = metrics.ErrClientResources

// FDMargin is the descriptors a run keeps for its own files beside its
// connections: exports, logs, telemetry scrapes, the control port, stdio.
const FDMargin = 64

// FDLimit is the process's open-file limit against what a run needs.
type FDLimit struct {
	// Soft and Hard are RLIMIT_NOFILE after RaiseFDLimit (0 where the
	// system has no such limit).
	Soft, Hard uint64
	// Need is the descriptors the run asked for: its concurrency plus
	// FDMargin.
	Need uint64
	// Known is set where the limit could be read (Linux).
	Known bool
}

// Fits reports whether the run's connections fit the soft limit (true
// where the limit is not known).
func (l FDLimit) Fits() bool { return !l.Known || l.Need <= l.Soft }

// String describes the limit against the need, for a warning.
func (l FDLimit) String() string {
	if !l.Known {
		return "open-file limit unknown on this system"
	}
	return fmt.Sprintf("open-file limit %d (hard %d), %d needed for the concurrency and %d of the client's own", l.Soft, l.Hard, l.Need, FDMargin)
}

// fdExhausted reports whether err is the client out of descriptors.
func fdExhausted(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// fdError is the record's error for a request the client could not send
// for want of descriptors.
func fdError(err error) *metrics.Error {
	which := "EMFILE: the process's open-file limit"
	if errors.Is(err, syscall.ENFILE) {
		which = "ENFILE: the system's open-file table"
	}
	return &metrics.Error{Type: ErrClientResources,
		Message: "the client ran out of file descriptors (" + which + "); the request never reached the server: raise the limit (ulimit -n) or lower the concurrency"}
}
