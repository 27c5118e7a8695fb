package hub

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestNextPage(t *testing.T) {
	base, _ := url.Parse("https://huggingface.co")
	for _, tc := range []struct{ link, want, err string }{
		{link: "", want: ""},
		{link: `<https://huggingface.co/api/datasets/a/b/tree/main?cursor=x>; rel="next"`, want: "https://huggingface.co/api/datasets/a/b/tree/main?cursor=x"},
		{link: `</api/datasets/a/b/tree/main?cursor=y>; rel=next`, want: "https://huggingface.co/api/datasets/a/b/tree/main?cursor=y"},
		{link: `<https://evil.example/steal>; rel="next"`, err: "the listing's next page is on another host (evil.example)"},
		{link: `<http://huggingface.co/x>; rel="next"`, err: "another host"},
		{link: `<https://huggingface.co/x>; rel="prev"`, want: ""},
	} {
		got, err := nextPage(base, tc.link)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %q %v, want error %q", tc.link, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %q %v, want %q", tc.link, got, err, tc.want)
		}
	}
}

// TestTreeAndOpen: a listing names files only; a malformed one, a path
// that leaves the repository or a bad revision is refused; Open keeps a
// download read to its end and drops one left early.
func TestTreeAndOpen(t *testing.T) {
	body := strings.Repeat("x", 1<<20)
	listing := `[{"type":"file","path":"a.jsonl","size":3},{"type":"directory","path":"d"},{"type":"file","path":"d/b.csv","size":1}]`
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/datasets/org/ok/tree/main":
			_, _ = io.WriteString(w, listing)
		case "/api/datasets/org/escape/tree/main":
			_, _ = io.WriteString(w, `[{"type":"file","path":"../../etc/passwd"}]`)
		case "/api/datasets/org/junk/tree/main":
			_, _ = io.WriteString(w, `{"not": "a list"}`)
		case "/datasets/org/ok/resolve/main/big.txt":
			w.Header().Set("X-Repo-Commit", testCommit)
			_, _ = io.WriteString(w, body)
		default:
			http.NotFound(w, r)
		}
	}))
	defer ts.Close()
	o := opts(t, ts.URL)
	files, err := Tree(context.Background(), Dataset, "org/ok", o)
	if err != nil || len(files) != 2 || files[1].Path != "d/b.csv" {
		t.Fatalf("files %+v, %v", files, err)
	}
	for repo, want := range map[string]string{"org/escape": `the Hub listed "../../etc/passwd", not a file path`, "org/junk": "not a JSON list of files"} {
		if _, err := Tree(context.Background(), Dataset, repo, o); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", repo, err)
		}
	}
	bad := o
	bad.Revision = "../main"
	if _, err := Tree(context.Background(), Dataset, "org/ok", bad); err == nil || !strings.Contains(err.Error(), "not a revision") {
		t.Errorf("bad revision: %v", err)
	}
	// Left early: not cached, so opened again from the Hub.
	r, where, err := Open(context.Background(), Dataset, "org/ok", "big.txt", o)
	if err != nil || where != Downloaded {
		t.Fatal(where, err)
	}
	if _, err := io.ReadFull(r, make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, where, _ = Open(context.Background(), Dataset, "org/ok", "big.txt", o); where != Downloaded {
		t.Errorf("a download left early was kept (%s)", where)
	}
	// Read whole: cached.
	r, _, _ = Open(context.Background(), Dataset, "org/ok", "big.txt", o)
	if b, err := io.ReadAll(r); err != nil || len(b) != len(body) {
		t.Fatalf("read %d, %v", len(b), err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r, where, err = Open(context.Background(), Dataset, "org/ok", "big.txt", o)
	if err != nil || where != Cached {
		t.Fatalf("after a whole read: %s %v", where, err)
	}
	r.Close()
	// A bound below the file's length stops the read.
	small := opts(t, ts.URL)
	small.MaxBytes = 1000
	r, _, err = Open(context.Background(), Dataset, "org/ok", "big.txt", small)
	if err == nil {
		_, err = io.ReadAll(r)
		r.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "over the 1000 B limit") {
		t.Errorf("bound: %v", err)
	}
}
