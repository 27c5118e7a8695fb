package mockserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/surgebench/surge/loadgen/wire"
)

// Running is a mock server listening in the background, started by Start.
type Running struct {
	srv    *Server
	http   *http.Server
	ln     net.Listener
	url    string
	cancel context.CancelFunc
	done   chan struct{}
	err    error // from Serve, valid once done is closed
}

// Start listens on addr and serves a New(cfg) server in the background
// until ctx ends or Close is called. An addr without a host (":0",
// ":8000") binds 127.0.0.1 only; name a host ("0.0.0.0:8000") to serve
// other machines. Port 0 picks a free port; URL reports it.
func Start(ctx context.Context, addr string, cfg Config) (*Running, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("mockserver: address %q: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("mockserver: listening on %s: %w", addr, err)
	}
	// Accepted sockets carry kernel receive stamps, for the wire log.
	ln = wire.NewListener(ln)
	base, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := New(cfg)
	r := &Running{
		srv: s,
		http: &http.Server{
			Handler:           s,
			ReadHeaderTimeout: 10 * time.Second,
			// No WriteTimeout: streams may legitimately run for minutes.
			BaseContext: func(net.Listener) context.Context { return base },
			ConnContext: withConn,
		},
		ln:     ln,
		url:    urlFor(ln.Addr()),
		cancel: cancel,
		done:   make(chan struct{}),
	}
	go func() {
		defer close(r.done)
		if err := r.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			r.err = fmt.Errorf("mockserver: serving: %w", err)
		}
	}()
	go func() {
		select {
		case <-ctx.Done():
			sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer scancel()
			_ = r.Close(sctx)
		case <-r.done:
		}
	}()
	return r, nil
}

// urlFor is the base URL clients use for a listener address; an
// unspecified host (0.0.0.0, ::) is reached through 127.0.0.1.
func urlFor(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return "http://" + a.String()
	}
	host := ta.IP.String()
	if ta.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(ta.Port))
}

// URL is the server's base URL, "http://127.0.0.1:PORT"; the OpenAI API
// is under URL()+"/v1".
func (r *Running) URL() string { return r.url }

// Addr is the address the server listens on.
func (r *Running) Addr() net.Addr { return r.ln.Addr() }

// Server is the handler being served, for its Stats.
func (r *Running) Server() *Server { return r.srv }

// Done is closed once the server has stopped serving.
func (r *Running) Done() <-chan struct{} { return r.done }

// Close stops accepting connections, ends open streams (their request
// contexts are canceled) and waits for handlers to return, or for ctx.
// It returns the error serving stopped with, if any.
func (r *Running) Close(ctx context.Context) error {
	r.cancel()
	if err := r.http.Shutdown(ctx); err != nil {
		_ = r.http.Close()
		return fmt.Errorf("mockserver: shutting down: %w", err)
	}
	<-r.done
	r.srv.Close()
	if r.srv.hub != nil {
		_ = r.srv.hub.Close()
	}
	return r.err
}
