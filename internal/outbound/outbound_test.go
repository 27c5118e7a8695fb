package outbound

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surgebench/surge/internal/bounded"
)

// seen records the headers each server was sent.
type seen struct {
	mu sync.Mutex
	h  []http.Header
}

func (s *seen) handler(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.h = append(s.h, r.Header.Clone())
		s.mu.Unlock()
		next(w, r)
	}
}

func (s *seen) last(t *testing.T) http.Header {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.h) == 0 {
		t.Fatal("the server was sent nothing")
	}
	return s.h[len(s.h)-1]
}

func ok(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{}`)) }

func secretRequest(t *testing.T, u string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer sk-secret")
	req.Header.Set("X-Custom-Token", "custom-secret")
	req.Header.Set("Accept", "application/json")
	return req
}

func TestRedirectToAnotherOriginDropsTheCallersHeaders(t *testing.T) {
	var other seen
	away := httptest.NewServer(other.handler(ok))
	defer away.Close()
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, away.URL+"/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer home.Close()

	var hops []Redirect
	resp, err := NewClient(OnRedirect(func(r Redirect) { hops = append(hops, r) })).Do(secretRequest(t, home.URL))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h := other.last(t)
	for _, k := range []string{"Authorization", "X-Custom-Token"} {
		if v := h.Get(k); v != "" {
			t.Errorf("%s reached another origin: %q", k, v)
		}
	}
	if h.Get("Accept") != "application/json" {
		t.Errorf("Accept was dropped: %v", h)
	}
	if !strings.HasPrefix(h.Get("User-Agent"), "surge/") {
		t.Errorf("User-Agent = %q", h.Get("User-Agent"))
	}
	if len(hops) != 1 || !hops[0].CrossOrigin || hops[0].Response == nil {
		t.Errorf("hops = %+v", hops)
	}

	// The user may opt in.
	resp, err = NewClient(KeepHeadersAcrossOrigins()).Do(secretRequest(t, home.URL))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if other.last(t).Get("X-Custom-Token") != "custom-secret" {
		t.Error("KeepHeadersAcrossOrigins dropped the header")
	}
}

func TestRedirectToAnotherPortIsAnotherOrigin(t *testing.T) {
	var other seen
	away := httptest.NewServer(other.handler(ok))
	defer away.Close()
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// same host, another port
		http.Redirect(w, r, away.URL, http.StatusFound)
	}))
	defer home.Close()
	resp, err := NewClient().Do(secretRequest(t, home.URL))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if v := other.last(t).Get("Authorization"); v != "" {
		t.Errorf("Authorization reached another port: %q", v)
	}
}

func TestRedirectWithinTheOriginKeepsHeaders(t *testing.T) {
	var s seen
	var srv *httptest.Server
	srv = httptest.NewServer(s.handler(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			http.Redirect(w, r, srv.URL+"/there", http.StatusTemporaryRedirect)
			return
		}
		ok(w, r)
	}))
	defer srv.Close()
	resp, err := NewClient().Do(secretRequest(t, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if s.last(t).Get("X-Custom-Token") != "custom-secret" {
		t.Error("a same-origin redirect dropped the caller's header")
	}
}

func TestRedirectFromHTTPSToHTTPIsRefused(t *testing.T) {
	var plain seen
	away := httptest.NewServer(plain.handler(ok))
	defer away.Close()
	home := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, away.URL, http.StatusTemporaryRedirect)
	}))
	defer home.Close()
	tr := NewTransport(TransportOptions{TLS: &tls.Config{RootCAs: home.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}})
	_, err := NewClient(WithTransport(tr), KeepHeadersAcrossOrigins()).Do(secretRequest(t, home.URL))
	if !IsDowngrade(err) {
		t.Fatalf("err = %v, want a refused downgrade", err)
	}
	plain.mu.Lock()
	defer plain.mu.Unlock()
	if len(plain.h) != 0 {
		t.Fatal("the request went out over plain http")
	}
}

func TestNoRedirectsAndMethodChangesAreHandedBack(t *testing.T) {
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/moved", http.StatusFound)
	}))
	defer home.Close()
	resp, err := NewClient(NoRedirects()).Do(secretRequest(t, home.URL))
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("NoRedirects: %v, %v", resp, err)
	}
	resp.Body.Close()
	post, _ := http.NewRequest(http.MethodPost, home.URL, strings.NewReader(`{"a":1}`))
	resp, err = NewClient().Do(post)
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("a POST turned into a GET was followed: %v, %v", resp, err)
	}
	resp.Body.Close()
}

func TestReadBodyIsBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5000000")
		_, _ = w.Write(make([]byte, 5000000))
	}))
	defer srv.Close()
	resp, err := NewClient().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ReadBody(context.Background(), resp, 1<<20, "the model list")
	var tl *bounded.TooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "the model list") {
		t.Fatalf("err = %v", err)
	}
}

func TestOrigin(t *testing.T) {
	for raw, want := range map[string]string{
		"http://Example.com/x":      "http://example.com:80",
		"https://example.com/x":     "https://example.com:443",
		"https://example.com:8443/": "https://example.com:8443",
		"http://[::1]:9000/v1":      "http://[::1]:9000",
	} {
		u, _ := url.Parse(raw)
		if got := Origin(u); got != want {
			t.Errorf("Origin(%s) = %s, want %s", raw, got, want)
		}
	}
}

func TestWithTimeoutBoundsTheExchange(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	_, err := NewClient(WithTimeout(50 * time.Millisecond)).Get(srv.URL)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("err = %v, want a timeout", err)
	}
}

// agentWriter is a transport that writes the User-Agent itself.
type agentWriter struct{ http.RoundTripper }

func (agentWriter) WritesUserAgent() bool { return true }

// TestUserAgent: a request gets surge's user agent unless it names one;
// a transport that writes it itself is used as it is (no request copied).
func TestUserAgent(t *testing.T) {
	var s seen
	srv := httptest.NewServer(s.handler(ok))
	defer srv.Close()
	for _, tc := range []struct {
		set, want string
	}{{"", UserAgent()}, {"mine/1", "mine/1"}} {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
		if tc.set != "" {
			req.Header.Set("User-Agent", tc.set)
		}
		resp, err := NewClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := s.last(t).Get("User-Agent"); got != tc.want {
			t.Errorf("User-Agent %q, want %q", got, tc.want)
		}
	}
	rt := agentWriter{http.DefaultTransport}
	if c := NewClient(WithTransport(rt)); c.Transport != http.RoundTripper(rt) {
		t.Errorf("a transport that writes the user agent was wrapped: %T", c.Transport)
	}
}

// TestObserveRedirects: a request's context hook learns of each
// redirect it follows, with the answer that asked for it.
func TestObserveRedirects(t *testing.T) {
	away := httptest.NewServer(http.HandlerFunc(ok))
	defer away.Close()
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Repo-Commit", "abc")
		http.Redirect(w, r, away.URL, http.StatusFound)
	}))
	defer home.Close()
	var hops []Redirect
	ctx := ObserveRedirects(context.Background(), func(r Redirect) { hops = append(hops, r) })
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, home.URL, nil)
	resp, err := NewClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(hops) != 1 || !hops[0].CrossOrigin || hops[0].Response.Header.Get("X-Repo-Commit") != "abc" {
		t.Errorf("hops %+v", hops)
	}
}
