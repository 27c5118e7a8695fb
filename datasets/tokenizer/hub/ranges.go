package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/internal/outbound"
)

// File is a repository's file read at offsets: what a Parquet reader
// needs (its footer first, then the row groups it reads).
type File interface {
	io.ReaderAt
	io.Closer
	// Size is the file's length in bytes.
	Size() int64
}

// ErrNoRanges is OpenAt's error when the file is better downloaded
// whole (and kept in the cache): it is no longer than o.RangesAbove, or
// the Hub (a mirror) answers a range request with the whole file, of a
// known length within the bound.
var ErrNoRanges = errors.New("the file is read whole")

// DefaultRangesAbove is the length above which a file read at offsets is
// read by ranges: a smaller one is downloaded whole and kept, for the
// next run (offline too).
const DefaultRangesAbove = 32 << 20

// rangeBlock is what one range request asks for at least: a reader's
// small reads (a Parquet reader's are 4 KiB) come from the blocks kept.
const rangeBlock = 1 << 20

// keptBlocks is how many blocks a remote file keeps (the most recently
// read): one per column chunk a reader walks at once, and more.
const keptBlocks = 32

// OpenAt opens file of repository repo (kind typ) at o.Revision for
// reading at offsets: the cached copy when there is one; else, for a file
// longer than o.RangesAbove, the Hub's answers to HTTP range requests, a
// block at a time as the reader asks, none of it kept in the cache: a
// reader that needs the file's footer and a few of its parts downloads
// only those. A shorter file, or one from a Hub that answers a range
// request with the whole file, is ErrNoRanges (nothing of it read): the
// caller downloads it whole.
// o.MaxBytes bounds the file's length and all that is read of it; o.Timeout
// bounds each request.
func OpenAt(ctx context.Context, typ RepoType, repo, file string, o Options) (File, Where, error) {
	o = o.FromEnv()
	if !IsRepoID(repo) {
		return nil, "", fmt.Errorf("%q is not a Hugging Face %s id", repo, typ)
	}
	if !validFile(file) || !validRevision(o.Revision) {
		return nil, "", fmt.Errorf("%q at %q is not a file of a repository", file, o.Revision)
	}
	if p, ok := cached(RepoDir(typ, repo, o), o.Revision, file); ok {
		f, err := os.Open(p)
		if err != nil {
			return nil, "", err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, "", err
		}
		return localFile{f, st.Size()}, Cached, nil
	}
	if o.Offline {
		return nil, "", fmt.Errorf("%s@%s: %w (%s) and HF_HUB_OFFLINE is set", repo, o.Revision, ErrNotCached, o.CacheDir)
	}
	r := &remoteFile{ctx: ctx, o: o, file: file, blocks: map[int64][]byte{}}
	if err := r.open(resolveURL(typ, repo, file, o)); err != nil {
		return nil, "", fmt.Errorf("%s@%s: %w", repo, o.Revision, err)
	}
	return r, Downloaded, nil
}

// resolveURL is the Hub's address of a file.
func resolveURL(typ RepoType, repo, file string, o Options) string {
	kind := ""
	if typ == Dataset {
		kind = "datasets/"
	}
	parts := strings.Split(file, "/")
	for i := range parts {
		parts[i] = url.PathEscape(parts[i])
	}
	return fmt.Sprintf("%s/%s%s/resolve/%s/%s", o.Endpoint, kind, repo, url.PathEscape(o.Revision), strings.Join(parts, "/"))
}

// localFile is a cached file.
type localFile struct {
	*os.File
	size int64
}

func (f localFile) Size() int64 { return f.size }

// remoteFile reads a file by range requests, keeping the last blocks read.
type remoteFile struct {
	ctx  context.Context
	o    Options
	file string
	// url is where the Hub sent the first request (its file store): the
	// later ones go there, with the token only if it is the Hub's origin.
	url   string
	token bool
	size  int64

	mu     sync.Mutex
	read   int64 // bytes fetched so far, bounded by o.MaxBytes
	blocks map[int64][]byte
	order  []int64 // block numbers, least recently used first
}

// open asks for the file's last bytes: the answer says its length and
// where its bytes are.
func (r *remoteFile) open(u string) error {
	resp, err := r.get(u, "bytes=-8", true)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		// The whole file: worth a download only when its length is known
		// and within the bound (a reader at offsets needs all of it).
		switch {
		case resp.ContentLength > r.o.MaxBytes:
			return &bounded.TooLargeError{What: r.file, Limit: r.o.MaxBytes, Size: resp.ContentLength}
		case resp.ContentLength < 0:
			return fmt.Errorf("%s sent %s without its length and answers no range request: a file read at offsets is read by ranges, or downloaded whole (at most %s) when its length is known",
				r.o.shown(), r.file, bounded.Bytes(r.o.MaxBytes))
		}
		return ErrNoRanges
	}
	_, _, size, err := contentRange(resp)
	if err != nil {
		return err
	}
	if size > r.o.MaxBytes {
		return &bounded.TooLargeError{What: r.file, Limit: r.o.MaxBytes, Size: size}
	}
	if size <= r.o.RangesAbove {
		return ErrNoRanges
	}
	r.size, r.url = size, resp.Request.URL.String()
	hub, herr := url.Parse(r.o.Endpoint)
	r.token = herr == nil && outbound.Origin(hub) == outbound.Origin(resp.Request.URL)
	return nil
}

// get sends one range request; a refusal is a *StatusError.
func (r *remoteFile) get(u, ranges string, token bool) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(r.ctx, r.o.Timeout)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		cancel()
		return nil, errors.New("HF_ENDPOINT: not a URL")
	}
	req.Header.Set("Range", ranges)
	if token && r.o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.o.Token)
	}
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("downloading from %s: %w", r.o.shown(), unwrap(err, r.o))
	}
	resp.Body = cancelOnClose{resp.Body, cancel}
	if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusPartialContent {
		return resp, nil
	}
	resp.Body.Close()
	if err := statusError(resp, r.o, Dataset, r.file); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%s answered HTTP %d to a range request", r.o.shown(), resp.StatusCode)
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	defer c.cancel()
	return c.ReadCloser.Close()
}

// contentRange reads a 206 answer's Content-Range: "bytes first-last/size".
func contentRange(resp *http.Response) (first, last, size int64, err error) {
	cr := resp.Header.Get("Content-Range")
	spec, ok := strings.CutPrefix(cr, "bytes ")
	rng, total, ok2 := strings.Cut(spec, "/")
	a, b, ok3 := strings.Cut(rng, "-")
	if ok && ok2 && ok3 {
		first, err1 := strconv.ParseInt(a, 10, 64)
		last, err2 := strconv.ParseInt(b, 10, 64)
		size, err3 := strconv.ParseInt(total, 10, 64)
		if err1 == nil && err2 == nil && err3 == nil && 0 <= first && first <= last && last < size {
			return first, last, size, nil
		}
	}
	return 0, 0, 0, fmt.Errorf("the Hub answered a range request with Content-Range %q", cr)
}

// Size is the file's length.
func (r *remoteFile) Size() int64 { return r.size }

// Close drops the blocks kept.
func (r *remoteFile) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.blocks, r.order = nil, nil
	return nil
}

// ReadAt reads len(p) bytes at off, from the blocks kept or fetched.
func (r *remoteFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("hub: negative offset")
	}
	n := 0
	for n < len(p) && off < r.size {
		b, err := r.block(off / rangeBlock)
		if err != nil {
			return n, err
		}
		k := copy(p[n:], b[off%rangeBlock:])
		n += k
		off += int64(k)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// block returns block i, fetching it when it is not kept.
func (r *remoteFile) block(i int64) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if b, ok := r.blocks[i]; ok {
		for j, k := range r.order {
			if k == i {
				r.order = append(append(r.order[:j:j], r.order[j+1:]...), i)
				break
			}
		}
		return b, nil
	}
	first := i * rangeBlock
	last := min(first+rangeBlock, r.size) - 1
	if r.read += last - first + 1; r.read > r.o.MaxBytes {
		return nil, &bounded.TooLargeError{What: "what is read of " + r.file, Limit: r.o.MaxBytes}
	}
	resp, err := r.get(r.url, fmt.Sprintf("bytes=%d-%d", first, last), r.token)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusPartialContent {
		resp.Body.Close()
		return nil, ErrNoRanges
	}
	if a, b, _, err := contentRange(resp); err != nil || a != first || b != last {
		resp.Body.Close()
		return nil, fmt.Errorf("the Hub answered bytes %d-%d of %s with others (%v)", first, last, r.file, err)
	}
	b, err := outbound.ReadBody(r.ctx, resp, last-first+1, r.file+"'s part")
	if err != nil {
		return nil, fmt.Errorf("downloading from %s: %w", r.o.shown(), unwrap(err, r.o))
	}
	if int64(len(b)) != last-first+1 {
		return nil, fmt.Errorf("downloading from %s: %s: the answer ended early", r.o.shown(), r.file)
	}
	if len(r.order) >= keptBlocks {
		delete(r.blocks, r.order[0])
		r.order = r.order[1:]
	}
	r.blocks[i] = b
	r.order = append(r.order, i)
	return b, nil
}
