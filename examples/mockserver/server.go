package mockserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// maxBodyBytes bounds a request body; long-context prompts fit easily.
const maxBodyBytes = 64 << 20

// Server is the mock inference server. It implements http.Handler and is
// safe for concurrent use; its counters are atomics, so serving never
// takes a lock shared by all requests (MaxRunning's queue aside).
type Server struct {
	cfg     Config
	hub     *os.Root // Config.Hub's folder (nil: no Hub served)
	adm     admission
	count   *counter // prompt tokens (the config's tokenizer, or words)
	created int64    // Unix seconds, reported by /v1/models

	seq          atomic.Uint64 // numbers completion requests in arrival order
	requests     atomic.Uint64
	completed    atomic.Uint64
	injected     atomic.Uint64
	streamErrors atomic.Uint64 // StreamErrorRate failures
	badRequests  atomic.Uint64
	canceled     atomic.Uint64
	promptTokens atomic.Uint64
	images       atomic.Uint64
	audioClips   atomic.Uint64
	genTokens    atomic.Uint64
	finishStop   atomic.Uint64
	finishLength atomic.Uint64
	ttft         latencyHist
	wire         *wireLog // nil: no wire log
	// prefill counts the requests not past their first token; aborted*
	// the requests whose client left before or after it (aborts.go).
	prefill                       prefillGauge
	abortedPrefill, abortedStream atomic.Uint64
	aborts                        *abortLog // nil: not logged
	// agents counts the agent traffic and holds the prefix cache (tools.go).
	agents agentCounters

	bufs sync.Pool // *[]byte, event and body scratch
	// auth holds the tokens the mock's token endpoints issued (clouds.go).
	auth cloudAuth
	// control counts the KV-cache resets and profiler calls (control.go).
	control controlCounts
	// spans exports a span per request (Config.OTLPEndpoint; nil: none).
	spans *exporter
}

// New returns a server for cfg, with defaults filled in for zero fields
// and out-of-range values clamped (use Config.Validate to reject them
// instead).
func New(cfg Config) *Server {
	cfg = cfg.withDefaults()
	cfg.TTFT = max(cfg.TTFT, 0)
	cfg.ITL = max(cfg.ITL, 0)
	cfg.PrefillPerToken = max(cfg.PrefillPerToken, 0)
	cfg.PrefillPerImage = max(cfg.PrefillPerImage, 0)
	cfg.PrefillPerAudioSecond = max(cfg.PrefillPerAudioSecond, 0)
	cfg.ErrorRate = min(max(cfg.ErrorRate, 0), 1)
	cfg.StreamErrorRate = min(max(cfg.StreamErrorRate, 0), 1)
	if validShape(cfg.StreamErrorShape) != nil {
		cfg.StreamErrorShape = ShapeVLLM
	}
	cfg.MaxRunning = max(cfg.MaxRunning, 0)
	s := &Server{cfg: cfg, created: time.Now().Unix(), count: newCounter(cfg.Tokenizer)}
	if cfg.WireLog != nil {
		s.wire = &wireLog{w: cfg.WireLog}
	}
	if cfg.AbortLog != nil {
		s.aborts = &abortLog{w: cfg.AbortLog}
	}
	s.adm.max = cfg.MaxRunning
	s.hub, _ = openHub(cfg.Hub) // Validate said why it cannot open
	s.bufs.New = func() any { b := make([]byte, 0, 4096); return &b }
	if cfg.OTLPEndpoint != "" {
		s.spans = newExporter(cfg.OTLPEndpoint)
	}
	return s
}

// Config returns the configuration in effect, defaults included.
func (s *Server) Config() Config { return s.cfg }

// ServeHTTP routes a request to the endpoint it names.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.checkCredentials(w, r) {
		s.route(w, r)
	}
}

// route answers r by its path.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/chat/completions":
		if allow(w, r, http.MethodPost) {
			s.serveCompletion(w, r, chatAPI)
		}
	case "/v1/completions":
		if allow(w, r, http.MethodPost) {
			s.serveCompletion(w, r, completionsAPI)
		}
	case "/v1/models":
		if allow(w, r, http.MethodGet) {
			s.serveModels(w)
		}
	case "/health":
		if allow(w, r, http.MethodGet) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, "ok")
		}
	case "/metrics":
		if allow(w, r, http.MethodGet) {
			s.serveMetrics(w)
		}
	case "/stats":
		if allow(w, r, http.MethodGet) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(s.Stats())
		}
	default:
		if s.serveControl(w, r) {
			return
		}
		if s.serveCloud(w, r) {
			return
		}
		if api, ok := otherRoutes[r.URL.Path]; ok {
			if allow(w, r, http.MethodPost) {
				s.serveOther(w, r, api)
			}
			return
		}
		if s.serveHub(w, r) {
			return
		}
		writeError(w, http.StatusNotFound, "not_found_error",
			fmt.Sprintf("mock: no route for %s %s", r.Method, r.URL.Path))
	}
}

// allow answers 405 unless r uses method (GET also admits HEAD).
func allow(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method || (method == http.MethodGet && r.Method == http.MethodHead) {
		return true
	}
	w.Header().Set("Allow", method)
	writeError(w, http.StatusMethodNotAllowed, "invalid_request_error",
		fmt.Sprintf("mock: %s %s is not allowed, use %s", r.Method, r.URL.Path, method))
	return false
}

// apiError is OpenAI's error body.
type apiError struct {
	Error apiErrorBody `json:"error"`
}

type apiErrorBody struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Param   any    `json:"param"`
	Code    int    `json:"code"`
}

// writeError sends an OpenAI-style error body with status code.
func writeError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(apiError{Error: apiErrorBody{Message: msg, Type: typ, Code: code}})
}

// injectedFailure is the message of an ErrorRate failure.
const injectedFailure = "mock: injected failure"

// shouldFail decides, from the seed and the request number alone, whether
// request n is an injected failure.
func (s *Server) shouldFail(n uint64) bool {
	if s.cfg.ErrorRate <= 0 {
		return false
	}
	return unitFloat(splitmix64(s.cfg.Seed^splitmix64(n))) < s.cfg.ErrorRate
}

// serveCompletion handles both generation endpoints.
func (s *Server) serveCompletion(w http.ResponseWriter, r *http.Request, kind apiKind) {
	arrival := time.Now()
	s.requests.Add(1)
	n := s.seq.Add(1)
	if id := r.Header.Get("X-Request-Id"); id != "" {
		w.Header().Set("X-Request-Id", id)
	}

	bp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bp)
	body, err := readBody(http.MaxBytesReader(w, r.Body, maxBodyBytes), (*bp)[:0])
	*bp = body[:0]
	wireArrival := arrivalOf(r.Context()) // the body's last segment is read now
	read := time.Now()                    // TTFT runs from here (or from admission, after a wait)
	if err != nil {
		s.badRequests.Add(1)
		writeError(w, http.StatusBadRequest, "invalid_request_error", "mock: reading body: "+err.Error())
		return
	}
	req, err := s.count.parseRequest(body, kind, s.cfg.MaxOutputTokens)
	if err != nil {
		s.badRequests.Add(1)
		writeError(w, http.StatusBadRequest, "invalid_request_error", "mock: "+err.Error())
		return
	}
	var agent *agentPlan
	if kind == chatAPI {
		if agent, err = s.agent(chatAgent, body, req.PromptTokens, req.MaxTokens, n); err != nil {
			s.writeAgentError(w, err)
			return
		}
	}
	if s.shouldFail(n) {
		s.injected.Add(1)
		writeError(w, http.StatusInternalServerError, "server_error", injectedFailure)
		return
	}

	// From here until its first token the request is in prefill.
	s.prefill.enter()
	pre := generation{n: n, arrival: arrival, id: r.Header.Get("X-Request-Id"), out: req.MaxTokens, prefilling: true}
	defer s.prefill.leave(&pre)
	if req.Stream {
		if err := startStream(w); err != nil {
			return
		}
	}
	ctx := r.Context()
	if err := s.adm.acquire(ctx); err != nil {
		s.aborted(&pre)
		return
	}
	defer s.adm.release()
	admitted := time.Now()
	if s.cfg.MaxRunning == 0 {
		// Never queued: reading and counting the prompt is part of the
		// prefill time, not added to it.
		admitted = read
	}
	req.PromptTokens = cutPrompt(req.PromptTokens, s.cfg.ContextTokens)
	s.promptTokens.Add(uint64(req.PromptTokens))
	s.images.Add(uint64(req.Media.Images))
	s.audioClips.Add(uint64(req.Media.Audio))

	pre.prefilling = false // g carries it on
	g := generation{
		prefilling: true,
		kind:       kind,
		n:          n,
		arrival:    arrival,
		wireAt:     wireArrival,
		id:         r.Header.Get("X-Request-Id"),
		admitted:   admitted,
		first:      admitted.Add(s.cfg.TTFT + s.promptPrefill(uncached(req.PromptTokens, agent)) + s.mediaPrefill(&req.Media)),
		out:        req.MaxTokens,
		finish:     "length",
		words:      splitmix64(s.cfg.Seed + n),
		prompt:     req.PromptTokens,
		model:      req.Model,
		agent:      agent,
	}
	if s.cfg.IgnoreMaxCompletionTokens {
		g.out = req.LegacyMaxTokens
	}
	if g.out == 0 {
		g.out, g.finish = s.cfg.DefaultOutputTokens, "stop"
	}
	if g.model == "" {
		g.model = s.cfg.Model
	}
	if kind == chatAPI {
		g.reasoning = min(s.cfg.ReasoningTokens, g.out)
	}

	if req.Stream {
		err = s.stream(ctx, w, &g, req.IncludeUsage, req.ContinuousUsage)
	} else {
		err = s.respond(ctx, w, &g)
	}
	if errors.Is(err, errStreamFailed) {
		return // counted as a stream error
	}
	if err != nil {
		s.aborted(&g)
		return
	}
	s.prefill.leave(&g) // a whole body: its end was its first token
	s.traced(&g, r, time.Now())
	s.completed.Add(1)
	if g.finish == "stop" {
		s.finishStop.Add(1)
	} else {
		s.finishLength.Add(1)
	}
}

// uncached is the prompt tokens a prefix cache did not hold (all of them
// without PrefixCache).
func uncached(prompt int, a *agentPlan) int {
	if a == nil || a.cached <= 0 {
		return prompt
	}
	return max(prompt-a.cached, 0)
}

// promptPrefill is the time a prompt of n tokens adds to TTFT.
func (s *Server) promptPrefill(n int) time.Duration { return time.Duration(n) * s.cfg.PrefillPerToken }

// mediaPrefill is the time a request's images and audio add to its TTFT.
func (s *Server) mediaPrefill(m *mediaLoad) time.Duration {
	return time.Duration(m.Images)*s.cfg.PrefillPerImage +
		time.Duration(m.AudioSeconds*float64(s.cfg.PrefillPerAudioSecond))
}

// readBody reads all of r into buf.
func readBody(r io.Reader, buf []byte) ([]byte, error) {
	bb := bytes.NewBuffer(buf)
	_, err := bb.ReadFrom(r)
	return bb.Bytes(), err
}

// generation is one admitted request's output plan.
type generation struct {
	kind      apiKind
	n         uint64    // request number, also its id
	arrival   time.Time // handler entry
	wireAt    int64     // kernel receive time of the request's body (Unix ns; 0: unknown)
	id        string    // the client's X-Request-Id
	first     time.Time // when token 0 is due
	out       int       // output tokens, reasoning included
	reasoning int       // the first reasoning tokens are reasoning
	finish    string
	words     uint64 // word offset
	prompt    int
	model     string
	// agent, when set, is what the request's tools ask of the answer.
	agent *agentPlan
	// prefilling is set until the first token is flushed (prefillGauge);
	// sent counts the tokens flushed.
	prefilling bool
	sent       int
	// admitted is when the request left the queue; firstAt when its first
	// token was flushed (zero: none was), for the mock's own account of
	// its time (timings.go).
	admitted, firstAt time.Time
}

// due is when token i is due: first + i*ITL, an absolute deadline.
func (g *generation) due(i int, itl time.Duration) time.Time {
	return g.first.Add(time.Duration(i) * itl)
}

// id is the response id, in OpenAI's style.
func (g *generation) appendID(b []byte) []byte {
	if g.kind == chatAPI {
		b = append(b, "chatcmpl-mock-"...)
	} else {
		b = append(b, "cmpl-mock-"...)
	}
	return strconv.AppendUint(b, g.n, 10)
}

// sleepUntil waits on t until deadline or ctx ends. A deadline already
// past returns at once, so a late write is caught up rather than pushing
// every later token back.
func sleepUntil(ctx context.Context, t **time.Timer, deadline time.Time) error {
	d := time.Until(deadline)
	if d <= 0 {
		return ctx.Err()
	}
	if *t == nil {
		*t = time.NewTimer(d)
	} else {
		(*t).Reset(d)
	}
	select {
	case <-(*t).C:
		return nil
	case <-ctx.Done():
		(*t).Stop()
		return ctx.Err()
	}
}

// errNoFlush is returned when the ResponseWriter cannot stream.
var errNoFlush = errors.New("mock: response writer cannot flush")

// cutPrompt is the prompt length llama.cpp's server (early 2025) keeps of
// a prompt of n tokens in a context of ctx: with nothing kept at the
// front, it erases blocks of half the context until the prompt fits.
func cutPrompt(n, ctx int) int {
	if ctx <= 1 || n < ctx {
		return n
	}
	block := ctx / 2
	erased := (n - block) / block
	return n - erased*block
}
