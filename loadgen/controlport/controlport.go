// Package controlport serves a live session's controls over HTTP, for
// scripts: the same changes the dashboard's keys make, on a local port
// (--control-addr, off by default).
//
//	GET  /control             the state in force (JSON)
//	POST /control/set         {"value": 16}       (or ?value=16)
//	POST /control/step        {"steps": -2}       (default 1)
//	POST /control/double, /control/halve, /control/pause, /control/resume
//
// Every answer is JSON: the state after the change, or
// {"error": {"type": ..., "message": ...}} with a 4xx status. Listen puts
// the controls behind Protect (a token, the Host and Origin checks, a
// rate limit).
package controlport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/loadgen"
)

// State is what GET /control and every change answer.
type State struct {
	loadgen.ControlState
	// Status is the session's own report when it has one (a capacity
	// search's bracket and last verdict).
	Status any `json:"status,omitempty"`
}

// Handler serves the controls of ctl. status, when set, adds the
// session's own report to every answer.
func Handler(ctl *loadgen.Controller, status func() any) http.Handler {
	mux := http.NewServeMux()
	answer := func(w http.ResponseWriter, st loadgen.ControlState) {
		s := State{ControlState: st}
		if status != nil {
			s.Status = status()
		}
		writeJSON(w, http.StatusOK, s)
	}
	mux.HandleFunc("GET /control", func(w http.ResponseWriter, _ *http.Request) { answer(w, ctl.State()) })
	change := func(name string, f func(r *http.Request) (loadgen.ControlState, error)) {
		mux.HandleFunc("POST /control/"+name, func(w http.ResponseWriter, r *http.Request) {
			st, err := f(r)
			switch {
			case errors.Is(err, loadgen.ErrControlClosed):
				writeError(w, http.StatusConflict, "session_ended", err.Error())
			case errors.Is(err, errBadRequest):
				writeError(w, http.StatusBadRequest, "invalid_request", strings.TrimPrefix(err.Error(), errBadRequest.Error()+": "))
			case err != nil:
				writeError(w, http.StatusUnprocessableEntity, "invalid_value", err.Error())
			default:
				answer(w, st)
			}
		})
	}
	change("set", func(r *http.Request) (loadgen.ControlState, error) {
		v, err := number(r, "value", math.NaN())
		if err != nil {
			return loadgen.ControlState{}, err
		}
		if math.IsNaN(v) {
			return loadgen.ControlState{}, fmt.Errorf("%w: set needs a value, e.g. {\"value\": 16}", errBadRequest)
		}
		return ctl.Set(v)
	})
	change("step", func(r *http.Request) (loadgen.ControlState, error) {
		n, err := number(r, "steps", 1)
		if err != nil {
			return loadgen.ControlState{}, err
		}
		if n != math.Trunc(n) || math.Abs(n) > 1e6 {
			return loadgen.ControlState{}, fmt.Errorf("%w: steps must be a whole number, got %v", errBadRequest, n)
		}
		return ctl.Step(int(n))
	})
	for name, f := range map[string]func() (loadgen.ControlState, error){
		"double": ctl.Double, "halve": ctl.Halve, "pause": ctl.Pause, "resume": ctl.Resume,
	} {
		change(name, func(*http.Request) (loadgen.ControlState, error) { return f() })
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// A known path asked with the wrong method is a 405, not a 404.
		switch name := strings.TrimPrefix(r.URL.Path, "/control/"); {
		case r.URL.Path == "/control":
			w.Header().Set("Allow", "GET")
			writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" /control: use GET")
		case strings.Contains(" set step double halve pause resume ", " "+name+" "):
			w.Header().Set("Allow", "POST")
			writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" "+r.URL.Path+": use POST")
		default:
			writeError(w, http.StatusNotFound, "not_found",
				fmt.Sprintf("no control %s %s: GET /control, POST /control/{set,step,double,halve,pause,resume}", r.Method, r.URL.Path))
		}
	})
	return mux
}

var errBadRequest = errors.New("bad request")

// maxBody bounds a control request's body: a few numbers.
const maxBody = 4 << 10

// number reads one field from the query (?value=16) or a JSON object body
// ({"value": 16}); def when neither has it.
func number(r *http.Request, field string, def float64) (float64, error) {
	if q := r.URL.Query().Get(field); q != "" {
		v, err := strconv.ParseFloat(q, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %s=%q is not a number", errBadRequest, field, q)
		}
		return v, nil
	}
	body, err := bounded.ReadAll(r.Context(), r.Body, maxBody, "the body")
	if err != nil {
		return 0, fmt.Errorf("%w: %v", errBadRequest, err)
	}
	return ParseField(body, field, def)
}

// ParseField reads a number field from a control request's JSON body. An
// empty body gives def; anything but a JSON object whose field (if present)
// is a finite number is an error naming what is wrong.
func ParseField(body []byte, field string, def float64) (float64, error) {
	if len(strings.TrimSpace(string(body))) == 0 {
		return def, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return 0, fmt.Errorf("%w: body is not a JSON object: %v", errBadRequest, err)
	}
	raw, ok := obj[field]
	if !ok {
		for k := range obj {
			return 0, fmt.Errorf("%w: unknown field %q (want %q)", errBadRequest, k, field)
		}
		return def, nil
	}
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil || string(raw) == "null" {
		return 0, fmt.Errorf("%w: %s must be a number, got %s", errBadRequest, field, raw)
	}
	return v, nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, typ, msg string) {
	writeJSON(w, code, map[string]any{"error": map[string]string{"type": typ, "message": msg}})
}

// ListenAddr resolves --control-addr: a bare port ("9090") or an address
// without a host (":9090") binds loopback only; a host must be named
// ("0.0.0.0:9090") to accept other machines.
func ListenAddr(addr string) (string, error) {
	a := strings.TrimSpace(addr)
	if a == "" {
		return "", errors.New("--control-addr is empty")
	}
	if _, err := strconv.ParseUint(a, 10, 16); err == nil {
		a = ":" + a
	}
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return "", fmt.Errorf("--control-addr %q: want host:port, e.g. 127.0.0.1:9090", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("--control-addr %q: port %q is not a number 0-65535", addr, port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Server is a control port listening in the background.
type Server struct {
	srv   *http.Server
	ln    net.Listener
	done  chan struct{}
	token string
	lim   *rate.Limiter
}

// Option configures Listen.
type Option func(*Server)

// WithToken has the port refuse (401) every request that does not carry
// token (see Protect); NewToken makes one.
func WithToken(token string) Option { return func(s *Server) { s.token = token } }

// WithRateLimit sets the port's rate limit (default 20 requests a second,
// bursts of 40); past it a request is answered 429.
func WithRateLimit(l *rate.Limiter) Option { return func(s *Server) { s.lim = l } }

// Listen serves ctl's controls on addr (see ListenAddr) until Close,
// behind Protect: rate-limited, refusing an Origin header or a Host other
// than the bound address, and, given WithToken, a request without the
// token.
func Listen(ctx context.Context, addr string, ctl *loadgen.Controller, status func() any, opts ...Option) (*Server, error) {
	a, err := ListenAddr(addr)
	if err != nil {
		return nil, err
	}
	s := &Server{done: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", a)
	if err != nil {
		return nil, fmt.Errorf("--control-addr: %w", err)
	}
	s.ln = ln
	s.srv = &http.Server{Handler: Protect(Handler(ctl, status), ln.Addr().String(), s.token, s.lim),
		ReadHeaderTimeout: 5 * time.Second, MaxHeaderBytes: 16 << 10}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// URL is the control port's base URL.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Token is the token the port asks for ("" when none).
func (s *Server) Token() string { return s.token }

// Close stops the control port.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	<-s.done
	return err
}
