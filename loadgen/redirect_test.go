package loadgen

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/surgebench/surge/internal/outbound"
	"github.com/surgebench/surge/loadgen/schedule"
)

// headerLog is a server that records the headers of every request it
// answers (with a good stream).
type headerLog struct {
	mu   sync.Mutex
	seen []http.Header
}

func (l *headerLog) answer(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	l.mu.Lock()
	l.seen = append(l.seen, r.Header.Clone())
	l.mu.Unlock()
	goodStream(w, 2)
}

func (l *headerLog) requests() []http.Header {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen
}

// TestRedirects: the target (one port) redirects to itself or to another
// server (another port, so another origin), which records what it got.
// No redirect is followed by default; followed, a credential never
// reaches the other origin, and a POST is never re-sent as a GET.
func TestRedirects(t *testing.T) {
	t.Parallel()
	var other headerLog
	otherSrv := httptest.NewServer(http.HandlerFunc(other.answer))
	defer otherSrv.Close()
	var target headerLog
	targetSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		switch first {
		case "cross307":
			http.Redirect(w, r, otherSrv.URL+"/v1/chat/completions", http.StatusTemporaryRedirect)
		case "cross308":
			http.Redirect(w, r, otherSrv.URL+"/v1/chat/completions", http.StatusPermanentRedirect)
		case "same307":
			http.Redirect(w, r, "/ok/v1/chat/completions", http.StatusTemporaryRedirect)
		case "cross301":
			http.Redirect(w, r, otherSrv.URL+"/v1/chat/completions", http.StatusMovedPermanently)
		case "same302":
			http.Redirect(w, r, "/ok/v1/chat/completions", http.StatusFound)
		case "same303":
			http.Redirect(w, r, "/ok/v1/chat/completions", http.StatusSeeOther)
		case "ok":
			target.answer(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	defer targetSrv.Close()
	creds := http.Header{
		"Authorization":  {"Bearer sk-secret-1"},
		"X-Api-Key":      {"secret-2"},
		"Api-Key":        {"secret-3"},
		"Cookie":         {"session=secret-4"},
		"X-Custom-Token": {"secret-5"},
		"X-Trace":        {"trace-7"},
	}
	cases := []struct {
		path   string
		follow bool
		// wantErr is the error a record must carry ("" none); wantMsg
		// what its message names.
		wantErr string
		wantMsg []string
		// atTarget and atOther are the requests each server must answer.
		atTarget, atOther int
	}{
		{"cross307", false, ErrRedirect, []string{"307", otherSrv.URL + "/v1/chat/completions", "not followed"}, 0, 0},
		{"same307", false, ErrRedirect, []string{"307", "Location /ok/v1/chat/completions"}, 0, 0},
		{"same302", false, ErrRedirect, []string{"302"}, 0, 0},
		{"same307", true, "", nil, 3, 0},
		{"cross307", true, "", nil, 0, 3},
		{"cross308", true, "", nil, 0, 3},
		{"cross301", true, ErrRedirect, []string{"301", otherSrv.URL, "POST as a GET"}, 0, 0},
		{"same302", true, ErrRedirect, []string{"302", "POST as a GET"}, 0, 0},
		{"same303", true, ErrRedirect, []string{"303", "POST as a GET"}, 0, 0},
	}
	for _, tc := range cases {
		other.mu.Lock()
		other.seen = nil
		other.mu.Unlock()
		target.mu.Lock()
		target.seen = nil
		target.mu.Unlock()
		var warnings []string
		var wmu sync.Mutex
		opts := []Option{WithHeaders(creds), WithWarning(func(m string) { wmu.Lock(); warnings = append(warnings, m); wmu.Unlock() })}
		if tc.follow {
			opts = append(opts, WithFollowRedirects())
		}
		_, sink := runOnce(t, targetSrv.URL+"/"+tc.path, chat(true), []Stage{{Limit: schedule.Constant(1), Count: 3}}, opts...)
		name := tc.path
		if tc.follow {
			name += " followed"
		}
		if len(sink.recs) != 3 {
			t.Fatalf("%s: %d records, want 3", name, len(sink.recs))
		}
		for _, r := range sink.recs {
			switch {
			case tc.wantErr == "" && r.Err != nil:
				t.Errorf("%s: error %+v, want none", name, r.Err)
			case tc.wantErr != "" && (r.Err == nil || r.Err.Type != tc.wantErr):
				t.Errorf("%s: error %+v, want type %s", name, r.Err, tc.wantErr)
			case tc.wantErr == "" && r.Text != " t0 t1":
				t.Errorf("%s: text %q, want the stream's", name, r.Text)
			}
			for _, m := range tc.wantMsg {
				if r.Err != nil && !strings.Contains(r.Err.Message, m) {
					t.Errorf("%s: message %q does not name %q", name, r.Err.Message, m)
				}
			}
		}
		atTarget, atOther := target.requests(), other.requests()
		if len(atTarget) != tc.atTarget || len(atOther) != tc.atOther {
			t.Errorf("%s: redirected requests answered %d at the target, %d at the other origin; want %d and %d",
				name, len(atTarget), len(atOther), tc.atTarget, tc.atOther)
		}
		// Same origin: every credential goes along.
		for _, h := range atTarget {
			for k, v := range creds {
				if h.Get(k) != v[0] {
					t.Errorf("%s: same-origin redirect carried %s=%q, want %q", name, k, h.Get(k), v[0])
				}
			}
		}
		// Another origin: not one credential, and the harmless header still.
		for _, h := range atOther {
			for _, k := range []string{"Authorization", "X-Api-Key", "Api-Key", "Cookie", "X-Custom-Token"} {
				if v := h.Get(k); v != "" {
					t.Errorf("%s: %s=%q reached another origin", name, k, v)
				}
			}
			for k, vs := range h {
				for _, v := range vs {
					if strings.Contains(v, "secret") {
						t.Errorf("%s: %s=%q reached another origin", name, k, v)
					}
				}
			}
			if h.Get("X-Trace") != "" {
				t.Errorf("%s: a header of the caller's reached another origin: every one stays with its origin", name)
			}
			if h.Get("Content-Type") != "application/json" {
				t.Errorf("%s: the body's Content-Type was dropped", name)
			}
		}
		if wantWarn := tc.atOther > 0; (len(warnings) == 1) != wantWarn || wantWarn && !strings.Contains(warnings[0], otherSrv.URL) {
			t.Errorf("%s: warnings %q, want one naming %s: %v", name, warnings, otherSrv.URL, wantWarn)
		}
	}
}

// TestRequestsCarrySurgesUserAgent: the transport writes surge/VERSION on
// every request (h1 writes it; no request is copied to carry it), and a
// caller's own User-Agent header wins.
func TestRequestsCarrySurgesUserAgent(t *testing.T) {
	t.Parallel()
	var log headerLog
	srv := httptest.NewServer(http.HandlerFunc(log.answer))
	defer srv.Close()
	runOnce(t, srv.URL, chat(true), []Stage{{Limit: schedule.Constant(1), Count: 2}})
	runOnce(t, srv.URL, chat(true), []Stage{{Limit: schedule.Constant(1), Count: 1}}, WithHeaders(http.Header{"User-Agent": {"mine/1"}}))
	seen := log.requests()
	if len(seen) != 3 {
		t.Fatalf("%d requests, want 3", len(seen))
	}
	for i, want := range []string{outbound.UserAgent(), outbound.UserAgent(), "mine/1"} {
		if got := seen[i].Get("User-Agent"); got != want {
			t.Errorf("request %d: User-Agent %q, want %q", i, got, want)
		}
	}
}
