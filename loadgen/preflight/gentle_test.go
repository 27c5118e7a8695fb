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
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/internal/sanitize"
	"github.com/surgebench/surge/loadgen/endpoint"
)

// TestCheckOpensNoIdleConnection: every connection the check opens
// carries a request (a serial server such as distributed-llama exits on
// one that does not), the family GETs' included.
func TestCheckOpensNoIdleConnection(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	active := map[net.Conn]bool{}
	ts := httptest.NewUnstartedServer(mockserver.New(mockserver.Config{}))
	ts.Config.ConnState = func(c net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case http.StateNew:
			active[c] = false
		case http.StateActive:
			active[c] = true
		}
	}
	ts.Start()
	r, err := Check(context.Background(), Target{URL: ts.URL + "/v1/chat/completions", Endpoint: chat()})
	if err != nil {
		t.Fatal(err)
	}
	ts.Close()
	mu.Lock()
	defer mu.Unlock()
	idle := 0
	for _, a := range active {
		if !a {
			idle++
		}
	}
	if idle > 0 || len(active) == 0 {
		t.Errorf("%d of %d connections carried no request (%s)", idle, len(active), r)
	}
}

// busyFirst answers its first n POSTs 503 (with Retry-After when given),
// then hands requests to next.
type busyFirst struct {
	n          int32
	retryAfter string
	seen       atomic.Int32
	next       http.Handler
}

func (b *busyFirst) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && b.seen.Add(1) <= b.n {
		if b.retryAfter != "" {
			w.Header().Set("Retry-After", b.retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"error":{"message":"server busy","type":"unavailable"}}`)
		return
	}
	b.next.ServeHTTP(w, r)
}

// TestCheckWaitsOutABusyServer: 503 answers are asked again after a
// pause, and the check still learns the dialect; the line says how busy.
func TestCheckWaitsOutABusyServer(t *testing.T) {
	t.Parallel()
	for _, retryAfter := range []string{"", "0"} {
		b := &busyFirst{n: 2, retryAfter: retryAfter, next: mockserver.New(mockserver.Config{IgnoreMaxCompletionTokens: true})}
		ts := httptest.NewServer(b)
		r, err := Check(context.Background(), Target{URL: ts.URL + "/v1/chat/completions", Endpoint: chat()})
		ts.Close()
		if err != nil {
			t.Fatalf("Retry-After %q: %v", retryAfter, err)
		}
		if r.Busy != 2 || r.CapField != "max_tokens" || !strings.Contains(r.String(), "busy twice before it answered") {
			t.Errorf("Retry-After %q: busy %d, cap field %q (%s); want 2, max_tokens", retryAfter, r.Busy, r.CapField, r)
		}
	}
}

// serial is a server that generates one answer at a time, as koboldcpp
// (--multiuser 0) does: it answers 503 while a generation runs, and a
// generation runs to its end (tokens×gap) though its client has gone. It
// honours max_tokens and ignores max_completion_tokens.
type serial struct {
	tokens int
	gap    time.Duration
	busy   atomic.Bool
}

func (s *serial) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	if !s.busy.CompareAndSwap(false, true) {
		http.Error(w, `{"error":{"message":"Server is busy","type":"service_unavailable"}}`, http.StatusServiceUnavailable)
		return
	}
	defer s.busy.Store(false)
	var req map[string]any
	json.NewDecoder(r.Body).Decode(&req)
	n := s.tokens
	if v, ok := req["max_tokens"].(float64); ok {
		n = int(v)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for i := range n {
		// A write to a client that went away fails; the generation goes on.
		fmt.Fprintf(w, `data: {"model":"m","choices":[{"index":0,"delta":{"content":"w%d "},"finish_reason":null}]}`+"\n\n", i)
		w.(http.Flusher).Flush()
		time.Sleep(s.gap)
	}
	io.WriteString(w, `data: {"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`+"\n\ndata: [DONE]\n\n")
}

// TestCheckLearnsASerialServersDialect: the first probe, cut short once
// the server ran past max_completion_tokens, leaves the server busy for a
// while; the second (max_tokens) waits it out and learns the field.
func TestCheckLearnsASerialServersDialect(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(&serial{tokens: 40, gap: 15 * time.Millisecond})
	defer ts.Close()
	r, err := Check(context.Background(), Target{URL: ts.URL + "/v1/chat/completions", Endpoint: chat()})
	if err != nil {
		t.Fatal(err)
	}
	if legacy, known := r.LegacyMaxTokens(); !legacy || !known || !slices.Equal(r.Ignored, []string{"max_completion_tokens"}) || r.Busy == 0 {
		t.Errorf("%s: want max_tokens learnt after busy answers", r)
	}
}

// TestCheckBusyPastItsTime: a server busy for longer than the check's
// time is an error that says so, within that time.
func TestCheckBusyPastItsTime(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(&busyFirst{n: 1 << 30, next: http.NotFoundHandler()})
	defer ts.Close()
	start := time.Now()
	_, err := Check(context.Background(), Target{URL: ts.URL + "/v1/chat/completions", Endpoint: chat()}, Timeout(time.Second))
	var pe *Error
	if !errors.As(err, &pe) || pe.Op != OpRequest || pe.Status != 503 || pe.Busy == 0 || !strings.Contains(err.Error(), "busy answers waited out): server busy") {
		t.Errorf("got %v, want the 503 after busy answers waited out", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v for a 1 s check", took)
	}
}

// pythonHTTPServer answers as python3 -m http.server does: a page for GET,
// 501 and an HTML error page for POST.
var pythonHTTPServer = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html;charset=utf-8")
	if r.Method != http.MethodGet {
		w.WriteHeader(http.StatusNotImplemented)
		io.WriteString(w, "<!DOCTYPE HTML>\n<html lang=\"en\">\n    <head>\n        <meta charset=\"utf-8\">\n        <title>Error response</title>\n    </head>\n    <body>\n        <h1>Error response</h1>\n        <p>Error code: 501</p>\n        <p>Message: Unsupported method ('POST').</p>\n    </body>\n</html>\n")
		return
	}
	io.WriteString(w, "<!DOCTYPE HTML>\n<html><body><ul><li>a.txt</li></ul></body></html>\n")
})

// TestCheckForeignAnswers: an endpoint that answers, but not as the
// type's does, is an OpAnswer error of one line with the status, content
// type and the answer's start; a server's own error stays OpRequest.
func TestCheckForeignAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		h       http.HandlerFunc
		op      string
		status  int
		snippet string
	}{
		{"python http.server", pythonHTTPServer, OpAnswer, 501, `(text/html;charset=utf-8) "<!DOCTYPE HTML> <html lang="en"> <head> <meta charset="utf-8"> <title>Error resp…"`},
		{"a page", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html>\r\n<body>\x1b[31mhello</body></html>")
		}, OpAnswer, 200, `(text/html) "<html> <body>\x1b[31mhello</body></html>"`},
		{"plain text", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }, OpAnswer, 200, `(text/plain; charset=utf-8) "ok"`},
		{"405 JSON", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"detail":"Method Not Allowed"}`, http.StatusMethodNotAllowed)
		}, OpAnswer, 405, `"Method Not Allowed"`},
		{"a stream of text", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: hello\n\ndata: [DONE]\n\n")
		}, OpAnswer, 200, `(text/event-stream) "hello"`},
		{"no content type", func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Content-Type"] = nil
			w.WriteHeader(http.StatusNotFound)
		}, OpAnswer, 404, `(no content type) ""`},
		{"an answer past the bound", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"choices":[{"message":{"content":"`+strings.Repeat("a", 2<<20)+`"}}]}`)
		}, OpAnswer, 200, `(application/json) (its answer is over the 1 MiB limit)`},
		{"an event past the bound", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: "+strings.Repeat("a", 2<<20)+"\n\n")
		}, OpAnswer, 200, `(text/event-stream) (an event of its stream is over the 1 MiB limit)`},
		{"500 page", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "<html><title>502 Bad Gateway</title></html>")
		}, OpRequest, 502, "answered 502 Bad Gateway: <html><title>502 Bad Gateway</title></html>"},
		{"400 JSON", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":{"message":"model m not found","type":"invalid_request_error"}}`, http.StatusBadRequest)
		}, OpRequest, 400, "answered 400 Bad Request: model m not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(tc.h)
			defer ts.Close()
			_, err := Check(context.Background(), Target{URL: ts.URL + "/v1/chat/completions", Endpoint: chat()})
			var pe *Error
			if !errors.As(err, &pe) || pe.Op != tc.op || pe.Status != tc.status {
				t.Fatalf("got %#v, want %s %d", err, tc.op, tc.status)
			}
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r\x1b") || !strings.Contains(msg, tc.snippet) {
				t.Errorf("%q: want one line with %s", msg, tc.snippet)
			}
			if tc.op == OpAnswer && !strings.HasSuffix(msg, ": not an OpenAI-compatible chat endpoint") {
				t.Errorf("%q does not say it is not the type's endpoint", msg)
			}
		})
	}
}

// TestCheckRankings: each rankings type's probe carries passages (the
// run's when given) and passes against the mock.
func TestCheckRankings(t *testing.T) {
	t.Parallel()
	for _, k := range []endpoint.Kind{endpoint.CohereRankings, endpoint.HFTEIRankings, endpoint.NIMRankings} {
		for _, passages := range [][]string{nil, {"the run's first passage", "and its second"}} {
			var body []byte
			var mu sync.Mutex
			mock := mockserver.New(mockserver.Config{})
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					b, _ := io.ReadAll(r.Body)
					mu.Lock()
					body = b
					mu.Unlock()
					r.Body = io.NopCloser(strings.NewReader(string(b)))
				}
				mock.ServeHTTP(w, r)
			}))
			ep := &endpoint.Endpoint{Kind: k, Model: "m"}
			var turn *datasets.Turn
			if passages != nil {
				turn = &datasets.Turn{Text: "the run's query", Passages: passages}
			}
			r, err := Check(context.Background(), Target{URL: ts.URL + ep.Path(), Endpoint: ep, Turn: turn})
			ts.Close()
			if err != nil {
				t.Fatalf("%s: %v", k, err)
			}
			want := passages
			if want == nil {
				want = probePassages
			}
			mu.Lock()
			for _, p := range want {
				if !strings.Contains(string(body), p) {
					t.Errorf("%s: the probe %s does not carry %q", k, body, p)
				}
			}
			mu.Unlock()
			if r.String() != r.Addr+": answers as a "+string(k)+" endpoint" {
				t.Errorf("%s: %s", k, r)
			}
		}
	}
}

// TestCheckWordsEachType: a completions probe speaks of max_tokens, the
// only cap field that API has, and never switches chat's field.
func TestCheckWordsEachType(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer ts.Close()
	ep := &endpoint.Endpoint{Kind: endpoint.Completions, Model: "m", Streaming: true}
	r, err := Check(context.Background(), Target{URL: ts.URL + ep.Path(), Endpoint: ep})
	if err != nil {
		t.Fatal(err)
	}
	if _, known := r.LegacyMaxTokens(); known || r.CapField != "max_tokens" || strings.Contains(r.String(), "max_completion_tokens") {
		t.Errorf("%s: cap field %q, legacy known %v; want max_tokens and nothing of chat's field", r, r.CapField, known)
	}
}

// FuzzPrintable: whatever a server sends, the line shown is valid UTF-8
// with no control or bidirectional characters (the sanitiser escapes
// them), from at most n characters of it and the cut's mark.
func FuzzPrintable(f *testing.F) {
	f.Add("<html>\r\n\t<body>\x1b[2J</body>", 80)
	f.Add("\u202eevil\u2066", 3)
	f.Add("\xff\xfeabc", 1)
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = max(n%200, 0)
		out := printable(s, n)
		if !utf8.ValidString(out) {
			t.Fatalf("%q: invalid UTF-8", out)
		}
		if out != sanitize.Line(out) {
			t.Fatalf("%q holds what the sanitiser escapes", out)
		}
		if strings.ContainsAny(out, "\n\r\t") {
			t.Fatalf("%q is not one line of single spaces", out)
		}
		if utf8.RuneCountInString(strings.TrimSuffix(out, "…")) > 6*n { // an escape (\u202e) is 6 characters
			t.Fatalf("%q: from more than %d characters", out, n)
		}
	})
}

// TestCheckServerGoneDuringIt: a server that answers the first probe and
// then goes away (a serial server that exits) is an error saying so, not
// a plain "cannot connect".
func TestCheckServerGoneDuringIt(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Tokens 2 ms apart: the first probe is cut before its answer is all
	// read, so its connection is not kept for the second.
	mock := mockserver.New(mockserver.Config{IgnoreMaxCompletionTokens: true, ITL: 2 * time.Millisecond})
	var once sync.Once
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { ln.Close() }) // no connection after this one
		mock.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	r, err := Check(context.Background(), Target{URL: "http://" + ln.Addr().String() + "/v1/chat/completions", Endpoint: chat()})
	var pe *Error
	if !errors.As(err, &pe) || pe.Op != OpConnect || !strings.Contains(err.Error(), "(connection refused, after it answered the preflight's first request: it went away during the preflight)") {
		t.Errorf("got %v (%v), want the connection refused after the first answer", err, r)
	}
}
