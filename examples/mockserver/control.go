package mockserver

import (
	"io"
	"net/http"
	"sync/atomic"
)

// Control endpoints of the servers surge profiles: vLLM's
// /reset_prefix_cache, SGLang's /flush_cache and both servers' profiler
// /start_profile and /stop_profile. The mock answers each POST with 200
// and counts it (Stats), so a client's KV-cache resets and profiler calls
// can be checked.
const (
	PathResetPrefixCache = "/reset_prefix_cache"
	PathFlushCache       = "/flush_cache"
	PathStartProfile     = "/start_profile"
	PathStopProfile      = "/stop_profile"
)

// controlCounts counts the control calls by path.
type controlCounts struct {
	resets, flushes, starts, stops atomic.Uint64
}

// counter is the count a control path adds to (nil: not a control path).
func (c *controlCounts) counter(path string) *atomic.Uint64 {
	switch path {
	case PathResetPrefixCache:
		return &c.resets
	case PathFlushCache:
		return &c.flushes
	case PathStartProfile:
		return &c.starts
	case PathStopProfile:
		return &c.stops
	}
	return nil
}

// serveControl answers a control call, reporting whether r was one.
func (s *Server) serveControl(w http.ResponseWriter, r *http.Request) bool {
	n := s.control.counter(r.URL.Path)
	if n == nil {
		return false
	}
	if allow(w, r, http.MethodPost) {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<16))
		n.Add(1)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok")
	}
	return true
}
