package profile

import (
	"context"
	"errors"
	"fmt"
	"github.com/surgebench/surge/app/spec"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/loadgen/endpoint"
)

// warmingServer answers 503 to its first `cold` requests (a model still
// loading), then serves: chat requests and /v1/models listing models.
func warmingServer(t *testing.T, cold int64, models ...string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= cold {
			http.Error(w, "loading", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/models":
			var items []string
			for _, m := range models {
				items = append(items, fmt.Sprintf(`{"id": %q}`, m))
			}
			fmt.Fprintf(w, `{"object": "list", "data": [%s]}`, strings.Join(items, ","))
		case "/v1/chat/completions":
			fmt.Fprint(w, `{"choices":[{"message":{"content":"x"},"finish_reason":"length"}]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ts.Close)
	return ts, &n
}

func TestWaitForModel(t *testing.T) {
	t.Parallel()
	ep := &endpoint.Endpoint{Kind: endpoint.Chat, Model: "a"}
	quiet := cmdline.Logger{W: io.Discard, Level: 2}
	for _, mode := range []string{cmdline.ProbeInference, cmdline.ProbeModels, cmdline.ProbeBoth} {
		ts, n := warmingServer(t, 2, "a", "b")
		r := spec.Readiness{Timeout: 10 * time.Second, Interval: 10 * time.Millisecond, Mode: mode}
		if err := waitReady(context.Background(), r, []string{ts.URL}, ep, []string{"a", "b"}, http.Header{}, quiet); err != nil {
			t.Errorf("%s: %v", mode, err)
		}
		if n.Load() < 3 {
			t.Errorf("%s: ready after %d requests, want the third (two answered 503)", mode, n.Load())
		}
	}
	// Never ready: an error naming the server and why, once the time is up.
	ts, _ := warmingServer(t, 1<<30)
	r := spec.Readiness{Timeout: 200 * time.Millisecond, Interval: 20 * time.Millisecond, Mode: cmdline.ProbeInference}
	start := time.Now()
	err := waitReady(context.Background(), r, []string{ts.URL}, ep, []string{"a"}, http.Header{}, quiet)
	if err == nil || !strings.Contains(err.Error(), ts.URL) || !strings.Contains(err.Error(), "HTTP 503") {
		t.Errorf("never ready: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a 200 ms timeout took %s", d)
	}
	// The models probe waits for every model.
	ts, _ = warmingServer(t, 0, "a")
	r.Mode = cmdline.ProbeModels
	if err := waitReady(context.Background(), r, []string{ts.URL}, ep, []string{"a", "b"}, http.Header{}, quiet); err == nil || !strings.Contains(err.Error(), `"b"`) {
		t.Errorf("model b missing: %v", err)
	}
	// No timeout: no probe.
	if err := waitReady(context.Background(), spec.Readiness{}, []string{"http://127.0.0.1:1"}, ep, nil, nil, quiet); err != nil {
		t.Errorf("no timeout: %v", err)
	}
}

func TestWaitForModelFlags(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	c := parseArgs(t, "--wait-for-model-timeout", "30", "--wait-for-model-mode", "both", "--wait-for-model-interval", "0.5")
	if c.WaitTimeout != 30*time.Second || c.WaitMode != "both" || c.WaitInterval != 500*time.Millisecond {
		t.Errorf("parsed %s %q %s", c.WaitTimeout, c.WaitMode, c.WaitInterval)
	}
	for _, args := range [][]string{{"--wait-for-model-mode", "models"}, {"--wait-for-model-timeout", "5", "--wait-for-model-mode", "ping"},
		{"--wait-for-model-timeout", "5", "--wait-for-model-interval", "0"}} {
		var ue *cmdline.UsageError
		if err := refusal(args, func(c cmdline.Config) error {
			_, err := prepareConfig(c, io.Discard)
			return err
		}); !errors.As(err, &ue) || !strings.Contains(err.Error(), "--wait-for-model") {
			t.Errorf("%q: %v, want a usage error naming the flag", args, err)
		}
	}
}

// TestWaitForModelLogsEachAnswerOnce: probes every 5 ms print one debug
// line per distinct answer, not one per probe (rate.Sometimes).
func TestWaitForModelLogsEachAnswerOnce(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if n.Add(1) <= 10 {
			http.Error(w, "loading", http.StatusServiceUnavailable)
			return
		}
		http.Error(w, "bad gateway", http.StatusBadGateway)
	}))
	defer ts.Close()
	var log strings.Builder
	debug := cmdline.Logger{W: &log, Level: 1}
	ep := &endpoint.Endpoint{Kind: endpoint.Chat, Model: "a"}
	r := spec.Readiness{Timeout: 400 * time.Millisecond, Interval: 5 * time.Millisecond, Mode: cmdline.ProbeInference}
	if err := waitReady(context.Background(), r, []string{ts.URL}, ep, []string{"a"}, http.Header{}, debug); err == nil {
		t.Fatal("a server that never serves was judged ready")
	}
	if n.Load() < 12 {
		t.Skipf("only %d probes in 400 ms: too few to judge (busy machine)", n.Load())
	}
	lines := strings.Count(log.String(), "not ready")
	if lines != 2 || !strings.Contains(log.String(), "503") || !strings.Contains(log.String(), "502") {
		t.Errorf("%d probes printed %d debug lines, want 2 (one per answer):\n%s", n.Load(), lines, log.String())
	}
}
