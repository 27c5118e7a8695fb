package hostile

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/internal/sanitize"
)

func get(t *testing.T, h http.Handler, hdr http.Header) *http.Response {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/x?y=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestEndless: an endless body is JSON and a line that never close, cut
// at its cap; a declared one announces its length.
func TestEndless(t *testing.T) {
	for _, declared := range []int64{0, 8 << 30} {
		resp := get(t, Endless(1<<20, declared, 0), nil)
		if declared > 0 && resp.ContentLength != declared {
			t.Errorf("Content-Length %d, want %d", resp.ContentLength, declared)
		}
		b, err := io.ReadAll(resp.Body)
		if err == nil {
			t.Errorf("declared %d: the body ended cleanly", declared)
		}
		if !strings.HasPrefix(string(b), EndlessPrefix) || len(b) < 1<<20 || strings.ContainsAny(string(b[len(EndlessPrefix):]), "\"\n") {
			t.Errorf("declared %d: %d bytes, starting %q", declared, len(b), b[:min(len(b), 20)])
		}
	}
}

// TestDripAndStall: a drip sends a byte a period; a stall sends nothing
// after its headers, until the client leaves.
func TestDripAndStall(t *testing.T) {
	resp := get(t, Endless(1<<20, 0, 20*time.Millisecond), nil)
	buf := make([]byte, 64)
	start := time.Now()
	n, _ := io.ReadAtLeast(resp.Body, buf, len(EndlessPrefix)+3)
	if n < len(EndlessPrefix)+3 || time.Since(start) < 40*time.Millisecond {
		t.Errorf("drip: %d bytes in %v", n, time.Since(start))
	}
	resp = get(t, Stall(), nil)
	got := make(chan error, 1)
	go func() { _, err := resp.Body.Read(buf); got <- err }()
	select {
	case err := <-got:
		t.Errorf("a stalled body gave a read: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
}

// TestRecorderFindsTheSecret: in a header, in Basic auth, in the URL.
func TestRecorderFindsTheSecret(t *testing.T) {
	const secret = "s3cr3t-value"
	rec := Record(nil)
	get(t, rec, http.Header{"X-Custom": {"prefix " + secret}})
	get(t, rec, http.Header{"Authorization": {"Basic dXNlcjpzM2NyM3QtdmFsdWU="}}) // user:s3cr3t-value
	get(t, rec, http.Header{"Accept": {"*/*"}})
	got := rec.Carrying(secret)
	if len(got) != 2 || !strings.Contains(got[0], "X-Custom") || !strings.Contains(got[1], "Basic auth") {
		t.Errorf("Carrying = %q", got)
	}
	if len(rec.Requests()) != 3 {
		t.Errorf("%d requests recorded, want 3", len(rec.Requests()))
	}
}

// TestRedirectKeepsPathAndQuery: a 307 to the same path and query at
// another base.
func TestRedirectKeepsPathAndQuery(t *testing.T) {
	srv := httptest.NewServer(Redirect("http://elsewhere.invalid:81"))
	defer srv.Close()
	c := srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Get(srv.URL + "/a/b?c=d")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != "http://elsewhere.invalid:81/a/b?c=d" {
		t.Errorf("%d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestToolCallAnswers: the reply is only tool calls, with the arguments'
// size and count asked, whole or streamed.
func TestToolCallAnswers(t *testing.T) {
	h := ToolCallAnswers(ToolCallOptions{ArgBytes: 1000, Calls: 3, ID: func(int) string { return "" }})
	for _, body := range []string{`{"stream":false}`, `{"stream":true}`} {
		srv := httptest.NewServer(h)
		resp, err := srv.Client().Post(srv.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		srv.Close()
		if strings.Count(string(b), `"name":"lookup"`) != 3 || len(b) < 3000 || !strings.Contains(string(b), "tool_calls") {
			t.Errorf("%s: %d bytes: %.200s", body, len(b), b)
		}
	}
}

// TestFiles: each hostile file is what it says.
func TestFiles(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero")
	DevZeroLink(t, zero)
	var nr *bounded.NotRegularError
	if _, err := bounded.ReadFile(t.Context(), zero, 1<<20); !errors.As(err, &nr) {
		t.Errorf("/dev/zero link: %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	FIFO(t, fifo)
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("FIFO: %v %v", st, err)
	}
	huge := filepath.Join(dir, "huge")
	Huge(t, huge, 3<<20+5)
	if st, err := os.Stat(huge); err != nil || st.Size() != 3<<20+5 {
		t.Errorf("huge: %v %v", st, err)
	}
	db := filepath.Join(dir, "foreign.db")
	b := ForeignSQLite(t, db)
	if !strings.HasPrefix(string(b), "SQLite format 3\x00") || b[18] != 1 { // 1: rollback journal, not WAL
		t.Errorf("foreign database: %q… write version %d", b[:16], b[18])
	}
	DamagedSQLite(t, filepath.Join(dir, "damaged.db"))
}

// TestEscapes: the escapes are what the sanitiser escapes, every one of
// them, and Fill writes them into JSON that decodes back to them.
func TestEscapes(t *testing.T) {
	if i := unsafeAt(Escapes); i != 0 {
		t.Errorf("the escapes start with a safe character (%d)", i)
	}
	clean := sanitize.Line(Escapes)
	if unsafeAt(clean) != -1 || strings.Contains(clean, "\x1b") {
		t.Errorf("sanitised escapes still unsafe: %q", clean)
	}
	if got := Fill(`"{{esc}}" {{raw}}`); !strings.Contains(got, `\u001b]0;`) || !strings.Contains(got, Escapes) {
		t.Errorf("Fill: %q", got)
	}
}

// TestCapped keeps the first bytes and says more came.
func TestCapped(t *testing.T) {
	c := &capped{max: 5}
	_, _ = io.WriteString(c, "abc")
	_, _ = io.WriteString(c, "defg")
	if c.String() != "abcde" || !c.over {
		t.Errorf("%q over=%v", c.String(), c.over)
	}
}

// TestMatch picks by method, path and order.
func TestMatch(t *testing.T) {
	e := &Env{}
	m := Match{Method: http.MethodPost, Paths: []string{"/v1/chat/completions", "/api/"}, First: 2}
	req := func(method, path string) *http.Request {
		r, _ := http.NewRequestWithContext(context.Background(), method, "http://h"+path, nil)
		return r
	}
	for i, tc := range []struct {
		r    *http.Request
		want bool
	}{
		{req("GET", "/v1/chat/completions"), false},
		{req("POST", "/v1/chat/completions/x"), false},
		{req("POST", "/api/x"), true},
		{req("POST", "/v1/chat/completions"), true},
		{req("POST", "/v1/chat/completions"), false}, // past First
	} {
		if got := e.matches(m, tc.r); got != tc.want {
			t.Errorf("%d: %s %s: %v, want %v", i, tc.r.Method, tc.r.URL.Path, got, tc.want)
		}
	}
}

// TestSurfaceRowsAreChecked: a row without a bound or exit codes is
// refused.
func TestSurfaceRowsAreChecked(t *testing.T) {
	args := func(*Env) []string { return nil }
	for _, s := range []Surface{
		{Name: "x", Reads: Server, Args: args, Exit: []int{2}},
		{Name: "x", Reads: Server, Args: args, Limit: 1},
		{Name: "x", Reads: SQLite, Args: args, Limit: 1, Exit: []int{2}},
		{Name: "", Reads: Server, Args: args, Limit: 1, Exit: []int{2}},
	} {
		if s.valid() == nil {
			t.Errorf("%+v passed", s)
		}
	}
	if err := (&Surface{Name: "x", Reads: File, Args: args, Limit: 1, Exit: []int{2}}).valid(); err != nil {
		t.Error(err)
	}
}
