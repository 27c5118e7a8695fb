// Package hub finds a file of a Hugging Face Hub repository (a model's
// tokenizer.json by its id, "Qwen/Qwen3-8B", or a dataset's file): in the
// local Hugging Face cache first, in the layout huggingface_hub writes
// ({models,datasets}--org--name/{refs,snapshots,blobs}), and otherwise by
// downloading it once from the Hub into that cache, with bounded timeouts
// so that an offline machine fails fast. Tree lists a repository's files,
// Open reads one as it downloads.
package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/internal/outbound"
)

// FileName is the file Find looks for.
const FileName = "tokenizer.json"

// DefaultEndpoint is the Hub's address when HF_ENDPOINT is not set.
const DefaultEndpoint = "https://huggingface.co"

// Options says where to look. The zero value reads the environment, as
// huggingface_hub does: HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME, HF_ENDPOINT,
// HF_TOKEN, HF_HUB_OFFLINE.
type Options struct {
	// Revision is a branch, tag or commit (default "main").
	Revision string
	// CacheDir is the hub cache (default: $HF_HUB_CACHE, $HF_HOME/hub,
	// $XDG_CACHE_HOME/huggingface/hub, ~/.cache/huggingface/hub).
	CacheDir string
	// Endpoint is the Hub's base URL (default $HF_ENDPOINT, else
	// DefaultEndpoint).
	Endpoint string
	// Token is sent as a bearer token (default $HF_TOKEN); it is never
	// written to an error or a file.
	Token string
	// Offline looks in the cache only (default: $HF_HUB_OFFLINE is 1).
	Offline bool
	// Timeout bounds the whole download (default 2 minutes).
	Timeout time.Duration
	// MaxBytes bounds the file's size (default 256 MiB); a larger one is
	// refused, before its bytes when the Hub says its length.
	MaxBytes int64
	// RangesAbove is the length above which OpenAt reads a file by range
	// requests rather than downloading it whole into the cache (default
	// DefaultRangesAbove).
	RangesAbove int64
	// Progress, when set, is called as the download goes with the bytes
	// written so far and the file's length (-1 when the Hub does not say).
	Progress func(done, total int64)
}

// RepoType is the kind of Hub repository a file is in.
type RepoType string

// Repository kinds: their cache folders and URLs differ.
const (
	Model   RepoType = "model"
	Dataset RepoType = "dataset"
)

// FromEnv fills o's unset fields from the environment.
func (o Options) FromEnv() Options {
	if o.Revision == "" {
		o.Revision = "main"
	}
	if o.CacheDir == "" {
		o.CacheDir = CacheDir()
	}
	if o.Endpoint == "" {
		o.Endpoint = strings.TrimRight(os.Getenv("HF_ENDPOINT"), "/")
		if o.Endpoint == "" {
			o.Endpoint = DefaultEndpoint
		}
	}
	if o.Token == "" {
		o.Token = os.Getenv("HF_TOKEN")
		if o.Token == "" {
			o.Token = os.Getenv("HUGGING_FACE_HUB_TOKEN")
		}
	}
	if v := strings.ToLower(os.Getenv("HF_HUB_OFFLINE")); v == "1" || v == "true" || v == "yes" || v == "on" {
		o.Offline = true
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 256 << 20
	}
	if o.RangesAbove <= 0 {
		o.RangesAbove = DefaultRangesAbove
	}
	return o
}

// client sends every request to the Hub: the outbound policy's (a
// redirect to another origin carries no token, none leaves https for
// http), its connections, handshakes and response headers bounded by
// 10 s.
var client = outbound.NewClient(outbound.WithTransport(outbound.NewTransport(outbound.TransportOptions{ResponseHeaderTimeout: 10 * time.Second})))

// shown is the endpoint as errors and logs name it: without a user or
// password it may carry (HF_ENDPOINT=https://user:pass@host).
func (o Options) shown() string {
	u, err := url.Parse(o.Endpoint)
	if err != nil {
		return "HF_ENDPOINT"
	}
	u.User = nil
	return u.String()
}

// CacheDir is the hub cache huggingface_hub uses.
func CacheDir() string {
	if d := os.Getenv("HF_HUB_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("HF_HOME"); d != "" {
		return filepath.Join(d, "hub")
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "huggingface", "hub")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "huggingface", "hub")
	}
	return filepath.Join(home, ".cache", "huggingface", "hub")
}

// repoID is a Hub model id: "name" or "org/name", each part of letters,
// digits, '-', '_' and '.'.
var repoID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$`)

// IsRepoID reports whether s can name a Hub model repository.
func IsRepoID(s string) bool {
	return repoID.MatchString(s) && !strings.Contains(s, "..") && !strings.HasSuffix(s, ".json")
}

// commit is a full commit hash.
var commit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// ErrNotCached is returned (wrapped) when o.Offline and the cache lacks
// the file.
var ErrNotCached = errors.New("not in the Hugging Face cache")

// Where says how Find found the file.
type Where string

// Where values.
const (
	Cached     Where = "cache"
	Downloaded Where = "downloaded"
)

// Find returns the path of repo's tokenizer.json at o.Revision: the cached
// copy when there is one, else one downloaded into the cache.
func Find(ctx context.Context, repo string, o Options) (path string, where Where, err error) {
	return Fetch(ctx, Model, repo, FileName, o)
}

// Fetch returns the path of file in the repository repo of kind typ at
// o.Revision: the cached copy when there is one, else one downloaded into
// the cache. file may name a folder of the repository ("data/x.json").
func Fetch(ctx context.Context, typ RepoType, repo, file string, o Options) (path string, where Where, err error) {
	o = o.FromEnv()
	if !IsRepoID(repo) {
		return "", "", fmt.Errorf("%q is not a Hugging Face %s id", repo, typ)
	}
	if !validFile(file) {
		return "", "", fmt.Errorf("%q is not a file name in a repository", file)
	}
	prefix := "models--"
	if typ == Dataset {
		prefix = "datasets--"
	}
	dir := filepath.Join(o.CacheDir, prefix+strings.ReplaceAll(repo, "/", "--"))
	if p, ok := cached(dir, o.Revision, file); ok {
		return p, Cached, nil
	}
	if o.Offline {
		return "", "", fmt.Errorf("%s@%s: %w (%s) and HF_HUB_OFFLINE is set", repo, o.Revision, ErrNotCached, o.CacheDir)
	}
	p, err := download(ctx, dir, typ, repo, file, o)
	if err != nil {
		return "", "", fmt.Errorf("%s@%s: %w", repo, o.Revision, err)
	}
	return p, Downloaded, nil
}

// validFile reports whether file is a relative slash path inside a
// repository, with no empty, "." or ".." part.
func validFile(file string) bool {
	if file == "" || strings.ContainsAny(file, "\\\x00") {
		return false
	}
	for _, part := range strings.Split(file, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
	}
	return true
}

// cached finds the file in a repo's cache folder: through refs/<revision>
// to its snapshot, or the snapshot a commit names.
func cached(dir, revision, file string) (string, bool) {
	// Without refs/<revision>, the snapshot is named by the revision: a
	// commit, or a branch from a Hub mirror that names no commit.
	snap := revision
	if b, err := readRef(filepath.Join(dir, "refs", revision)); err == nil {
		snap = strings.TrimSpace(string(b))
	}
	if !validFile(snap) || strings.Contains(snap, "/") && !strings.Contains(revision, "/") {
		return "", false
	}
	p := filepath.Join(dir, "snapshots", snap, filepath.FromSlash(file))
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
		return p, true
	}
	return "", false
}

// download fetches the file from the Hub and stores it in the cache as
// huggingface_hub would: the bytes under blobs/<etag>, a snapshot link to
// them, and refs/<revision> naming the commit.
func download(ctx context.Context, dir string, typ RepoType, repo, file string, o Options) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	p, err := begin(ctx, dir, typ, repo, file, o)
	if err != nil {
		return "", err
	}
	defer p.abort()
	if _, err := io.Copy(io.Discard, p); err != nil {
		return "", err
	}
	return p.finish()
}

// pending is a download under way: its body is read through it, each byte
// also written to a temporary blob that finish makes the cached file.
type pending struct {
	resp      *http.Response
	tmp       *os.File
	pw        *progressWriter
	dir, file string
	rev, etag string
	o         Options
	n         int64
	eof       bool
}

// begin asks the Hub for the file and opens the temporary blob its bytes
// go to; the caller reads the body through the pending download.
func begin(ctx context.Context, dir string, typ RepoType, repo, file string, o Options) (*pending, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, resolveURL(typ, repo, file, o), nil)
	if err != nil {
		return nil, err
	}
	if o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+o.Token)
	}
	// The Hub answers with a redirect to its file store; its headers name
	// the commit and the file's hash. The token stays with the Hub's origin.
	var first http.Header
	req = req.WithContext(outbound.ObserveRedirects(ctx, func(r outbound.Redirect) {
		if first == nil && r.Response != nil {
			first = r.Response.Header
		}
	}))
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("downloading from %s: %w", o.shown(), unwrap(err, o))
	}
	if err := statusError(resp, o, typ, file); err != nil {
		resp.Body.Close()
		return nil, err
	}
	if resp.ContentLength > o.MaxBytes {
		resp.Body.Close()
		return nil, &bounded.TooLargeError{What: file, Limit: o.MaxBytes, Size: resp.ContentLength}
	}
	if first == nil {
		first = resp.Header
	}
	rev := header(first, resp.Header, "X-Repo-Commit")
	if !commit.MatchString(rev) {
		rev = o.Revision // a Hub mirror that names no commit: keyed by the revision
	}
	etag := strings.Trim(strings.TrimPrefix(header(first, resp.Header, "X-Linked-Etag", "ETag"), "W/"), `"`)
	if etag == "" || strings.ContainsAny(etag, `/\`) || etag == "." || etag == ".." {
		etag = strings.ReplaceAll(rev, "/", "-") + "-" + strings.ReplaceAll(file, "/", "-")
	}
	blobs := filepath.Join(dir, "blobs")
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		resp.Body.Close()
		return nil, err
	}
	tmp, err := os.CreateTemp(blobs, etag+".*.incomplete")
	if err != nil {
		resp.Body.Close()
		return nil, err
	}
	return &pending{resp: resp, tmp: tmp, pw: &progressWriter{w: tmp, total: resp.ContentLength, fn: o.Progress},
		dir: dir, file: file, rev: rev, etag: etag, o: o}, nil
}

// statusError says why the Hub refused a request, nil when it did not.
func statusError(resp *http.Response, o Options, typ RepoType, what string) error {
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		hint := fmt.Sprintf("no such %s, or a gated or private one: set HF_TOKEN to a token with access", typ)
		if o.Token != "" {
			hint = fmt.Sprintf("no such %s, or one HF_TOKEN has no access to", typ)
		}
		return &StatusError{Code: resp.StatusCode, Msg: fmt.Sprintf("%s refused it (HTTP %d: %s)", o.shown(), resp.StatusCode, hint)}
	case resp.StatusCode == http.StatusNotFound:
		return &StatusError{Code: resp.StatusCode, Msg: fmt.Sprintf("%s has no %s for it (HTTP 404: not a Hub %s, or no such revision or file)", o.shown(), what, typ)}
	case resp.StatusCode != http.StatusOK:
		return &StatusError{Code: resp.StatusCode, Msg: fmt.Sprintf("%s answered HTTP %d", o.shown(), resp.StatusCode)}
	}
	return nil
}

// StatusError is the Hub's refusal of a request: its HTTP status and what
// it means (401 and 403: a private or gated repository, or none).
type StatusError struct {
	Code int
	Msg  string
}

// Error says what the status means.
func (e *StatusError) Error() string { return e.Msg }

// Read reads the body, bounded by o.MaxBytes, writing it to the blob.
func (p *pending) Read(b []byte) (int, error) {
	if p.n > p.o.MaxBytes {
		return 0, &bounded.TooLargeError{What: p.file, Limit: p.o.MaxBytes}
	}
	if room := p.o.MaxBytes + 1 - p.n; int64(len(b)) > room {
		b = b[:room]
	}
	n, err := p.resp.Body.Read(b)
	p.n += int64(n)
	if n > 0 {
		if _, werr := p.pw.Write(b[:n]); werr != nil {
			return n, werr
		}
	}
	if p.n > p.o.MaxBytes {
		return n, &bounded.TooLargeError{What: p.file, Limit: p.o.MaxBytes}
	}
	if err == io.EOF {
		p.eof = true
	} else if err != nil {
		err = fmt.Errorf("downloading from %s: %w", p.o.shown(), unwrap(err, p.o))
	}
	return n, err
}

// abort drops the download: the body is closed, the temporary blob
// removed (after finish, only the body is closed).
func (p *pending) abort() {
	p.resp.Body.Close()
	if p.tmp != nil {
		p.tmp.Close()
		os.Remove(p.tmp.Name())
	}
}

// finish stores the whole body read as the cached file and returns its
// path in the snapshot.
func (p *pending) finish() (string, error) {
	if !p.eof {
		return "", fmt.Errorf("%s: the download ended early", p.file)
	}
	tmp := p.tmp
	p.tmp = nil
	defer os.Remove(tmp.Name())
	if err := tmp.Close(); err != nil {
		return "", err
	}
	blob := filepath.Join(p.dir, "blobs", p.etag)
	if err := os.Rename(tmp.Name(), blob); err != nil {
		return "", err
	}
	snap := filepath.Join(p.dir, "snapshots", filepath.FromSlash(p.rev))
	path := filepath.Join(snap, filepath.FromSlash(p.file))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	_ = os.Remove(path)
	up := strings.Repeat("../", strings.Count(p.file, "/")+strings.Count(p.rev, "/")+2)
	if err := os.Symlink(filepath.FromSlash(up+"blobs/"+p.etag), path); err != nil {
		// No symlinks here (some filesystems): a copy, as huggingface_hub
		// makes then.
		if err := copyFile(blob, path); err != nil {
			return "", err
		}
	}
	if p.rev != p.o.Revision {
		ref := filepath.Join(p.dir, "refs", filepath.FromSlash(p.o.Revision))
		if err := os.MkdirAll(filepath.Dir(ref), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(ref, []byte(p.rev), 0o644); err != nil {
			return "", err
		}
	}
	return path, nil
}

// header is the first of names set in a, else in b.
func header(a, b http.Header, names ...string) string {
	for _, h := range []http.Header{a, b} {
		for _, n := range names {
			if v := h.Get(n); v != "" {
				return v
			}
		}
	}
	return ""
}

// unwrap drops net/http's `Get "url": ` prefix and any trace of the
// token or of a password in the endpoint.
func unwrap(err error, o Options) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	secrets := []string{o.Token}
	if u, perr := url.Parse(o.Endpoint); perr == nil && u.User != nil {
		pw, _ := u.User.Password()
		secrets = append(secrets, pw, u.User.String())
	}
	msg := err.Error()
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "<redacted>")
		}
	}
	if msg != err.Error() {
		return errors.New(msg)
	}
	return err
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// readRef reads a cache's refs/<revision> file: a commit's hash.
func readRef(path string) ([]byte, error) {
	return bounded.ReadFile(context.Background(), path, 4<<10)
}

// progressWriter reports the bytes written through it.
type progressWriter struct {
	w     io.Writer
	done  int64
	total int64
	fn    func(done, total int64)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.done += int64(n)
	if p.fn != nil {
		p.fn(p.done, p.total)
	}
	return n, err
}
