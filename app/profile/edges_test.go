package profile

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen"
)

func TestEdgeFlagsRejected(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		edit func(c *cmdline.Config)
		says string
	}{
		{func(c *cmdline.Config) { c.ConnectionRetries = "2" }, "--connection-retries"},
		{func(c *cmdline.Config) { c.MaxResponseMiB = -1 }, "--max-response-mib"},
		{func(c *cmdline.Config) { c.MaxResponseMiB = 1 << 30 }, "--max-response-mib"},
		{func(c *cmdline.Config) { c.ControlToken = "short" }, "--control-token"},
		{func(c *cmdline.Config) { c.ControlToken = "a token with spaces in it" }, "--control-token"},
	} {
		c := apptest.RunConfig("127.0.0.1:1", t.TempDir())
		tc.edit(&c)
		_, err := runConfig(context.Background(), c, io.Discard, io.Discard)
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want a usage error naming it", tc.says, err)
		}
	}
}

// TestRedirectsEndToEnd: the target answers every request with a 307 to
// another origin (another port), which passes it on to the mock and
// records what it got. By default no request follows it and each is a
// redirect error record; with --follow-redirects every request succeeds
// there, and neither the API key nor an -H header reaches it.
func TestRedirectsEndToEnd(t *testing.T) {
	t.Parallel()
	// The mock's own handler serves both origins (a reverse proxy in
	// between cut streams short under load).
	mock := mockserver.New(mockserver.Config{TTFT: 5 * time.Millisecond, ITL: time.Millisecond})
	var mu sync.Mutex
	var seen []http.Header
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		mock.ServeHTTP(w, r)
	}))
	defer other.Close()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
			return
		}
		mock.ServeHTTP(w, r) // readiness and model probes
	}))
	defer target.Close()
	for _, follow := range []bool{false, true} {
		dir := t.TempDir()
		c := apptest.RunConfig(target.URL, dir)
		c.APIKey, c.Headers, c.FollowRedirects = "sk-redirect-secret", []string{"X-Org-Token:org-secret-value"}, follow
		var out strings.Builder
		res, err := runConfig(context.Background(), c, &out, io.Discard)
		if err != nil {
			t.Fatalf("follow %v: %v", follow, err)
		}
		// Its own line in the summary, naming the flag that follows them.
		if got := strings.Contains(out.String(), "warning [redirect]: 12 redirects not followed (--follow-redirects follows them)\n"); got == follow {
			t.Errorf("follow %v: redirect line shown %v:\n%s", follow, got, out.String())
		}
		lines := apptest.RecordLines(t, dir)
		if len(lines) != 12 {
			t.Fatalf("follow %v: %d records, want 12", follow, len(lines))
		}
		for _, l := range lines {
			e, _ := l["error"].(map[string]any)
			switch {
			case !follow && (e == nil || e["type"] != loadgen.ErrRedirect || !strings.Contains(e["message"].(string), other.URL)):
				t.Errorf("not following: error %v, want a redirect naming %s", e, other.URL)
			case follow && e != nil:
				t.Errorf("following: error %v", e)
			}
		}
		if !follow && !res.AllFailed() {
			t.Errorf("not following: the run counts successes")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) < 12 {
		t.Fatalf("the other origin answered %d requests, want the 12 followed", len(seen))
	}
	for _, h := range seen {
		for k, vs := range h {
			for _, v := range vs {
				if strings.Contains(v, "secret") {
					t.Fatalf("%s: %q reached another origin", k, v)
				}
			}
		}
	}
}

// TestWriteFaultStopsTheRun: the records file is a disk that is full
// (/dev/full fails every write with ENOSPC). The run stops at the first
// record instead of running its 60 s, says which file, and the result
// carries the fault (exit code cmdline.ExitWriteFault).
func TestWriteFaultStopsTheRun(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full here")
	}
	dir := t.TempDir()
	if err := os.Symlink("/dev/full", filepath.Join(dir, "profile_export.jsonl")); err != nil {
		t.Fatal(err)
	}
	c := apptest.RunConfig(startMock(t, 0), dir)
	c.RequestCount, c.Duration = 0, 60*time.Second
	var log strings.Builder
	began := time.Now()
	res, err := runConfig(context.Background(), c, io.Discard, &syncWriter{w: &log})
	if d := time.Since(began); d > 30*time.Second {
		t.Errorf("the run went on for %s after its file failed", d)
	}
	var wf *WriteFaultError
	if res == nil || res.WriteFault == nil || !errors.As(err, &wf) || !errors.Is(err, syscall.ENOSPC) || !strings.HasSuffix(wf.Path, "profile_export.jsonl") {
		t.Fatalf("result %+v, err %v: want a write fault naming profile_export.jsonl", res, err)
	}
	if res.Cancelled {
		t.Error("a write fault counted as an interrupt")
	}
	if !strings.Contains(log.String(), "profile_export.jsonl") || !strings.Contains(log.String(), "stopping the run") {
		t.Errorf("log %q does not say which file failed", log.String())
	}
	// The summary and inputs.json are still written (they are elsewhere).
	for _, f := range []string{"profile_export_aiperf.json", FileInputs} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v (want it written)", f, err)
		}
	}
}

// TestControlPortPrintsItsToken: without --control-token the port makes a
// random token and prints it with its URL; that token opens the port and
// nothing else does.
func TestControlPortPrintsItsToken(t *testing.T) {
	t.Parallel()
	ctl, err := loadgen.NewController(loadgen.ControlConcurrency, 2)
	if err != nil {
		t.Fatal(err)
	}
	ls := &liveSession{ctl: ctl}
	var log strings.Builder
	if err := ls.start(context.Background(), "127.0.0.1:0", "", func() int64 { return 0 }, &log); err != nil {
		t.Fatal(err)
	}
	defer ls.port.Close()
	_, rest, ok := strings.Cut(log.String(), ", token ")
	token, _, _ := strings.Cut(rest, ":")
	if !ok || len(token) < 20 || token != ls.port.Token() || strings.Contains(log.String(), "warning") {
		t.Fatalf("log %q: want the port's token %q printed and no warning for loopback", log.String(), ls.port.Token())
	}
	for _, tc := range []struct {
		token string
		code  int
	}{{"", 401}, {"not-" + token, 401}, {token, 200}} {
		req, _ := http.NewRequest(http.MethodGet, ls.port.URL()+"/control", nil)
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("token %q: %d, want %d", tc.token, resp.StatusCode, tc.code)
		}
	}
}
