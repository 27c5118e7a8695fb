// Package remote fetches an --input-file that a URL names, as AIPerf 0.14
// takes them (https://…, hf://…, s3://…), into a local cache: once,
// through the one outbound policy (internal/outbound) and the one bound
// on what is read (internal/bounded). A later run asks the source whether
// its copy changed (an ETag or Last-Modified) and reads the cached copy if
// not, or if the source cannot be reached (and says so); a download cut
// short resumes where it stopped (a Range with If-Range, S3's If-Match).
//
//   - https://host/path (http:// too): the file at that address.
//   - hf://datasets/ORG/NAME[@REVISION]/PATH: a file of a Hugging Face
//     Hub dataset (hf://ORG/NAME/PATH: of a model repository,
//     hf://spaces/…: of a Space), as huggingface_hub's HfFileSystem names
//     them; $HF_ENDPOINT and $HF_TOKEN as for the Hub's other files.
//   - s3://BUCKET/KEY: an S3 object, through the AWS SDK for Go v2 and its
//     own credential chain (the environment, the shared config and
//     credentials files, SSO, the instance's role); $AWS_ENDPOINT_URL_S3
//     or $AWS_ENDPOINT_URL points it at an S3-compatible store (path-style
//     addressing). Without credentials it asks anonymously (a public
//     bucket).
package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/surgebench/surge/internal/bounded"
)

// DefaultMaxBytes bounds a fetched file: a dataset's bound (it is read
// into memory after).
const DefaultMaxBytes = 1 << 30

// Options shape a fetch. The zero value reads the environment.
type Options struct {
	// CacheDir holds the fetched files (default: $SURGE_CACHE_DIR, else
	// $XDG_CACHE_HOME/surge/inputs, else ~/.cache/surge/inputs).
	CacheDir string
	// MaxBytes bounds a file (default $SURGE_INPUT_MAX_BYTES, else
	// DefaultMaxBytes): a larger one is refused, before its bytes when the
	// source says its size.
	MaxBytes int64
	// HFEndpoint and HFToken are the Hub's address and token (default
	// $HF_ENDPOINT, else https://huggingface.co; $HF_TOKEN).
	HFEndpoint, HFToken string
	// S3Endpoint is an S3-compatible store's address (default
	// $AWS_ENDPOINT_URL_S3, else $AWS_ENDPOINT_URL, else AWS's own).
	S3Endpoint string
	// Progress, when set, is called as a download goes with the bytes
	// written so far and the file's size (-1: not known).
	Progress func(done, total int64)
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
}

func (o Options) withDefaults() Options {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.CacheDir == "" {
		o.CacheDir = cacheDir(o.Getenv)
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
		if n, err := strconv.ParseInt(o.Getenv("SURGE_INPUT_MAX_BYTES"), 10, 64); err == nil && n > 0 {
			o.MaxBytes = n
		}
	}
	if o.HFEndpoint == "" {
		o.HFEndpoint = strings.TrimRight(o.Getenv("HF_ENDPOINT"), "/")
		if o.HFEndpoint == "" {
			o.HFEndpoint = "https://huggingface.co"
		}
	}
	if o.HFToken == "" {
		o.HFToken = o.Getenv("HF_TOKEN")
		if o.HFToken == "" {
			o.HFToken = o.Getenv("HUGGING_FACE_HUB_TOKEN")
		}
	}
	if o.S3Endpoint == "" {
		o.S3Endpoint = o.Getenv("AWS_ENDPOINT_URL_S3")
		if o.S3Endpoint == "" {
			o.S3Endpoint = o.Getenv("AWS_ENDPOINT_URL")
		}
	}
	return o
}

func cacheDir(getenv func(string) string) string {
	if d := getenv("SURGE_CACHE_DIR"); d != "" {
		return d
	}
	if d := getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "surge", "inputs")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".cache", "surge", "inputs")
	}
	return filepath.Join(os.TempDir(), "surge", "inputs")
}

// IsRemote reports whether ref names a file by a URL Fetch reads.
func IsRemote(ref string) bool {
	l := strings.ToLower(strings.TrimSpace(ref))
	for _, p := range []string{"https://", "http://", "hf://", "s3://"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// How says where a fetched file came from.
type How string

// How values.
const (
	// Downloaded: fetched whole now.
	Downloaded How = "downloaded"
	// Resumed: a download cut short before, finished now.
	Resumed How = "resumed"
	// Cached: the cached copy, which its source says is current.
	Cached How = "cached"
	// Stale: the cached copy, its source out of reach (Result.Why).
	Stale How = "stale"
)

// Result is a fetched file.
type Result struct {
	// Path is the local copy.
	Path string
	How  How
	// Size is its length in bytes.
	Size int64
	// Why says why a Stale copy was used.
	Why string
}

// validator is what tells one version of a file from another.
type validator struct {
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	// Size is the whole file's (-1: not known).
	Size int64 `json:"size"`
}

func (v validator) usable() bool { return v.ETag != "" || v.LastModified != "" }

// answer is a source's reply to open.
type answer struct {
	// NotModified: the cached copy is current (no body).
	NotModified bool
	// Partial: the body starts at the offset asked for.
	Partial bool
	Body    io.ReadCloser
	V       validator
}

// source is where a file comes from.
type source interface {
	// open asks for the file: from offset (0: whole) when cur is the
	// partial copy's validator (it must be unchanged), or whole unless it
	// still matches cur when cached is set.
	open(ctx context.Context, offset int64, cur validator, cached bool) (*answer, error)
	// name is the file's name (for its extension), display the source as
	// it may be printed (no credentials).
	name() string
	display() string
}

// meta is the cache entry's record.
type meta struct {
	Source   string    `json:"source"`
	V        validator `json:"validator"`
	Complete bool      `json:"complete"`
	Fetched  time.Time `json:"fetched"`
}

// Fetch returns a local copy of the file ref names (a URL IsRemote
// accepts).
func Fetch(ctx context.Context, ref string, o Options) (Result, error) {
	o = o.withDefaults()
	src, err := parse(ctx, ref, o)
	if err != nil {
		return Result{}, err
	}
	return fetch(ctx, ref, src, o)
}

// parse picks the source of ref.
func parse(ctx context.Context, ref string, o Options) (source, error) {
	ref = strings.TrimSpace(ref)
	scheme, rest, _ := strings.Cut(ref, "://")
	switch strings.ToLower(scheme) {
	case "http", "https":
		u, err := url.Parse(ref)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("%s: not a URL a file can be fetched from", redact(ref))
		}
		return newHTTPSource(u, "", o), nil
	case "hf":
		return hfSource(rest, o)
	case "s3":
		return newS3Source(ctx, rest, o)
	}
	return nil, fmt.Errorf("%s: not an https://, hf:// or s3:// address", redact(ref))
}

// safeName keeps what a file name may carry in the cache.
var safeName = regexp.MustCompile(`[^A-Za-z0-9._-]`)

func fetch(ctx context.Context, ref string, src source, o Options) (Result, error) {
	// Keyed by the whole address (a query may pick the file); what is
	// written and printed is display's, without credentials.
	sum := sha256.Sum256([]byte(strings.TrimSpace(ref)))
	dir := filepath.Join(o.CacheDir, hex.EncodeToString(sum[:16]))
	name := safeName.ReplaceAllString(src.name(), "_")
	if name == "" || name == "." || name == ".." {
		name = "input"
	}
	final := filepath.Join(dir, name)
	part := final + ".incomplete"
	m := readMeta(dir)

	if m.Complete && regular(final) {
		a, err := src.open(ctx, 0, m.V, true)
		var se *StatusError
		switch {
		case err != nil && (ctx.Err() != nil || errors.As(err, &se) && !se.transient()):
			return Result{}, err
		case err != nil:
			return Result{Path: final, How: Stale, Size: size(final), Why: err.Error()}, nil
		case a.NotModified:
			return Result{Path: final, How: Cached, Size: size(final)}, nil
		}
		_ = os.Remove(part)
		return download(ctx, src, a, dir, final, part, 0, o, Downloaded)
	}
	if n := size(part); n > 0 && m.V.usable() && !m.Complete {
		a, err := src.open(ctx, n, m.V, false)
		if err != nil {
			return Result{}, err
		}
		if a.Partial {
			return download(ctx, src, a, dir, final, part, n, o, Resumed)
		}
		return download(ctx, src, a, dir, final, part, 0, o, Downloaded)
	}
	a, err := src.open(ctx, 0, validator{Size: -1}, false)
	if err != nil {
		return Result{}, err
	}
	return download(ctx, src, a, dir, final, part, 0, o, Downloaded)
}

// download writes a's body to part from offset, then makes it the cached
// file. A download cut short (a closed connection, Ctrl-C) stays for the
// next run to resume; one over the bound is dropped.
func download(ctx context.Context, src source, a *answer, dir, final, part string, offset int64, o Options, how How) (Result, error) {
	defer a.Body.Close()
	what := src.display()
	if a.V.Size > o.MaxBytes {
		return Result{}, &bounded.TooLargeError{What: what, Limit: o.MaxBytes, Size: a.V.Size}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Result{}, err
	}
	flags := os.O_WRONLY | os.O_CREATE
	if offset > 0 {
		flags |= os.O_APPEND
	} else {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(part, flags, 0o644)
	if err != nil {
		return Result{}, err
	}
	m := meta{Source: what, V: a.V, Fetched: time.Now().UTC()}
	if err := writeMeta(dir, m); err != nil {
		f.Close()
		return Result{}, err
	}
	w := io.Writer(f)
	if o.Progress != nil {
		w = &progress{w: f, done: offset, total: a.V.Size, fn: o.Progress}
	}
	n, err := bounded.Copy(ctx, w, a.Body, o.MaxBytes-offset, what)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	var tl *bounded.TooLargeError
	if errors.As(err, &tl) {
		tl.Limit = o.MaxBytes
		_ = os.Remove(part)
		return Result{}, err
	}
	if err != nil {
		return Result{}, fmt.Errorf("fetching %s: %w (the %s fetched so far is kept: the next run resumes it)", what, err, bounded.Bytes(offset+n))
	}
	total := offset + n
	if a.V.Size >= 0 && total != a.V.Size {
		_ = os.Remove(part)
		return Result{}, fmt.Errorf("fetching %s: %s came where its source announced %s", what, bounded.Bytes(total), bounded.Bytes(a.V.Size))
	}
	if err := os.Rename(part, final); err != nil {
		return Result{}, err
	}
	m.Complete, m.V.Size = true, total
	if err := writeMeta(dir, m); err != nil {
		return Result{}, err
	}
	return Result{Path: final, How: how, Size: total}, nil
}

// progress reports a download's bytes as they are written.
type progress struct {
	w           io.Writer
	done, total int64
	fn          func(done, total int64)
}

func (p *progress) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.done += int64(n)
	p.fn(p.done, p.total)
	return n, err
}

// maxMeta bounds the cache entry's record.
const maxMeta = 64 << 10

func readMeta(dir string) meta {
	var m meta
	b, err := bounded.ReadFile(context.Background(), filepath.Join(dir, "meta.json"), maxMeta)
	if err != nil || json.Unmarshal(b, &m) != nil {
		return meta{}
	}
	return m
}

func writeMeta(dir string, m meta) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, "meta.json.tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "meta.json"))
}

func regular(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func size(p string) int64 {
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return 0
	}
	return st.Size()
}

// Redact is ref without a URL's user and password, for printing.
func Redact(ref string) string { return redact(ref) }

// redact drops a URL's user and password, and its query's values (a
// presigned URL's signature, a token), for printing and the cache's
// record.
func redact(ref string) string {
	u, err := url.Parse(strings.TrimSpace(ref))
	if err != nil {
		if i := strings.LastIndex(ref, "@"); i >= 0 {
			return "…" + ref[i+1:]
		}
		return ref
	}
	u.User = nil
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"…"}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// baseName is the last element of a slash path.
func baseName(p string) string {
	b := path.Base(p)
	if b == "/" || b == "." {
		return ""
	}
	return b
}
