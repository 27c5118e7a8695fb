package preflight

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen/endpoint"
)

func chat() *endpoint.Endpoint {
	return &endpoint.Endpoint{Kind: endpoint.Chat, Model: "m", Streaming: true}
}

// TestCheckAgainstTheMock: the mock honours max_completion_tokens and
// streams usage when asked; with IgnoreMaxCompletionTokens it acts as
// llama.cpp builds of early 2025 and Ollama do, and the check says to send
// max_tokens.
func TestCheckAgainstTheMock(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		cfg     mockserver.Config
		field   string
		ignored []string
		legacy  bool
	}{
		{"honours max_completion_tokens", mockserver.Config{}, "max_completion_tokens", nil, false},
		{"ignores max_completion_tokens", mockserver.Config{IgnoreMaxCompletionTokens: true}, "max_tokens", []string{"max_completion_tokens"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(mockserver.New(tc.cfg))
			defer ts.Close()
			r, err := Check(context.Background(), Target{URL: ts.URL + "/v1/chat/completions", Endpoint: chat()})
			if err != nil {
				t.Fatal(err)
			}
			if r.CapField != tc.field || !slices.Equal(r.Ignored, tc.ignored) || r.StreamUsage != Yes || r.Status != 200 || r.Model != "m" {
				t.Errorf("%+v: want cap field %q, ignored %v, usage in the stream, 200, model m", r, tc.field, tc.ignored)
			}
			if legacy, known := r.LegacyMaxTokens(); legacy != tc.legacy || !known {
				t.Errorf("LegacyMaxTokens = %v, %v; want %v, true", legacy, known, tc.legacy)
			}
			if r.Took <= 0 || r.Took > DefaultTimeout {
				t.Errorf("took %v", r.Took)
			}
			t.Log(r)
		})
	}
}

// TestCheckCannotConnect: a refused port is an error that says so.
func TestCheckCannotConnect(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, err = Check(context.Background(), Target{URL: "http://" + addr + "/v1/chat/completions", Endpoint: chat()})
	var pe *Error
	if !errors.As(err, &pe) || pe.Op != "connect" {
		t.Fatalf("got %v, want a connect *Error", err)
	}
	if want := "cannot connect to " + addr + " (connection refused)"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

// TestCheckEndpointAnswers: an endpoint the server does not serve, or one
// that wants credentials, is an error naming the request and the answer.
func TestCheckEndpointAnswers(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer ts.Close()
	_, err := Check(context.Background(), Target{URL: ts.URL + "/v2/chat", Endpoint: chat()})
	var pe *Error
	if !errors.As(err, &pe) || pe.Op != OpAnswer || pe.Status != 404 || !strings.Contains(err.Error(), "POST /v2/chat on ") ||
		!strings.HasSuffix(err.Error(), `answered 404 (application/json) "mock: no route for POST /v2/chat": not an OpenAI-compatible chat endpoint`) {
		t.Errorf("got %v, want a 404 naming the request, not the type's endpoint", err)
	}
	auth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, `{"error":{"message":"invalid api key","type":"authentication_error"}}`, http.StatusUnauthorized)
			return
		}
		mockserver.New(mockserver.Config{}).ServeHTTP(w, r)
	}))
	defer auth.Close()
	if _, err := Check(context.Background(), Target{URL: auth.URL + "/v1/chat/completions", Endpoint: chat()}); err == nil || !strings.Contains(err.Error(), "401 Unauthorized: invalid api key") {
		t.Errorf("without the key: %v", err)
	}
	h := http.Header{"Authorization": {"Bearer k"}}
	if _, err := Check(context.Background(), Target{URL: auth.URL + "/v1/chat/completions", Endpoint: chat(), Header: h}, Client(auth.Client())); err != nil {
		t.Errorf("with the key: %v", err)
	}
}

// TestCheckTimesOut: a server that never answers costs the timeout, and
// says so.
func TestCheckTimesOut(t *testing.T) {
	t.Parallel()
	block := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer ts.Close()
	defer close(block)
	start := time.Now()
	_, err := Check(context.Background(), Target{URL: ts.URL + "/v1/chat/completions", Endpoint: chat()}, Timeout(200*time.Millisecond))
	if err == nil || !strings.Contains(err.Error(), "no answer in time") {
		t.Errorf("got %v, want no answer in time", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %v for a 200 ms timeout", took)
	}
}

// fake is a chat server of a given family: it honours the cap fields in
// honour, streams 20 tokens otherwise, and answers GETs from gets.
type fake struct {
	honour      []string
	usage       bool
	fingerprint string
	server      string
	gets        map[string]string
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		b, ok := f.gets[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, b)
		return
	}
	var req map[string]any
	json.NewDecoder(r.Body).Decode(&req)
	n := 20
	for _, field := range f.honour {
		if v, ok := req[field].(float64); ok {
			n = int(v)
		}
	}
	if f.server != "" {
		w.Header().Set("Server", f.server)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for i := range n {
		fmt.Fprintf(w, `data: {"model":"served","system_fingerprint":%q,"choices":[{"index":0,"delta":{"content":"w%d "},"finish_reason":null}]}`+"\n\n", f.fingerprint, i)
	}
	io.WriteString(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`+"\n\n")
	if opts, _ := req["stream_options"].(map[string]any); f.usage && opts["include_usage"] == true {
		fmt.Fprintf(w, `data: {"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":%d}}`+"\n\n", n)
	}
	io.WriteString(w, "data: [DONE]\n\n")
}

// TestCheckFamilies: each family by its own sign.
func TestCheckFamilies(t *testing.T) {
	t.Parallel()
	both := []string{"max_tokens", "max_completion_tokens"}
	cases := []struct {
		name    string
		srv     *fake
		fam     Family
		from    string
		version string
		field   string
		usage   Tri
	}{
		{"ollama", &fake{honour: []string{"max_tokens"}, usage: true, fingerprint: "fp_ollama"}, Ollama, "its system_fingerprint fp_ollama", "", "max_tokens", Yes},
		{"llama.cpp header", &fake{honour: []string{"max_tokens"}, server: "llama.cpp"}, LlamaCpp, "its Server header", "", "max_tokens", No},
		{"vllm", &fake{honour: both, usage: true, gets: map[string]string{"/version": `{"version":"0.11.0"}`}}, VLLM, "GET /version", "0.11.0", "max_completion_tokens", Yes},
		{"sglang", &fake{honour: both, usage: true, gets: map[string]string{"/get_server_info": `{"model_path":"m","tp_size":1,"version":"0.5.4"}`, "/version": `{"version":"0.5.4"}`}}, SGLang, "GET /get_server_info", "0.5.4", "max_completion_tokens", Yes},
		{"tgi", &fake{honour: both, usage: true, gets: map[string]string{"/info": `{"model_id":"m","max_input_tokens":4095,"max_total_tokens":4096,"version":"3.3.6"}`}}, TGI, "GET /info", "3.3.6", "max_completion_tokens", Yes},
		{"llama.cpp props", &fake{honour: []string{"max_tokens"}, gets: map[string]string{"/props": `{"default_generation_settings":{"n_ctx":1024},"total_slots":4,"build_info":"b6000"}`}}, LlamaCpp, "GET /props", "b6000", "max_tokens", No},
		{"unknown, caps ignored", &fake{}, Unknown, "", "", "", NotKnown}, // both probes cut short
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(tc.srv)
			defer ts.Close()
			r, err := Check(context.Background(), Target{URL: ts.URL + "/v1/chat/completions", Endpoint: chat()})
			if err != nil {
				t.Fatal(err)
			}
			got := []any{r.Family, r.FamilyFrom, r.Version, r.CapField, r.StreamUsage, r.Model}
			want := []any{tc.fam, tc.from, tc.version, tc.field, tc.usage, "served"}
			if !slices.Equal(got, want) {
				t.Errorf("[family, from, version, cap field, usage, model] = %v, want %v (%s)", got, want, r)
			}
			if tc.field == "" && !slices.Equal(r.Ignored, []string{"max_completion_tokens", "max_tokens"}) {
				t.Errorf("ignored %v, want both fields", r.Ignored)
			}
		})
	}
}

// FuzzParseFamily: any answer to a family GET is read without a panic,
// and a family it names comes from that path's own.
func FuzzParseFamily(f *testing.F) {
	for _, p := range familyProbes {
		f.Add(p.path, []byte(`{"version":"1"}`))
	}
	f.Add("/props", []byte(`{"default_generation_settings":{},"total_slots":4}`))
	f.Add("/get_server_info", []byte(`{"model_path":"m","tp_size":2,"version":7}`))
	f.Fuzz(func(t *testing.T, path string, body []byte) {
		fam, _, ok := parseFamily(path, body)
		if !ok {
			return
		}
		i := slices.IndexFunc(familyProbes, func(p struct {
			path string
			fam  Family
		}) bool {
			return p.path == path
		})
		if i < 0 || familyProbes[i].fam != fam {
			t.Fatalf("%s named %q", path, fam)
		}
	})
}
