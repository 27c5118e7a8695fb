package mockserver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"sort"
	"strings"
)

// A local Hub: Config.Hub names a folder the mock serves as the Hugging
// Face Hub serves repositories, so that --hf-dataset, --public-dataset
// and a model's tokenizer can be tried and tested with no network (point
// HF_ENDPOINT at the mock). The folder holds a repository per folder, as
// the Hub's addresses name them:
//
//	DIR/datasets/ORG/NAME/…   a dataset (its README.md, data files)
//	DIR/ORG/NAME/…            a model (its tokenizer.json)
//
// Every revision reads the repository's folder, unless a folder
// NAME@REVISION is there (the revision's "/" written "-", so the Hub's
// Parquet conversion refs/convert/parquet is NAME@refs-convert-parquet).
// It answers the Hub's file listing (GET /api/datasets/ORG/NAME/tree/REV,
// /api/models/…) and its resolve API (GET /datasets/ORG/NAME/resolve/REV/
// FILE, /ORG/NAME/resolve/REV/FILE) with the headers a client keys its
// cache on (X-Repo-Commit, X-Linked-Etag). Nothing outside the folder is
// served: names are resolved inside it (os.Root), symbolic links out of
// it included.

// hubCommit is the commit a revision of a repository resolves to: a
// stable 40-hex name, as the Hub's X-Repo-Commit.
func hubCommit(repo, revision string) string {
	s := sha256.Sum256([]byte(repo + "@" + revision))
	return hex.EncodeToString(s[:20])
}

// hubRoute is a Hub request's parts: the kind of repository, its id,
// the revision, the verb (tree or resolve) and the file path.
type hubRoute struct {
	dataset         bool
	repo, rev, verb string
	file            string
}

// parseHubRoute reads a Hub address; ok is false for any other.
func parseHubRoute(escapedPath string) (hubRoute, bool) {
	var rt hubRoute
	parts := strings.Split(strings.TrimPrefix(escapedPath, "/"), "/")
	switch {
	case len(parts) > 0 && parts[0] == "api":
		if len(parts) < 2 || (parts[1] != "datasets" && parts[1] != "models") {
			return rt, false
		}
		rt.dataset = parts[1] == "datasets"
		parts = parts[2:]
	case len(parts) > 0 && parts[0] == "datasets":
		rt.dataset = true
		parts = parts[1:]
	}
	// ORG/NAME or NAME, then the verb, the revision and (resolve) a file.
	for i := 1; i <= 2 && i < len(parts); i++ {
		if parts[i] != "tree" && parts[i] != "resolve" {
			continue
		}
		rt.verb = parts[i]
		rest := parts[i+1:]
		if len(rest) == 0 {
			return rt, false
		}
		var err error
		if rt.rev, err = url.PathUnescape(rest[0]); err != nil {
			return rt, false
		}
		names := make([]string, 0, i)
		for _, p := range parts[:i] {
			n, err := url.PathUnescape(p)
			if err != nil || !validHubName(n) {
				return rt, false
			}
			names = append(names, n)
		}
		rt.repo = strings.Join(names, "/")
		file := make([]string, 0, len(rest)-1)
		for _, p := range rest[1:] {
			n, err := url.PathUnescape(p)
			if err != nil {
				return rt, false
			}
			file = append(file, n)
		}
		rt.file = strings.Join(file, "/")
		if (rt.verb == "resolve") != (rt.file != "") {
			return rt, false
		}
		return rt, true
	}
	return rt, false
}

// validHubName is a repository id's part as the Hub allows it: letters,
// digits, '-', '_' and '.', never "." or "..".
func validHubName(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// serveHub answers a Hub request from Config.Hub; false when r is no Hub
// request (or the mock serves no Hub).
func (s *Server) serveHub(w http.ResponseWriter, r *http.Request) bool {
	if s.hub == nil {
		return false
	}
	rt, ok := parseHubRoute(r.URL.EscapedPath())
	if !ok {
		return false
	}
	if !allow(w, r, http.MethodGet) {
		return true
	}
	dir, ok := s.hubRepoDir(rt)
	if !ok {
		hubError(w, http.StatusNotFound, "Repository not found")
		return true
	}
	w.Header().Set("X-Repo-Commit", hubCommit(rt.repo, rt.rev))
	if rt.verb == "tree" {
		s.hubTree(w, dir)
		return true
	}
	s.hubResolve(w, r, dir, rt.file)
	return true
}

// hubRepoDir is the folder of rt's repository and revision inside the
// Hub's root ("datasets/ORG/NAME", "ORG/NAME@REV"); ok false when there
// is none.
func (s *Server) hubRepoDir(rt hubRoute) (string, bool) {
	base := rt.repo
	if rt.dataset {
		base = "datasets/" + base
	}
	for _, dir := range []string{base + "@" + strings.ReplaceAll(rt.rev, "/", "-"), base} {
		if st, err := s.hub.Stat(dir); err == nil && st.IsDir() {
			return dir, true
		}
	}
	return "", false
}

// hubEntry is one row of the Hub's file listing.
type hubEntry struct {
	Type string `json:"type"`
	Oid  string `json:"oid"`
	Size int64  `json:"size"`
	Path string `json:"path"`
}

// hubTree lists every file and folder of dir, recursively, as one page.
func (s *Server) hubTree(w http.ResponseWriter, dir string) {
	entries := []hubEntry{}
	err := fs.WalkDir(s.hub.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, dir), "/")
		if rel == "" {
			return nil
		}
		if d.IsDir() {
			entries = append(entries, hubEntry{Type: "directory", Oid: hubOid(strings.NewReader(rel)), Path: rel})
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // a link or device: not served
		}
		f, err := s.hub.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		entries = append(entries, hubEntry{Type: "file", Oid: hubOid(f), Size: st.Size(), Path: rel})
		return nil
	})
	if err != nil {
		hubError(w, http.StatusInternalServerError, "mock: listing the local Hub: "+err.Error())
		return
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(entries)
}

// hubResolve sends file of dir, with its hash as the Hub's X-Linked-Etag.
func (s *Server) hubResolve(w http.ResponseWriter, r *http.Request, dir, file string) {
	f, err := s.hub.Open(path.Join(dir, file))
	if err != nil {
		hubError(w, http.StatusNotFound, "Entry not found")
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		hubError(w, http.StatusNotFound, "Entry not found")
		return
	}
	w.Header().Set("X-Linked-Etag", `"`+hubOid(f)+`"`)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		hubError(w, http.StatusInternalServerError, "mock: "+err.Error())
		return
	}
	http.ServeContent(w, r, path.Base(file), st.ModTime(), f)
}

// hubOid is the SHA-256 of what r reads, read as it streams (a large file
// is never held whole).
func hubOid(r io.Reader) string {
	h := sha256.New()
	_, _ = io.Copy(h, r)
	return hex.EncodeToString(h.Sum(nil))
}

func hubError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// openHub opens the Hub's root folder (nil for none); the error names it.
func openHub(dir string) (*os.Root, error) {
	if dir == "" {
		return nil, nil
	}
	st, err := os.Stat(dir)
	if err == nil && !st.IsDir() {
		err = errors.New("not a folder")
	}
	if err != nil {
		return nil, fmt.Errorf("mockserver: Hub folder %s: %w", dir, err)
	}
	return os.OpenRoot(dir)
}
