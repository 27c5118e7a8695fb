package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/surgebench/surge/internal/outbound"
)

// Bounds on a repository's listing: a dataset of more files than
// MaxTreeEntries is refused (name a subset), and no page of the listing
// may be longer than maxTreePage bytes.
const (
	MaxTreeEntries = 200_000
	maxTreePage    = 64 << 20
)

// Entry is a file of a repository's tree.
type Entry struct {
	// Path is the file's path in the repository ("data/train-0.parquet").
	Path string `json:"path"`
	// Size is the file's length in bytes (its LFS object's for a file in
	// LFS).
	Size int64 `json:"size"`
	// Type is "file" or "directory" (Tree returns files only).
	Type string `json:"type"`
}

// Tree lists the files of repository repo of kind typ at o.Revision, all
// folders deep, as huggingface_hub's list_repo_tree does: the Hub's
// /api/<type>s/<repo>/tree/<revision>?recursive=true, page after page
// (its Link header's next page, on the Hub's own host only). With
// o.Offline it lists the cached snapshot of the revision instead: the
// files downloaded before (ErrNotCached, wrapped, when there is none).
func Tree(ctx context.Context, typ RepoType, repo string, o Options) ([]Entry, error) {
	o = o.FromEnv()
	if !IsRepoID(repo) {
		return nil, fmt.Errorf("%q is not a Hugging Face %s id", repo, typ)
	}
	if !validRevision(o.Revision) {
		return nil, fmt.Errorf("%q is not a revision (a branch, tag or commit)", o.Revision)
	}
	if o.Offline {
		files, err := cachedTree(RepoDir(typ, repo, o), o.Revision)
		if err != nil {
			return nil, fmt.Errorf("%s@%s: %w (%s) and HF_HUB_OFFLINE is set", repo, o.Revision, err, o.CacheDir)
		}
		return files, nil
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	base, err := url.Parse(o.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("HF_ENDPOINT: %v", unwrap(err, o))
	}
	next := fmt.Sprintf("%s/api/%ss/%s/tree/%s?recursive=true&expand=false", o.Endpoint, typ, repo, url.PathEscape(o.Revision))
	var files []Entry
	for n := 0; next != ""; n++ {
		page, link, err := treePage(ctx, next, o, typ)
		if err != nil {
			return nil, fmt.Errorf("%s@%s: %w", repo, o.Revision, err)
		}
		for _, e := range page {
			if e.Type == "file" {
				if !validFile(e.Path) {
					return nil, fmt.Errorf("%s@%s: the Hub listed %q, not a file path", repo, o.Revision, e.Path)
				}
				files = append(files, e)
			}
		}
		if len(files) > MaxTreeEntries {
			return nil, fmt.Errorf("%s@%s: more than %d files: name a subset", repo, o.Revision, MaxTreeEntries)
		}
		if next, err = nextPage(base, link); err != nil {
			return nil, fmt.Errorf("%s@%s: %w", repo, o.Revision, err)
		}
	}
	return files, nil
}

// treePage fetches one page of a listing and its Link header.
func treePage(ctx context.Context, u string, o Options, typ RepoType) ([]Entry, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", err
	}
	if o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+o.Token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("listing its files at %s: %w", o.shown(), unwrap(err, o))
	}
	if err := statusError(resp, o, typ, "file listing"); err != nil {
		resp.Body.Close()
		return nil, "", err
	}
	b, err := outbound.ReadBody(ctx, resp, maxTreePage, "a page of its file listing")
	if err != nil {
		return nil, "", fmt.Errorf("listing its files at %s: %w", o.shown(), unwrap(err, o))
	}
	var page []Entry
	if err := json.Unmarshal(b, &page); err != nil {
		return nil, "", fmt.Errorf("%s's file listing is not a JSON list of files: %v", o.shown(), err)
	}
	return page, resp.Header.Get("Link"), nil
}

// linkNext is a Link header's rel="next" target.
var linkNext = regexp.MustCompile(`<([^>]*)>\s*;\s*rel="?next"?`)

// nextPage is the next page's address from a Link header ("" when there
// is none); it must be on the endpoint's host, which the token is for.
func nextPage(base *url.URL, link string) (string, error) {
	m := linkNext.FindStringSubmatch(link)
	if m == nil {
		return "", nil
	}
	u, err := base.Parse(m[1])
	if err != nil {
		return "", fmt.Errorf("the listing's next page %q: %v", m[1], err)
	}
	if u.Host != base.Host || u.Scheme != base.Scheme {
		return "", fmt.Errorf("the listing's next page is on another host (%s)", u.Host)
	}
	return u.String(), nil
}

// RepoDir is a repository's folder in the cache.
func RepoDir(typ RepoType, repo string, o Options) string {
	o = o.FromEnv()
	prefix := "models--"
	if typ == Dataset {
		prefix = "datasets--"
	}
	return filepath.Join(o.CacheDir, prefix+strings.ReplaceAll(repo, "/", "--"))
}

// validRevision reports whether rev can name a revision in a cache path:
// a relative slash path with no empty, "." or ".." part.
func validRevision(rev string) bool { return validFile(rev) }

// cachedTree lists the files of a revision's cached snapshot.
func cachedTree(dir, revision string) ([]Entry, error) {
	snap := revision
	if b, err := readRef(filepath.Join(dir, "refs", filepath.FromSlash(revision))); err == nil {
		snap = strings.TrimSpace(string(b))
	}
	if !validFile(snap) {
		return nil, ErrNotCached
	}
	root := filepath.Join(dir, "snapshots", filepath.FromSlash(snap))
	var files []Entry
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		st, err := os.Stat(p) // through the blob link
		if err != nil || !st.Mode().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files = append(files, Entry{Path: filepath.ToSlash(rel), Size: st.Size(), Type: "file"})
		if len(files) > MaxTreeEntries {
			return fmt.Errorf("more than %d cached files", MaxTreeEntries)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(files) == 0 {
		return nil, ErrNotCached
	}
	if err != nil {
		return nil, err
	}
	return files, nil
}

// Open returns file of repository repo (kind typ) at o.Revision for
// reading: the cached copy when there is one; else the Hub's answer as it
// arrives, each byte also written to the cache, so that a reader that
// needs only the file's head reads only that. Closing a download read to
// its end keeps it in the cache; closing it before drops it. o.Timeout
// bounds the whole download, o.MaxBytes its length.
func Open(ctx context.Context, typ RepoType, repo, file string, o Options) (io.ReadCloser, Where, error) {
	o = o.FromEnv()
	if !IsRepoID(repo) {
		return nil, "", fmt.Errorf("%q is not a Hugging Face %s id", repo, typ)
	}
	if !validFile(file) {
		return nil, "", fmt.Errorf("%q is not a file name in a repository", file)
	}
	if !validRevision(o.Revision) {
		return nil, "", fmt.Errorf("%q is not a revision (a branch, tag or commit)", o.Revision)
	}
	dir := RepoDir(typ, repo, o)
	if p, ok := cached(dir, o.Revision, file); ok {
		f, err := os.Open(p)
		if err != nil {
			return nil, "", err
		}
		return f, Cached, nil
	}
	if o.Offline {
		return nil, "", fmt.Errorf("%s@%s: %w (%s) and HF_HUB_OFFLINE is set", repo, o.Revision, ErrNotCached, o.CacheDir)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	p, err := begin(ctx, dir, typ, repo, file, o)
	if err != nil {
		cancel()
		return nil, "", fmt.Errorf("%s@%s: %w", repo, o.Revision, err)
	}
	return &stream{p: p, cancel: cancel}, Downloaded, nil
}

// stream is a download read as it arrives.
type stream struct {
	p      *pending
	cancel context.CancelFunc
}

func (s *stream) Read(b []byte) (int, error) { return s.p.Read(b) }

// Close keeps a download read to its end in the cache and drops any
// other.
func (s *stream) Close() error {
	defer s.cancel()
	defer s.p.abort()
	if !s.p.eof {
		return nil
	}
	_, err := s.p.finish()
	return err
}
