package mockserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// The hosted APIs, as their clouds define them on the wire: Amazon Bedrock
// Runtime (Converse, ConverseStream, InvokeModel and
// InvokeModelWithResponseStream with Claude's Messages body), Amazon
// SageMaker Runtime (InvokeEndpoint and InvokeEndpointWithResponseStream
// in front of an OpenAI-compatible container: this mock) and Google's
// generateContent (the Gemini API's paths and Vertex AI's, streamed as
// server-sent events with ?alt=sse, else as a JSON array). AWS streams
// are event streams, written with the AWS SDK's encoder.
//
// Credentials, when the Config asks for them: a SigV4 signature checked
// by signing the request again with the AWS SDK's signer (AWS's 403
// answers when it does not match), an API key in any of the headers the
// APIs use, or a bearer token the mock issued from its own token
// endpoints (an OAuth 2.0 token endpoint at /token, Google's metadata
// server, Azure App Service's managed identity endpoint at /msi/token).

// cloudAPI names a hosted API.
type cloudAPI uint8

const (
	converseAPI cloudAPI = iota
	invokeAPI
	sageMakerAPI
	geminiAPI
)

// cloudRoute is a hosted API's request: the API, whether it streams,
// and for SageMaker the container's path it stands for.
type cloudRoute struct {
	api    cloudAPI
	stream bool
}

// routeCloud finds the hosted API a path belongs to.
func routeCloud(path string) (cloudRoute, bool) {
	switch {
	case strings.HasPrefix(path, "/model/"):
		rest := path[len("/model/"):]
		i := strings.LastIndexByte(rest, '/')
		if i <= 0 {
			return cloudRoute{}, false
		}
		switch rest[i+1:] {
		case "converse":
			return cloudRoute{api: converseAPI}, true
		case "converse-stream":
			return cloudRoute{api: converseAPI, stream: true}, true
		case "invoke":
			return cloudRoute{api: invokeAPI}, true
		case "invoke-with-response-stream":
			return cloudRoute{api: invokeAPI, stream: true}, true
		}
	case strings.HasPrefix(path, "/endpoints/"):
		switch {
		case strings.HasSuffix(path, "/invocations"):
			return cloudRoute{api: sageMakerAPI}, true
		case strings.HasSuffix(path, "/invocations-response-stream"):
			return cloudRoute{api: sageMakerAPI, stream: true}, true
		}
	case strings.Contains(path, "/models/"):
		switch {
		case strings.HasSuffix(path, ":generateContent"):
			return cloudRoute{api: geminiAPI}, true
		case strings.HasSuffix(path, ":streamGenerateContent"):
			return cloudRoute{api: geminiAPI, stream: true}, true
		}
	}
	return cloudRoute{}, false
}

// serveCloud answers the hosted APIs' requests and the token endpoints:
// false for any other path. Credentials the Config requires are checked
// on every request but the token endpoints' and /health.
func (s *Server) serveCloud(w http.ResponseWriter, r *http.Request) bool {
	if s.serveTokens(w, r) {
		return true
	}
	if inner, ok := openAIPath(r); ok {
		if inner == "" {
			// Azure OpenAI's answer to a deployment's path without its
			// api-version.
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": "404", "message": "Resource not found"}})
			return true
		}
		in := r.Clone(r.Context())
		in.URL.Path, in.URL.RawPath = inner, ""
		s.route(w, in)
		return true
	}
	rt, ok := routeCloud(r.URL.Path)
	if !ok {
		return false
	}
	if !allow(w, r, http.MethodPost) {
		return true
	}
	body, err := readBody(http.MaxBytesReader(w, r.Body, maxBodyBytes), nil)
	if err != nil {
		s.badRequests.Add(1)
		writeError(w, http.StatusBadRequest, "invalid_request_error", "mock: reading body: "+err.Error())
		return true
	}
	if rt.api == sageMakerAPI {
		s.serveSageMaker(w, r, body, rt.stream)
		return true
	}
	s.serveHosted(w, r, body, rt)
	return true
}

// openAIPath is the mock's own route for the clouds' OpenAI-compatible
// paths: Azure OpenAI's deployments
// (/openai/deployments/NAME/chat/completions?api-version=…; "" without
// its api-version, which Azure answers 404) and Vertex AI's
// OpenAI-compatible endpoint (…/endpoints/openapi/chat/completions).
func openAIPath(r *http.Request) (string, bool) {
	p := r.URL.Path
	var rest string
	switch {
	case strings.HasPrefix(p, "/openai/deployments/"):
		_, rest, _ = strings.Cut(strings.TrimPrefix(p, "/openai/deployments/"), "/")
		if r.URL.Query().Get("api-version") == "" {
			return "", true
		}
	case strings.Contains(p, "/endpoints/openapi/"):
		_, rest, _ = strings.Cut(p, "/endpoints/openapi/")
	default:
		return "", false
	}
	switch rest {
	case "chat/completions", "completions", "embeddings":
		return "/v1/" + rest, true
	}
	return "", false
}

// cloudRequest is the union of the hosted APIs' request fields the mock
// reads.
type cloudRequest struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	System          json.RawMessage `json:"system"`
	InferenceConfig struct {
		MaxTokens *int `json:"maxTokens"`
	} `json:"inferenceConfig"`
	MaxTokens        *int   `json:"max_tokens"`
	AnthropicVersion string `json:"anthropic_version"`
	Model            any    `json:"model"`
	Contents         []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"contents"`
	GenerationConfig struct {
		MaxOutputTokens *int `json:"maxOutputTokens"`
	} `json:"generationConfig"`
}

// promptText is every text the request carries, for counting.
func (c *cloudRequest) promptText() string {
	var b strings.Builder
	add := func(raw json.RawMessage) {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			b.WriteString(s)
			b.WriteByte(' ')
			return
		}
		var blocks []struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &blocks) == nil {
			for _, bl := range blocks {
				b.WriteString(bl.Text)
				b.WriteByte(' ')
			}
		}
	}
	add(c.System)
	for _, m := range c.Messages {
		add(m.Content)
	}
	for _, ct := range c.Contents {
		for _, p := range ct.Parts {
			b.WriteString(p.Text)
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// check refuses what the API itself refuses.
func (c *cloudRequest) check(api cloudAPI) error {
	switch api {
	case converseAPI:
		if len(c.Messages) == 0 {
			return errors.New("messages: at least one message is required")
		}
		for _, m := range c.Messages {
			if m.Role != "user" && m.Role != "assistant" {
				return fmt.Errorf("messages: role %q: want user or assistant", m.Role)
			}
		}
	case invokeAPI:
		switch {
		case c.AnthropicVersion == "":
			return errors.New("anthropic_version: required key [anthropic_version] not found")
		case c.Model != nil:
			return errors.New("extraneous key [model] is not permitted")
		case c.MaxTokens == nil:
			return errors.New("required key [max_tokens] not found")
		case len(c.Messages) == 0:
			return errors.New("messages: at least one message is required")
		}
	case geminiAPI:
		if len(c.Contents) == 0 {
			return errors.New("* GenerateContentRequest.contents: contents is not specified")
		}
	}
	return nil
}

// awsError answers as AWS's services do: a JSON message and the error's
// type in x-amzn-ErrorType.
func awsError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Errortype", typ)
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

// googleError answers as Google's APIs do.
func googleError(w http.ResponseWriter, code int, status, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}})
}

// serveHosted answers Bedrock's and Gemini's requests.
func (s *Server) serveHosted(w http.ResponseWriter, r *http.Request, body []byte, rt cloudRoute) {
	arrival := time.Now()
	s.requests.Add(1)
	n := s.seq.Add(1)
	var req cloudRequest
	err := json.Unmarshal(body, &req)
	if err == nil {
		err = req.check(rt.api)
	}
	if err != nil {
		s.badRequests.Add(1)
		if rt.api == geminiAPI {
			googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "mock: "+err.Error())
		} else {
			awsError(w, http.StatusBadRequest, "ValidationException", "mock: "+err.Error())
		}
		return
	}
	if s.shouldFail(n) {
		s.injected.Add(1)
		if rt.api == geminiAPI {
			googleError(w, http.StatusInternalServerError, "INTERNAL", injectedFailure)
		} else {
			awsError(w, http.StatusInternalServerError, "InternalServerException", injectedFailure)
		}
		return
	}
	ctx := r.Context()
	if err := s.adm.acquire(ctx); err != nil {
		s.canceled.Add(1)
		return
	}
	defer s.adm.release()
	prompt := s.count.count(req.promptText())
	s.promptTokens.Add(uint64(prompt))
	g := generation{n: n, arrival: arrival, first: time.Now().Add(s.cfg.TTFT + s.promptPrefill(prompt)), finish: "length",
		words: splitmix64(s.cfg.Seed + n), prompt: prompt, model: s.cfg.Model}
	for _, v := range []*int{req.InferenceConfig.MaxTokens, req.MaxTokens, req.GenerationConfig.MaxOutputTokens} {
		if v != nil && *v > 0 {
			g.out = min(*v, s.cfg.MaxOutputTokens)
		}
	}
	if g.out == 0 {
		g.out, g.finish = s.cfg.DefaultOutputTokens, "stop"
	}
	var out cloudWriter
	switch {
	case rt.api == geminiAPI && rt.stream && r.URL.Query().Get("alt") == "sse":
		out = &sseWriter{w: w}
	case rt.api == geminiAPI && rt.stream:
		out = &arrayWriter{w: w}
	case rt.stream:
		out = &eventStreamWriter{w: w, enc: eventstream.NewEncoder()}
	default:
		out = &wholeWriter{w: w}
	}
	if err := s.emitHosted(ctx, out, rt.api, &g); err != nil {
		s.canceled.Add(1)
		return
	}
	s.completed.Add(1)
}

// cloudWriter sends a hosted API's answer: its events as they are due
// (event is the event's type where the framing has one), or the whole
// body at once.
type cloudWriter interface {
	start(contentType string) error
	event(typ string, v any) error
	end() error
}

// emitHosted sends g as api's events (or body), each when due.
func (s *Server) emitHosted(ctx context.Context, out cloudWriter, api cloudAPI, g *generation) error {
	ct := "application/json"
	switch out.(type) {
	case *eventStreamWriter:
		ct = "application/vnd.amazon.eventstream"
	case *sseWriter:
		ct = "text/event-stream"
	}
	if err := out.start(ct); err != nil {
		return err
	}
	id := strconv.FormatUint(g.n, 10)
	pad := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0"[:1+g.n%50] // Bedrock's "p" padding
	stop := anthropicStop(g.finish)
	if api == geminiAPI {
		stop = "STOP"
		if g.finish == "length" {
			stop = "MAX_TOKENS"
		}
	}
	claude := func(v map[string]any) map[string]any { // an InvokeModel chunk
		b, _ := json.Marshal(v)
		return map[string]any{"bytes": base64.StdEncoding.EncodeToString(b), "p": pad}
	}
	if _, whole := out.(*wholeWriter); whole {
		var timer *time.Timer
		if err := sleepUntil(ctx, &timer, g.due(g.out-1, s.cfg.ITL)); err != nil {
			return err
		}
		s.ttft.record(time.Since(g.arrival))
		s.genTokens.Add(uint64(g.out))
		text := string(appendWords(nil, g.words, 0, g.out))
		var body any
		switch api {
		case converseAPI:
			body = map[string]any{"output": map[string]any{"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"text": text}}}},
				"stopReason": stop, "usage": map[string]int{"inputTokens": g.prompt, "outputTokens": g.out, "totalTokens": g.prompt + g.out},
				"metrics": map[string]int{"latencyMs": int(time.Since(g.arrival).Milliseconds())}}
		case invokeAPI:
			body = map[string]any{"id": "msg_bdrk_mock" + id, "type": "message", "role": "assistant", "model": g.model,
				"content": []any{map[string]any{"type": "text", "text": text}}, "stop_reason": stop, "stop_sequence": nil,
				"usage": map[string]int{"input_tokens": g.prompt, "output_tokens": g.out}}
		default:
			body = geminiChunk(text, stop, g, true)
		}
		return out.event("", body)
	}
	switch api {
	case converseAPI:
		if err := out.event("messageStart", map[string]any{"role": "assistant", "p": pad}); err != nil {
			return err
		}
	case invokeAPI:
		msg := map[string]any{"id": "msg_bdrk_mock" + id, "type": "message", "role": "assistant", "model": g.model, "content": []any{},
			"stop_reason": nil, "stop_sequence": nil, "usage": map[string]int{"input_tokens": g.prompt, "output_tokens": 1}}
		if err := out.event("chunk", claude(map[string]any{"type": "message_start", "message": msg})); err != nil {
			return err
		}
		if err := out.event("chunk", claude(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})); err != nil {
			return err
		}
	}
	var timer *time.Timer
	k := max(s.cfg.TokensPerChunk, 1)
	for i := 0; i < g.out; {
		end := min(i+k, g.out)
		if err := sleepUntil(ctx, &timer, g.due(i, s.cfg.ITL)); err != nil {
			return err
		}
		text := string(appendWords(nil, g.words, i, end))
		var err error
		switch api {
		case converseAPI:
			err = out.event("contentBlockDelta", map[string]any{"contentBlockIndex": 0, "delta": map[string]any{"text": text}, "p": pad})
		case invokeAPI:
			err = out.event("chunk", claude(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": text}}))
		default:
			err = out.event("", geminiChunk(text, stop, g, end == g.out))
		}
		if err != nil {
			return fmt.Errorf("mock: writing event: %w", err)
		}
		if i == 0 {
			s.ttft.record(time.Since(g.arrival))
		}
		s.genTokens.Add(uint64(end - i))
		i = end
	}
	switch api {
	case converseAPI:
		_ = out.event("contentBlockStop", map[string]any{"contentBlockIndex": 0, "p": pad})
		_ = out.event("messageStop", map[string]any{"stopReason": stop, "p": pad})
		_ = out.event("metadata", map[string]any{"usage": map[string]int{"inputTokens": g.prompt, "outputTokens": g.out, "totalTokens": g.prompt + g.out},
			"metrics": map[string]int{"latencyMs": int(time.Since(g.arrival).Milliseconds())}, "p": pad})
	case invokeAPI:
		_ = out.event("chunk", claude(map[string]any{"type": "content_block_stop", "index": 0}))
		_ = out.event("chunk", claude(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
			"usage": map[string]int{"output_tokens": g.out}}))
		_ = out.event("chunk", claude(map[string]any{"type": "message_stop", "amazon-bedrock-invocationMetrics": map[string]int{
			"inputTokenCount": g.prompt, "outputTokenCount": g.out, "invocationLatency": int(time.Since(g.arrival).Milliseconds()),
			"firstByteLatency": int(s.cfg.TTFT.Milliseconds())}}))
	}
	return out.end()
}

// geminiChunk is a GenerateContentResponse carrying text; the last one
// has the finish reason and the usage.
func geminiChunk(text, stop string, g *generation, last bool) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}}, "index": 0}
	c := map[string]any{"candidates": []any{cand}, "modelVersion": g.model, "responseId": "mock-" + strconv.FormatUint(g.n, 10)}
	usage := map[string]int{"promptTokenCount": g.prompt, "totalTokenCount": g.prompt}
	if last {
		cand["finishReason"] = stop
		usage["candidatesTokenCount"] = g.out
		usage["totalTokenCount"] = g.prompt + g.out
	}
	c["usageMetadata"] = usage
	return c
}

// eventStreamWriter writes an AWS event stream, a message a flush.
type eventStreamWriter struct {
	w   http.ResponseWriter
	enc *eventstream.Encoder
}

func (e *eventStreamWriter) start(ct string) error { return startFramed(e.w, ct) }

func (e *eventStreamWriter) event(typ string, v any) error {
	b, _ := json.Marshal(v)
	return e.message(typ, b)
}

// message writes one event message of type typ.
func (e *eventStreamWriter) message(typ string, payload []byte) error {
	m := eventstream.Message{Headers: eventstream.Headers{
		{Name: ":event-type", Value: eventstream.StringValue(typ)},
		{Name: ":content-type", Value: eventstream.StringValue("application/json")},
		{Name: ":message-type", Value: eventstream.StringValue("event")},
	}, Payload: payload}
	if err := e.enc.Encode(e.w, m); err != nil {
		return err
	}
	e.w.(http.Flusher).Flush()
	return nil
}

func (e *eventStreamWriter) end() error { return nil }

// sseWriter writes server-sent events (Gemini's ?alt=sse).
type sseWriter struct{ w http.ResponseWriter }

func (e *sseWriter) start(ct string) error { return startFramed(e.w, ct) }

func (e *sseWriter) event(_ string, v any) error {
	b, _ := json.Marshal(v)
	if _, err := fmt.Fprintf(e.w, "data: %s\r\n\r\n", b); err != nil {
		return err
	}
	e.w.(http.Flusher).Flush()
	return nil
}

func (e *sseWriter) end() error { return nil }

// arrayWriter writes a JSON array an element at a time (Gemini without
// ?alt=sse).
type arrayWriter struct {
	w http.ResponseWriter
	n int
}

func (e *arrayWriter) start(ct string) error { return startFramed(e.w, ct) }

func (e *arrayWriter) event(_ string, v any) error {
	b, _ := json.MarshalIndent(v, "", "  ")
	sep := "[\n"
	if e.n > 0 {
		sep = "\n,\r\n"
	}
	e.n++
	if _, err := fmt.Fprintf(e.w, "%s%s", sep, b); err != nil {
		return err
	}
	e.w.(http.Flusher).Flush()
	return nil
}

func (e *arrayWriter) end() error {
	if e.n == 0 {
		_, err := e.w.Write([]byte("[]"))
		return err
	}
	_, err := e.w.Write([]byte("\n]"))
	return err
}

// wholeWriter writes one JSON body.
type wholeWriter struct{ w http.ResponseWriter }

func (e *wholeWriter) start(string) error { return nil }

func (e *wholeWriter) event(_ string, v any) error {
	e.w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(e.w).Encode(v)
}

func (e *wholeWriter) end() error { return nil }

// startFramed sends a streamed answer's headers.
func startFramed(w http.ResponseWriter, ct string) error {
	if _, ok := w.(http.Flusher); !ok {
		writeError(w, http.StatusInternalServerError, "server_error", errNoFlush.Error())
		return errNoFlush
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	return nil
}

// serveSageMaker answers InvokeEndpoint and
// InvokeEndpointWithResponseStream as SageMaker does for an
// OpenAI-compatible container (this mock): the body goes to the
// container's route its fields name (messages: chat, prompt: completions,
// input: embeddings), and a streamed answer's bytes travel in PayloadPart
// events of an event stream.
func (s *Server) serveSageMaker(w http.ResponseWriter, r *http.Request, body []byte, stream bool) {
	var probe struct {
		Messages, Prompt, Input json.RawMessage
	}
	_ = json.Unmarshal(body, &probe)
	path := "/v1/chat/completions"
	switch {
	case probe.Messages != nil:
	case probe.Prompt != nil:
		path = "/v1/completions"
	case probe.Input != nil:
		path = "/v1/embeddings"
	}
	inner := r.Clone(r.Context())
	inner.URL.Path, inner.URL.RawPath = path, ""
	inner.Body = http.NoBody
	if len(body) > 0 {
		inner.Body = readCloser{bytes.NewReader(body)}
	}
	inner.ContentLength = int64(len(body))
	if !stream {
		s.route(w, inner)
		return
	}
	pw := &payloadWriter{w: w, enc: eventstream.NewEncoder(), header: http.Header{}}
	s.route(pw, inner)
	if !pw.wrote {
		pw.WriteHeader(http.StatusOK)
	}
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// payloadWriter is the container's ResponseWriter inside
// InvokeEndpointWithResponseStream: a 200's bytes go out as PayloadPart
// events, any other status as the container wrote it.
type payloadWriter struct {
	w      http.ResponseWriter
	enc    *eventstream.Encoder
	header http.Header
	wrote  bool
	framed bool
}

func (p *payloadWriter) Header() http.Header { return p.header }

func (p *payloadWriter) WriteHeader(code int) {
	if p.wrote {
		return
	}
	p.wrote = true
	h := p.w.Header()
	if code != http.StatusOK {
		for k, v := range p.header {
			h[k] = v
		}
		p.w.WriteHeader(code)
		return
	}
	p.framed = true
	h.Set("Content-Type", "application/vnd.amazon.eventstream")
	h.Set("X-Amzn-Sagemaker-Content-Type", p.header.Get("Content-Type"))
	p.w.WriteHeader(code)
}

func (p *payloadWriter) Write(b []byte) (int, error) {
	if !p.wrote {
		p.WriteHeader(http.StatusOK)
	}
	if !p.framed {
		return p.w.Write(b)
	}
	if len(b) == 0 {
		return 0, nil
	}
	m := eventstream.Message{Headers: eventstream.Headers{
		{Name: ":event-type", Value: eventstream.StringValue("PayloadPart")},
		{Name: ":content-type", Value: eventstream.StringValue("application/octet-stream")},
		{Name: ":message-type", Value: eventstream.StringValue("event")},
	}, Payload: b}
	if err := p.enc.Encode(p.w, m); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (p *payloadWriter) Flush() {
	if fl, ok := p.w.(http.Flusher); ok {
		fl.Flush()
	}
}

// cloudAuth is what the mock requires of a request's credentials.
type cloudAuth struct {
	mu     sync.Mutex
	tokens map[string]time.Time // tokens issued, and when they expire
	n      int
}

// Token lifetimes the mock's token endpoints give.
const tokenLifetime = time.Hour

// issue makes a token.
func (s *Server) issue() (string, time.Time) {
	a := &s.auth
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tokens == nil {
		a.tokens = map[string]time.Time{}
	}
	a.n++
	sum := sha256.Sum256(fmt.Appendf(nil, "%d/%d/%d", s.cfg.Seed, s.created, a.n))
	tok := "mock-token-" + hex.EncodeToString(sum[:12])
	exp := time.Now().Add(tokenLifetime)
	a.tokens[tok] = exp
	return tok, exp
}

// issued reports whether tok is a live token the mock issued.
func (s *Server) issued(tok string) bool {
	a := &s.auth
	a.mu.Lock()
	defer a.mu.Unlock()
	exp, ok := a.tokens[tok]
	return ok && time.Now().Before(exp)
}

// serveTokens is the token endpoints: an OAuth 2.0 token endpoint
// (POST /token: a Google service account's JWT grant, an authorized
// user's refresh token), Google's metadata server
// (/computeMetadata/v1/…, with Metadata-Flavor: Google) and Azure App
// Service's managed identity endpoint (GET /msi/token, with
// X-IDENTITY-HEADER).
func (s *Server) serveTokens(w http.ResponseWriter, r *http.Request) bool {
	reply := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	switch p := r.URL.Path; {
	case p == "/token":
		if allow(w, r, http.MethodPost) {
			if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") == "" {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_request", "error_description": "mock: no grant_type"})
				return true
			}
			tok, _ := s.issue()
			reply(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(tokenLifetime.Seconds())})
		}
	case strings.HasPrefix(p, "/computeMetadata/v1/"):
		if r.Header.Get("Metadata-Flavor") != "Google" {
			http.Error(w, "mock: missing Metadata-Flavor: Google", http.StatusForbidden)
			return true
		}
		w.Header().Set("Metadata-Flavor", "Google")
		switch strings.TrimPrefix(p, "/computeMetadata/v1/") {
		case "instance/service-accounts/default/token":
			tok, _ := s.issue()
			reply(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(tokenLifetime.Seconds())})
		case "project/project-id":
			_, _ = w.Write([]byte("mock-project"))
		case "universe/universe-domain":
			_, _ = w.Write([]byte("googleapis.com"))
		case "instance/service-accounts/default/email":
			_, _ = w.Write([]byte("mock@mock-project.iam.gserviceaccount.com"))
		default:
			http.NotFound(w, r)
		}
	case p == "/msi/token":
		if r.Header.Get("X-Identity-Header") == "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_request", "error_description": "mock: no X-IDENTITY-HEADER"})
			return true
		}
		tok, exp := s.issue()
		reply(map[string]any{"access_token": tok, "expires_on": strconv.FormatInt(exp.Unix(), 10), "resource": r.URL.Query().Get("resource"),
			"token_type": "Bearer", "client_id": "00000000-0000-0000-0000-000000000000"})
	default:
		return false
	}
	return true
}

// checkCredentials answers a request without the credentials the Config
// requires as the cloud would (AWS's 403s, Azure's 401, Google's 401),
// and reports whether it may go on.
func (s *Server) checkCredentials(w http.ResponseWriter, r *http.Request) bool {
	c := &s.cfg
	if c.SigV4 == nil && c.APIKey == "" && !c.RequireToken {
		return true
	}
	switch r.URL.Path {
	case "/health", "/token", "/msi/token":
		return true
	}
	if strings.HasPrefix(r.URL.Path, "/computeMetadata/") {
		return true
	}
	switch {
	case c.SigV4 != nil:
		return s.checkSigV4(w, r)
	case c.APIKey != "":
		for _, h := range []string{"Api-Key", "X-Api-Key", "X-Goog-Api-Key"} {
			if r.Header.Get(h) == c.APIKey {
				return true
			}
		}
		if r.Header.Get("Authorization") == "Bearer "+c.APIKey {
			return true
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": "401",
			"message": "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}})
		return false
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if ok && s.issued(tok) {
		return true
	}
	googleError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
	return false
}

// SigV4Credentials are the AWS credentials a mock checks signatures
// with.
type SigV4Credentials struct {
	AccessKeyID, SecretAccessKey string
	// SessionToken, when set, must come as X-Amz-Security-Token.
	SessionToken string
}

// checkSigV4 signs the request again with the mock's credentials, as the
// client says it signed it (its scope, its signed headers, its time),
// and answers AWS's 403 unless the signatures match.
func (s *Server) checkSigV4(w http.ResponseWriter, r *http.Request) bool {
	creds := s.cfg.SigV4
	authz := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(authz, "AWS4-HMAC-SHA256 ")
	if !ok {
		awsError(w, http.StatusForbidden, "MissingAuthenticationTokenException", "Missing Authentication Token")
		return false
	}
	var credential, signed string
	for _, part := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			credential = v
		case "SignedHeaders":
			signed = v
		}
	}
	scope := strings.Split(credential, "/")
	if len(scope) != 5 || scope[4] != "aws4_request" {
		awsError(w, http.StatusForbidden, "IncompleteSignatureException", "Authorization header requires a valid Credential.")
		return false
	}
	if scope[0] != creds.AccessKeyID || creds.SessionToken != "" && r.Header.Get("X-Amz-Security-Token") != creds.SessionToken {
		awsError(w, http.StatusForbidden, "UnrecognizedClientException", "The security token included in the request is invalid.")
		return false
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		awsError(w, http.StatusForbidden, "IncompleteSignatureException", "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.")
		return false
	}
	body, err := readBody(http.MaxBytesReader(w, r.Body, maxBodyBytes), nil)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "mock: reading body: "+err.Error())
		return false
	}
	r.Body = readCloser{bytes.NewReader(body)}
	again, _ := http.NewRequestWithContext(r.Context(), r.Method, "http://"+r.Host+r.URL.RequestURI(), nil)
	again.ContentLength = r.ContentLength
	for _, h := range strings.Split(signed, ";") {
		switch h {
		case "host", "content-length", "authorization":
		default:
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	c := aws.Credentials{AccessKeyID: creds.AccessKeyID, SecretAccessKey: creds.SecretAccessKey, SessionToken: r.Header.Get("X-Amz-Security-Token")}
	if err := v4.NewSigner().SignHTTP(r.Context(), c, again, hex.EncodeToString(sum[:]), scope[3], scope[2], at); err != nil ||
		again.Header.Get("Authorization") != authz {
		awsError(w, http.StatusForbidden, "InvalidSignatureException", "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.")
		return false
	}
	return true
}
