package profile

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen/endpoint"
)

// TestPreflightRefusesAnUnreachableTarget: a --url nothing listens on is
// one usage error naming the address, before anything is loaded or
// written: no run of connection errors, no fallback model, and an earlier
// run in the folder stays where it is.
func TestPreflightRefusesAnUnreachableTarget(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, spec.FileJSON), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := parseArgs(t, "--url", addr, "--ui", "none", "--output-artifact-dir", dir, "--request-count", "3")
	var log strings.Builder
	start := time.Now()
	_, err = runConfig(context.Background(), c, io.Discard, &log)
	var ue *cmdline.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "cannot connect to "+addr+" (connection refused)") {
		t.Errorf("error %v, want a usage error: cannot connect to %s (connection refused)", err, addr)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("refused after %v", took)
	}
	if strings.Contains(log.String(), "named none") {
		t.Errorf("the model look-up's failure was said besides the connection's:\n%s", log.String())
	}
	if _, err := os.Stat(dir + "-1"); err == nil {
		t.Errorf("the earlier run was moved aside for a run that never started")
	}
	// --skip-preflight runs anyway: every request an error record.
	c = parseArgs(t, "--url", addr, "--ui", "none", "--output-artifact-dir", filepath.Join(t.TempDir(), "skip"), "--request-count", "2", "--skip-preflight", "-m", "m")
	if res, err := runConfig(context.Background(), c, io.Discard, io.Discard); err != nil || !res.AllFailed() {
		t.Errorf("--skip-preflight: %v, all failed %v", err, res != nil && res.AllFailed())
	}
}

// TestPreflightLearnsTheCapField: against a server that ignores
// max_completion_tokens and honours max_tokens, the run sends max_tokens
// and says so; --use-legacy-max-tokens given either way wins. run_info
// keeps what the preflight found.
func TestPreflightLearnsTheCapField(t *testing.T) {
	t.Parallel()
	mock, err := mockserver.Start(context.Background(), "127.0.0.1:0", mockserver.Config{TTFT: time.Millisecond, ITL: time.Millisecond,
		Model: "m", IgnoreMaxCompletionTokens: true})
	if err != nil {
		t.Fatal(err)
	}
	defer mock.Close(context.Background())
	for _, tc := range []struct {
		flags  []string
		legacy bool
	}{{nil, true}, {[]string{"--use-legacy-max-tokens=false"}, false}} {
		dir := t.TempDir()
		args := append([]string{"--url", mock.URL(), "-m", "m", "--streaming", "--ui", "none", "--output-artifact-dir", dir,
			"--request-count", "4", "--osl", "4", "--isl", "16", "--tokenizer", "builtin", "--no-server-metrics", "--no-gpu-telemetry"}, tc.flags...)
		var log strings.Builder
		if _, err := runConfig(context.Background(), parseArgs(t, args...), io.Discard, &log); err != nil {
			t.Fatalf("%v: %v", tc.flags, err)
		}
		m := apptest.ReadExport(t, dir)
		ic := m["input_config"].(map[string]any)
		legacy, _ := cmdline.PathValue(ic, "endpoint.use_legacy_max_tokens")
		pf, _ := m["run_info"].(map[string]any)["preflight"].(map[string]any)
		if legacy != tc.legacy || pf == nil || pf["cap_field"] != "max_tokens" {
			t.Errorf("%v: use_legacy_max_tokens %v (want %v), run_info.preflight %v", tc.flags, legacy, tc.legacy, pf)
		}
		said := strings.Contains(log.String(), "preflight: ") && strings.Contains(log.String(), "honours max_tokens")
		if !said || strings.Contains(log.String(), "sending the output cap as max_tokens") != tc.legacy {
			t.Errorf("%v: log does not say what the preflight found and did:\n%s", tc.flags, log.String())
		}
		// The cap sent in the field the server ignores: the cap guard ends
		// each answer as output_cap_exceeded.
		failed := apptest.RunAvg(t, m, "error_request_count") > 0
		if failed == tc.legacy || tc.legacy && apptest.RunAvg(t, m, "output_sequence_length") != 4 {
			t.Errorf("%v: errors %v (want some only without max_tokens)", tc.flags, apptest.RunAvg(t, m, "error_request_count"))
		}
	}
}

// pythonHTTPServer answers as python3 -m http.server does: a listing for
// GET, and 501 with an HTML error page for POST.
func pythonHTTPServer(t *testing.T) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html;charset=utf-8")
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusNotImplemented)
			io.WriteString(w, "<!DOCTYPE HTML>\n<html lang=\"en\">\n    <head>\n        <meta charset=\"utf-8\">\n        <title>Error response</title>\n    </head>\n    <body>\n        <h1>Error response</h1>\n        <p>Error code: 501</p>\n        <p>Message: Unsupported method ('POST').</p>\n    </body>\n</html>\n")
			return
		}
		io.WriteString(w, "<!DOCTYPE HTML>\n<html><body><ul><li><a href=\"a.txt\">a.txt</a></li></ul></body></html>\n")
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestPreflightEndsOnAForeignServer: a server that is not an
// OpenAI-compatible endpoint of the type (python3 -m http.server) ends
// the run before anything is written: exit 2, one line saying what it
// answered and what to check; --skip-preflight still runs (every request
// an error).
func TestPreflightEndsOnAForeignServer(t *testing.T) {
	t.Parallel()
	url := pythonHTTPServer(t)
	dir := filepath.Join(t.TempDir(), "run")
	c := parseArgs(t, "--url", url, "-m", "m", "--ui", "none", "--output-artifact-dir", dir, "--request-count", "3", "--tokenizer", "builtin")
	var log strings.Builder
	_, err := runConfig(context.Background(), c, io.Discard, &log)
	var ue *cmdline.UsageError
	if !errors.As(err, &ue) {
		t.Fatalf("error %v, want a usage error", err)
	}
	msg := err.Error()
	for _, want := range []string{"POST /v1/chat/completions on 127.0.0.1:", "answered 501 (text/html;charset=utf-8)", `"<!DOCTYPE HTML> <html lang="en">`,
		"not an OpenAI-compatible chat endpoint: check --url / --endpoint-type"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
	if strings.ContainsAny(msg, "\n\r") || strings.Contains(log.String(), "warning") {
		t.Errorf("not one line: %q\nlog: %s", msg, log.String())
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("the run wrote %s", dir)
	}
	c = parseArgs(t, "--url", url, "-m", "m", "--ui", "none", "--output-artifact-dir", dir, "--request-count", "2", "--tokenizer", "builtin", "--skip-preflight")
	if res, err := runConfig(context.Background(), c, io.Discard, io.Discard); err != nil || !res.AllFailed() {
		t.Errorf("--skip-preflight: %v, all failed %v", err, res != nil && res.AllFailed())
	}
}

// TestForeignServerExitsTwoInOneLine: through the surge binary, the
// foreign server's run exits 2 with one line on stderr and nothing on
// stdout.
func TestForeignServerExitsTwoInOneLine(t *testing.T) {
	t.Parallel()
	bin := apptest.SurgeBinary(t)
	cmd := exec.Command(bin, "profile", "--url", pythonHTTPServer(t), "-m", "m", "--ui", "none", "--request-count", "2",
		"--tokenizer", "builtin", "--output-artifact-dir", filepath.Join(t.TempDir(), "run"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != cmdline.ExitUsage {
		t.Fatalf("exit %v, want %d\n%s", err, cmdline.ExitUsage, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if len(lines) != 1 || stdout.Len() != 0 || !strings.HasSuffix(lines[0], "not an OpenAI-compatible chat endpoint: check --url / --endpoint-type") {
		t.Errorf("stderr %q, stdout %q: want one line", stderr.String(), stdout.String())
	}
}

// TestEveryEndpointTypePassesThePreflight: every endpoint type, rankings
// and raw bodies included, runs against a real loopback mock server with
// the preflight on (the embedded mock skips it), which says what it
// found and learns no chat setting for the others.
func TestEveryEndpointTypePassesThePreflight(t *testing.T) {
	t.Parallel()
	mock, err := mockserver.Start(context.Background(), "127.0.0.1:0", mockserver.Config{TTFT: time.Millisecond, ITL: time.Millisecond, Model: "mock"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mock.Close(context.Background()) })
	for _, k := range endpoint.Kinds() {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			c := endpointConfig(t, k, true, mock.URL(), dir)
			c.RequestCount, c.Concurrency, c.SkipPreflight = 2, "1", false
			var out, log bytes.Buffer
			res, err := runConfig(context.Background(), c, &out, &log)
			if err != nil {
				t.Fatalf("%v\n%s", err, log.String())
			}
			if res.AllFailed() || !strings.Contains(log.String(), "preflight: 127.0.0.1:") || strings.Contains(log.String(), "warning: preflight") {
				t.Fatalf("log:\n%s\nsummary:\n%s", log.String(), out.String())
			}
			pf, _ := apptest.ReadExport(t, dir)["run_info"].(map[string]any)["preflight"].(map[string]any)
			if pf == nil {
				t.Errorf("no run_info.preflight")
			}
			if k != endpoint.Chat && strings.Contains(log.String(), "max_completion_tokens") {
				t.Errorf("a %s run speaks of chat's max_completion_tokens:\n%s", k, log.String())
			}
		})
	}
}

// TestRankingsProbeCarriesTheDatasetsPassages: a rankings run's probe is
// its dataset's first query and passages.
func TestRankingsProbeCarriesTheDatasetsPassages(t *testing.T) {
	t.Parallel()
	mock := mockserver.New(mockserver.Config{})
	var mu sync.Mutex
	var first string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			if first == "" {
				first = string(b)
			}
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		mock.ServeHTTP(w, r)
	}))
	defer ts.Close()
	input := writeTemp(t, "rank.jsonl", `{"texts": [{"name": "query", "contents": ["where do penguins live?"]}, {"name": "passages", "contents": ["Penguins live in the southern hemisphere.", "Cats sleep a lot."]}]}`+"\n")
	c := parseArgs(t, "--url", ts.URL, "-m", "m", "--endpoint-type", "hf_tei_rankings", "--ui", "none", "--output-artifact-dir", t.TempDir(),
		"--request-count", "1", "--tokenizer", "builtin", "--input-file", input, "--custom-dataset-type", "single_turn", "--no-server-metrics")
	var log strings.Builder
	if _, err := runConfig(context.Background(), c, io.Discard, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(first, "Penguins live in the southern hemisphere.") || !strings.Contains(log.String(), "preflight: ") {
		t.Errorf("the probe %s does not carry the dataset's passages\n%s", first, log.String())
	}
}

// TestServerGoneAfterThePreflight: a server that answers the preflight
// and then goes away (as distributed-llama did when a connection closed
// without a request) leaves a run of refused connections whose summary
// says so.
func TestServerGoneAfterThePreflight(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var posted atomic.Bool
	var once sync.Once
	mock := mockserver.New(mockserver.Config{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posted.Store(true)
		}
		mock.ServeHTTP(w, r)
	}), ConnState: func(_ net.Conn, st http.ConnState) {
		if posted.Load() && (st == http.StateClosed || st == http.StateIdle) {
			once.Do(func() { ln.Close() }) // gone once the preflight's answer is out
		}
	}}
	go srv.Serve(ln)
	defer srv.Close()
	var out strings.Builder
	c := parseArgs(t, "--url", "http://"+ln.Addr().String(), "-m", "m", "--streaming", "--ui", "none", "--output-artifact-dir", t.TempDir(),
		"--request-count", "3", "--tokenizer", "builtin", "--no-server-metrics", "--no-gpu-telemetry")
	res, err := runConfig(context.Background(), c, &out, io.Discard)
	if err != nil || !res.AllFailed() {
		t.Fatalf("%v, all failed %v", err, res != nil && res.AllFailed())
	}
	if !strings.Contains(strings.Join(strings.Fields(out.String()), " "), "warning [server-gone]: the server at "+ln.Addr().String()+" answered the preflight, then refused 3 connections: it went away") {
		t.Errorf("the summary does not say the server went away:\n%s", out.String())
	}
}
