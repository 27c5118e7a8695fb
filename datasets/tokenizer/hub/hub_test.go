package hub

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const (
	testCommit = "0123456789abcdef0123456789abcdef01234567"
	testEtag   = "4f0a9b1c2d3e"
	testToken  = "hf_secret_token_123"
	testBody   = `{"model": {"type": "BPE"}}`
)

// fakeHub serves the Hub's file layout: /<repo>/resolve/<rev>/<file>
// redirects, as the Hub does, to a file store that serves the bytes; the
// redirect carries the commit and the file's hash. gated needs the token.
type fakeHub struct {
	gated bool
	hits  atomic.Int64
}

func (h *fakeHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.hits.Add(1)
	if r.URL.Path == "/store/"+testEtag {
		_, _ = w.Write([]byte(testBody))
		return
	}
	repo, rest, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/resolve/")
	if !ok || repo != "org/model" || rest != "main/tokenizer.json" {
		http.NotFound(w, r)
		return
	}
	if h.gated && r.Header.Get("Authorization") != "Bearer "+testToken {
		http.Error(w, "gated", http.StatusUnauthorized)
		return
	}
	w.Header().Set("X-Repo-Commit", testCommit)
	w.Header().Set("X-Linked-Etag", `"`+testEtag+`"`)
	http.Redirect(w, r, "/store/"+testEtag, http.StatusFound)
}

func opts(t *testing.T, endpoint string) Options {
	t.Setenv("HF_HUB_OFFLINE", "")
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HUGGING_FACE_HUB_TOKEN", "")
	return Options{CacheDir: t.TempDir(), Endpoint: endpoint, Timeout: 10 * time.Second}
}

func TestDownloadOnceThenCached(t *testing.T) {
	h := &fakeHub{gated: true}
	ts := httptest.NewServer(h)
	defer ts.Close()
	o := opts(t, ts.URL)
	o.Token = testToken
	p, where, err := Find(context.Background(), "org/model", o)
	if err != nil || where != Downloaded {
		t.Fatalf("Find: %q %s %v", p, where, err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != testBody {
		t.Fatalf("downloaded %q, %v", b, err)
	}
	// huggingface_hub's layout: refs/main → the commit's snapshot → the blob.
	dir := filepath.Join(o.CacheDir, "models--org--model")
	if ref, _ := os.ReadFile(filepath.Join(dir, "refs", "main")); string(ref) != testCommit {
		t.Errorf("refs/main = %q, want the commit", ref)
	}
	if want := filepath.Join(dir, "snapshots", testCommit, "tokenizer.json"); p != want {
		t.Errorf("path %s, want %s", p, want)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "blobs", testEtag)); err != nil || string(b) != testBody {
		t.Errorf("blob %q, %v", b, err)
	}
	hits := h.hits.Load()
	p2, where, err := Find(context.Background(), "org/model", o)
	if err != nil || where != Cached || p2 != p || h.hits.Load() != hits {
		t.Errorf("second Find: %q %s %v after %d more requests; want the cached copy and none", p2, where, err, h.hits.Load()-hits)
	}
	// Offline, the cache still answers.
	o.Offline, o.Endpoint = true, "http://127.0.0.1:1"
	if _, where, err := Find(context.Background(), "org/model", o); err != nil || where != Cached {
		t.Errorf("offline with the file cached: %s %v", where, err)
	}
}

func TestRefusalsSayWhy(t *testing.T) {
	h := &fakeHub{gated: true}
	ts := httptest.NewServer(h)
	defer ts.Close()
	for _, tc := range []struct {
		repo, token, want string
	}{
		{"org/model", "", "set HF_TOKEN"},
		{"org/model", "hf_wrong_token_456", "HF_TOKEN has no access"},
		{"org/nothing", "", "HTTP 404"},
	} {
		o := opts(t, ts.URL)
		o.Token = tc.token
		_, _, err := Find(context.Background(), tc.repo, o)
		if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.token != "" && strings.Contains(err.Error(), tc.token)) {
			t.Errorf("%s with token %q: %v, want %q and no token", tc.repo, tc.token, err, tc.want)
		}
		if entries, _ := os.ReadDir(filepath.Join(o.CacheDir, "models--org--model", "snapshots")); len(entries) > 0 {
			t.Errorf("%s: a refused download left a snapshot", tc.repo)
		}
	}
}

func TestOfflineAndUnreachableFailFast(t *testing.T) {
	h := &fakeHub{}
	ts := httptest.NewServer(h)
	defer ts.Close()
	o := opts(t, ts.URL)
	t.Setenv("HF_HUB_OFFLINE", "1")
	if _, _, err := Find(context.Background(), "org/model", Options{CacheDir: o.CacheDir, Endpoint: ts.URL}); !errors.Is(err, ErrNotCached) || h.hits.Load() != 0 {
		t.Errorf("HF_HUB_OFFLINE=1: %v after %d requests, want ErrNotCached and none", err, h.hits.Load())
	}
	t.Setenv("HF_HUB_OFFLINE", "")
	// A server that never answers: the download's bound ends it.
	hang := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer hang.Close()
	o = opts(t, hang.URL)
	o.Timeout = 300 * time.Millisecond
	start := time.Now()
	if _, _, err := Find(context.Background(), "org/model", o); err == nil {
		t.Error("a silent Hub gave no error")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a silent Hub held Find for %s", d)
	}
	// A closed port is refused at once.
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	if _, _, err := Find(context.Background(), "org/model", opts(t, closed.URL)); err == nil || !strings.Contains(err.Error(), "downloading from") {
		t.Errorf("closed port: %v", err)
	}
}

func TestCacheLayoutFromEnv(t *testing.T) {
	root := t.TempDir()
	t.Setenv("HF_HUB_CACHE", "")
	t.Setenv("HF_HOME", root)
	if d := CacheDir(); d != filepath.Join(root, "hub") {
		t.Errorf("HF_HOME: cache %s", d)
	}
	t.Setenv("HF_HUB_CACHE", filepath.Join(root, "elsewhere"))
	if d := CacheDir(); d != filepath.Join(root, "elsewhere") {
		t.Errorf("HF_HUB_CACHE: cache %s", d)
	}
	// A snapshot a tool other than surge wrote, found by commit and by ref.
	snap := filepath.Join(root, "elsewhere", "models--Qwen--Qwen3-8B", "snapshots", testCommit)
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(snap, "tokenizer.json"), []byte(testBody), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HF_HUB_OFFLINE", "1")
	if _, _, err := Find(context.Background(), "Qwen/Qwen3-8B", Options{Revision: testCommit}); err != nil {
		t.Errorf("by commit: %v", err)
	}
	if _, _, err := Find(context.Background(), "Qwen/Qwen3-8B", Options{}); !errors.Is(err, ErrNotCached) {
		t.Errorf("main without refs/main: %v, want ErrNotCached", err)
	}
	refs := filepath.Join(root, "elsewhere", "models--Qwen--Qwen3-8B", "refs")
	if err := os.MkdirAll(refs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(refs, "main"), []byte(testCommit+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, where, err := Find(context.Background(), "Qwen/Qwen3-8B", Options{}); err != nil || where != Cached || !strings.HasSuffix(p, "tokenizer.json") {
		t.Errorf("main through refs/main: %q %s %v", p, where, err)
	}
}

func TestIsRepoID(t *testing.T) {
	for s, want := range map[string]bool{
		"Qwen/Qwen3-8B": true, "gpt2": true, "meta-llama/Llama-3.1-8B-Instruct": true,
		"./tok": false, "/abs/path": false, "a/b/c": false, "tokenizer.json": false, "../x": false, "": false, "a b": false,
	} {
		if IsRepoID(s) != want {
			t.Errorf("IsRepoID(%q) = %v", s, !want)
		}
	}
}

// TestFetchDataset: a dataset's file comes from /datasets/<repo>/resolve/…
// into datasets--org--name, with progress reported and the size bounded.
func TestFetchDataset(t *testing.T) {
	body := strings.Repeat("[1, 2, 3]\n", 5000)
	var hits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path != "/datasets/org/data/resolve/main/sub/file.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("X-Repo-Commit", testCommit)
		w.Header().Set("ETag", `"abc123"`)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write([]byte(body))
	}))
	defer ts.Close()
	o := opts(t, ts.URL)
	var last, total int64
	calls := 0
	o.Progress = func(done, all int64) { last, total = done, all; calls++ }
	p, where, err := Fetch(context.Background(), Dataset, "org/data", "sub/file.json", o)
	if err != nil || where != Downloaded {
		t.Fatalf("Fetch: %q %s %v", p, where, err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != body {
		t.Fatalf("read back %d bytes, %v", len(b), err)
	}
	if want := filepath.Join(o.CacheDir, "datasets--org--data", "snapshots", testCommit, "sub", "file.json"); p != want {
		t.Errorf("path %s, want %s", p, want)
	}
	if calls == 0 || last != int64(len(body)) || total != int64(len(body)) {
		t.Errorf("progress: %d calls, last %d of %d", calls, last, total)
	}
	n := hits.Load()
	if p2, where, err := Fetch(context.Background(), Dataset, "org/data", "sub/file.json", o); err != nil || where != Cached || p2 != p || hits.Load() != n {
		t.Errorf("second Fetch: %s %v, %d more requests", where, err, hits.Load()-n)
	}
	small := opts(t, ts.URL)
	small.MaxBytes = 100
	if _, _, err := Fetch(context.Background(), Dataset, "org/data", "sub/file.json", small); err == nil || !strings.Contains(err.Error(), "over the 100 B limit") {
		t.Errorf("over the bound: %v", err)
	}
	for _, bad := range []string{"../x", "a//b", "", "/abs"} {
		if _, _, err := Fetch(context.Background(), Dataset, "org/data", bad, o); err == nil {
			t.Errorf("file %q accepted", bad)
		}
	}
}
