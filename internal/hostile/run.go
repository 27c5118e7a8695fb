package hostile

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/internal/sanitize"
	"github.com/surgebench/surge/internal/testbin"
)

// Run runs every surface against every case that applies to it, each
// pair a parallel subtest "surface/case" (every surface's at once with the
// others') running the surge binary (built
// once for these sources: testbin), and checks the properties of the
// package doc. It is skipped with -short.
func Run(t *testing.T, surfaces []Surface) {
	if testing.Short() {
		t.Skip("builds and runs the surge binary once per surface and case; skipped with -short")
	}
	bin := testbin.Surge(t)
	cert := certFile(t)
	type job struct {
		s *Surface
		c *Case
	}
	var jobs []job
	for i := range surfaces {
		s := &surfaces[i]
		if err := s.valid(); err != nil {
			t.Errorf("surface %q: %v", s.Name, err)
			continue
		}
		applied := 0
		for j := range Cases {
			c := &Cases[j]
			if s.Reads&c.Needs != c.Needs || c.Applies != nil && !c.Applies(s) {
				continue
			}
			applied++
			jobs = append(jobs, job{s, c})
		}
		for name := range s.Pending {
			if !slices.ContainsFunc(Cases, func(c Case) bool { return c.Name == name }) {
				t.Errorf("surface %q: Pending names %q, which is no case", s.Name, name)
			}
		}
		if applied == 0 {
			t.Errorf("no case applies to %q", s.Name)
		}
	}
	// A case whose input never ends waits out the surface's own timeout
	// (up to 35 s, the credential fetches') and needs no CPU: those start
	// first, the longest bound first, so that the others run while they
	// wait. Started in the table's order, the longest began 25 s in and
	// held the table 20 s past every other case. Parallel subtests start
	// in the order they are made.
	slices.SortStableFunc(jobs, func(a, b job) int {
		switch {
		case a.c.Endless != b.c.Endless:
			if a.c.Endless {
				return -1
			}
			return 1
		case a.c.Endless:
			return cmp.Compare(killAfter(b.s), killAfter(a.s))
		}
		return 0
	})
	for _, j := range jobs {
		s, c := j.s, j.c
		t.Run(s.Name+"/"+c.Name, func(t *testing.T) {
			t.Parallel()
			if why, ok := s.Pending[c.Name]; ok {
				t.Skipf("pending: %s", why)
			}
			runCase(t, bin, cert, s, c)
		})
	}
}

// valid checks a surface's row.
func (s *Surface) valid() error {
	switch {
	case s.Name == "" || s.Args == nil:
		return errors.New("a surface needs a Name and Args")
	case s.Reads&(Server|File|Listens) == 0:
		return errors.New("its Reads must include Server, File or Listens")
	case s.Limit <= 0:
		return errors.New("it needs a Limit: every size that comes from outside has a bound")
	case len(s.Exit) == 0:
		return errors.New("it needs its Exit codes: those it documents for bad input")
	}
	return nil
}

// certFile writes the certificate of httptest's TLS servers (the same
// for all of them), for the command's SSL_CERT_FILE.
func certFile(t *testing.T) string {
	t.Helper()
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	p := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// newServer serves h on ln (with TLS when asked) until the test ends and
// returns its base URL.
func newServer(t *testing.T, ln net.Listener, h http.Handler, tls bool) string {
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL
}

// runCase makes the sandbox, runs the command and checks it.
func runCase(t *testing.T, bin, cert string, s *Surface, c *Case) {
	e := newEnv(t, s, cert)
	e.Bin = bin
	if s.Reads&Server != 0 {
		if s.Serve != nil {
			e.good = s.Serve(t)
		} else {
			e.good = http.NotFoundHandler()
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		home := Record(e.router(s))
		e.URL = newServer(t, ln, home, c.TLS)
		home.URL = e.URL
		e.home = home
		scheme, rest, _ := strings.Cut(e.URL, "://")
		e.UserURL = scheme + "://user:" + e.Secret + "@" + rest
	}
	if s.Reads&Listens != 0 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		e.Listen = ln.Addr().String()
		ln.Close() // the surface listens there
	}
	if s.Reads&File != 0 {
		name := s.File
		if name == "" {
			name = "input"
		}
		dir := filepath.Join(e.Dir, "in", "run")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		e.Path = filepath.Join(dir, name)
	}
	c.Setup(t, e, s)
	if s.Prepare != nil {
		s.Prepare(t, e)
	}
	o := e.run(t, bin, s, c)
	e.check(t, s, c, o)
	if c.Check != nil {
		c.Check(t, e, o)
	}
	if s.Check != nil {
		s.Check(t, e, o)
	}
}

func newEnv(t *testing.T, s *Surface, cert string) *Env {
	dir := t.TempDir()
	var b [8]byte
	_, _ = rand.Read(b[:])
	e := &Env{Dir: dir, Out: filepath.Join(dir, "out"), Secret: secretPrefix + hex.EncodeToString(b[:]),
		CertFile: cert, limit: s.Limit, arrived: make(chan struct{})}
	for _, d := range []string{e.Out, filepath.Join(dir, "home"), filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// router answers what the surface's Hostile matches with the case's
// answer, counting what it sends, and the rest as the well-behaved server.
func (e *Env) router(s *Surface) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hostile := e.hostile.Load()
		if hostile == nil || !e.matches(s.Hostile, r) {
			e.good.ServeHTTP(w, r)
			return
		}
		if e.arriving.CompareAndSwap(false, true) {
			close(e.arrived)
		}
		cw := &countingWriter{ResponseWriter: w}
		e.inFlight.Add(1)
		defer func() {
			e.inFlight.Add(-1)
			e.noteServed(cw.n)
		}()
		(*hostile).ServeHTTP(cw, r)
	})
}

func (e *Env) noteServed(n int64) {
	e.requests.Add(1)
	for {
		old := e.servedMax.Load()
		if n <= old || e.servedMax.CompareAndSwap(old, n) {
			return
		}
	}
}

func (e *Env) matches(m Match, r *http.Request) bool {
	if m.Method != "" && r.Method != m.Method {
		return false
	}
	if len(m.Paths) > 0 && !slices.ContainsFunc(m.Paths, func(p string) bool {
		return r.URL.Path == p || strings.HasSuffix(p, "/") && strings.HasPrefix(r.URL.Path, p)
	}) {
		return false
	}
	if m.First > 0 && e.matched.Add(1) > m.First {
		return false
	}
	return true
}

// environ is the command's environment: this process's, without what
// could reach the user's files, caches or credentials, and the sandbox's.
func (e *Env) environ(s *Surface) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "HF_"), strings.HasPrefix(k, "HUGGING_FACE"), strings.HasPrefix(k, "XDG_"),
			strings.HasPrefix(k, "SURGE_"), strings.HasPrefix(k, "SSL_CERT"), strings.HasSuffix(strings.ToUpper(k), "_PROXY"),
			k == "HOME", k == "OPENAI_API_KEY", k == "TMPDIR":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+filepath.Join(e.Dir, "home"), "TMPDIR="+filepath.Join(e.Dir, "tmp"),
		"XDG_DATA_HOME="+filepath.Join(e.Out, "data"), "XDG_CACHE_HOME="+filepath.Join(e.Out, "cache"),
		"XDG_CONFIG_HOME="+filepath.Join(e.Dir, "config"), "HF_HUB_CACHE="+filepath.Join(e.Out, "hf"),
		"HF_HUB_OFFLINE=1", "SSL_CERT_FILE="+e.CertFile, "NO_COLOR=1")
	if s != nil && s.Environ != nil {
		env = append(env, s.Environ(e)...)
	}
	return env
}

// Surge runs the surge binary in the case's sandbox (the surface's
// environment) to prepare an input, failing the test unless it exits 0.
func (e *Env) Surge(t *testing.T, s *Surface, args ...string) string {
	t.Helper()
	cmd := exec.Command(e.Bin, args...)
	cmd.Env = e.environ(s)
	cmd.Dir = e.Dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("surge %s: %v\n%s", quoted(args), err, sanitize.Text(string(out)))
	}
	return string(out)
}

// killAfter is how long a command may run before it is killed as hung:
// its bound with room for a loaded machine, or a minute.
func killAfter(s *Surface) time.Duration {
	if s.Bound > 0 {
		return 2*s.Bound + 15*time.Second
	}
	return time.Minute
}

// maxOutput is the most a command may print (a body printed whole is a
// fault of its own).
const maxOutput = 1 << 20

func (e *Env) run(t *testing.T, bin string, s *Surface, c *Case) *Outcome {
	args := s.Args(e)
	cmd := exec.Command(bin, args...)
	cmd.Env = e.environ(s)
	cmd.Dir = e.Dir
	out := &capped{max: maxOutput}
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var exited atomic.Bool // cmd.ProcessState is Wait's to write
	go func() {
		err := cmd.Wait()
		exited.Store(true)
		done <- err
	}()
	attacked := make(chan struct{})
	if e.client != nil {
		go func() {
			defer close(attacked)
			e.attack(t, killAfter(s))
		}()
	} else {
		close(attacked)
	}
	o := &Outcome{}
	interrupt := c.Interrupt || c.Endless && s.Bound == 0
	var arrived <-chan struct{}
	if interrupt {
		arrived = e.arrived
	}
	var signalled time.Time
	var later <-chan time.Time
	if c.InterruptAfter > 0 {
		tm := time.NewTimer(c.InterruptAfter)
		defer tm.Stop()
		later = tm.C
	}
	kill := time.NewTimer(killAfter(s))
	defer kill.Stop()
	// The memory bound is kept while the command runs: an unbounded read
	// of an endless input would take the machine's memory in seconds.
	watch := time.NewTicker(50 * time.Millisecond)
	defer watch.Stop()
wait:
	for {
		select {
		case <-watch.C:
			rss := residentBytes(cmd.Process.Pid)
			o.MaxRSS = max(o.MaxRSS, rss)
			if rss > MaxRSS {
				_ = cmd.Process.Kill()
				<-done
				t.Errorf("surge %s: its memory reached %s, over %s: killed", quoted(args), bounded.Bytes(rss), bounded.Bytes(MaxRSS))
				o.Code = -1
				break wait
			}
		case <-later:
			later = nil
			signalled = time.Now()
			o.Interrupted, o.Waiting = true, true
			_ = cmd.Process.Signal(syscall.SIGINT)
		case <-arrived:
			arrived = nil
			// Let the surface take in what arrived before the signal.
			time.Sleep(300 * time.Millisecond)
			if !exited.Load() {
				signalled = time.Now()
				// A surface that drops the body (Silent) closes the
				// stalled answer and goes on: the server may still hold
				// it for a moment, but the surface is not waiting on it.
				o.Interrupted, o.Waiting = true, e.inFlight.Load() > 0 && s.Silent == ""
				_ = cmd.Process.Signal(syscall.SIGINT)
			}
		case <-kill.C:
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("surge %s: still running after %v: killed", quoted(args), killAfter(s))
			o.Code = -1
			break wait
		case <-done:
			o.Code = cmd.ProcessState.ExitCode()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				o.Code = 128 + int(ws.Signal()) // as a shell tells it: 130 for SIGINT
			}
			break wait
		}
	}
	o.Took = time.Since(start)
	<-attacked
	o.ClientSent, o.ClientStatus = e.clientSent.Load(), int(e.clientStatus.Load())
	if o.Interrupted {
		o.AfterSignal = time.Since(signalled)
	}
	o.Output = out.String()
	if out.over {
		t.Errorf("surge printed more than %s", bounded.Bytes(maxOutput))
	}
	o.Served, o.Requests = e.servedMax.Load(), e.requests.Load()
	for _, rec := range append([]*Recorder{e.home}, e.aways...) {
		if rec == nil {
			continue
		}
		for _, r := range rec.Requests() {
			o.LargestRequest = max(o.LargestRequest, r.Body)
		}
	}
	t.Logf("surge %s\nexit %d after %v (rss %s)\n%s", quoted(args), o.Code, o.Took.Round(time.Millisecond),
		bounded.Bytes(o.MaxRSS), sanitize.Text(tail(o.Output, 4000)))
	return o
}

// socketBuffers is how much of an answer the server may have written past
// what the client read before it closed: what the two sockets of a
// loopback connection hold at most (the server's send buffer and the
// client's receive buffer, which the kernel grows while the client keeps
// up), with room for the client's own buffers; 32 MiB where the kernel
// allows less.
func socketBuffers() int64 {
	most := func(f string) int64 {
		b, err := os.ReadFile(f)
		if err != nil {
			return 0
		}
		v := strings.Fields(string(b))
		if len(v) == 0 {
			return 0
		}
		n, _ := strconv.ParseInt(v[len(v)-1], 10, 64)
		return n
	}
	return max(32<<20, most("/proc/sys/net/ipv4/tcp_rmem")+most("/proc/sys/net/ipv4/tcp_wmem")+8<<20)
}

// residentBytes is a process's resident memory (Linux; 0 elsewhere).
func residentBytes(pid int) int64 {
	b, err := bounded.ReadFile(context.Background(), fmt.Sprintf("/proc/%d/statm", pid), 4<<10)
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// secretPrefix starts every case's secret.
const secretPrefix = "hostile-secret-"

// MaxRSS is the peak memory any command may reach: far above a small
// run's, far below what an unbounded read of an endless input reaches.
const MaxRSS = 1 << 30

// check asserts the properties every case keeps.
func (e *Env) check(t *testing.T, s *Surface, c *Case, o *Outcome) {
	t.Helper()
	if o.Code == -1 {
		return // killed: said
	}
	for _, marker := range []string{"panic: ", "fatal error: ", "goroutine 1 ["} {
		if strings.Contains(o.Output, marker) {
			t.Errorf("surge crashed (%q in its output)", marker)
		}
	}
	// Exit codes.
	want := s.Exit
	if c.MayPass {
		want = append([]int{0}, want...)
	}
	switch {
	case o.Interrupted && o.Waiting:
		want = []int{130} // it was waiting on the input: only the signal ended it
	case o.Interrupted:
		want = append([]int{130}, want...) // the signal may have come as it finished
	}
	if !slices.Contains(want, o.Code) {
		t.Errorf("exit %d, want one of %v", o.Code, want)
	}
	// Time.
	if o.Interrupted && o.AfterSignal > InterruptWithin {
		t.Errorf("exited %v after SIGINT, want within %v", o.AfterSignal.Round(time.Millisecond), InterruptWithin)
	}
	if !o.Interrupted && s.Bound > 0 && o.Took > s.Bound+5*time.Second {
		t.Errorf("took %v, over its bound %v", o.Took.Round(time.Millisecond), s.Bound)
	}
	if c.Interrupt && !e.arriving.Load() {
		t.Errorf("the surface never asked for the stalled answer (it got no SIGINT)")
	}
	// Printing.
	if i := unsafeAt(o.Output); i >= 0 {
		t.Errorf("printed a raw control character: %q", o.Output[max(i-40, 0):min(i+40, len(o.Output))])
	}
	if strings.Contains(o.Output, e.Secret[:len(secretPrefix)+4]) {
		t.Errorf("printed the secret (or its start)")
	}
	e.checkWritten(t)
	// Other origins.
	for _, rec := range e.aways {
		for _, leak := range rec.Carrying(e.Secret) {
			t.Errorf("another origin (%s): %s", rec.URL, leak)
		}
	}
	if e.plain != nil {
		for _, r := range e.plain.Requests() {
			t.Errorf("plain http after https: %s %s reached %s", r.Method, r.URL, e.plain.URL)
		}
	}
	// Bounds.
	if c.Bounded && s.Silent == "" && (e.requests.Load() > 0 || s.Reads&File != 0) {
		if lim := bounded.Bytes(s.Limit); !strings.Contains(o.Output, lim) {
			t.Errorf("the error does not name the %s limit", lim)
		}
	}
	if slack := s.Limit + socketBuffers(); o.Served > slack {
		t.Errorf("read %s of one answer, past its %s limit", bounded.Bytes(o.Served), bounded.Bytes(s.Limit))
	}
	if c.Needs&Listens != 0 {
		e.checkClient(t, s, c, o)
	}
	if c.Needs&ToolCalls != 0 && o.LargestRequest > s.Limit+1<<20 {
		t.Errorf("sent a request of %s, past its %s limit", bounded.Bytes(o.LargestRequest), bounded.Bytes(s.Limit))
	}
	if o.MaxRSS > MaxRSS {
		t.Errorf("its memory reached %s, over %s", bounded.Bytes(o.MaxRSS), bounded.Bytes(MaxRSS))
	}
	if c.NamesFile && e.Path != "" {
		if name := sanitize.Line(filepath.Base(filepath.Dir(e.Path))); !strings.Contains(o.Output, name) {
			if name := sanitize.Line(filepath.Base(e.Path)); !strings.Contains(o.Output, name) {
				t.Errorf("the error names neither the file nor its folder (%s)", sanitize.Line(e.Path))
			}
		}
	}
}

// checkWritten fails when a file under e.Out holds the secret.
func (e *Env) checkWritten(t *testing.T) {
	t.Helper()
	secret := []byte(e.Secret)
	_ = filepath.WalkDir(e.Out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		b, err := bounded.ReadFile(t.Context(), p, 256<<20)
		if err == nil && bytes.Contains(b, secret) {
			t.Errorf("%s holds the secret", p)
		}
		return nil
	})
}

// unsafeAt is the index of the first character the sanitiser would
// escape in text (newlines and tabs are text), or -1.
func unsafeAt(s string) int { return sanitize.Index(s) }

func quoted(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = sanitize.Line(a)
		if strings.ContainsAny(a, " \"'") || a == "" {
			q[i] = fmt.Sprintf("%q", a)
		}
	}
	return strings.Join(q, " ")
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// capped keeps the first max bytes written to it and says whether more
// came.
type capped struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); len(p) > room {
		c.over = true
		c.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}
