package controlport

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/surgebench/surge/loadgen"
)

func TestControls(t *testing.T) {
	t.Parallel()
	ctl, err := loadgen.NewController(loadgen.ControlConcurrency, 4, loadgen.WithControlStep(2))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(Handler(ctl, func() any { return map[string]string{"probe": "p1"} }))
	defer ts.Close()
	steps := []struct {
		method, path, body string
		code               int
		value              float64
		paused             bool
		errType            string
	}{
		{"GET", "/control", "", 200, 4, false, ""},
		{"POST", "/control/step", "", 200, 6, false, ""},
		{"POST", "/control/step", `{"steps": -2}`, 200, 2, false, ""},
		{"POST", "/control/double", "", 200, 4, false, ""},
		{"POST", "/control/halve", "", 200, 2, false, ""},
		{"POST", "/control/set", `{"value": 12}`, 200, 12, false, ""},
		{"POST", "/control/set?value=10", "", 200, 10, false, ""},
		{"POST", "/control/pause", "", 200, 10, true, ""},
		{"POST", "/control/resume", "", 200, 10, false, ""},
		{"POST", "/control/set", `{"value": 2.5}`, 422, 10, false, "invalid_value"},
		{"POST", "/control/set", `{"value": "x"}`, 400, 0, false, "invalid_request"},
		{"POST", "/control/set", `{"valeu": 3}`, 400, 0, false, "invalid_request"},
		{"POST", "/control/set", ``, 400, 0, false, "invalid_request"},
		{"POST", "/control/set", `[1]`, 400, 0, false, "invalid_request"},
		{"POST", "/control/set?value=abc", "", 400, 0, false, "invalid_request"},
		{"POST", "/control/step", `{"steps": 1.5}`, 400, 0, false, "invalid_request"},
		{"GET", "/control/pause", "", 405, 0, false, "method_not_allowed"},
		{"POST", "/control", "", 405, 0, false, "method_not_allowed"},
		{"POST", "/control/explode", "", 404, 0, false, "not_found"},
	}
	for _, s := range steps {
		req, _ := http.NewRequest(s.method, ts.URL+s.path, strings.NewReader(s.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != s.code {
			t.Errorf("%s %s %s: status %d, want %d (%s)", s.method, s.path, s.body, resp.StatusCode, s.code, body)
			continue
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s %s: Content-Type %q", s.method, s.path, ct)
		}
		if s.code != 200 {
			var e struct {
				Error struct{ Type, Message string }
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Error.Type != s.errType || e.Error.Message == "" {
				t.Errorf("%s %s %s: error body %s, want type %s", s.method, s.path, s.body, body, s.errType)
			}
			continue
		}
		var st struct {
			loadgen.ControlState
			Status map[string]string
		}
		if err := json.Unmarshal(body, &st); err != nil {
			t.Fatalf("%s %s: %v in %s", s.method, s.path, err, body)
		}
		if st.Value != s.value || st.Paused != s.paused || st.Mode != loadgen.ControlConcurrency || st.Status["probe"] != "p1" {
			t.Errorf("%s %s %s: state %s, want value %v paused %v", s.method, s.path, s.body, body, s.value, s.paused)
		}
	}
	ctl.Finish()
	resp, err := http.Post(ts.URL+"/control/double", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("change after the session ended: %d, want 409", resp.StatusCode)
	}
}

func TestListenAddr(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"9090":           "127.0.0.1:9090",
		":9090":          "127.0.0.1:9090",
		"127.0.0.1:0":    "127.0.0.1:0",
		"0.0.0.0:9090":   "0.0.0.0:9090",
		"[::1]:9090":     "[::1]:9090",
		"localhost:9090": "localhost:9090",
	} {
		if got, err := ListenAddr(in); err != nil || got != want {
			t.Errorf("ListenAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "host", "1.2.3.4:port", ":99999"} {
		if _, err := ListenAddr(bad); err == nil || !strings.Contains(err.Error(), "--control-addr") {
			t.Errorf("ListenAddr(%q): %v, want an error naming --control-addr", bad, err)
		}
	}
}

func TestListenServesLoopback(t *testing.T) {
	t.Parallel()
	ctl, _ := loadgen.NewController(loadgen.ControlRequestRate, 5)
	s, err := Listen(context.Background(), ":0", ctl, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Errorf("URL %s, want loopback", s.URL())
	}
	resp, err := http.Post(s.URL()+"/control/double", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ctl.State().Value != 10 {
		t.Errorf("rate %v after double, want 10", ctl.State().Value)
	}
}

func FuzzParseField(f *testing.F) {
	for _, s := range []string{``, `{"value": 3}`, `{"value": "3"}`, `{"x":1}`, `[1]`, `{"value": 1e400}`, `null`, `{"value": null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		v, err := ParseField(body, "value", -1)
		if err == nil && v != v {
			t.Fatalf("NaN accepted from %q", body)
		}
	})
}
