package profile

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/examples/mockserver"
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
