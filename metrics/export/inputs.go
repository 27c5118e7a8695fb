package export

import (
	"encoding/json"
	"io"
	"strconv"
	"sync"
)

// Inputs streams inputs.json: every request body sent, with the session
// (conversation) and turn it belongs to, in send order:
// {"data":[{"session_id":…,"turn_index":…,"payloads":[{body}]}, …]}.
// It is safe for concurrent use by the workers.
type Inputs struct {
	mu  sync.Mutex
	w   io.Writer
	n   int
	err error
}

// NewInputs starts the document on w.
func NewInputs(w io.Writer) *Inputs {
	in := &Inputs{w: w}
	_, in.err = io.WriteString(w, "{\"data\":[\n")
	return in
}

// Add records one body sent.
func (in *Inputs) Add(sessionID string, turn int, body []byte) {
	id, _ := json.Marshal(sessionID)
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.err != nil {
		return
	}
	sep := ",\n"
	if in.n == 0 {
		sep = ""
	}
	in.n++
	buf := make([]byte, 0, len(body)+len(id)+64)
	buf = append(buf, sep...)
	buf = append(buf, `{"session_id":`...)
	buf = append(buf, id...)
	buf = append(buf, `,"turn_index":`...)
	buf = strconv.AppendInt(buf, int64(turn), 10)
	buf = append(buf, `,"payloads":[`...)
	buf = append(buf, body...)
	buf = append(buf, "]}"...)
	_, in.err = in.w.Write(buf)
}

// Close ends the document.
func (in *Inputs) Close() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.err != nil {
		return in.err
	}
	_, in.err = io.WriteString(in.w, "\n]}\n")
	return in.err
}
