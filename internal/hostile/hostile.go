// Package hostile is surge's kit of misbehaving servers and files, and
// the one table-driven harness that runs every network-facing and
// file-reading feature of surge (a Surface) against every misbehaviour
// that applies to it (a Case), through the real command line.
//
// A Surface is one row: a command line of the surge binary that points
// one feature at what the harness serves or writes (Env.URL, Env.Path),
// what it reads (Server, File, SQLite, ToolCalls), the bound it keeps on
// what it reads whole (Limit), how long it may take (Bound) and the exit
// codes its documentation gives when its input misbehaves (Exit). Run
// starts the surge binary once per pair of surface and case, in a
// sandbox of its own (HOME, XDG_DATA_HOME, the Hugging Face cache), and
// asserts the properties every surface keeps whatever it is fed:
//
//   - no credential of the user's (Env.Secret, given as a header, an API
//     key, HF_TOKEN or a URL's password) reaches another origin, and no
//     request goes over plain http after https;
//   - the secret is never printed, nor written under Env.Out;
//   - what is read whole stops at the surface's Limit, and the error names
//     it; the process's memory stays bounded;
//   - it ends within its Bound (a case whose input never ends, on a
//     surface without a timeout of its own, is ended by SIGINT: exit 130
//     at once);
//   - nothing it prints carries a raw control character (the sanitiser);
//   - its exit code is one its documentation gives, and it never panics.
//
// A new feature that asks a server or reads a file joins by adding its
// Surface to the table (e2e/hostile_test.go).
package hostile

import (
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// Kind is what a surface takes from outside; a case applies to a surface
// that takes everything the case needs.
type Kind uint

// Kinds.
const (
	// Server: the surface asks an HTTP server (Env.URL).
	Server Kind = 1 << iota
	// File: the surface reads a file (Env.Path).
	File
	// SQLite: the file is an SQLite database surge opens (the history).
	SQLite
	// ToolCalls: the server's answers carry tool calls the surface sends
	// back (the tool loop).
	ToolCalls
	// Listens: the surface serves (surge's OTLP receiver): the case is a
	// client that sends it requests at Env.Listen.
	Listens
	// Parquet: the server's answer is a Parquet file, read by ranges.
	Parquet
)

// Surface is one network-facing or file-reading feature of surge, run
// through the command line.
type Surface struct {
	// Name names the feature ("preflight", "history import").
	Name string
	// Reads is what it takes from outside (Server, File, | SQLite, |
	// ToolCalls, | Parquet).
	Reads Kind
	// Args is the command line after "surge" that points the feature at
	// e.URL (a server surface) or e.Path (a file surface), sends e.Secret
	// as a credential where the feature takes one, and writes what it
	// writes under e.Out.
	Args func(e *Env) []string
	// Environ is extra environment (KEY=value) for the command, e.g.
	// HF_ENDPOINT and HF_TOKEN.
	Environ func(e *Env) []string
	// Serve is the well-behaved server of a server surface: it answers
	// every request Hostile does not match, and every request a redirect
	// sends to another origin (nil: 404 to all).
	Serve func(t *testing.T) http.Handler
	// Hostile picks the requests the case answers (the zero Match: all).
	Hostile Match
	// File is the name of the file in Env.Path (default "input"): a
	// summary's fixed name, a dataset's extension.
	File string
	// Prepare, when set, writes what the surface needs beside the hostile
	// file (a folder's other files, a good run to compare with) before the
	// command runs.
	Prepare func(t *testing.T, e *Env)
	// Escaped, when set, returns the surface's input with outside strings
	// it prints carrying terminal escapes (Fill a template with {{esc}}):
	// what the "escapes in an answer" case serves and the "escapes in the
	// content" case writes (default: GenericEscaped filled).
	Escaped func(t *testing.T, e *Env) string
	// Rows, when set, is one record of the surface's input as a server
	// sends it (a JSONL line): the "endless rows" case serves it again and
	// again, and the surface must stop once it has what it needs.
	Rows string
	// Silent, when set, says why the surface may drop an answer over its
	// Limit without naming the limit (it needs none of that body).
	Silent string
	// Limit is the bound in bytes on what the surface reads whole (a body,
	// a file, a line): what it reads of an endless input stops near it,
	// and the error names it (as bounded.Bytes writes it). Every surface
	// has one: every size that comes from outside has a bound.
	Limit int64
	// Bound is how long the command may take against any case, its own
	// timeouts included; 0: it has no timeout of its own, so a case whose
	// input never ends is ended by SIGINT (exit 130).
	Bound time.Duration
	// Exit lists the exit codes the surface's documentation gives when its
	// input misbehaves (a warning and a run that goes on: 0; every request
	// failed: 1; bad input: 2).
	Exit []int
	// Check, when set, asserts what is the surface's own after each case
	// (no partial cache entry, nothing imported).
	Check func(t *testing.T, e *Env, o *Outcome)
	// Pending lists cases this surface does not survive yet, each with
	// the issue that fixes it: they are skipped, saying so. The list only
	// shrinks.
	Pending map[string]string
}

// Match picks requests by method, path and order.
type Match struct {
	// Method, when set, is the only method matched.
	Method string
	// Paths, when set, are the paths matched (a request's path equal to
	// one, or under one that ends in "/").
	Paths []string
	// First, when > 0, matches only the first N requests that match the
	// rest.
	First int64
}

// Env is one case's sandbox, as the surface's Args and Check see it.
type Env struct {
	// Dir is the case's temporary folder (HOME is in it).
	Dir string
	// Out is where the surface writes (artifacts, caches, databases):
	// checked for the secret afterwards.
	Out string
	// URL is the base URL of the server the case runs ("http://127.0.0.1:P",
	// or https), UserURL the same with a user and the secret as password.
	URL, UserURL string
	// Listen is the address a listening surface is told to listen at
	// ("127.0.0.1:P"), where the case's client connects.
	Listen string
	// Path is the case's file (a file surface), in a folder of its own
	// (filepath.Dir(Path)) that holds nothing else unless Prepare puts it
	// there.
	Path string
	// Secret is a credential for the surface to send: an -H header, an
	// API key, HF_TOKEN. It must reach no other origin, be printed
	// nowhere and be written nowhere under Out.
	Secret string
	// Bin is the surge binary the harness runs (Surge runs it).
	Bin string
	// CertFile is the PEM of the https servers' certificate authority
	// (SSL_CERT_FILE in the command's environment).
	CertFile string

	limit     int64
	good      http.Handler                 // the surface's well-behaved server
	hostile   atomic.Pointer[http.Handler] // the case's answer: set after its server starts
	home      *Recorder                    // the case's server (URL)
	aways     []*Recorder                  // other origins
	plain     *Recorder                    // the http server an https one redirects to
	arrived   chan struct{}                // closed at the first hostile request
	arriving  atomic.Bool
	matched   atomic.Int64
	requests  atomic.Int64 // hostile answers given
	inFlight  atomic.Int64 // hostile answers under way
	servedMax atomic.Int64 // the largest hostile body written
	foreign   []byte       // the foreign database's bytes
	// client is a listening surface's case: it sends its request on the
	// connection; clientSent and clientStatus are what it noted.
	client       func(conn net.Conn)
	clientSent   atomic.Int64
	clientStatus atomic.Int64
}

// Outcome is what one command did.
type Outcome struct {
	// Code is its exit code (-1: killed).
	Code int
	// Output is its stdout and stderr, in order, as far as it was kept.
	Output string
	// Took is its wall time; Interrupted says a SIGINT was sent, and
	// AfterSignal how long it took to exit after it.
	Took, AfterSignal time.Duration
	Interrupted       bool
	// Waiting says the command was waiting on the input when the signal
	// came (a stalled answer still open, a FIFO): it must exit 130.
	Waiting bool
	// MaxRSS is its peak resident memory in bytes, sampled every 50 ms
	// (0: unknown; getrusage's counts the test process's own, which a
	// child inherits across fork and exec).
	MaxRSS int64
	// Served is how many bytes of hostile body the case's server wrote;
	// Requests how many requests the hostile handler answered.
	Served, Requests int64
	// LargestRequest is the largest request body the case's servers were
	// sent.
	LargestRequest int64
	// ClientSent is how much of its request a listening surface's case
	// wrote before the surface answered or hung up; ClientStatus the
	// status it answered (0: it hung up).
	ClientSent   int64
	ClientStatus int
}
