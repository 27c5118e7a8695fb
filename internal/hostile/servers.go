package hostile

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Escapes is a string of terminal escapes a hostile server or file puts
// in what surge may print: a window title (OSC 0), a screen clear, a
// colour, a cursor report request in 8-bit C1, and a right-to-left
// override that reverses what follows.
const Escapes = "\x1b]0;hostile-title\x07\x1b[2J\x1b[31mred\x1b[0m\u009b6n\u202egnp.exe"

// EscapesJSON is Escapes as a JSON string's content (\u001b…), without
// the quotes.
func EscapesJSON() string {
	b, _ := json.Marshal(Escapes)
	return string(b[1 : len(b)-1])
}

// Fill replaces each {{esc}} in doc by EscapesJSON and each {{raw}} by
// Escapes.
func Fill(doc string) string {
	return strings.NewReplacer("{{esc}}", EscapesJSON(), "{{raw}}", Escapes).Replace(doc)
}

// GenericEscaped is the answer and file the escape cases use for a
// surface that names no Escaped of its own: the fields surge reads from
// model lists, servers' facts and completions, each carrying escapes.
const GenericEscaped = `{"object":"list","data":[{"id":"model{{esc}}","object":"model","owned_by":"{{esc}}"}],` +
	`"version":"1.0{{esc}}","model":"{{esc}}","model_id":"{{esc}}","model_path":"{{esc}}",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"{{esc}}"},"finish_reason":"stop"}],` +
	`"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`

// EndlessPrefix starts every endless and huge body: JSON that a reader
// must read to its end to parse (a string that never closes), and one
// line that never ends for a reader of lines.
const EndlessPrefix = `{"data":[{"id":"`

// Endless answers 200 with a body that never ends (no Content-Length:
// chunked), up to max bytes, then ends the connection mid-string. A
// declared length > 0 is sent as Content-Length instead (a huge body
// announced). every > 0 drips the body one byte per period.
func Endless(max, declared int64, every time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A type no reader refuses on sight: each must bound the body.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if declared > 0 {
			w.Header().Set("Content-Length", strconv.FormatInt(declared, 10))
		}
		w.WriteHeader(http.StatusOK)
		fl, _ := w.(http.Flusher)
		if _, err := io.WriteString(w, EndlessPrefix); err != nil {
			return
		}
		if every > 0 {
			t := time.NewTicker(every)
			defer t.Stop()
			for n := int64(len(EndlessPrefix)); n < max; n++ {
				if fl != nil {
					fl.Flush()
				}
				select {
				case <-r.Context().Done():
					return
				case <-t.C:
				}
				if _, err := w.Write([]byte{'a'}); err != nil {
					return
				}
			}
			return
		}
		chunk := []byte(strings.Repeat("a", 64<<10))
		for n := int64(len(EndlessPrefix)); n < max; n += int64(len(chunk)) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		// Cut short of a declared length, or mid-string: the connection
		// ends without an end of body.
		panic(http.ErrAbortHandler)
	})
}

// Repeat answers 200 with row again and again (chunked), up to limit
// bytes: valid data that never ends.
func Repeat(row string, limit int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat(row, max(1, (64<<10)/max(len(row), 1))))
		for n := int64(0); n < limit; n += int64(len(chunk)) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
}

// Junk serves size bytes of junk as a file does (ranges answered, its
// length known), made as they are asked for: a file whose name says
// Parquet and whose bytes are not.
func Junk(size int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "junk.parquet", time.Time{}, io.NewSectionReader(junkReader{}, 0, size))
	})
}

// junkReader reads the same junk at every offset.
type junkReader struct{}

func (junkReader) ReadAt(p []byte, off int64) (int, error) {
	for i := range p {
		p[i] = "junk"[(off+int64(i))%4]
	}
	return len(p), nil
}

// ServeFile serves b as a file does (ranges answered, its length known).
func ServeFile(b []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "file", time.Time{}, bytes.NewReader(b))
	})
}

// Stall answers 200 headers and then nothing, until the client leaves.
func Stall() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		<-r.Context().Done()
	})
}

// Status answers every request with code, the given Retry-After (when
// not empty) and body as JSON.
func Status(code int, retryAfter, body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	})
}

// HTML is a 200 answer in HTML where JSON was asked for: a captive
// portal, a proxy's page, a web UI at the API's address.
func HTML() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<!DOCTYPE html>\n<html><head><title>Sign in to the network</title></head>\n"+
			"<body><h1>Welcome</h1><p>Please <a href=\"/login\">sign in</a>.</p></body></html>\n")
	})
}

// CloseMidBody announces a 4 KiB JSON body, sends its first 100 bytes and
// closes the connection.
func CloseMidBody() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "4096")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, (EndlessPrefix + strings.Repeat("b", 100))[:100])
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		panic(http.ErrAbortHandler)
	})
}

// Redirect answers every request with a 307 (method and body kept) to the
// same path and query at base (another origin's "scheme://host:port").
func Redirect(base string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
		http.Redirect(w, r, base+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	})
}

// ToolCallOptions shape the tool calls a ToolCallAnswers server answers with.
type ToolCallOptions struct {
	// ArgBytes is the size of each call's arguments (a JSON string).
	ArgBytes int
	// Calls is how many calls each reply carries.
	Calls int
	// ID names the i-th call ("" sends none).
	ID func(i int) string
}

// ToolCallAnswers answers every chat completion with a reply that is only tool
// calls (finish_reason "tool_calls"): every reply asks again, so a tool
// loop without a bound never ends. Streamed when the request asks.
func ToolCallAnswers(o ToolCallOptions) http.Handler {
	// The answers are encoded once, before any request: a 20 MiB call's
	// encoding takes seconds under the race detector, and would count
	// against the client's request timeout.
	args := `{"q":"` + strings.Repeat("x", max(o.ArgBytes-8, 0)) + `"}`
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		Index    int    `json:"index"`
		ID       string `json:"id,omitempty"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	calls := make([]call, o.Calls)
	for i := range calls {
		id := ""
		if o.ID != nil {
			id = o.ID(i)
		}
		calls[i] = call{Index: i, ID: id, Type: "function", Function: fn{Name: "lookup", Arguments: args}}
	}
	msg := map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}
	whole, _ := json.Marshal(map[string]any{"id": "hostile", "object": "chat.completion",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "tool_calls"}},
		"usage":   map[string]int{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
	var stream bytes.Buffer
	for _, v := range []any{
		map[string]any{"choices": []any{map[string]any{"index": 0, "delta": msg}}},
		map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "tool_calls"}}},
	} {
		b, _ := json.Marshal(v)
		fmt.Fprintf(&stream, "data: %s\n\n", b)
	}
	stream.WriteString("data: [DONE]\n\n")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream bool `json:"stream"`
		}
		_ = json.NewDecoder(io.LimitReader(r.Body, 256<<20)).Decode(&req)
		_, _ = io.Copy(io.Discard, r.Body)
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(whole)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(stream.Bytes())
	})
}

// Seen is one request a Recorder was sent.
type Seen struct {
	Method, URL string
	Header      http.Header
	// Password is the password of a URL's user (Basic auth), if any.
	Password string
	// Body is the size of its body.
	Body int64
}

// Recorder is an http.Handler that records each request (headers, the
// password of Basic auth, the body's size) before next answers it.
type Recorder struct {
	next http.Handler
	mu   sync.Mutex
	seen []Seen
	// URL is the base URL it is served at (set by the harness).
	URL string
}

// Record wraps next (nil: 404 to all).
func Record(next http.Handler) *Recorder {
	if next == nil {
		next = http.NotFoundHandler()
	}
	return &Recorder{next: next}
}

func (rec *Recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := Seen{Method: r.Method, URL: r.URL.String(), Header: r.Header.Clone()}
	if _, pw, ok := r.BasicAuth(); ok {
		s.Password = pw
	}
	s.Body, r.Body = buffered(r.Body)
	rec.mu.Lock()
	rec.seen = append(rec.seen, s)
	rec.mu.Unlock()
	rec.next.ServeHTTP(w, r)
}

// maxBuffered is how much of a request body is kept for the handler: a
// larger one is counted to its end and handed on cut short.
const maxBuffered = 64 << 20

// buffered reads body to its end (counting it) and returns its size and a
// body to hand on, of at most maxBuffered bytes.
func buffered(body io.ReadCloser) (int64, io.ReadCloser) {
	if body == nil || body == http.NoBody {
		return 0, body
	}
	defer body.Close()
	var kept strings.Builder
	n, _ := io.Copy(&kept, io.LimitReader(body, maxBuffered))
	rest, _ := io.Copy(io.Discard, body)
	return n + rest, io.NopCloser(strings.NewReader(kept.String()))
}

// Requests returns what was recorded so far.
func (rec *Recorder) Requests() []Seen {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]Seen(nil), rec.seen...)
}

// Carrying lists the requests that carry secret anywhere: a header's
// value (Basic auth decoded), the URL or a URL's password.
func (rec *Recorder) Carrying(secret string) []string {
	var out []string
	for _, s := range rec.Requests() {
		where := ""
		switch {
		case strings.Contains(s.URL, secret):
			where = "its URL"
		case strings.Contains(s.Password, secret):
			where = "a Basic auth password"
		}
		for k, vs := range s.Header {
			for _, v := range vs {
				if where == "" && (strings.Contains(v, secret) || strings.Contains(decodeBasic(v), secret)) {
					where = "header " + k
				}
			}
		}
		if where != "" {
			out = append(out, fmt.Sprintf("%s %s carried the secret in %s", s.Method, s.URL, where))
		}
	}
	return out
}

// decodeBasic decodes a "Basic …" header value ("" otherwise).
func decodeBasic(v string) string {
	enc, ok := strings.CutPrefix(v, "Basic ")
	if !ok {
		return ""
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	if err != nil {
		return ""
	}
	return string(b)
}

// countingWriter counts the body bytes written through it.
type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n += int64(n)
	return n, err
}

func (c *countingWriter) Flush() {
	if fl, ok := c.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
