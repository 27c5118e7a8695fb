package remote

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeS3 speaks enough of S3 for GetObject and HeadObject, path-style:
// /BUCKET/KEY, an ETag, Range with If-Match, S3's XML errors. It keeps
// each request's Authorization header; cut, when set, closes the next
// full answer's connection after that many bytes.
type fakeS3 struct {
	mu      sync.Mutex
	objects map[string][]byte
	auth    []string
	methods []string
	cut     int
}

func (f *fakeS3) put(key, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.objects == nil {
		f.objects = map[string][]byte{}
	}
	f.objects[key] = []byte(body)
}

func s3Error(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message><RequestId>r1</RequestId></Error>`, code, code)
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	body, ok := f.objects[strings.TrimPrefix(r.URL.Path, "/")]
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.methods = append(f.methods, r.Method+" "+r.Header.Get("Range"))
	cut := f.cut
	if r.Method == http.MethodGet && r.Header.Get("Range") == "" {
		f.cut = 0
	}
	f.mu.Unlock()
	if !ok {
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		s3Error(w, http.StatusNotFound, "NoSuchKey")
		return
	}
	sum := md5.Sum(body)
	etag := `"` + hex.EncodeToString(sum[:]) + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Last-Modified", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Format(http.TimeFormat))
	if m := r.Header.Get("If-Match"); m != "" && m != etag {
		s3Error(w, http.StatusPreconditionFailed, "PreconditionFailed")
		return
	}
	from := 0
	if rg := r.Header.Get("Range"); rg != "" {
		from, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-"))
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", from, len(body)-1, len(body)))
		w.Header().Set("Content-Length", strconv.Itoa(len(body)-from))
		w.WriteHeader(http.StatusPartialContent)
	} else {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	if r.Method == http.MethodHead {
		return
	}
	if cut > 0 && from == 0 {
		_, _ = w.Write(body[:cut])
		w.(http.Flusher).Flush()
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
		return
	}
	_, _ = w.Write(body[from:])
}

// s3Env gives the SDK's credential chain keys from the environment and
// nothing else (no shared files, no instance metadata).
func s3Env(t *testing.T, withKeys bool) {
	for k, v := range map[string]string{
		"AWS_CONFIG_FILE": "/nonexistent/config", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/credentials",
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_REGION": "us-west-2", "AWS_PROFILE": "",
		"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "",
		"AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "",
	} {
		t.Setenv(k, v)
	}
	if withKeys {
		t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "s3cr3t-key")
	}
}

// TestS3Fetch: an s3:// object through the AWS SDK against an
// S3-compatible fake on loopback (the endpoint override): signed with the
// chain's keys, cached (a HEAD finds it unchanged), resumed after a cut
// (a ranged GET with If-Match), a missing key an error naming it.
func TestS3Fetch(t *testing.T) {
	s3Env(t, true)
	fake := &fakeS3{cut: 700}
	fake.put("bench/traces/trace.jsonl", rows(200))
	srv := httptest.NewServer(fake)
	defer srv.Close()
	o := options(t)
	o.S3Endpoint = srv.URL
	ctx := context.Background()
	ref := "s3://bench/traces/trace.jsonl"

	if _, err := Fetch(ctx, ref, o); err == nil || !strings.Contains(err.Error(), "the next run resumes it") {
		t.Fatalf("cut: %v", err)
	}
	r, err := Fetch(ctx, ref, o)
	if err != nil || r.How != Resumed || read(t, r.Path) != rows(200) || !strings.HasSuffix(r.Path, "trace.jsonl") {
		t.Fatalf("resumed: %+v %v", r, err)
	}
	r, err = Fetch(ctx, ref, o)
	if err != nil || r.How != Cached {
		t.Fatalf("again: %+v %v", r, err)
	}
	fake.put("bench/traces/trace.jsonl", rows(210))
	if r, err = Fetch(ctx, ref, o); err != nil || r.How != Downloaded || read(t, r.Path) != rows(210) {
		t.Fatalf("changed: %+v %v", r, err)
	}
	fake.mu.Lock()
	methods := strings.Join(fake.methods, ",")
	for _, a := range fake.auth {
		if !strings.HasPrefix(a, "AWS4-HMAC-SHA256 Credential=AKIDTEST/") || strings.Contains(a, "s3cr3t-key") {
			t.Errorf("Authorization %q: want SigV4 with the chain's key id", a)
		}
	}
	fake.mu.Unlock()
	if !strings.Contains(methods, "GET bytes=700-") || !strings.Contains(methods, "HEAD ") {
		t.Errorf("requests %s: want a ranged GET from 700 and a HEAD", methods)
	}
	_, err = Fetch(ctx, "s3://bench/missing.jsonl", o)
	var se *StatusError
	if !errors.As(err, &se) || se.Status != http.StatusNotFound || !strings.Contains(err.Error(), "s3://bench/missing.jsonl") {
		t.Errorf("missing: %v", err)
	}
	if _, err := Fetch(ctx, "s3://bench/", o); err == nil || !strings.Contains(err.Error(), "BUCKET/KEY") {
		t.Errorf("no key: %v", err)
	}
}

// TestS3Anonymous: without credentials anywhere in the chain, the request
// goes unsigned (a public bucket).
func TestS3Anonymous(t *testing.T) {
	s3Env(t, false)
	fake := &fakeS3{}
	fake.put("public/data.jsonl", rows(4))
	srv := httptest.NewServer(fake)
	defer srv.Close()
	o := options(t)
	o.Getenv = func(k string) string {
		if k == "AWS_ENDPOINT_URL_S3" {
			return srv.URL
		}
		return ""
	}
	r, err := Fetch(context.Background(), "s3://public/data.jsonl", o)
	if err != nil || read(t, r.Path) != rows(4) {
		t.Fatalf("%+v %v", r, err)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	for _, a := range fake.auth {
		if a != "" {
			t.Errorf("Authorization %q without credentials", a)
		}
	}
}
