// Package preflight checks a target before a run, within a few seconds:
// that it can be reached, that its endpoint answers as the endpoint type
// does, and how it speaks. One small streamed request (an output cap of 2)
// tells whether the server honours the cap's field (for chat,
// max_completion_tokens, or only the legacy max_tokens, as llama.cpp
// builds of early 2025 and Ollama), whether usage comes in the stream when
// asked for (stream_options.include_usage), and, with the answer's
// system_fingerprint, its Server header and a few GETs (/get_server_info,
// /info, /props, /version), the server's family.
//
// It cannot hurt a server: no connection is opened without a request on
// it (some serial servers exit on one), the requests go one at a time,
// and a busy answer (503, 429) is waited out with a growing pause, within
// the check's time, rather than asked again at once.
//
// Check returns what it learnt as a Result for the run to apply; an
// explicit setting always wins over it, which is the caller's choice to
// make. Failing to connect, an endpoint that answers with an error, or one
// that answers as something else (an HTML page, a 404) is an *Error that
// says so in words ("cannot connect to localhost:9 (connection refused)").
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
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/internal/outbound"
	"github.com/surgebench/surge/internal/sanitize"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/frames"
	"github.com/surgebench/surge/loadgen/h1"
	"github.com/surgebench/surge/loadgen/sse"
	"github.com/surgebench/surge/metrics"
)

// DefaultTimeout bounds a whole Check, waits for a busy server included.
const DefaultTimeout = 10 * time.Second

// probeCap is the output cap the probe asks for: small enough that a
// server honouring it answers at once, and a server ignoring it shows by
// the tokens past it.
const probeCap = 2

// probePrompt asks for a long answer, so that only the cap can end it
// within probeCap tokens.
const probePrompt = "Count from one to one hundred in words, separated by commas."

// A rankings probe ranks probeQuery against probePassages when the run
// gives none of its own.
const probeQuery = "What is the capital of France?"

var probePassages = []string{"Paris is the capital of France.", "Bananas are yellow."}

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
	// Authorize, when set, gives the probe a cloud's credentials (a
	// SigV4 signature, a token), as the run's requests get them.
	Authorize func(req *http.Request, body []byte) error
	// Hosted is a cloud's endpoint: no GET asks what server it is.
	Hosted bool
	// Turn is the run's first request, for the types whose body is the
	// dataset's own: a rankings query and its passages, a raw body (nil:
	// the probe's own; a raw run has none). The probe is then one of the
	// run's requests: a server that refuses their number or length says
	// so before the run. The other types probe with a long answer capped.
	Turn *datasets.Turn
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
	// Kind is the endpoint type probed.
	Kind endpoint.Kind
	// Status is the endpoint's answer to the probe (200).
	Status int
	// Busy counts the busy answers (503, 429) waited out before it.
	Busy int
	// Family is the server's family, FamilyFrom what told it (a header,
	// the fingerprint, a GET), Version its version when that said.
	Family     Family
	FamilyFrom string
	Version    string
	// Model is the model the answer named.
	Model string
	// CapField is the output-cap field the server honours (for chat
	// "max_completion_tokens" or "max_tokens"; the type's own field for
	// the others), or "" when none ended the probe within its cap (or the
	// probe could not tell); Ignored lists the fields it ran past.
	CapField string
	Ignored  []string
	// StreamUsage says whether usage came in the stream when asked for.
	StreamUsage Tri
	// Notes say what could not be learnt, and why.
	Notes []string
	// Took is how long the check took.
	Took time.Duration
	// At is when the check's answer came: a run that then finds no
	// server knows the server went away after it.
	At time.Time
}

// LegacyMaxTokens reports whether a chat run should send its output cap
// as max_tokens: the server ran past max_completion_tokens and honours
// max_tokens. known is false when the probe could not tell, and for every
// type but chat, whose cap has one field only.
func (r *Result) LegacyMaxTokens() (legacy, known bool) {
	if r.Kind != endpoint.Chat {
		return false, false
	}
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
		parts = append(parts, "answers as a "+string(r.Kind)+" endpoint")
	}
	if r.Busy > 0 {
		parts = append(parts, fmt.Sprintf("busy %s before it answered", times(r.Busy)))
	}
	return r.Addr + ": " + strings.Join(parts, "; ")
}

func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return strconv.Itoa(n) + " times"
}

// The Ops of an Error.
const (
	// OpConnect: no connection.
	OpConnect = "connect"
	// OpRequest: the endpoint answered with an error, or not at all.
	OpRequest = "request"
	// OpAnswer: the endpoint answered, but not as an endpoint of the type
	// does (a page, a 404, a body of another shape): the URL or the type
	// is not the server's.
	OpAnswer = "answer"
)

// Error is a target Check could not use; Op says which way.
type Error struct {
	Op   string
	Addr string
	// Kind is the endpoint type probed.
	Kind endpoint.Kind
	// Method and Path name the request; Status is its answer (0: none),
	// ContentType the answer's, Busy how many busy answers came before.
	Method, Path string
	Status       int
	ContentType  string
	Busy         int
	// Message is the server's error message, or what went wrong; for
	// OpAnswer, the start of the answer (its first printable characters),
	// or of its error message when it is JSON.
	Message string
	Err     error
}

// Error says what failed in words, on one line.
func (e *Error) Error() string {
	switch {
	case e.Op == OpConnect:
		return fmt.Sprintf("cannot connect to %s (%s)", e.Addr, e.Message)
	case e.Op == OpAnswer:
		ct := e.ContentType
		if ct == "" {
			ct = "no content type"
		}
		what := "\"" + e.Message + "\""
		var tl *bounded.TooLargeError
		if errors.As(e.Err, &tl) {
			what = "(" + e.Message + ")" // no probe's answer is that long
		}
		return fmt.Sprintf("%s %s on %s answered %d (%s) %s: not an OpenAI-compatible %s endpoint", e.Method, e.Path, e.Addr, e.Status, ct, what, e.Kind)
	case e.Status != 0:
		s := fmt.Sprintf("%s %s on %s answered %d %s", e.Method, e.Path, e.Addr, e.Status, http.StatusText(e.Status))
		if e.Busy > 0 {
			s += fmt.Sprintf(" (%d busy answers waited out)", e.Busy)
		}
		return s + ": " + e.Message
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

// Client sends the probes (default: outbound's, no redirect followed). Its
// transport should be the run's, so that TLS and proxies are as the run's.
func Client(c *http.Client) Option { return func(o *options) { o.client = c } }

// Check sends one probe to t (two, for a chat server that ignores
// max_completion_tokens) and learns what it can within the timeout. It
// returns an *Error when the target cannot be reached, or its endpoint
// answers with an error or as something else; what the probe could not
// learn in time is in Result.Notes.
func Check(ctx context.Context, t Target, opts ...Option) (*Result, error) {
	o := options{timeout: DefaultTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	if o.client == nil {
		o.client = outbound.NewClient(outbound.NoRedirects())
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
	// No connection of its own first: the probe's shows the target can be
	// reached, and a connection closed without a request makes some
	// serial servers (distributed-llama) exit.
	r := &Result{Addr: h1.HostPort(u), Kind: t.Endpoint.Kind}
	if err := probe(ctx, o.client, u, t, r); err != nil {
		return nil, err
	}
	r.At = time.Now()
	if r.Family == Unknown && !t.Hosted {
		family(ctx, o.client, u, t.Header, r)
	}
	r.Took = time.Since(start)
	return r, nil
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

// dialFailed reports an error that came before any connection: the
// dial's (refused, no such host, unreachable).
func dialFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// probe sends the endpoint's request with a cap of probeCap in the run's
// field and, for a chat server that runs past max_completion_tokens, once
// more with max_tokens.
func probe(ctx context.Context, c *http.Client, u *url.URL, t Target, r *Result) error {
	ep := *t.Endpoint
	ep.Streaming = ep.Info().Streams
	a, err := send(ctx, c, u, &ep, t, r)
	if err != nil {
		return err
	}
	r.StreamUsage = a.usage
	field := ep.MaxTokensField()
	switch {
	case !ep.Info().ProducesTokens || field == "":
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
	b, err := send(ctx, c, u, &ep, t, r)
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

// snippetLen is how much of a foreign answer an OpAnswer error shows.
const snippetLen = 80

// Waits for a busy server: the first pause, doubled on each busy answer
// up to the longest (a Retry-After within it is honoured).
const (
	firstPause   = 250 * time.Millisecond
	longestPause = 2 * time.Second
)

// busy reports an answer that asks to be asked again later.
func busy(status int) bool {
	return status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests
}

// pause is how long to wait after the n-th busy answer (0-based): the
// server's Retry-After in seconds when it gave one, else a doubling
// pause, never over longestPause.
func pause(n int, retryAfter string) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(retryAfter)); err == nil && s >= 0 {
		return min(time.Duration(s)*time.Second, longestPause)
	}
	return min(firstPause<<min(n, 8), longestPause)
}

// foreign reports an answer no endpoint of the type gives, whatever its
// body: no such path (404), no such method (405, 501).
func foreign(status int) bool {
	return status == http.StatusNotFound || status == http.StatusMethodNotAllowed || status == http.StatusNotImplemented
}

// OwnBody reports an endpoint type whose requests are the dataset's own
// (rankings passages, raw bodies): its probe is the run's first request
// (Target.Turn).
func OwnBody(k endpoint.Kind) bool { return k == endpoint.Raw || k.Info().Rankings }

// probeTurn is the probe's request: a long answer capped at probeCap, or
// for the types whose body is the dataset's own the run's first turn (a
// query and two passages of its own for a rankings run without one).
func probeTurn(ep *endpoint.Endpoint, t Target) *datasets.Turn {
	switch {
	case !OwnBody(ep.Kind):
		return &datasets.Turn{Text: probePrompt, MaxTokens: probeCap}
	case t.Turn != nil && (len(t.Turn.Passages) > 0 || !ep.Info().Rankings):
		return t.Turn
	case ep.Info().Rankings:
		return &datasets.Turn{Text: probeQuery, Passages: probePassages}
	}
	return &datasets.Turn{}
}

// send does one probe and reads its answer, filling r's family, model and
// status from it. A busy answer is asked again after a pause while the
// check's time allows.
func send(ctx context.Context, c *http.Client, u *url.URL, ep *endpoint.Endpoint, t Target, r *Result) (*answer, error) {
	body, err := ep.Body("", nil, probeTurn(ep, t))
	if err != nil {
		return nil, fmt.Errorf("preflight: building the probe: %w", err)
	}
	fail := func(op string, resp *http.Response, msg string, err error) *Error {
		e := &Error{Op: op, Addr: h1.HostPort(u), Kind: ep.Kind, Method: http.MethodPost, Path: u.Path, Busy: r.Busy, Message: msg, Err: err}
		if resp != nil {
			e.Status, e.ContentType = resp.StatusCode, resp.Header.Get("Content-Type")
		}
		return e
	}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("preflight: %w", err)
		}
		for k, vs := range t.Header {
			req.Header[k] = vs
		}
		ep.SetHeaders(req.Header)
		req.Header.Set("Content-Type", "application/json")
		if ep.Streams() {
			req.Header.Set("Accept", "text/event-stream")
		}
		if t.Authorize != nil {
			if err := t.Authorize(req, body); err != nil {
				return nil, fail(OpRequest, nil, "no credentials: "+printable(err.Error(), 200), err)
			}
		}
		resp, err := c.Do(req)
		switch {
		case err == nil:
		case dialFailed(err) && ctx.Err() == nil:
			msg := reason(err)
			if r.Status != 0 {
				msg += ", after it answered the preflight's first request: it went away during the preflight"
			}
			return nil, &Error{Op: OpConnect, Addr: h1.HostPort(u), Kind: ep.Kind, Message: msg, Err: err}
		case errors.Is(err, context.DeadlineExceeded):
			msg := "no answer in time (a server still loading its model answers late: --wait-for-model-timeout-seconds waits for it)"
			if r.Busy > 0 {
				msg = fmt.Sprintf("no answer in time (busy %s: a server busy with other work, or one at a time, may be free later)", times(r.Busy))
			}
			return nil, fail(OpRequest, nil, msg, err)
		default:
			return nil, fail(OpRequest, nil, reason(err), err)
		}
		if busy(resp.StatusCode) {
			b := bounded.Head(resp.Body, 64<<10)
			resp.Body.Close()
			wait := pause(r.Busy, resp.Header.Get("Retry-After"))
			if d, ok := ctx.Deadline(); ok && time.Until(d) <= wait {
				e := endpoint.ParseErrorBody(resp.StatusCode, b)
				return nil, fail(OpRequest, resp, printable(e.Message, 200), nil)
			}
			r.Busy++
			timer := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil, fail(OpRequest, resp, "no answer in time", ctx.Err())
			case <-timer.C:
			}
			continue
		}
		a, err := read(ctx, resp, ep, r, fail)
		resp.Body.Close()
		return a, err
	}
}

// read reads the probe's answer.
func read(ctx context.Context, resp *http.Response, ep *endpoint.Endpoint, r *Result, fail func(string, *http.Response, string, error) *Error) (*answer, error) {
	r.Status = resp.StatusCode
	if strings.Contains(strings.ToLower(resp.Header.Get("Server")), "llama.cpp") {
		r.Family, r.FamilyFrom = LlamaCpp, "its Server header"
	}
	if resp.StatusCode/100 != 2 {
		b := bounded.Head(resp.Body, 64<<10)
		valid := json.Valid(b)
		e := endpoint.ParseErrorBody(resp.StatusCode, b)
		switch {
		case foreign(resp.StatusCode) && valid:
			return nil, fail(OpAnswer, resp, printable(e.Message, snippetLen), nil)
		case foreign(resp.StatusCode) || resp.StatusCode/100 != 5 && !valid:
			return nil, fail(OpAnswer, resp, printable(string(b), snippetLen), nil)
		}
		return nil, fail(OpRequest, resp, printable(e.Message, 200), nil)
	}
	dec := ep.NewDecoder()
	var out endpoint.Output
	a := &answer{completed: -1, usage: NotKnown}
	rd, streamed := frames.NewReaders(nil, maxProbeBody).Open(resp.Header.Get("Content-Type"), ep, resp.Body)
	if !streamed {
		b, err := outbound.ReadBody(ctx, resp, maxProbeBody, "its answer")
		var tl *bounded.TooLargeError
		switch {
		case errors.As(err, &tl):
			return nil, fail(OpAnswer, resp, tl.Error(), err)
		case err != nil:
			a.cut = true
			return a, nil
		}
		d, derr := dec.Body(b, &out)
		switch {
		case derr != nil:
			return nil, fail(OpAnswer, resp, printable(string(b), snippetLen), derr)
		case d.Err != nil:
			return nil, fail(OpRequest, resp, "the answer is an error: "+printable(d.Err.Message, 200), nil)
		}
		a.finished = d.Finished
		a.texts = len(strings.Fields(string(out.Text) + " " + string(out.Reasoning)))
		if d.Usage.Present {
			a.completed = d.Usage.CompletionTokens
		}
		meta(b, r)
		return a, nil
	}
	first := true
	for {
		ev, err := rd.Next()
		if errors.Is(err, sse.ErrEventTooLarge) || errors.Is(err, frames.ErrTooLarge) {
			tl := &bounded.TooLargeError{What: "an event of its stream", Limit: maxProbeBody}
			return nil, fail(OpAnswer, resp, tl.Error(), tl)
		}
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
			return nil, fail(OpAnswer, resp, printable(string(ev.Data), snippetLen), derr)
		}
		if d.Err != nil && d.Err.Type != endpoint.ErrFinishAbort && d.Err.Type != endpoint.ErrFinishError {
			return nil, fail(OpRequest, resp, "the stream carried an error: "+printable(d.Err.Message, 200), nil)
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

// printable is the start of s for one terminal line: runs of white space
// become one space, at most n characters are kept ("…" marks a cut), and
// what remains goes through the one sanitiser (control and bidirectional
// characters escaped).
func printable(s string, n int) string {
	out := make([]rune, 0, min(len(s), n))
	gap, cut := false, false
	for _, c := range s {
		if unicode.IsSpace(c) {
			gap = len(out) > 0
			continue
		}
		if len(out)+btoi(gap) >= n {
			cut = true
			break
		}
		if gap {
			out = append(out, ' ')
			gap = false
		}
		out = append(out, c)
	}
	line := sanitize.Line(string(out))
	if cut {
		line += "…"
	}
	return line
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
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
