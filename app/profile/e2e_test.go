package profile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/surgebench/surge/app/spec"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/calibrate"
	"github.com/surgebench/surge/loadgen/wire"
)

// Whole-command behaviour of `surge profile`: what Run returns and what
// it leaves on disk when requests fail, when it is interrupted, and when
// the process is killed outright.

func TestRunMixedFailuresExportsEveryRecord(t *testing.T) {
	t.Parallel()
	srv := &apptest.Server{Tokens: 4, FailEvery: 3}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := t.TempDir()
	var out, log bytes.Buffer
	res, err := runConfig(context.Background(), apptest.RunConfig(ts.URL, dir), &out, &log)
	if err != nil {
		t.Fatal(err)
	}
	if res.Cancelled || res.AllFailed() {
		t.Errorf("Cancelled %v AllFailed %v, want a completed run with successes", res.Cancelled, res.AllFailed())
	}
	m := apptest.ReadExport(t, dir)
	if ok, bad := apptest.RunAvg(t, m, "request_count"), apptest.RunAvg(t, m, "error_request_count"); ok != 8 || bad != 4 {
		t.Errorf("request_count %v error_request_count %v, want 8 and 4", ok, bad)
	}
	sum, _ := json.Marshal(m["error_summary"])
	if want := `[{"count":4,"error_details":{"code":500,"message":"injected","type":"server_error"}}]`; string(sum) != want {
		t.Errorf("error_summary %s, want %s", sum, want)
	}
	lines := apptest.RecordLines(t, dir)
	if len(lines) != 12 {
		t.Fatalf("%d JSONL lines, want 12 (one per request)", len(lines))
	}
	failed := 0
	for _, l := range lines {
		if e, ok := l["error"].(map[string]any); ok {
			failed++
			if e["code"] != 500.0 || e["type"] != "server_error" || e["message"] != "injected" {
				t.Errorf("JSONL error %v", e)
			}
		}
	}
	if failed != 4 {
		t.Errorf("%d JSONL lines carry an error, want 4", failed)
	}
	if !strings.Contains(out.String(), "injected") {
		t.Errorf("console summary does not show the error:\n%s", out.String())
	}
}

func TestRunEveryRequestFailed(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(&apptest.Server{FailEvery: 1})
	defer ts.Close()
	dir := t.TempDir()
	res, err := runConfig(context.Background(), apptest.RunConfig(ts.URL, dir), io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !res.AllFailed() || res.Cancelled {
		t.Errorf("AllFailed %v Cancelled %v, want AllFailed (exit 1)", res.AllFailed(), res.Cancelled)
	}
	if n := len(apptest.RecordLines(t, dir)); n != 12 {
		t.Errorf("%d JSONL lines, want 12 error records", n)
	}
}

func TestRunFailureThresholdAbortsEarly(t *testing.T) {
	t.Parallel()
	// Every request fails: above a 0.5 threshold as soon as the minimum of
	// max(concurrency, 10) records is reached.
	srv := &apptest.Server{Tokens: 2, FailEvery: 1}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := t.TempDir()
	c := apptest.RunConfig(ts.URL, dir)
	c.RequestCount, c.FailedThreshold = 1000, 0.5
	var out bytes.Buffer
	res, err := runConfig(context.Background(), c, &out, io.Discard)
	if !errors.Is(err, loadgen.ErrFailureThreshold) {
		t.Fatalf("error %v, want ErrFailureThreshold", err)
	}
	if res == nil || !res.Aborted || !res.AllFailed() {
		t.Fatalf("result %+v, want Aborted and AllFailed", res)
	}
	n := len(apptest.RecordLines(t, dir))
	if n < 10 || n > 10+4 {
		t.Errorf("%d records before the abort, want 10 (the minimum) plus at most the 4 in flight", n)
	}
	if !strings.Contains(out.String(), "--failed-request-threshold 0.5") {
		t.Errorf("console output does not say why the run stopped:\n%s", out.String())
	}
	if m := apptest.ReadExport(t, dir); m["was_cancelled"] != true {
		t.Errorf("was_cancelled %v after an abort, want true", m["was_cancelled"])
	}
}

func TestRunCancelledWritesEveryExport(t *testing.T) {
	t.Parallel()
	// 50 tokens 40 ms apart: 2 s streams, far longer than the grace period.
	srv := &apptest.Server{Tokens: 50, ITL: 40 * time.Millisecond}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := t.TempDir()
	c := apptest.RunConfig(ts.URL, dir)
	c.RequestCount, c.Grace = 1000, 300*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Interrupt once the 4 streams are in flight (setup, such as loading the
	// default tokenizer, takes a while under -race).
	cancelledAt := make(chan time.Time, 1)
	go func() {
		for srv.N.Load() < 4 {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		cancelledAt <- time.Now()
		cancel()
	}()
	res, err := runConfig(ctx, c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(<-cancelledAt); took > 3*time.Second {
		t.Errorf("run took %s after the cancel, with a 0.3 s grace period", took)
	}
	if !res.Cancelled {
		t.Error("Result.Cancelled false after ctx was cancelled")
	}
	for _, f := range []string{spec.FileJSON, spec.FileCSV, spec.FileJSONL, FileInputs} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	m := apptest.ReadExport(t, dir)
	if m["was_cancelled"] != true {
		t.Errorf("was_cancelled %v, want true", m["was_cancelled"])
	}
	finished := apptest.RunAvg(t, m, "request_count") + apptest.RunAvg(t, m, "error_request_count")
	lines := apptest.RecordLines(t, dir)
	if float64(len(lines)) != finished || len(lines) != 4 {
		t.Errorf("%d JSONL lines, %v requests finished; want the 4 in flight, cancelled", len(lines), finished)
	}
	for _, l := range lines {
		if e, _ := l["error"].(map[string]any); e == nil || e["type"] != "cancelled" {
			t.Errorf("JSONL record %v, want a cancelled error", l["error"])
		}
	}
}

// TestInterruptDrainsTheEmbeddedMock interrupts a run against the
// embedded mock: the streams in flight finish inside the grace period, so
// the mock must outlive the interrupt (it used to stop with it and cut
// them, turning an interrupt into errors).
func TestInterruptDrainsTheEmbeddedMock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := apptest.RunConfig("", dir)
	c.RequestCount, c.Grace = 100000, 20*time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			b, _ := os.ReadFile(filepath.Join(dir, spec.FileJSONL))
			if bytes.Count(b, []byte("\n")) >= 8 {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	res, err := runConfig(ctx, c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cancelled {
		t.Error("Result.Cancelled false after ctx was cancelled")
	}
	m := apptest.ReadExport(t, dir)
	if bad := apptest.RunAvg(t, m, "error_request_count"); bad != 0 {
		t.Errorf("%v requests failed: the streams in flight should have drained (errors %v)", bad, m["error_summary"])
	}
	if n := apptest.RunAvg(t, m, "request_count"); n < 8 {
		t.Errorf("request_count %v, want at least the 8 finished before the interrupt", n)
	}
}

// secretsRun sends an API key and a secret header to a server that fails
// every fourth request with errorBody, checks that the server received
// both secrets, and returns every artifact of the run by name (the export
// files, the console output and the log).
func secretsRun(t *testing.T, key, hdr, errorBody string) map[string][]byte {
	t.Helper()
	srv := &apptest.Server{Tokens: 3, FailEvery: 4, ErrorBody: errorBody}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := t.TempDir()
	// Secrets outside headers too: the URL's user information and a
	// credential query parameter, and credential --extra-inputs (sent in
	// every body).
	target := strings.Replace(ts.URL, "http://", "http://surge:url-SECRET-pw@", 1) + "/v1?api_key=query-SECRET-q&api-version=1"
	c := apptest.RunConfig(target, dir)
	c.APIKey, c.Headers = key, []string{"X-Api-Key: " + hdr, "X-Custom-Token: custom-SECRET-tok"}
	c.ExtraInputs = []string{"password:extra-SECRET-pw", "temperature:0", `{"options": {"auth": {"password": "nested-SECRET-pw"}}}`}
	c.ExportLevel = spec.LevelRaw // the raw dump holds every body and response too
	var out, log bytes.Buffer
	if _, err := runConfig(context.Background(), c, &out, &log); err != nil {
		t.Fatal(err)
	}
	srv.Mu.Lock()
	gotAuth, gotKey := srv.Auth[0], srv.APIKeys[0]
	srv.Mu.Unlock()
	if gotAuth != "Bearer "+key || gotKey != hdr {
		t.Fatalf("server got Authorization %q X-Api-Key %q: the secrets must still be sent", gotAuth, gotKey)
	}
	artifacts := map[string][]byte{"stdout": out.Bytes(), "log": log.Bytes()}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		artifacts[e.Name()] = b
	}
	if len(artifacts) < 7 || artifacts["profile_export_raw.jsonl"] == nil {
		t.Errorf("only %d artifacts to check: %v", len(artifacts), entries)
	}
	m := apptest.ReadExport(t, dir)
	ic := m["input_config"].(map[string]any)
	shownKey, _ := cmdline.PathValue(ic, "endpoint.api_key")
	headers, _ := cmdline.PathValue(ic, "input.headers")
	redacted := false
	for _, h := range headers.([]any) {
		redacted = redacted || h.([]any)[0] == "X-Api-Key" && h.([]any)[1] == cmdline.Redacted
	}
	if shownKey != cmdline.Redacted || !redacted {
		t.Errorf("input_config endpoint.api_key %v input.headers %v, want both %q", shownKey, headers, cmdline.Redacted)
	}
	return artifacts
}

func checkNoSecrets(t *testing.T, artifacts map[string][]byte, secrets ...string) {
	t.Helper()
	for name, b := range artifacts {
		for _, secret := range secrets {
			if i := bytes.Index(b, []byte(secret)); i >= 0 {
				t.Errorf("%s holds the secret %q: …%s…", name, secret, b[max(0, i-60):min(len(b), i+40)])
			}
		}
	}
}

// TestSecretsNeverWritten: no export, console output or log holds the API
// key or a secret header's value.
func TestSecretsNeverWritten(t *testing.T) {
	t.Parallel()
	const key, hdr = "sk-test-SECRET-123", "hdr-SECRET-456"
	artifacts := secretsRun(t, key, hdr, "")
	checkNoSecrets(t, artifacts, key, hdr, "SECRET")
}

// TestSecretsEchoedByServer: OpenAI-style servers echo a bad key in their
// 401 message; surge copies server messages into the JSONL, error_summary
// and console, so it must redact its own secrets from them.
func TestSecretsEchoedByServer(t *testing.T) {
	t.Parallel()
	const key, hdr = "sk-test-SECRET-123", "hdr-SECRET-456"
	artifacts := secretsRun(t, key, hdr,
		`{"error":{"message":"Incorrect API key provided: `+key+`; header `+hdr+`","type":"invalid_request_error","code":"invalid_api_key"}}`)
	checkNoSecrets(t, artifacts, key, hdr, "SECRET")
}

// TestSecretsInBadFlagsNotEchoed: a malformed --header must not show its
// value in the usage error.
func TestSecretsInBadFlagsNotEchoed(t *testing.T) {
	t.Parallel()
	for _, h := range []string{"Authorization Bearer sk-live-SECRET-789", "X-Api-Key=sk-live-SECRET-789", "X-Api-Key: sk-live-SECRET-789\r\nX: y"} {
		c := apptest.RunConfig("http://127.0.0.1:1", t.TempDir())
		c.Headers = []string{h}
		_, err := runConfig(context.Background(), c, io.Discard, io.Discard)
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("--header %q: error %v, want a usage error", h, err)
			continue
		}
		if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("--header %q: error message shows the secret: %v", h, err)
		}
	}
}

// lockedBuffer is a bytes.Buffer the child's stderr copier writes while a
// failing test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// profileProc is a running `surge profile`; wait may be called from the
// test and from its cleanup alike (exec.Cmd.Wait must run once).
type profileProc struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	once   sync.Once
	err    error
	done   chan struct{}
}

func (p *profileProc) wait() error {
	p.once.Do(func() { p.err = p.cmd.Wait(); close(p.done) })
	<-p.done
	return p.err
}

// startProfile runs `surge profile` against url until the JSONL holds at
// least lines lines, and returns the running process.
func startProfile(t *testing.T, url, dir string, lines int) *profileProc {
	t.Helper()
	bin := apptest.SurgeBinary(t)
	p := &profileProc{stderr: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, "profile", "--url", url, "--model", "e2e", "--streaming",
		"--concurrency", "4", "--request-count", "100000", "--isl", "16", "--osl", "8",
		"--benchmark-grace-period", "0.5", "--ui", "none", "--output-artifact-dir", dir)
	p.cmd.Stdout, p.cmd.Stderr = io.Discard, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); _ = p.wait() })
	deadline := time.Now().Add(8 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(dir, spec.FileJSONL))
		if bytes.Count(b, []byte("\n")) >= lines {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("JSONL has %d lines after 8 s, want %d; stderr:\n%s", bytes.Count(b, []byte("\n")), lines, p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSIGKILLKeepsFinishedRecords(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(&apptest.Server{Tokens: 8, ITL: 5 * time.Millisecond})
	defer ts.Close()
	dir := t.TempDir()
	p := startProfile(t, ts.URL, dir, 20)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.wait()
	lines := apptest.RecordLines(t, dir)
	if len(lines) < 20 {
		t.Fatalf("%d JSONL lines survived SIGKILL, want ≥ 20", len(lines))
	}
	for i, l := range lines {
		md, _ := l["metadata"].(map[string]any)
		if md == nil || md["x_request_id"] == "" || l["error"] != nil {
			t.Errorf("line %d: %v", i+1, l)
		}
	}
}

func TestSIGTERMDrainsAndExports(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(&apptest.Server{Tokens: 8, ITL: 5 * time.Millisecond})
	defer ts.Close()
	dir := t.TempDir()
	p := startProfile(t, ts.URL, dir, 8)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.wait() }()
	var err error
	// A hang, not slowness: the race detector on a busy CI machine takes
	// seconds to write the exports.
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("surge still running 30 s after SIGTERM (grace period 0.5 s); stderr:\n%s", p.stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit %v, want status 130; stderr:\n%s", err, p.stderr.String())
	}
	for _, f := range []string{spec.FileJSON, spec.FileCSV, spec.FileJSONL, FileInputs} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	m := apptest.ReadExport(t, dir)
	if m["was_cancelled"] != true {
		t.Errorf("was_cancelled %v, want true", m["was_cancelled"])
	}
	lines := apptest.RecordLines(t, dir)
	finished := apptest.RunAvg(t, m, "request_count") + apptest.RunAvg(t, m, "error_request_count")
	if float64(len(lines)) != finished {
		t.Errorf("%d JSONL lines, export counts %v finished requests", len(lines), finished)
	}
	// The streams in flight at SIGTERM take ≈ 40 ms, well inside the
	// grace period: they finish instead of being cancelled.
	if bad := apptest.RunAvg(t, m, "error_request_count"); bad != 0 {
		t.Errorf("%v requests failed; in-flight streams should have drained", bad)
	}
}

// TestRunReportsTimestampsAndTransport checks what a run says about its
// own measurement: the timestamp source, the client's read delay, the
// http_req_* breakdown, and run_info's calibration and clock fields.
func TestRunReportsTimestampsAndTransport(t *testing.T) {
	t.Setenv("SURGE_CALIBRATION_FILE", filepath.Join(t.TempDir(), "none.json"))
	srv := httptest.NewServer(&apptest.Server{Tokens: 4, ITL: time.Millisecond})
	defer srv.Close()
	for _, mode := range []string{"kernel", "read"} {
		dir := t.TempDir()
		c := apptest.RunConfig(srv.URL, dir)
		c.Timestamps = mode
		if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		m := apptest.ReadExport(t, dir)
		want := mode
		if !wire.Supported {
			want = "read"
		}
		if got := m["timestamp_source"]; got != want {
			t.Errorf("%s: timestamp_source %v, want %s", mode, got, want)
		}
		for _, tag := range []string{"http_req_waiting", "http_req_sending", "http_req_duration"} {
			if apptest.RunAvg(t, m, tag) < 0 {
				t.Errorf("%s: %s negative", mode, tag)
			}
		}
		if wire.Supported {
			apptest.RunAvg(t, m, "client_read_delay")
		}
		info := m["run_info"].(map[string]any)
		if info["timestamps"] != mode || info["clock_drift_ms"] == nil {
			t.Errorf("%s: run_info %v lacks timestamps/clock_drift_ms", mode, info)
		}
	}
	c := apptest.RunConfig(srv.URL, t.TempDir())
	c.Timestamps = "wall"
	var ue *cmdline.UsageError
	if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); !errors.As(err, &ue) {
		t.Errorf("--timestamps wall: %v, want a usage error", err)
	}
}

// TestRunJudgesTheCalibrationsCores: run_info keeps the client's cores and
// the calibration's, and a calibration measured on other cores is named in
// the warnings, so a run on a bigger client is not judged by a smaller one's.
func TestRunJudgesTheCalibrationsCores(t *testing.T) {
	srv := httptest.NewServer(&apptest.Server{Tokens: 4, ITL: time.Millisecond})
	defer srv.Close()
	now := calibrate.CurrentCores()
	for _, tc := range []struct {
		name string
		cal  calibrate.Cores
		warn string // "" wants no cores warning
	}{
		{"same cores", now, ""},
		{"a bigger client than the calibration's", calibrate.Cores{CPUs: 1, GOMAXPROCS: 1}, "it may time more than that"},
		{"a smaller client than the calibration's", calibrate.Cores{CPUs: now.CPUs + 8, GOMAXPROCS: now.GOMAXPROCS + 8}, "it may time less than that"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cal == now && tc.warn != "" {
				t.Skip("this machine has the calibration's cores")
			}
			t.Setenv(calibrate.EnvFile, filepath.Join(t.TempDir(), "cal.json"))
			if _, err := calibrate.Save(&calibrate.Result{Streams: 8, ITLms: 2, TokensPerSec: 4000, Cores: tc.cal}); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if _, err := runConfig(context.Background(), apptest.RunConfig(srv.URL, dir), io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			m := apptest.ReadExport(t, dir)
			info := m["run_info"].(map[string]any)
			cal, _ := info["client_calibration"].(map[string]any)
			cores, _ := info["client_cores"].(map[string]any)
			if cal == nil || cal["gomaxprocs"] != float64(tc.cal.GOMAXPROCS) || cal["cpus"] != float64(tc.cal.CPUs) {
				t.Errorf("run_info.client_calibration %v, want cpus %d gomaxprocs %d", cal, tc.cal.CPUs, tc.cal.GOMAXPROCS)
			}
			if cores == nil || cores["gomaxprocs"] != float64(now.GOMAXPROCS) || cores["cpus"] != float64(now.CPUs) {
				t.Errorf("run_info.client_cores %v, want %+v", cores, now)
			}
			var found string
			warnings, _ := m["warnings"].([]any)
			for _, w := range warnings {
				if s, _ := w.(string); strings.Contains(s, "client calibration") {
					found = s
				}
			}
			switch {
			case tc.warn == "" && found != "":
				t.Errorf("warning %q for a calibration on the run's own cores", found)
			case tc.warn != "" && !strings.Contains(found, tc.warn):
				t.Errorf("warnings %v lack one with %q", warnings, tc.warn)
			}
		})
	}
}

func TestMain(m *testing.M) { apptest.Main(m) }

// TestSecondInterruptAborts: the first SIGINT says at once how many
// requests it drains and how to abort; the second cancels 50 s streams
// under a 30 s grace period at once, and every export is still written,
// the run marked interrupted.
func TestSecondInterruptAborts(t *testing.T) {
	t.Parallel()
	srv := &apptest.Server{Tokens: 1000, ITL: 50 * time.Millisecond}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := t.TempDir()
	bin := apptest.SurgeBinary(t)
	cmd := exec.Command(bin, "profile", "--url", ts.URL, "--model", "e2e", "--streaming",
		"--concurrency", "3", "--request-count", "100", "--isl", "16", "--osl", "1000",
		"--benchmark-grace-period", "30", "--ui", "none", "--output-artifact-dir", dir)
	stderr, stdout := &lockedBuffer{}, &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no %s after 20 s; stderr:\n%s", what, stderr.String())
			}
		}
	}
	waitFor("3 streams", func() bool { return srv.N.Load() >= 3 })
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waitFor("drain message", func() bool { return strings.Contains(stderr.String(), "Ctrl-C again to abort") })
	if !strings.Contains(stderr.String(), "stopping: draining 3 requests") {
		t.Errorf("the first interrupt says:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second): // the grace period is 30 s
		t.Fatalf("still running 20 s after the second interrupt; stderr:\n%s", stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit %v, want status 130; stderr:\n%s", err, stderr.String())
	}
	m := apptest.ReadExport(t, dir)
	if m["was_cancelled"] != true {
		t.Errorf("was_cancelled %v, want true", m["was_cancelled"])
	}
	lines := apptest.RecordLines(t, dir)
	if len(lines) != 3 {
		t.Errorf("%d records, want the 3 cancelled streams", len(lines))
	}
	for _, l := range lines {
		e, _ := l["error"].(map[string]any)
		if e == nil || !strings.Contains(fmt.Sprint(e["message"]), "aborted") {
			t.Errorf("record error %v, want cancelled by the abort", l["error"])
		}
	}
	if !strings.Contains(strings.Join(strings.Fields(stdout.String()), " "), "interrupted: in-flight requests cancelled") {
		t.Errorf("the console summary does not say the run was interrupted:\n%s", stdout.String())
	}
}
