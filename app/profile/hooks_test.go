package profile

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/examples/mockserver"
)

// TestServerHooksEndToEnd: against the mock, a two-value sweep with a
// warmup resets the KV cache and starts the profiler before each stage
// and stops it after: two calls each, counted by the mock; SGLang's
// /flush_cache is taken as the reset's path.
func TestServerHooksEndToEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args                        []string
		resets, flushes, start, end uint64
	}{
		{[]string{"--reset-kv-cache", "--server-profiler"}, 2, 0, 2, 2},
		{[]string{"--reset-kv-cache", "--reset-kv-cache-path", "/flush_cache", "--reset-kv-cache-timeout-seconds", "5"}, 0, 2, 0, 0},
	} {
		mock := mockserver.New(mockserver.Config{TTFT: time.Millisecond, ITL: time.Millisecond})
		srv := httptest.NewServer(mock)
		c := parseArgs(t, append([]string{"--url", srv.URL, "--skip-preflight", "--model", "mock", "--streaming", "--ui", "none", "--tokenizer", "builtin",
			"--concurrency", "1,2", "--request-count", "4", "--warmup-request-count", "3", "--isl", "8", "--osl", "2",
			"--output-artifact-dir", t.TempDir(), "--no-gpu-telemetry", "--no-server-metrics"}, tc.args...)...)
		_, err := runConfig(context.Background(), c, io.Discard, io.Discard)
		srv.Close()
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		st := mock.Stats()
		if st.ResetPrefixCache != tc.resets || st.FlushCache != tc.flushes || st.StartProfile != tc.start || st.StopProfile != tc.end {
			t.Errorf("%v: resets %d, flushes %d, profiler starts %d, stops %d; want %d, %d, %d, %d", tc.args,
				st.ResetPrefixCache, st.FlushCache, st.StartProfile, st.StopProfile, tc.resets, tc.flushes, tc.start, tc.end)
		}
		if st.Requests != 3+8 {
			t.Errorf("%v: %d requests, want the warmup's 3 and the stages' 8", tc.args, st.Requests)
		}
	}
}

// TestResetRetries: a reset answered 503 (busy) is tried again and then
// taken; one answered 404 fails the run before its stage sends anything.
func TestResetRetries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status []int
		fail   string
	}{{[]int{503, 200}, ""}, {[]int{404}, "--reset-kv-cache before stage 0: POST"}} {
		mock := mockserver.New(mockserver.Config{TTFT: time.Millisecond, ITL: time.Millisecond})
		var calls atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/reset_prefix_cache" {
				n := calls.Add(1)
				w.WriteHeader(tc.status[min(int(n), len(tc.status))-1])
				return
			}
			mock.ServeHTTP(w, r)
		}))
		c := parseArgs(t, "--url", srv.URL, "--skip-preflight", "--model", "mock", "--ui", "none", "--tokenizer", "builtin", "--request-count", "2",
			"--isl", "8", "--osl", "2", "--output-artifact-dir", t.TempDir(), "--no-gpu-telemetry", "--no-server-metrics", "--reset-kv-cache")
		_, err := runConfig(context.Background(), c, io.Discard, io.Discard)
		srv.Close()
		switch {
		case tc.fail == "" && (err != nil || calls.Load() != 2 || mock.Stats().Requests != 2):
			t.Errorf("503 then 200: %v after %d resets, %d requests", err, calls.Load(), mock.Stats().Requests)
		case tc.fail != "" && (err == nil || !strings.Contains(err.Error(), tc.fail) || mock.Stats().Requests != 0):
			t.Errorf("404: %v, %d requests sent; want the run to stop with %q", err, mock.Stats().Requests, tc.fail)
		}
	}
}

// TestHookFlagsRefused: a hook's setting without the hook, a path that is
// no path, or a live session is refused naming the flag.
func TestHookFlagsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--reset-kv-cache-path", "/flush_cache"}, "--reset-kv-cache-path sets a control call of --reset-kv-cache"},
		{[]string{"--server-profiler-stop-path", "/x"}, "give --server-profiler too"},
		{[]string{"--reset-kv-cache", "--reset-kv-cache-path", "http://other/reset"}, "want a path on the server"},
		{[]string{"--server-profiler", "--server-profiler-timeout-seconds", "-1"}, "--server-profiler-timeout-seconds must be > 0"},
		{[]string{"--reset-kv-cache", "--control-addr", "127.0.0.1:0"}, "--reset-kv-cache runs between a plan's stages"},
	} {
		err := refusal(append(tc.args, "--ui", "none"), func(c cmdline.Config) error {
			_, err := prepareConfig(c, io.Discard)
			return err
		})
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error saying %q", tc.args, err, tc.want)
		}
	}
}
