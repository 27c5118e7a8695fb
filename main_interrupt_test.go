package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/metrics/history"
)

// TestCtrlCWhileLoadingDataset: SIGINT while `surge profile` reads its
// dataset (from a FIFO whose writer has stalled: without the interrupt the
// read would wait forever) exits 130 at once, through the whole command
// line and its signal handling.
func TestCtrlCWhileLoadingDataset(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "trace.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	stall := make(chan struct{})
	defer close(stall)
	wrote := make(chan bool, 1)
	go func() {
		// Opening waits for surge to open the file, which it does after its
		// signal handling is in place: the SIGINT below cannot reach a
		// process that would die of it.
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			wrote <- false
			return
		}
		defer w.Close()
		_, err = w.WriteString(strings.Repeat(`{"timestamp": 0, "input_length": 600, "output_length": 8}`+"\n", 1000))
		wrote <- err == nil
		<-stall
	}()
	p := start(t, surge(t, "profile", "--url", "http://127.0.0.1:9", "--model", "m", "--ui", "none", "--skip-preflight",
		"--input-file", fifo, "--custom-dataset-type", "mooncake_trace", "--output-artifact-dir", filepath.Join(dir, "out")))
	select {
	case ok := <-wrote:
		if !ok {
			t.Fatal("could not write the FIFO")
		}
	case <-p.exited:
		t.Fatalf("surge exited %d before reading its dataset:\n%s", exitCode(t, p.err), p.stderr.String())
	}
	sent := time.Now()
	p.signal(t, syscall.SIGINT)
	select {
	case <-p.exited:
		if got := exitCode(t, p.err); got != cmdline.ExitInterrupted {
			t.Errorf("exit %d after SIGINT while loading, want %d", got, cmdline.ExitInterrupted)
		}
		t.Logf("exited %v after SIGINT", time.Since(sent))
	case <-time.After(20 * time.Second):
		t.Fatal("surge did not exit within 20 s of SIGINT while loading its dataset")
	}
}

// signalLimit is how soon a run must answer a signal it acts on at once:
// the second, with room for a busy two-core machine to schedule
// the process.
const signalLimit = 1500 * time.Millisecond

// phaseServer is a server whose answers a phase of the run waits on: the
// models list hangs (probing), a one-token probe gets 503 (waiting for the
// model), and chat streams a token every 100 ms, so a run is still busy
// when the test signals it. hits counts the requests of each path.
type phaseServer struct {
	hits      sync.Map // path → *atomic.Int64
	hangModel bool
	hangChat  bool
	notReady  bool
	release   chan struct{}
}

func (s *phaseServer) count(path string) int64 {
	v, _ := s.hits.LoadOrStore(path, new(atomic.Int64))
	return v.(*atomic.Int64).Load()
}

func (s *phaseServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	v, _ := s.hits.LoadOrStore(r.URL.Path, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
	_, _ = io.Copy(io.Discard, r.Body)
	switch {
	case r.URL.Path == "/v1/models" && s.hangModel:
		select {
		case <-s.release:
		case <-r.Context().Done():
		}
		return
	case r.URL.Path == "/v1/chat/completions" && s.hangChat:
		select {
		case <-s.release:
		case <-r.Context().Done():
		}
		return
	case r.URL.Path == "/v1/chat/completions" && s.notReady:
		http.Error(w, "loading", http.StatusServiceUnavailable)
		return
	case r.URL.Path != "/v1/chat/completions":
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for i := range 100 {
		select {
		case <-r.Context().Done():
			return
		case <-s.release:
			return
		case <-time.After(100 * time.Millisecond):
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\" t%d\"}}]}\n\n", i)
		w.(http.Flusher).Flush()
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// TestSignalsInEveryPhase: SIGINT and SIGTERM act within a second in every
// phase of a run: probing the server for its model, waiting for it to be
// ready, the preflight, the warmup and the profile. Before the run starts, the process
// exits 130 with no artifacts; once it started, the first signal stops
// issuing (no request is sent after it), the second cancels the requests
// in flight, and the exports are still written.
func TestSignalsInEveryPhase(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		server  *phaseServer
		args    []string
		waitFor string // the path whose first request marks the phase
		sig     syscall.Signal
		started bool // the run started: two signals, exports written
	}{
		{"probing the model list", &phaseServer{hangModel: true}, nil, "/v1/models", syscall.SIGTERM, false},
		{"waiting for the model", &phaseServer{notReady: true}, []string{"-m", "m", "--wait-for-model-timeout", "600", "--wait-for-model-interval", "0.05"}, "/v1/chat/completions", syscall.SIGINT, false},
		{"preflight", &phaseServer{hangChat: true}, []string{"-m", "m"}, "/v1/chat/completions", syscall.SIGINT, false},
		// The phases of the run: no preflight, whose request would come first.
		{"warmup", &phaseServer{}, []string{"-m", "m", "--skip-preflight", "--warmup-request-count", "40", "--request-count", "40", "--concurrency", "2"}, "/v1/chat/completions", syscall.SIGINT, true},
		{"profile", &phaseServer{}, []string{"-m", "m", "--skip-preflight", "--request-count", "40", "--concurrency", "2"}, "/v1/chat/completions", syscall.SIGTERM, true},
		// A plan of 10^11 requests starts at once: nothing is counted or
		// built ahead of the first request.
		{"a plan of 10^11 requests", &phaseServer{}, []string{"-m", "m", "--skip-preflight", "--request-count", "99999999999", "--concurrency", "2"}, "/v1/chat/completions", syscall.SIGINT, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := tc.server
			s.release = make(chan struct{})
			srv := httptest.NewServer(s)
			defer srv.Close()
			defer close(s.release)
			dir := filepath.Join(t.TempDir(), "out")
			args := append([]string{"profile", "--url", srv.URL, "--streaming", "--ui", "none", "--tokenizer", "builtin",
				"--isl", "16", "--no-server-metrics", "--no-gpu-telemetry", "--output-artifact-dir", dir}, tc.args...)
			cmd := surge(t, args...)
			begin := time.Now()
			p := start(t, cmd)
			for deadline := time.Now().Add(20 * time.Second); s.count(tc.waitFor) == 0; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("no request to %s within 20 s", tc.waitFor)
				}
			}
			// Start-up is flat in the plan's size: loose for a busy machine,
			// far below what counting 10^11 sessions took (minutes).
			if took := time.Since(begin); took > 5*time.Second {
				t.Errorf("the first request to %s came %v after the start", tc.waitFor, took)
			}
			sent := time.Now()
			p.signal(t, tc.sig)
			if tc.started {
				// The first signal stops issuing: what was sent by then is
				// all the server sees.
				time.Sleep(signalLimit)
				before := s.count(tc.waitFor)
				time.Sleep(300 * time.Millisecond)
				if after := s.count(tc.waitFor); after != before {
					t.Errorf("%d requests sent more than %s after %v", after-before, signalLimit, tc.sig)
				}
				sent = time.Now()
				p.signal(t, tc.sig)
			}
			select {
			case <-p.exited:
				took := time.Since(sent)
				got := exitCode(t, p.err)
				t.Logf("exited %d, %v after the last %v", got, took, tc.sig)
				if got != cmdline.ExitInterrupted {
					t.Errorf("exit %d, want %d", got, cmdline.ExitInterrupted)
				}
				if took > signalLimit {
					t.Errorf("exited %v after %v, want within %v", took, tc.sig, signalLimit)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("no exit within 20 s of %v", tc.sig)
			}
			_, err := os.Stat(filepath.Join(dir, spec.FileJSON))
			switch {
			case tc.started && err != nil:
				t.Errorf("interrupted run wrote no summary: %v", err)
			case !tc.started && err == nil:
				t.Errorf("a run interrupted before it started wrote exports")
			}
		})
	}
}

// child is surge running as a child process, its stdout discarded and
// its stderr kept: exited is closed once it ended, err then holding what
// Wait returned.
type child struct {
	cmd    *exec.Cmd
	stderr strings.Builder
	exited chan struct{}
	err    error
}

// start starts cmd; the test's end kills it if it still runs.
func start(t *testing.T, cmd *exec.Cmd) *child {
	t.Helper()
	c := &child{cmd: cmd, exited: make(chan struct{})}
	cmd.Stderr = &c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.err = cmd.Wait(); close(c.exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-c.exited })
	return c
}

// signal sends sig to the child, as a terminal or a supervisor would.
func (c *child) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// TestSignalWhileHistoryLocked: a run that finished and waits to record
// itself in a history another process holds locked answers SIGINT and
// SIGTERM at once: exit 130, every export written, the run left out of
// the history with a line that says so (without the signal it would wait
// out the history's busy timeout, 10 s).
func TestSignalWhileHistoryLocked(t *testing.T) {
	t.Parallel()
	url := mockAt(t, 5*time.Millisecond)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			db := filepath.Join(work, "runs.db")
			h, err := history.Open(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			h.Close()
			raw, err := sql.Open("sqlite3", "file:"+db+"?_txlock=immediate")
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			tx, err := raw.Begin() // another process's write
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback() }()
			dir := filepath.Join(work, "out")
			p := start(t, surge(t, "profile", "--url", url, "--model", "mock", "--streaming", "--ui", "none", "--request-count", "4",
				"--isl", "16", "--osl", "4", "--skip-preflight", "--no-server-metrics", "--no-gpu-telemetry", "--history", db,
				"--output-artifact-dir", dir))
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat(filepath.Join(dir, spec.FileJSON)); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("no summary export within 30 s")
				}
			}
			// The exports are written just before the history: by now the
			// run waits on its lock.
			time.Sleep(500 * time.Millisecond)
			sent := time.Now()
			p.signal(t, sig)
			select {
			case <-p.exited:
			case <-time.After(20 * time.Second):
				t.Fatalf("no exit within 20 s of %v", sig)
			}
			took := time.Since(sent)
			got, out := exitCode(t, p.err), p.stderr.String()
			if got != cmdline.ExitInterrupted || took > signalLimit {
				t.Errorf("exit %d %v after %v, want %d within %v\n%s", got, took, sig, cmdline.ExitInterrupted, signalLimit, out)
			}
			if !strings.Contains(out, "not in the history") || !strings.Contains(out, "interrupted") {
				t.Errorf("stderr does not say the run was left out of the history:\n%s", out)
			}
			for _, f := range []string{spec.FileJSON, spec.FileJSONL} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("export %s: %v", f, err)
				}
			}
		})
	}
}
