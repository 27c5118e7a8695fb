// Package hftest is a Hugging Face Hub for tests: an httptest server that
// speaks the Hub's file listing (/api/datasets/ORG/NAME/tree/REVISION,
// paginated with a Link header) and its resolve API
// (/datasets/ORG/NAME/resolve/REVISION/FILE, with the X-Repo-Commit and
// X-Linked-Etag headers, and range requests), serving files the test adds, so that tests run
// against it through HF_ENDPOINT with no network.
package hftest

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// Hub is a fake Hub. Add files before the requests that read them.
type Hub struct {
	*httptest.Server
	mu sync.Mutex
	// files: repo → revision → path → bytes.
	files map[string]map[string]map[string][]byte
	// gated: repo → the token it needs.
	gated map[string]string
	// PageSize is how many entries a listing page holds (0: all).
	PageSize int
	// NoRanges answers every file request whole, as a mirror that knows
	// no range request does.
	NoRanges bool
	// Lists and Resolves count the requests of each kind, Ranges the range
	// requests among the resolves; Bytes the file bytes sent.
	Lists, Resolves, Ranges, Bytes atomic.Int64
	// Paths records every file path resolved, in order.
	Paths []string
}

// New starts a fake Hub, closed when the test ends.
func New(t testing.TB) *Hub {
	h := &Hub{files: map[string]map[string]map[string][]byte{}, gated: map[string]string{}}
	h.Server = httptest.NewServer(h)
	t.Cleanup(h.Close)
	return h
}

// Add puts a file into repo at revision.
func (h *Hub) Add(repo, revision, path string, data []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.files[repo] == nil {
		h.files[repo] = map[string]map[string][]byte{}
	}
	if h.files[repo][revision] == nil {
		h.files[repo][revision] = map[string][]byte{}
	}
	h.files[repo][revision][path] = data
}

// Gate makes repo answer 401 without token (403 with another).
func (h *Hub) Gate(repo, token string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gated[repo] = token
}

// Commit is the commit a revision of a repository resolves to.
func Commit(repo, revision string) string {
	s := sha256.Sum256([]byte(repo + "@" + revision))
	return hex.EncodeToString(s[:20])
}

func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.EscapedPath()
	switch {
	case strings.HasPrefix(p, "/api/datasets/"):
		h.Lists.Add(1)
		h.tree(w, r, strings.TrimPrefix(p, "/api/datasets/"))
	case strings.HasPrefix(p, "/datasets/"):
		h.Resolves.Add(1)
		h.resolve(w, r, strings.TrimPrefix(p, "/datasets/"))
	default:
		http.NotFound(w, r)
	}
}

// repoAndRest splits "org/name/<verb>/<rest>".
func repoAndRest(p, verb string) (repo, rest string, ok bool) {
	parts := strings.SplitN(p, "/", 4)
	if len(parts) < 4 || parts[2] != verb {
		return "", "", false
	}
	return parts[0] + "/" + parts[1], parts[3], true
}

func (h *Hub) allowed(w http.ResponseWriter, r *http.Request, repo string) bool {
	h.mu.Lock()
	tok, gated := h.gated[repo]
	h.mu.Unlock()
	if !gated {
		return true
	}
	switch r.Header.Get("Authorization") {
	case "Bearer " + tok:
		return true
	case "":
		http.Error(w, `{"error":"Access to dataset is restricted"}`, http.StatusUnauthorized)
	default:
		http.Error(w, `{"error":"forbidden"}`, http.StatusForbidden)
	}
	return false
}

func (h *Hub) revision(repo, rev string) (map[string][]byte, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	files, ok := h.files[repo][rev]
	return files, ok
}

// tree answers a listing: every file (and folder) of the revision, a page
// at a time when PageSize is set.
func (h *Hub) tree(w http.ResponseWriter, r *http.Request, p string) {
	repo, rest, ok := repoAndRest(p, "tree")
	if !ok || !h.allowed(w, r, repo) {
		if !ok {
			http.NotFound(w, r)
		}
		return
	}
	rev, err := url.PathUnescape(rest)
	if err != nil || r.URL.Query().Get("recursive") != "true" {
		http.Error(w, "want an escaped revision and recursive=true", http.StatusBadRequest)
		return
	}
	files, ok := h.revision(repo, rev)
	if !ok {
		http.Error(w, `{"error":"Revision not found"}`, http.StatusNotFound)
		return
	}
	type entry struct {
		Type string `json:"type"`
		Oid  string `json:"oid"`
		Size int64  `json:"size"`
		Path string `json:"path"`
	}
	var all []entry
	dirs := map[string]bool{}
	for path, b := range files {
		all = append(all, entry{Type: "file", Oid: oid(b), Size: int64(len(b)), Path: path})
		for d := path; strings.Contains(d, "/"); {
			d = d[:strings.LastIndex(d, "/")]
			dirs[d] = true
		}
	}
	for d := range dirs {
		all = append(all, entry{Type: "directory", Oid: oid([]byte(d)), Path: d})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Path < all[j].Path })
	start, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
	end := len(all)
	if h.PageSize > 0 && start+h.PageSize < end {
		end = start + h.PageSize
		next := *r.URL
		q := next.Query()
		q.Set("cursor", strconv.Itoa(end))
		next.RawQuery = q.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<%s%s>; rel="next"`, h.URL, next.RequestURI()))
	}
	if start > end {
		start = end
	}
	_ = json.NewEncoder(w).Encode(all[start:end])
}

func (h *Hub) resolve(w http.ResponseWriter, r *http.Request, p string) {
	repo, rest, ok := repoAndRest(p, "resolve")
	if !ok || !h.allowed(w, r, repo) {
		if !ok {
			http.NotFound(w, r)
		}
		return
	}
	escRev, escPath, _ := strings.Cut(rest, "/")
	rev, err1 := url.PathUnescape(escRev)
	path, err2 := url.PathUnescape(escPath)
	if err1 != nil || err2 != nil {
		http.Error(w, "bad escape", http.StatusBadRequest)
		return
	}
	files, ok := h.revision(repo, rev)
	b, found := files[path]
	if !ok || !found {
		http.Error(w, `{"error":"Entry not found"}`, http.StatusNotFound)
		return
	}
	h.mu.Lock()
	h.Paths = append(h.Paths, path)
	h.mu.Unlock()
	w.Header().Set("X-Repo-Commit", Commit(repo, rev))
	w.Header().Set("X-Linked-Etag", `"`+oid(b)+`"`)
	if h.NoRanges {
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		n, _ := w.Write(b)
		h.Bytes.Add(int64(n))
		return
	}
	cw := &counted{ResponseWriter: w}
	http.ServeContent(cw, r, path, time.Time{}, bytes.NewReader(b))
	h.Bytes.Add(cw.n)
	if r.Header.Get("Range") != "" {
		h.Ranges.Add(1)
	}
}

// counted counts the body bytes written.
type counted struct {
	http.ResponseWriter
	n int64
}

func (c *counted) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	return n, err
}

func oid(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Parquet encodes rows as a Parquet file (its schema from T's parquet
// tags), rowsPerGroup rows a row group (0: one group).
func Parquet[T any](t testing.TB, rows []T, rowsPerGroup int) []byte {
	t.Helper()
	var buf bytes.Buffer
	// No statistics nor page bounds: a test's file holds what it wrote
	// (an 80 MiB value is not copied four times into the metadata).
	opts := []parquet.WriterOption{parquet.DataPageStatistics(false), parquet.ColumnIndexSizeLimit(func([]string) int { return 16 })}
	if rowsPerGroup > 0 {
		opts = append(opts, parquet.MaxRowsPerRowGroup(int64(rowsPerGroup)))
	}
	w := parquet.NewGenericWriter[T](&buf, opts...)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ParquetRevision is the Hub's Parquet conversion branch.
func ParquetRevision() string { return "refs/convert/parquet" }

// WAV is secs seconds of 16 kHz mono 16-bit silence as a WAV file: an
// audio column's bytes.
func WAV(secs float64) []byte {
	n := int(secs * 16000)
	b := make([]byte, 44+2*n)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+2*n))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1) // PCM
	binary.LittleEndian.PutUint16(b[22:], 1) // mono
	binary.LittleEndian.PutUint32(b[24:], 16000)
	binary.LittleEndian.PutUint32(b[28:], 32000)
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(2*n))
	return b
}
