package mockserver

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hubFolder lays out a local Hub: a dataset with a data file in a
// subfolder, its Parquet conversion as a revision folder, a model's
// tokenizer, a secret beside the folder and a link pointing at it.
func hubFolder(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "hub")
	for name, body := range map[string]string{
		"datasets/org/chat/README.md":                                "---\nconfigs: []\n---\n",
		"datasets/org/chat/data/train.jsonl":                         `{"text":"hello"}` + "\n",
		"datasets/org/chat@refs-convert-parquet/default/train/0.txt": "parquet branch",
		"org/model/tokenizer.json":                                   `{"model":{}}`,
		"../secret.txt":                                              "outside",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "secret.txt"), filepath.Join(dir, "datasets/org/chat/leak.txt")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func get(t *testing.T, url string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestLocalHub: the mock serves a folder as the Hub does: a dataset's
// listing (every file and folder, recursively) and files, with the commit
// and hash headers; a revision folder where there is one; a model's file;
// nothing outside the folder, through .. or a link.
func TestLocalHub(t *testing.T) {
	t.Parallel()
	_, ts := newTestServer(t, Config{Hub: hubFolder(t)})
	code, h, body := get(t, ts.URL+"/api/datasets/org/chat/tree/main?recursive=true&expand=false")
	var entries []hubEntry
	if err := json.Unmarshal([]byte(body), &entries); code != 200 || err != nil {
		t.Fatalf("tree: %d %v\n%s", code, err, body)
	}
	var paths []string
	for _, e := range entries {
		paths = append(paths, e.Type+":"+e.Path)
	}
	if got := strings.Join(paths, " "); got != "file:README.md directory:data file:data/train.jsonl" || len(h.Get("X-Repo-Commit")) != 40 {
		t.Errorf("tree: %s (commit %q)", got, h.Get("X-Repo-Commit"))
	}
	code, h, body = get(t, ts.URL+"/datasets/org/chat/resolve/main/data/train.jsonl")
	if code != 200 || body != `{"text":"hello"}`+"\n" || len(strings.Trim(h.Get("X-Linked-Etag"), `"`)) != 64 {
		t.Errorf("resolve: %d %q etag %q", code, body, h.Get("X-Linked-Etag"))
	}
	if code, _, body = get(t, ts.URL+"/datasets/org/chat/resolve/refs%2Fconvert%2Fparquet/default/train/0.txt"); code != 200 || body != "parquet branch" {
		t.Errorf("the Parquet revision's folder: %d %q", code, body)
	}
	if code, _, body = get(t, ts.URL+"/org/model/resolve/main/tokenizer.json"); code != 200 || body != `{"model":{}}` {
		t.Errorf("a model's file: %d %q", code, body)
	}
	for _, bad := range []string{
		"/datasets/org/chat/resolve/main/../../../../secret.txt",
		"/datasets/org/chat/resolve/main/%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2fsecret.txt",
		"/datasets/org/chat/resolve/main/leak.txt",
		"/datasets/%2e%2e/chat/resolve/main/README.md",
		"/datasets/org/none/resolve/main/README.md",
		"/api/datasets/org/none/tree/main",
	} {
		if code, _, body := get(t, ts.URL+bad); code == 200 || strings.Contains(body, "outside") {
			t.Errorf("%s: %d %q, want a refusal", bad, code, body)
		}
	}
	resp, err := http.Post(ts.URL+"/datasets/org/chat/resolve/main/README.md", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST to the Hub: %d", resp.StatusCode)
	}
	// Without Config.Hub the addresses are no routes; a Hub that is not a
	// folder is refused.
	_, plain := newTestServer(t, Config{})
	if code, _, _ := get(t, plain.URL+"/api/datasets/org/chat/tree/main"); code != http.StatusNotFound {
		t.Errorf("no Hub: %d", code)
	}
	if err := (Config{Hub: filepath.Join(t.TempDir(), "missing")}).Validate(); err == nil || !strings.Contains(err.Error(), "Hub") {
		t.Errorf("a missing Hub folder: %v", err)
	}
}

// FuzzParseHubRoute: any address parses without a panic, and a route it
// accepts names a repository of valid parts and a verb the Hub has.
func FuzzParseHubRoute(f *testing.F) {
	for _, s := range []string{"/api/datasets/org/chat/tree/main", "/datasets/org/chat/resolve/refs%2Fconvert%2Fparquet/a/b.parquet",
		"/org/model/resolve/main/tokenizer.json", "/gpt2/resolve/main/x", "/datasets/%2e%2e/x/resolve/main/y", "/api/models", "//resolve//"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		rt, ok := parseHubRoute(p)
		if !ok {
			return
		}
		for _, part := range strings.Split(rt.repo, "/") {
			if !validHubName(part) {
				t.Fatalf("%q: repository %q", p, rt.repo)
			}
		}
		if rt.verb != "tree" && rt.verb != "resolve" || (rt.verb == "resolve") != (rt.file != "") {
			t.Fatalf("%q: %+v", p, rt)
		}
	})
}
