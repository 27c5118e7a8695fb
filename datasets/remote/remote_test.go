package remote

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surgebench/surge/internal/bounded"
)

// fileServer serves one file at any path, with an ETag, answering
// If-None-Match and Range with If-Range as a web server does. cut, when
// set, makes the next full answer stop after that many bytes (the
// connection closed mid-body).
type fileServer struct {
	mu      sync.Mutex
	body    []byte
	cut     int
	gets    atomic.Int64
	ranges  []string
	headers []http.Header
}

func (f *fileServer) set(body string) {
	f.mu.Lock()
	f.body = []byte(body)
	f.mu.Unlock()
}

func (f *fileServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	body, cut := f.body, f.cut
	f.cut = 0
	f.ranges = append(f.ranges, r.Header.Get("Range"))
	f.headers = append(f.headers, r.Header.Clone())
	f.mu.Unlock()
	f.gets.Add(1)
	sum := md5.Sum(body)
	etag := `"` + hex.EncodeToString(sum[:]) + `"`
	w.Header().Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if rg := r.Header.Get("Range"); rg != "" && r.Header.Get("If-Range") == etag {
		from, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-"))
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", from, len(body)-1, len(body)))
		w.Header().Set("Content-Length", strconv.Itoa(len(body)-from))
		w.WriteHeader(http.StatusPartialContent)
		_, _ = w.Write(body[from:])
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	if cut > 0 {
		_, _ = w.Write(body[:cut])
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	_, _ = w.Write(body)
}

func rows(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"text": "prompt %d"}`+"\n", i)
	}
	return b.String()
}

func options(t *testing.T) Options {
	return Options{CacheDir: t.TempDir(), Getenv: func(string) string { return "" }}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHTTPFetchCachesAndRevalidates: the first fetch downloads, the next
// finds the copy current (a 304 to its ETag), a changed file is fetched
// again, and a source out of reach leaves the copy in use, saying so.
func TestHTTPFetchCachesAndRevalidates(t *testing.T) {
	t.Parallel()
	fs := &fileServer{}
	fs.set(rows(50))
	srv := httptest.NewServer(fs)
	o := options(t)
	ctx := context.Background()
	url := srv.URL + "/data/prompts.jsonl"

	r, err := Fetch(ctx, url, o)
	if err != nil || r.How != Downloaded || read(t, r.Path) != rows(50) || filepath.Base(r.Path) != "prompts.jsonl" {
		t.Fatalf("first: %+v %v", r, err)
	}
	r, err = Fetch(ctx, url, o)
	if err != nil || r.How != Cached || r.Size != int64(len(rows(50))) {
		t.Fatalf("second: %+v %v", r, err)
	}
	fs.set(rows(60))
	r, err = Fetch(ctx, url, o)
	if err != nil || r.How != Downloaded || read(t, r.Path) != rows(60) {
		t.Fatalf("changed: %+v %v", r, err)
	}
	srv.Close()
	r, err = Fetch(ctx, url, o)
	if err != nil || r.How != Stale || read(t, r.Path) != rows(60) || r.Why == "" {
		t.Fatalf("out of reach: %+v %v", r, err)
	}
}

// TestHTTPFetchResumes: a download cut mid-body is kept and the next fetch
// asks for the rest (a Range from where it stopped, If-Range its ETag).
func TestHTTPFetchResumes(t *testing.T) {
	t.Parallel()
	fs := &fileServer{cut: 1000}
	fs.set(rows(400))
	srv := httptest.NewServer(fs)
	defer srv.Close()
	o := options(t)
	if _, err := Fetch(context.Background(), srv.URL+"/trace.jsonl", o); err == nil || !strings.Contains(err.Error(), "the next run resumes it") {
		t.Fatalf("cut: %v", err)
	}
	r, err := Fetch(context.Background(), srv.URL+"/trace.jsonl", o)
	if err != nil || r.How != Resumed || read(t, r.Path) != rows(400) {
		t.Fatalf("resumed: %+v %v", r, err)
	}
	if got := fs.ranges[len(fs.ranges)-1]; got != "bytes=1000-" {
		t.Errorf("asked for %q, want bytes=1000-", got)
	}
}

// TestHTTPFetchBounded: a file over the bound is refused before its bytes
// when its length is announced, and stopped at the bound when not;
// nothing of it stays in the cache.
func TestHTTPFetchBounded(t *testing.T) {
	t.Parallel()
	announced := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(10<<20))
		_, _ = w.Write(make([]byte, 64<<10))
	}))
	defer announced.Close()
	endless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 32<<10)
		for r.Context().Err() == nil {
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	}))
	defer endless.Close()
	for _, u := range []string{announced.URL + "/big", endless.URL + "/endless"} {
		o := options(t)
		o.MaxBytes = 1 << 20
		_, err := Fetch(context.Background(), u, o)
		var tl *bounded.TooLargeError
		if !errors.As(err, &tl) || tl.Limit != 1<<20 {
			t.Errorf("%s: %v", u, err)
		}
		_ = filepath.WalkDir(o.CacheDir, func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".incomplete") {
				t.Errorf("%s: a partial file over the bound stayed: %s", u, p)
			}
			return nil
		})
	}
}

// TestHFAddresses: hf:// names a file of a dataset (or model, or Space)
// repository at a revision, fetched from the Hub's resolve address with
// HF_TOKEN; an address that names no file is refused.
func TestHFAddresses(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var paths, auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths, auth = append(paths, r.URL.Path), append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		_, _ = w.Write([]byte(rows(3)))
	}))
	defer srv.Close()
	o := options(t)
	o.HFEndpoint, o.HFToken = srv.URL, "hf_secret"
	for ref, want := range map[string]string{
		"hf://datasets/org/name/data/train.jsonl":     "/datasets/org/name/resolve/main/data/train.jsonl",
		"hf://datasets/org/name@v1.0/train.jsonl":     "/datasets/org/name/resolve/v1.0/train.jsonl",
		"hf://org/model/prompts.jsonl":                "/org/model/resolve/main/prompts.jsonl",
		"hf://spaces/org/space@abc123/inputs/x.jsonl": "/spaces/org/space/resolve/abc123/inputs/x.jsonl",
	} {
		r, err := Fetch(context.Background(), ref, o)
		if err != nil || read(t, r.Path) != rows(3) {
			t.Fatalf("%s: %+v %v", ref, r, err)
		}
		mu.Lock()
		got, a := paths[len(paths)-1], auth[len(auth)-1]
		mu.Unlock()
		if got != want || a != "Bearer hf_secret" {
			t.Errorf("%s: asked %s with %q, want %s with the token", ref, got, a, want)
		}
	}
	for _, bad := range []string{"hf://datasets/org", "hf://datasets/org/name", "hf://org//x", "hf://datasets/org/name/../x", "hf://org/name/a?b"} {
		if _, err := Fetch(context.Background(), bad, o); err == nil || !strings.Contains(err.Error(), "hf://") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// TestHTTPFetchRefusals: a missing file or a refusal is an error naming
// the status, never a stale copy; the URL's password is never printed.
func TestHTTPFetchRefusals(t *testing.T) {
	t.Parallel()
	var status atomic.Int64
	status.Store(200)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s := int(status.Load()); s != 200 {
			w.WriteHeader(s)
			return
		}
		_, _ = w.Write([]byte(rows(2)))
	}))
	defer srv.Close()
	o := options(t)
	u := strings.Replace(srv.URL, "http://", "http://user:pa55word@", 1) + "/x.jsonl"
	if _, err := Fetch(context.Background(), u, o); err != nil {
		t.Fatal(err)
	}
	for _, s := range []int{404, 403} {
		status.Store(int64(s))
		_, err := Fetch(context.Background(), u, o)
		var se *StatusError
		if !errors.As(err, &se) || se.Status != s || strings.Contains(err.Error(), "pa55word") {
			t.Errorf("HTTP %d: %v", s, err)
		}
	}
	status.Store(503)
	if r, err := Fetch(context.Background(), u, o); err != nil || r.How != Stale || strings.Contains(r.Why, "pa55word") {
		t.Errorf("HTTP 503 with a cached copy: %+v %v", r, err)
	}
	_ = filepath.WalkDir(o.CacheDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(read(t, p), "pa55word") {
			t.Errorf("%s holds the URL's password", p)
		}
		return nil
	})
}

// TestFetchInterrupted: a fetch stalled on its source ends with the
// context, keeping what it has for the next run.
func TestFetchInterrupted(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"e"`)
		w.Header().Set("Content-Length", "100000")
		_, _ = w.Write(make([]byte, 100))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Fetch(ctx, srv.URL+"/slow.jsonl", options(t))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("%v after %v", err, time.Since(start))
	}
}

func TestIsRemote(t *testing.T) {
	t.Parallel()
	for ref, want := range map[string]bool{"https://a/b": true, "HTTP://a/b": true, "hf://datasets/a/b/c": true, "s3://b/k": true,
		"data.jsonl": false, "/tmp/https://x": false, "file:///x": false} {
		if IsRemote(ref) != want {
			t.Errorf("IsRemote(%q) = %v", ref, !want)
		}
	}
}

// FuzzContentRange: any header is read without panicking, and what is
// believed is a range that starts within its size.
func FuzzContentRange(f *testing.F) {
	for _, s := range []string{"bytes 0-99/100", "bytes 100-199/*", "bytes -1-2/3", "bytes 5-4/1", "items 0-1/2", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		start, total, ok := contentRange(v)
		if ok && (start < 0 || total >= 0 && total < start) {
			t.Fatalf("%q: start %d total %d", v, start, total)
		}
	})
}

// FuzzParseRef: any address is parsed without panicking or asking
// anything; an hf:// address that parses names a file under the Hub's
// resolve path.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"hf://datasets/org/name/x.jsonl", "hf://org/name@rev/a/b", "https://h/x", "hf://", "s3:/", "hf://spaces/a/b/../c"} {
		f.Add(s)
	}
	o := Options{HFEndpoint: "https://hub.invalid", Getenv: func(string) string { return "" }}.withDefaults()
	f.Fuzz(func(t *testing.T, ref string) {
		if !strings.HasPrefix(ref, "hf://") {
			return
		}
		src, err := hfSource(strings.TrimPrefix(ref, "hf://"), o)
		if err != nil {
			return
		}
		h := src.(*httpSource)
		if h.u.Host != "hub.invalid" || !strings.Contains(h.u.Path, "/resolve/") || strings.Contains(h.u.Path, "/../") {
			t.Fatalf("%q → %s", ref, h.u)
		}
	})
}
