package export

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"
	"sync"
)

// Inputs streams inputs.json: every request body sent, with the session
// (conversation) and turn it belongs to, in send order:
// {"data":[{"session_id":…,"turn_index":…,"payloads":[{body}]}, …]}.
// Add only queues the body: a writer goroutine does the file I/O, so a
// large prompt's copy never sits between a request's intended and actual
// send. Add is safe for concurrent use; the bodies must not change after.
type Inputs struct {
	queue chan input
	done  chan struct{}
	once  sync.Once
	err   error
}

type input struct {
	session string
	turn    int
	body    []byte
}

// inputsQueue bounds the bodies waiting for the writer (Add then waits:
// nothing is dropped).
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
	// nothing a crash would not: one write per 256 KiB, not per request.
	w := bufio.NewWriterSize(dst, 256<<10)
	_, err := io.WriteString(w, "{\"data\":[\n")
	var buf []byte
	n := 0
	for it := range in.queue {
		if err != nil {
			continue // keep draining so Add never blocks forever
		}
		buf = buf[:0]
		if n > 0 {
			buf = append(buf, ",\n"...)
		}
		n++
		id, _ := json.Marshal(it.session)
		buf = append(buf, `{"session_id":`...)
		buf = append(buf, id...)
		buf = append(buf, `,"turn_index":`...)
		buf = strconv.AppendInt(buf, int64(it.turn), 10)
		buf = append(buf, `,"payloads":[`...)
		buf = append(buf, it.body...)
		buf = append(buf, "]}"...)
		_, err = w.Write(buf)
	}
	if err == nil {
		_, err = io.WriteString(w, "\n]}\n")
	}
	if err == nil {
		err = w.Flush()
	}
	in.err = err
}

// Add queues one body sent.
func (in *Inputs) Add(sessionID string, turn int, body []byte) {
	in.queue <- input{sessionID, turn, body}
}

// Close ends the document once every queued body is written. No Add may
// follow.
func (in *Inputs) Close() error {
	in.once.Do(func() { close(in.queue) })
	<-in.done
	return in.err
}
