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
// Entries are written as sessions end. Body and EndSession only queue: a
// writer goroutine does the file I/O, so a large prompt's copy never sits
// between a request's intended and actual send. They are safe for
// concurrent use; the bodies must not change after.
type Inputs struct {
	queue chan input
	done  chan struct{}
	once  sync.Once
	err   error
}

type input struct {
	session      int64
	conversation string
	turn         int
	body         []byte // nil: the session ended
}

// pending is a session whose bodies wait for its end.
type pending struct {
	conversation string
	payloads     [][]byte
}

// inputsQueue bounds the bodies waiting for the writer (callers then
// wait: nothing is dropped).
const inputsQueue = 1024

// NewInputs starts the document on w.
func NewInputs(w io.Writer) *Inputs {
	in := &Inputs{queue: make(chan input, inputsQueue), done: make(chan struct{})}
	go in.write(w)
	return in
}

func (in *Inputs) write(dst io.Writer) {
	defer close(in.done)
	// The document is whole only once closed, so buffering it loses
	// nothing a crash would not: one write per 256 KiB, not per session.
	w := bufio.NewWriterSize(dst, 256<<10)
	_, err := io.WriteString(w, "{\"data\":[")
	open := map[int64]*pending{}
	sent := map[string]int{} // sessions written per conversation
	var buf []byte
	n := 0
	flush := func(p *pending) {
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
			buf = append(buf, b...)
		}
		buf = append(buf, "]}"...)
		_, err = w.Write(buf)
	}
	for it := range in.queue {
		p := open[it.session]
		if it.body == nil {
			if p != nil {
				flush(p)
				delete(open, it.session)
			}
			continue
		}
		if p == nil {
			p = &pending{conversation: it.conversation}
			open[it.session] = p
		}
		// A turn's body lands at its index (a turn is sent once a session).
		for len(p.payloads) <= it.turn {
			p.payloads = append(p.payloads, nil)
		}
		p.payloads[it.turn] = it.body
	}
	// Sessions never ended (a caller that stopped early) are still written.
	for _, s := range slices.Sorted(maps.Keys(open)) {
		flush(open[s])
	}
	if err == nil {
		_, err = io.WriteString(w, "\n]}\n")
	}
	if err == nil {
		err = w.Flush()
	}
	in.err = err
}

// Body queues the body of turn turn of conversation, sent in session.
func (in *Inputs) Body(session int64, conversation string, turn int, body []byte) {
	if body == nil {
		body = []byte("null")
	}
	in.queue <- input{session: session, conversation: conversation, turn: turn, body: body}
}

// EndSession queues the end of session: its entry is written.
func (in *Inputs) EndSession(session int64) {
	in.queue <- input{session: session}
}

// Close ends the document once everything queued is written. No Body or
// EndSession may follow.
func (in *Inputs) Close() error {
	in.once.Do(func() { close(in.queue) })
	<-in.done
	return in.err
}
