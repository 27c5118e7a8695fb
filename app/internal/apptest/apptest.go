// Package apptest holds what the composer's tests share: a streaming test
// server, a run's configuration against it, readers of a run's exports,
// and the surge binary built once for the signal and shard tests.
package apptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/internal/testbin"
	"github.com/surgebench/surge/metrics/artifact"
	"github.com/surgebench/surge/metrics/fingerprint"
)

// fileInputs is the request bodies' export (AIPerf's name).
const fileInputs = "inputs.json"

// Server streams tokens events ITL apart; FailEvery > 0 answers every
// N-th request with 500. It remembers the secret-bearing headers it saw.
type Server struct {
	Tokens    int
	ITL       time.Duration
	FailEvery int64
	// ErrorBody, when set, is the body of the injected failures.
	ErrorBody string

	N       atomic.Int64
	Mu      sync.Mutex
	Auth    []string
	APIKeys []string
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	_, _ = io.Copy(io.Discard, r.Body)
	s.Mu.Lock()
	s.Auth = append(s.Auth, r.Header.Get("Authorization"))
	s.APIKeys = append(s.APIKeys, r.Header.Get("X-Api-Key"))
	s.Mu.Unlock()
	if n := s.N.Add(1); s.FailEvery > 0 && n%s.FailEvery == 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		body := s.ErrorBody
		if body == "" {
			body = `{"error":{"message":"injected","type":"server_error","code":500}}`
		}
		_, _ = io.WriteString(w, body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	for i := range s.Tokens {
		if s.ITL > 0 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(s.ITL):
			}
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\" t%d\"}}]}\n\n", i)
		fl.Flush()
	}
	fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
}

// RunConfig is a small streamed run of 12 requests against url, its
// exports in dir.
func RunConfig(url, dir string) cmdline.Config {
	return cmdline.Config{
		Model: "e2e-model", URL: url, EndpointType: "chat", Streaming: true,
		Concurrency: "4", RequestCount: 12, Grace: 5 * time.Second, Timeout: 10 * time.Second,
		ISL: 32, OSL: 8, UI: "none", ArtifactDir: dir, Version: "test",
		NoGPUTelemetry: true, NoServerMetrics: true,
		// The server counts what the run sends: no preflight request
		// among them (preflight_test.go checks it on its own).
		SkipPreflight: true,
		// A test that records its run names a history of its own.
		HistoryConfig: cmdline.HistoryConfig{NoHistory: true},
	}
}

// ReadExport loads profile_export_aiperf.json.
func ReadExport(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := artifact.ReadSummaryFile(filepath.Join(dir, artifact.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", artifact.SummaryFile, err)
	}
	return m
}

func RunAvg(t *testing.T, m map[string]any, tag string) float64 {
	t.Helper()
	obj, ok := m[tag].(map[string]any)
	if !ok {
		t.Fatalf("%s missing from the export", tag)
	}
	return obj["avg"].(float64)
}

// RecordLines parses every line of profile_export.jsonl and fails on one
// that is not a complete JSON object.
func RecordLines(t *testing.T, dir string) []map[string]any {
	t.Helper()
	return JSONLines(t, filepath.Join(dir, artifact.RecordsFile))
}

// JsonLinesOf reads a JSON-lines file whole, failing on a partial last line.
func JSONLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := bounded.ReadFile(context.Background(), path, artifact.MaxExportBytes)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Errorf("%s ends in a partial line", path)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for i := 1; sc.Scan(); i++ {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s:%d: %v", path, i, err)
		}
		out = append(out, m)
	}
	return out
}

// Main runs a package's tests offline from the Hugging Face Hub, with
// more parallel tests at once than there are CPUs unless -parallel says
// otherwise: theirs wait on servers' answers and timers far longer than
// they compute (not so under the race detector, which keeps go test's
// default: their timing needs the CPU).
func Main(m *testing.M) {
	if !testbin.Race {
		testbin.Parallel(waiting)
	}
	// No test reaches the Hugging Face Hub or reads the user's cache: a
	// model's tokenizer is not cached, and the Hub is offline (tests that
	// serve a Hub set their own).
	hf, err := os.MkdirTemp("", "surge-hf-")
	if err != nil {
		panic(err)
	}
	os.Setenv("HF_HUB_CACHE", hf)
	os.Setenv("HF_HUB_OFFLINE", "1")
	// Nor does a run write the user's history: the default database
	// (XDG_DATA_HOME/surge/history.db) is in the same temporary folder,
	// for this process and the surge binaries it starts.
	os.Setenv("XDG_DATA_HOME", hf)
	code := m.Run()
	_ = os.RemoveAll(hf)
	os.Exit(code)
}

// waiting is how many parallel tests Main runs at once (more where there
// are more CPUs).
const waiting = 16

// SurgeBinary is the surge binary, built once for these sources
// (testbin.Surge), for the tests that run it as a user does.
func SurgeBinary(t testing.TB) string {
	t.Helper()
	return testbin.Surge(t)
}

// InputsFingerprint hashes the request bodies of an export's inputs.json.
func InputsFingerprint(t *testing.T, dir string) (string, int) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, fileInputs))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var d fingerprint.Dataset
	if err := fingerprint.ReadInputs(f, &d); err != nil {
		t.Fatalf("%s: %v", filepath.Join(dir, fileInputs), err)
	}
	return d.Sum(), d.Len()
}

// MockForTest starts the embedded mock for one test.
func MockForTest(t *testing.T) string {
	t.Helper()
	return Mock(t, mockserver.Config{TTFT: time.Millisecond, ITL: time.Millisecond})
}

// Mock starts the embedded mock as c configures it, for one test, and
// returns its URL.
func Mock(t *testing.T, c mockserver.Config) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	mock, err := mockserver.Start(ctx, "127.0.0.1:0", c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = mock.Close(context.Background()) })
	return mock.URL()
}

// Spec is c parsed as `surge profile` parses it, failing the test on a
// usage error.
func Spec(t testing.TB, c cmdline.Config) *spec.Spec {
	t.Helper()
	s, err := spec.Parse(c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ShellWords splits a shell command line as a POSIX shell does for these
// lines: single and double quotes, a backslash before a newline joining
// lines.
func ShellWords(t testing.TB, s string) []string {
	t.Helper()
	var out []string
	var cur strings.Builder
	in := false
	var quote rune
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == '\'':
			cur.WriteRune(r)
		case quote == '"' && r == '\\' && i+1 < len(rs) && strings.ContainsRune(`"\$`+"`", rs[i+1]):
			i++
			cur.WriteRune(rs[i])
		case quote == '"':
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '\\' && i+1 < len(rs) && rs[i+1] == '\n':
			i++
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		t.Fatalf("unclosed quote in %q", s)
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}
