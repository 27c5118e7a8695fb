package controlport

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/time/rate"

	"github.com/surgebench/surge/loadgen"
)

// TestProtect: each check refuses what it must and lets the rest through
// to the controls (whose answer is 200).
func TestProtect(t *testing.T) {
	t.Parallel()
	ctl, _ := loadgen.NewController(loadgen.ControlConcurrency, 4)
	token := NewToken()
	if len(token) < 20 || NewToken() == token {
		t.Fatalf("token %q: too short, or not random", token)
	}
	// The handler is reached through a real listener whose address it
	// guards; the limiter never refuses here.
	var bound string
	ts := httptest.NewUnstartedServer(nil)
	bound = ts.Listener.Addr().String()
	ts.Config.Handler = Protect(Handler(ctl, nil), bound, token, rate.NewLimiter(rate.Inf, 1))
	ts.Start()
	defer ts.Close()
	_, port, _ := strings.Cut(bound, ":")
	cases := []struct {
		name    string
		path    string
		headers map[string]string
		code    int
	}{
		{"no token", "/control", nil, 401},
		{"wrong token", "/control", map[string]string{"Authorization": "Bearer " + token + "x"}, 401},
		{"token as a bare Authorization", "/control", map[string]string{"Authorization": token}, 200},
		{"bearer token", "/control", map[string]string{"Authorization": "Bearer " + token}, 200},
		{"token header", "/control", map[string]string{"X-Surge-Token": token}, 200},
		{"token in the query", "/control?token=" + token, nil, 200},
		{"wrong token in the query", "/control?token=abc", nil, 401},
		{"any Origin", "/control", map[string]string{"X-Surge-Token": token, "Origin": "http://evil.example"}, 403},
		{"a null Origin", "/control", map[string]string{"X-Surge-Token": token, "Origin": "null"}, 403},
		{"a rebound name", "/control", map[string]string{"X-Surge-Token": token, "Host": "evil.example:" + port}, 403},
		{"another port", "/control", map[string]string{"X-Surge-Token": token, "Host": "127.0.0.1:1"}, 403},
		{"no port", "/control", map[string]string{"X-Surge-Token": token, "Host": "127.0.0.1"}, 403},
		{"localhost", "/control", map[string]string{"X-Surge-Token": token, "Host": "localhost:" + port}, 200},
		{"[::1]", "/control", map[string]string{"X-Surge-Token": token, "Host": "[::1]:" + port}, 200},
		{"another IP", "/control", map[string]string{"X-Surge-Token": token, "Host": "10.0.0.1:" + port}, 403},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+tc.path, nil)
		for k, v := range tc.headers {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.code)
		}
	}
	// A refused change changes nothing.
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/control/set?value=1000000", strings.NewReader("x"))
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("Origin", "http://evil.example")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	if v := ctl.State().Value; v != 4 {
		t.Errorf("concurrency %v after a refused cross-origin POST, want 4", v)
	}
}

// TestProtectRateLimit: past the limiter's burst, requests get 429 until
// it refills (here: never), valid token or not.
func TestProtectRateLimit(t *testing.T) {
	t.Parallel()
	ctl, _ := loadgen.NewController(loadgen.ControlConcurrency, 4)
	ts := httptest.NewUnstartedServer(nil)
	ts.Config.Handler = Protect(Handler(ctl, nil), ts.Listener.Addr().String(), "tok", rate.NewLimiter(0, 3))
	ts.Start()
	defer ts.Close()
	var codes []int
	for range 5 {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/control?token=tok", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
	}
	want := []int{200, 200, 200, 429, 429}
	for i := range want {
		if codes[i] != want[i] {
			t.Fatalf("statuses %v, want %v", codes, want)
		}
	}
}

func TestHostAllowed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		host, bound string
		ok          bool
	}{
		{"127.0.0.1:9090", "127.0.0.1:9090", true},
		{"LOCALHOST:9090", "127.0.0.1:9090", true},
		{"[::1]:9090", "[::1]:9090", true},
		{"192.168.1.5:9090", "0.0.0.0:9090", true},
		{"[fe80::1]:9090", "[::]:9090", true},
		{"myhost:9090", "0.0.0.0:9090", false},
		{"192.168.1.5:9090", "127.0.0.1:9090", false},
		{"127.0.0.1:9091", "127.0.0.1:9090", false},
		{"", "127.0.0.1:9090", false},
		{"127.0.0.1", "127.0.0.1:80", true},
		{"127.0.0.1:9090", "bad", false},
	} {
		if got := hostAllowed(tc.host, tc.bound); got != tc.ok {
			t.Errorf("hostAllowed(%q, %q) = %v, want %v", tc.host, tc.bound, got, tc.ok)
		}
	}
}

func TestExposed(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"9090": false, ":9090": false, "127.0.0.1:9090": false, "[::1]:9090": false, "localhost:9090": false,
		"127.0.0.2:9090": false, "0.0.0.0:9090": true, "[::]:9090": true, "192.168.1.5:9090": true, "myhost:9090": true,
		"bad": false,
	} {
		if got := Exposed(addr); got != want {
			t.Errorf("Exposed(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestListenWithToken: the port Listen opens asks for the token it was
// given, and says which.
func TestListenWithToken(t *testing.T) {
	t.Parallel()
	ctl, _ := loadgen.NewController(loadgen.ControlRequestRate, 5)
	token := NewToken()
	s, err := Listen(context.Background(), "127.0.0.1:0", ctl, nil, WithToken(token), WithRateLimit(rate.NewLimiter(rate.Inf, 1)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Token() != token {
		t.Fatalf("Token() = %q, want the one given", s.Token())
	}
	for _, tc := range []struct {
		url  string
		code int
	}{{s.URL() + "/control/double", 401}, {s.URL() + "/control/double?token=" + token, 200}} {
		resp, err := http.Post(tc.url, "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("POST %s: %d, want %d", strings.ReplaceAll(tc.url, token, "<token>"), resp.StatusCode, tc.code)
		}
	}
	if v := ctl.State().Value; v != 10 {
		t.Errorf("rate %v, want 10 (one double accepted)", v)
	}
}

// FuzzHostAllowed: any Host header is judged without a panic, and one
// let through names the bound port and no name but a loopback one.
func FuzzHostAllowed(f *testing.F) {
	for _, s := range []string{"127.0.0.1:9090", "localhost:9090", "[::1]:9090", "evil.example:9090", "", "[", "::1", "127.0.0.1:", "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		for _, bound := range []string{"127.0.0.1:9090", "0.0.0.0:9090"} {
			if !hostAllowed(host, bound) {
				continue
			}
			h, p, err := net.SplitHostPort(host)
			if err != nil || p != "9090" {
				t.Fatalf("Host %q let through to %s", host, bound)
			}
			if net.ParseIP(h) == nil && !strings.EqualFold(h, "localhost") {
				t.Fatalf("name %q let through to %s", h, bound)
			}
		}
	})
}
