package mockserver

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// What the mock sees of prefill and of clients that leave: how many
// requests have arrived and not had their first token flushed (the queue a
// client's --prefill-concurrency caps), the most there were at once, and
// the requests whose client disconnected before their end, before or after
// the first token (a client's --request-cancellation-rate).

// prefillGauge counts the chat and completions requests between their
// arrival and their first token's flush (or their end), and the peak.
type prefillGauge struct {
	now, peak atomic.Int64
}

func (p *prefillGauge) enter() {
	n := p.now.Add(1)
	for {
		m := p.peak.Load()
		if n <= m || p.peak.CompareAndSwap(m, n) {
			return
		}
	}
}

// leave ends g's prefill, once.
func (p *prefillGauge) leave(g *generation) {
	if g.prefilling {
		g.prefilling = false
		p.now.Add(-1)
	}
}

// abortLog writes one line per request its client left (Config.AbortLog).
type abortLog struct {
	mu sync.Mutex
	w  io.Writer
}

// aborted counts a request whose client disconnected before its end:
// before its first token was sent, or mid-stream after g.sent tokens.
func (s *Server) aborted(g *generation) {
	s.canceled.Add(1)
	stage := "before its first token"
	if g.sent == 0 {
		s.abortedPrefill.Add(1)
	} else {
		s.abortedStream.Add(1)
		stage = fmt.Sprintf("mid-stream, after %d of %d tokens", g.sent, g.out)
	}
	s.prefill.leave(g)
	if l := s.aborts; l != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		fmt.Fprintf(l.w, "mock: request %d (x-request-id %q) aborted by its client %s, %s after it arrived\n",
			g.n, g.id, stage, time.Since(g.arrival).Round(time.Millisecond))
	}
}
