// Package preflight checks a target before a run, within a few seconds:
// that it can be reached, that its endpoint answers, and how it speaks.
// One small streamed request (an output cap of 2) tells whether the
// server honours the cap's field (max_completion_tokens, or only the
// legacy max_tokens, as llama.cpp builds of early 2025 and Ollama), whether
// usage comes in the stream when asked for (stream_options.include_usage),
// and, with the answer's system_fingerprint, its Server header and a few
// GETs (/get_server_info, /info, /props, /version), the server's family.
//
// Check returns what it learnt as a Result for the run to apply; an
// explicit setting always wins over it, which is the caller's choice to
// make. Failing to connect, or an endpoint that answers with an error, is
// an *Error that says so in words ("cannot connect to localhost:9
// (connection refused)").
package preflight

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/internal/outbound"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/h1"
	"github.com/surgebench/surge/loadgen/sse"
	"github.com/surgebench/surge/metrics"
)

// DefaultTimeout bounds a whole Check.
const DefaultTimeout = 5 * time.Second

// probeCap is the output cap the probe asks for: small enough that a
// server honouring it answers at once, and a server ignoring it shows by
// the tokens past it.
const probeCap = 2

// probePrompt asks for a long answer, so that only the cap can end it
// within probeCap tokens.
const probePrompt = "Count from one to one hundred in words, separated by commas."

// Target is what a run would send to.
type Target struct {
	// URL is the full request URL of the run's endpoint (its base URL
	// joined to the endpoint's path).
	URL string
	// Endpoint is the run's endpoint: its type builds the probe's body
	// and reads the answer. The probe is streamed when the type can
	// stream, whatever the run's setting: a stream can be cut short.
	Endpoint *endpoint.Endpoint
	// Header holds the run's headers (credentials included: they reach
	// the server and nothing else).
	Header http.Header
}

// Family names a server implementation.
type Family string

// The families Check tells apart ("" when none of its signs showed).
const (
	Unknown  Family = ""
	VLLM     Family = "vllm"
	SGLang   Family = "sglang"
	TGI      Family = "tgi"
	LlamaCpp Family = "llamacpp"
	Ollama   Family = "ollama"
)

// Tri is a yes, a no, or not known.
type Tri uint8

// The values of a Tri.
const (
	NotKnown Tri = iota
	Yes
	No
)

// String says yes, no or unknown.
func (t Tri) String() string {
	switch t {
	case Yes:
		return "yes"
	case No:
		return "no"
	}
	return "unknown"
}

// Result is what Check learnt.
type Result struct {
	// Addr is the host:port connected to.
	Addr string
	// Status is the endpoint's answer to the probe (200).
	Status int
	// Family is the server's family, FamilyFrom what told it (a header,
	// the fingerprint, a GET), Version its version when that said.
	Family     Family
	FamilyFrom string
	Version    string
	// Model is the model the answer named.
	Model string
	// CapField is the output-cap field the server honours:
	// "max_completion_tokens", "max_tokens", or "" when neither ended the
	// probe within its cap (or the probe could not tell); Ignored lists
	// the fields it ran past.
	CapField string
	Ignored  []string
	// StreamUsage says whether usage came in the stream when asked for.
	StreamUsage Tri
	// Notes say what could not be learnt, and why.
	Notes []string
	// Took is how long the check took.
	Took time.Duration
}

// LegacyMaxTokens reports whether a chat run should send its output cap
// as max_tokens: the server ran past max_completion_tokens and honours
// max_tokens. known is false when the probe could not tell.
func (r *Result) LegacyMaxTokens() (legacy, known bool) {
	switch r.CapField {
	case "max_tokens":
		return true, true
	case "max_completion_tokens":
		return false, true
	}
	return false, false
}

// String is the result in one line, for the run to print.
func (r *Result) String() string {
	var parts []string
	if r.Family != Unknown {
		f := string(r.Family)
		if r.Version != "" {
			f += " " + r.Version
		}
		parts = append(parts, f+" (by "+r.FamilyFrom+")")
	}
	switch {
	case r.CapField != "" && len(r.Ignored) > 0:
		parts = append(parts, "honours "+r.CapField+", ignores "+strings.Join(r.Ignored, " and "))
	case r.CapField != "":
		parts = append(parts, "honours "+r.CapField)
	case len(r.Ignored) > 0:
		parts = append(parts, "ignores "+strings.Join(r.Ignored, " and "))
	}
	if r.StreamUsage != NotKnown {
		parts = append(parts, "usage in the stream: "+r.StreamUsage.String())
	}
	if len(parts) == 0 {
		parts = append(parts, "answers")
	}
	return r.Addr + ": " + strings.Join(parts, "; ")
}

// Error is a target Check could not use: Op is "connect" (no connection)
// or "request" (the endpoint answered with an error, or not at all).
type Error struct {
	Op   string
	Addr string
	// Method and Path name the request; Status is its answer (0: none).
	Method, Path string
	Status       int
	// Message is the server's error message, or what went wrong.
	Message string
	Err     error
}

// Error says what failed in words.
func (e *Error) Error() string {
	if e.Op == "connect" {
		return fmt.Sprintf("cannot connect to %s (%s)", e.Addr, e.Message)
	}
	if e.Status != 0 {
		return fmt.Sprintf("%s %s on %s answered %d %s: %s", e.Method, e.Path, e.Addr, e.Status, http.StatusText(e.Status), e.Message)
	}
	return fmt.Sprintf("%s %s on %s: %s", e.Method, e.Path, e.Addr, e.Message)
}

// Unwrap returns the underlying error (nil for an error answer).
func (e *Error) Unwrap() error { return e.Err }

// Option configures Check.
type Option func(*options)

type options struct {
	timeout time.Duration
	client  *http.Client
}

// Timeout bounds the whole check (default DefaultTimeout; d <= 0 keeps
// it).
func Timeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.timeout = d
		}
	}
}

// Client sends the probes (default: a client of its own). Its transport
// should be the run's, so that TLS and proxies are as the run's.
func Client(c *http.Client) Option { return func(o *options) { o.client = c } }

// Check connects to t, sends one probe and learns what it can within the
// timeout. It returns an *Error when the target cannot be reached or its
// endpoint answers with an error; what the probe could not learn in time
// is in Result.Notes.
func Check(ctx context.Context, t Target, opts ...Option) (*Result, error) {
	o := options{timeout: DefaultTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	if o.client == nil {
		o.client = outbound.NewClient()
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	u, err := url.Parse(t.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("preflight: request URL %q: not an absolute URL", t.URL)
	}
	if t.Endpoint == nil {
		return nil, errors.New("preflight: no endpoint")
	}
	r := &Result{Addr: h1.HostPort(u)}
	if err := dial(ctx, r.Addr); err != nil {
		return nil, err
	}
	if err := probe(ctx, o.client, u, t, r); err != nil {
		return nil, err
	}
	if r.Family == Unknown {
		family(ctx, o.client, u, t.Header, r)
	}
	r.Took = time.Since(start)
	return r, nil
}

// dial opens and closes one TCP connection to addr.
func dial(ctx context.Context, addr string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return &Error{Op: "connect", Addr: addr, Message: reason(err), Err: err}
	}
	return c.Close()
}

// reason words a connection failure.
func reason(err error) string {
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer in time"
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return "no such host"
		}
		return "DNS lookup failed: " + dnsErr.Err
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "host unreachable"
	}
	return err.Error()
}

// probe sends the endpoint's request with a cap of probeCap in the run's
// field and, for a chat server that runs past max_completion_tokens, once
// more with max_tokens.
func probe(ctx context.Context, c *http.Client, u *url.URL, t Target, r *Result) error {
	ep := *t.Endpoint
	ep.Streaming = ep.Info().Streams
	a, err := send(ctx, c, u, &ep, t.Header, r)
	if err != nil {
		return err
	}
	r.StreamUsage = a.usage
	field := ep.MaxTokensField()
	switch {
	case !ep.Info().ProducesTokens:
		return nil
	case a.capped():
		r.CapField = field
		return nil
	case !a.ranPast():
		r.Notes = append(r.Notes, fmt.Sprintf("the probe's answer did not tell whether the server honours %s (%d text events, cut short: %v)", field, a.texts, a.cut))
		return nil
	}
	r.Ignored = append(r.Ignored, field)
	if ep.Kind != endpoint.Chat || ep.LegacyMaxTokens {
		return nil
	}
	ep.LegacyMaxTokens = true
	b, err := send(ctx, c, u, &ep, t.Header, r)
	if err != nil {
		return err
	}
	if r.StreamUsage == NotKnown {
		r.StreamUsage = b.usage
	}
	switch {
	case b.capped():
		r.CapField = "max_tokens"
	case b.ranPast():
		r.Ignored = append(r.Ignored, "max_tokens")
	}
	return nil
}

// answer is what one probe's response showed.
type answer struct {
	texts     int  // text events
	completed int  // usage's completion_tokens (-1: none)
	finished  bool // a finish reason or the end marker came
	cut       bool // the probe stopped reading: it had seen enough, or ran out of time
	usage     Tri
}

// capped reports an answer the cap ended: finished within a token of it.
func (a *answer) capped() bool {
	return a.finished && a.texts > 0 && a.texts <= probeCap+1 && (a.completed < 0 || a.completed <= probeCap+1)
}

// ranPast reports an answer that went on past the cap.
func (a *answer) ranPast() bool { return a.texts > probeCap+2 || a.completed > probeCap+2 }

// maxProbeBody bounds what a probe reads of a whole answer.
const maxProbeBody = 1 << 20

// send does one probe and reads its answer, filling r's family, model and
// status from it.
func send(ctx context.Context, c *http.Client, u *url.URL, ep *endpoint.Endpoint, h http.Header, r *Result) (*answer, error) {
	turn := &datasets.Turn{Text: probePrompt, MaxTokens: probeCap}
	body, err := ep.Body("", nil, turn)
	if err != nil {
		return nil, fmt.Errorf("preflight: building the probe: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("preflight: %w", err)
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	ep.SetHeaders(req.Header)
	req.Header.Set("Content-Type", "application/json")
	if ep.Streams() {
		req.Header.Set("Accept", "text/event-stream")
	}
	fail := func(status int, msg string, err error) *Error {
		return &Error{Op: "request", Addr: h1.HostPort(u), Method: http.MethodPost, Path: u.Path, Status: status, Message: msg, Err: err}
	}
	resp, err := c.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fail(0, "no answer in time (a server still loading its model answers late: --wait-for-model-timeout-seconds waits for it)", err)
		}
		return nil, fail(0, reason(err), err)
	}
	defer resp.Body.Close()
	r.Status = resp.StatusCode
	if strings.Contains(strings.ToLower(resp.Header.Get("Server")), "llama.cpp") {
		r.Family, r.FamilyFrom = LlamaCpp, "its Server header"
	}
	if resp.StatusCode/100 != 2 {
		b := bounded.Head(resp.Body, 64<<10)
		e := endpoint.ParseErrorBody(resp.StatusCode, b)
		return nil, fail(resp.StatusCode, e.Message, nil)
	}
	dec := ep.NewDecoder()
	var out endpoint.Output
	a := &answer{completed: -1, usage: NotKnown}
	if !strings.HasPrefix(strings.ToLower(resp.Header.Get("Content-Type")), "text/event-stream") {
		b, err := outbound.ReadBody(ctx, resp, maxProbeBody, "the answer")
		var tl *bounded.TooLargeError
		switch {
		case errors.As(err, &tl):
			return nil, fail(resp.StatusCode, err.Error(), err)
		case err != nil:
			a.cut = true
			return a, nil
		}
		d, derr := dec.Body(b, &out)
		switch {
		case derr != nil:
			return nil, fail(resp.StatusCode, "the answer is not the endpoint type's: "+derr.Error(), derr)
		case d.Err != nil:
			return nil, fail(resp.StatusCode, "the answer is an error: "+d.Err.Message, nil)
		}
		a.finished = d.Finished
		a.texts = len(strings.Fields(string(out.Text) + " " + string(out.Reasoning)))
		if d.Usage.Present {
			a.completed = d.Usage.CompletionTokens
		}
		meta(b, r)
		return a, nil
	}
	rd := sse.NewReader(resp.Body, nil, sse.MaxEventSize(maxProbeBody))
	first := true
	for {
		ev, err := rd.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				a.cut = true // a timeout or a cut stream: what came counts
			}
			break
		}
		if first && !bytes.Equal(ev.Type, []byte("error")) {
			meta(ev.Data, r)
			first = false
		}
		d, derr := dec.Event(ev.Type, ev.Data, &out)
		if derr != nil {
			return nil, fail(resp.StatusCode, "the stream is not the endpoint type's: "+derr.Error(), derr)
		}
		if d.Err != nil && d.Err.Type != endpoint.ErrFinishAbort && d.Err.Type != endpoint.ErrFinishError {
			return nil, fail(resp.StatusCode, "the stream carried an error: "+d.Err.Message, nil)
		}
		if d.Usage.Present {
			a.usage = Yes
			if d.Usage.Has(metrics.UsageCompletionField) {
				a.completed = d.Usage.CompletionTokens
			}
		}
		if d.Content || d.Reasoning || d.ToolCall {
			a.texts++
		}
		a.finished = a.finished || d.Finished || d.Done
		if d.Done {
			break
		}
		if a.ranPast() {
			a.cut = true // enough: the cap did not hold
			break
		}
	}
	if a.usage == NotKnown && !a.cut && a.finished {
		a.usage = No
	}
	return a, nil
}

// meta reads the model and the system_fingerprint of an answer's first
// event (or whole body): Ollama's OpenAI route stamps fp_ollama.
func meta(data []byte, r *Result) {
	var m struct {
		Model       string `json:"model"`
		Fingerprint string `json:"system_fingerprint"`
	}
	if json.Unmarshal(data, &m) != nil {
		return
	}
	if r.Model == "" {
		r.Model = m.Model
	}
	if m.Fingerprint == "fp_ollama" && r.Family == Unknown {
		r.Family, r.FamilyFrom = Ollama, "its system_fingerprint fp_ollama"
	}
}
