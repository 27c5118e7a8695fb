package remote

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/surgebench/surge/internal/outbound"
)

// HeaderTimeout bounds the wait for a source's answer to begin: a server
// that takes longer to start sending a file is not one a run should wait
// on (the body itself may take as long as its size needs).
const HeaderTimeout = 30 * time.Second

// client is the outbound policy's client for fetches: bounded dials,
// handshakes and answer headers; redirects followed within the policy
// (never from https to http, credentials dropped at another origin).
var client = outbound.NewClient(outbound.WithTransport(outbound.NewTransport(outbound.TransportOptions{ResponseHeaderTimeout: HeaderTimeout})))

// httpSource is a file at an http(s) address.
type httpSource struct {
	u *url.URL
	// bearer is a token sent to the source's own origin (the Hub's).
	bearer string
	file   string
}

func newHTTPSource(u *url.URL, bearer string, o Options) *httpSource {
	return &httpSource{u: u, bearer: bearer, file: baseName(u.Path)}
}

func (s *httpSource) name() string { return s.file }

func (s *httpSource) display() string { return redact(s.u.String()) }

// StatusError is a source's refusal: an HTTP status that is not the file.
type StatusError struct {
	What   string
	Status int
}

func (e *StatusError) Error() string {
	why := ""
	switch {
	case e.Status == http.StatusNotFound:
		why = ": no such file"
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		why = ": refused (credentials: HF_TOKEN for the Hub, the AWS credential chain for S3, a password in the URL)"
	case e.Status == http.StatusTooManyRequests || e.Status >= 500:
		why = ": the source is busy or failing; try again later"
	}
	return fmt.Sprintf("fetching %s: HTTP %d%s", e.What, e.Status, why)
}

// transient says a cached copy may stand in: the source failed rather
// than said no.
func (e *StatusError) transient() bool {
	return e.Status == http.StatusTooManyRequests || e.Status >= 500
}

func (s *httpSource) open(ctx context.Context, offset int64, cur validator, cached bool) (*answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.u.String(), nil)
	if err != nil {
		return nil, err
	}
	if s.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+s.bearer)
	}
	switch {
	case cached && cur.ETag != "":
		req.Header.Set("If-None-Match", cur.ETag)
	case cached && cur.LastModified != "":
		req.Header.Set("If-Modified-Since", cur.LastModified)
	case offset > 0:
		req.Header.Set("Range", "bytes="+strconv.FormatInt(offset, 10)+"-")
		if cur.ETag != "" && !strings.HasPrefix(cur.ETag, "W/") {
			req.Header.Set("If-Range", cur.ETag)
		} else {
			req.Header.Set("If-Range", cur.LastModified)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", s.display(), scrub(err, s.bearer))
	}
	a := &answer{Body: resp.Body, V: validator{ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified"), Size: -1}}
	switch resp.StatusCode {
	case http.StatusNotModified:
		resp.Body.Close()
		a.NotModified, a.Body = true, nil
		return a, nil
	case http.StatusOK:
		if resp.ContentLength >= 0 {
			a.V.Size = resp.ContentLength
		}
		return a, nil
	case http.StatusPartialContent:
		// Content-Range: bytes START-END/SIZE; only a range from where the
		// copy stopped continues it.
		start, total, ok := contentRange(resp.Header.Get("Content-Range"))
		if !ok || start != offset || offset == 0 {
			resp.Body.Close()
			return nil, fmt.Errorf("fetching %s: the source answered a range other than the one asked for", s.display())
		}
		a.Partial, a.V.Size = true, total
		if a.V.ETag == "" {
			a.V.ETag = cur.ETag
		}
		if a.V.LastModified == "" {
			a.V.LastModified = cur.LastModified
		}
		return a, nil
	case http.StatusRequestedRangeNotSatisfiable:
		resp.Body.Close()
		// The copy is not a prefix of the file any more: start over.
		return s.open(ctx, 0, validator{Size: -1}, false)
	}
	resp.Body.Close()
	return nil, &StatusError{What: s.display(), Status: resp.StatusCode}
}

// contentRange reads "bytes START-END/SIZE" (SIZE -1 when "*").
func contentRange(v string) (start, total int64, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(v), "bytes ")
	if !found {
		return 0, 0, false
	}
	span, all, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	from, _, found := strings.Cut(span, "-")
	start, err := strconv.ParseInt(from, 10, 64)
	if !found || err != nil || start < 0 {
		return 0, 0, false
	}
	total = -1
	if all != "*" {
		if total, err = strconv.ParseInt(all, 10, 64); err != nil || total < start {
			return 0, 0, false
		}
	}
	return start, total, true
}

// scrub keeps a token out of an error's text (a URL error quotes the URL,
// never the header; the token is dropped all the same should one carry
// it).
func scrub(err error, token string) error {
	if token == "" || !strings.Contains(err.Error(), token) {
		return err
	}
	return fmt.Errorf("%s", strings.ReplaceAll(err.Error(), token, "***"))
}

// hfSource reads hf://[datasets/|spaces/]ORG/NAME[@REVISION]/PATH into
// the Hub's resolve address.
func hfSource(rest string, o Options) (source, error) {
	ref := "hf://" + rest
	kind := ""
	switch {
	case strings.HasPrefix(rest, "datasets/"):
		kind, rest = "datasets/", strings.TrimPrefix(rest, "datasets/")
	case strings.HasPrefix(rest, "spaces/"):
		kind, rest = "spaces/", strings.TrimPrefix(rest, "spaces/")
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return nil, fmt.Errorf("%s: want hf://datasets/ORG/NAME[@REVISION]/PATH (or hf://ORG/NAME/PATH for a model repository)", ref)
	}
	name, rev, _ := strings.Cut(parts[1], "@")
	if rev == "" {
		rev = "main"
	}
	file := parts[2]
	for _, p := range append([]string{parts[0], name, rev}, strings.Split(file, "/")...) {
		if p == "" || p == "." || p == ".." || strings.ContainsAny(p, "\\?#%") {
			return nil, fmt.Errorf("%s: a part of the address is empty or not a name", ref)
		}
	}
	base, err := url.Parse(o.HFEndpoint)
	if err != nil || base.Host == "" || base.Scheme != "https" && base.Scheme != "http" {
		return nil, fmt.Errorf("HF_ENDPOINT %q is not an http(s) address", redact(o.HFEndpoint))
	}
	segs := []string{kind + url.PathEscape(parts[0]), url.PathEscape(name), "resolve", url.PathEscape(rev)}
	for _, p := range strings.Split(file, "/") {
		segs = append(segs, url.PathEscape(p))
	}
	u, err := url.Parse(strings.TrimRight(base.String(), "/") + "/" + strings.Join(segs, "/"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	return newHTTPSource(u, o.HFToken, o), nil
}
