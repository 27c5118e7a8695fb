package export

import (
	"bufio"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strconv"
	"sync"
)

// Inputs streams inputs.json in AIPerf's InputsFile shape: one entry per
// session the run sent, its request bodies in turn order (payloads[i] is
// turn i's body, as sent, the history of replies included):
//
//	{"data": [{"session_id": "conv-3", "payloads": [{…}, {…}]}, …]}
//
// session_id is the conversation's id; a conversation sent again (a
// dataset cycled, random sampling) gets "#2", "#3", … appended, so each
// entry is one session and AIPerf's inputs_json loader replays them all.
// Entries are written as sessions end, by a writer goroutine, so a large
// prompt's copy never sits between a request's intended and actual send.
// Body and EndSession only take a lock: the writer is woken once per batch
// of ended sessions, not per call (each wake-up of an idle goroutine costs
// the client a thread wake, several a request in all). Holding them loses
// nothing: the document is whole only once closed. They are safe for
// concurrent use; the bodies must not change after.
type Inputs struct {
	mu     sync.Mutex
	open   map[int64]*pending // sessions still sending
	ended  []*pending         // ended sessions the writer has not taken
	held   int                // bytes of their bodies
	closed bool
	taken  *sync.Cond // the writer took the ended sessions (callers waiting for room)
	// maxHeld is inputsMaxHeld (tests lower it).
	maxHeld int

	wake chan struct{} // capacity 1: a batch is ready, or the document closes
	done chan struct{}
	once sync.Once
	err  error
	// onFault hears of the first failed write (InputsWriteFault).
	onFault WriteFault
	// hash writes media as their digests (HashMedia).
	hash bool
}

// HashMedia writes each base64 image or audio clip of a body as its
// SHA-256 instead of its bytes (an export level that keeps files small):
// a data URL "data:image/png;base64,…" becomes
// "data:image/png;sha256,<hex of the base64 text>", an input_audio's data
// "sha256:<hex>". Equal media get equal digests; the rest of the body is
// as sent.
func HashMedia() InputsOption { return func(in *Inputs) { in.hash = true } }

// pending is a session's bodies, in turn order, until its end.
type pending struct {
	conversation string
	payloads     [][]byte
	size         int
}

// The writer is woken when inputsBatch sessions or inputsBatchBytes of
// bodies have ended; past inputsMaxHeld bytes EndSession waits for it
// (nothing is dropped).
const (
	inputsBatch      = 64
	inputsBatchBytes = 1 << 20
	inputsMaxHeld    = 64 << 20
)

// NewInputs starts the document on w (CreateAtomic's file leaves no empty
// or torn inputs.json behind a killed process).
func NewInputs(w io.Writer, opts ...InputsOption) *Inputs {
	in := &Inputs{open: map[int64]*pending{}, maxHeld: inputsMaxHeld, wake: make(chan struct{}, 1), done: make(chan struct{})}
	for _, o := range opts {
		o(in)
	}
	in.taken = sync.NewCond(&in.mu)
	for _, o := range opts {
		o(in)
	}
	if in.onFault != nil {
		w = &faultWriter{w: w, f: in.onFault}
	}
	go in.write(w)
	return in
}

// Body holds the body of turn turn of conversation, sent in session.
func (in *Inputs) Body(session int64, conversation string, turn int, body []byte) {
	if body == nil {
		body = []byte("null")
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	p := in.open[session]
	if p == nil {
		p = &pending{conversation: conversation}
		in.open[session] = p
	}
	// A turn's body lands at its index (a turn is sent once a session).
	for len(p.payloads) <= turn {
		p.payloads = append(p.payloads, nil)
	}
	p.payloads[turn] = body
	p.size += len(body)
}

// EndSession ends session: its entry goes to the writer with the next batch.
func (in *Inputs) EndSession(session int64) {
	in.mu.Lock()
	defer in.mu.Unlock()
	p := in.open[session]
	if p == nil {
		return
	}
	delete(in.open, session)
	in.ended = append(in.ended, p)
	in.held += p.size
	if len(in.ended) >= inputsBatch || in.held >= inputsBatchBytes {
		in.poke()
	}
	for in.held >= in.maxHeld && !in.closed {
		in.taken.Wait()
	}
}

// poke wakes the writer (a wake already pending is enough).
func (in *Inputs) poke() {
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

// take hands the writer the ended sessions, and at the end the sessions
// never ended (a caller that stopped early), in session order.
func (in *Inputs) take() (batch []*pending, last bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	batch, in.ended, in.held = in.ended, nil, 0
	in.taken.Broadcast()
	if in.closed {
		for _, s := range slices.Sorted(maps.Keys(in.open)) {
			batch = append(batch, in.open[s])
		}
		clear(in.open)
	}
	return batch, in.closed
}

func (in *Inputs) write(dst io.Writer) {
	defer close(in.done)
	// The document is whole only once closed, so buffering it loses
	// nothing a crash would not: one write per 256 KiB, not per session.
	w := bufio.NewWriterSize(dst, 256<<10)
	_, err := io.WriteString(w, "{\"data\":[")
	sent := map[string]int{} // sessions written per conversation
	var buf []byte
	n := 0
	entry := func(p *pending) {
		if err != nil || len(p.payloads) == 0 {
			return
		}
		id := p.conversation
		if k := sent[id]; k > 0 {
			id += "#" + strconv.Itoa(k+1)
		}
		sent[p.conversation]++
		buf = buf[:0]
		if n > 0 {
			buf = append(buf, ',')
		}
		n++
		q, _ := json.Marshal(id)
		buf = append(buf, "\n{\"session_id\":"...)
		buf = append(buf, q...)
		buf = append(buf, ",\"payloads\":["...)
		for i, b := range p.payloads {
			if i > 0 {
				buf = append(buf, ',')
			}
			if b == nil {
				b = []byte("null") // a turn never sent
			}
			if in.hash {
				b = hashMedia(b)
			}
			buf = append(buf, b...)
		}
		buf = append(buf, "]}"...)
		_, err = w.Write(buf)
	}
	for range in.wake {
		batch, last := in.take()
		for _, p := range batch {
			entry(p)
		}
		if last {
			break
		}
	}
	if err == nil {
		_, err = io.WriteString(w, "\n]}\n")
	}
	if err == nil {
		err = w.Flush()
	}
	in.err = err
}

// Close ends the document once everything held is written. No Body or
// EndSession may follow.
func (in *Inputs) Close() error {
	in.once.Do(func() {
		in.mu.Lock()
		in.closed = true
		in.taken.Broadcast()
		in.mu.Unlock()
		in.poke()
	})
	<-in.done
	return in.err
}
