package export

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/surgebench/surge/metrics"
)

// OutputsFile is AIPerf's name for the generated text export
// (--export-outputs-json); under a prefix it is <prefix>_outputs.json.
const OutputsFile = "outputs.json"

// Outputs writes outputs.json as AIPerf's --export-outputs-json does
// (schema 1.1): every request's generated text beside its session,
// conversation, turn, request id, phase, epoch start and end and its
// per-request metrics, the profile's under "data" and the warmup's under
// "warmup", each in session, then turn, then arrival order. It is a
// metrics.RecordSink: records are kept in a file beside the export as they
// come (memory holds an index entry a record), sorted and written whole by
// Close.
type Outputs struct {
	path    string
	lines   *JSONL // builds the metrics and times as the JSONL has them
	secrets []string

	mu     sync.Mutex
	frag   *os.File
	w      *bufio.Writer
	off    int64
	index  []outputRef
	err    error
	closed bool
}

// outputRef is where one record's entry is in the fragments file, and its
// sort key.
type outputRef struct {
	warmup        bool
	session       int64
	turn, ordinal int
	offset        int64
	length        int
}

// outputEntry is one record in outputs.json.
type outputEntry struct {
	SessionNum     int64     `json:"session_num"`
	ConversationID string    `json:"conversation_id"`
	TurnIndex      int       `json:"turn_index"`
	RequestID      string    `json:"x_request_id"`
	Phase          string    `json:"benchmark_phase"`
	StartNs        int64     `json:"request_start_ns"`
	EndNs          int64     `json:"request_end_ns"`
	Metrics        metricMap `json:"metrics"`
	ResponseText   *string   `json:"response_text"`
}

// NewOutputs writes outputs.json to path on Close; start is the wall-clock
// time of the run clock's zero. A secret found in a response's text is
// replaced by "<redacted>".
func NewOutputs(path string, start time.Time, secrets ...string) (*Outputs, error) {
	frag, err := os.Create(path + ".partial")
	if err != nil {
		return nil, err
	}
	o := &Outputs{path: path, lines: &JSONL{start: start}, frag: frag, w: bufio.NewWriterSize(frag, 64<<10)}
	for _, s := range secrets {
		if len(s) >= 4 {
			o.secrets = append(o.secrets, s)
		}
	}
	return o, nil
}

// WriteRecord implements metrics.RecordSink.
func (o *Outputs) WriteRecord(r *metrics.Record, v *metrics.Values, good bool) {
	l := o.lines.line(r, v, good)
	e := outputEntry{SessionNum: r.Session, ConversationID: r.ConversationID, TurnIndex: r.TurnIndex, RequestID: r.RequestID,
		Phase: l.Metadata.Phase, StartNs: l.Metadata.StartNs, EndNs: l.Metadata.EndNs, Metrics: l.Metrics}
	if e.Metrics == nil {
		e.Metrics = metricMap{}
	}
	if r.Err == nil || r.Text != "" {
		text := r.Text
		for _, s := range o.secrets {
			text = strings.ReplaceAll(text, s, "<redacted>")
		}
		e.ResponseText = &text
	}
	b, err := json.Marshal(&e)
	o.mu.Lock()
	defer o.mu.Unlock()
	if err == nil && o.err == nil {
		_, err = o.w.Write(b)
	}
	if err != nil {
		o.err = errors.Join(o.err, err)
		return
	}
	o.index = append(o.index, outputRef{warmup: r.Phase == metrics.Warmup, session: r.Session, turn: r.TurnIndex,
		ordinal: len(o.index), offset: o.off, length: len(b)})
	o.off += int64(len(b))
}

// Close sorts the records and writes outputs.json (through a temporary
// file, renamed in place), then removes the records' file. It returns the
// first error met; a second Close does nothing.
func (o *Outputs) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	o.closed = true
	defer os.Remove(o.frag.Name())
	defer o.frag.Close()
	if err := o.w.Flush(); err != nil || o.err != nil {
		return fmt.Errorf("%s: %w", o.path, errors.Join(o.err, err))
	}
	slices.SortFunc(o.index, func(a, b outputRef) int {
		switch {
		case a.warmup != b.warmup:
			if a.warmup {
				return 1
			}
			return -1
		case a.session != b.session:
			return cmp.Compare(a.session, b.session)
		case a.turn != b.turn:
			return a.turn - b.turn
		}
		return a.ordinal - b.ordinal
	})
	tmp := o.path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := o.writeDoc(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", o.path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, o.path)
}

// writeDoc writes the document: the profile's entries, then the
// warmup's.
func (o *Outputs) writeDoc(f io.Writer) error {
	w := bufio.NewWriterSize(f, 1<<20)
	buf := make([]byte, 0, 4096)
	w.WriteString("{\n  \"schema_version\": \"1.1\",\n  \"data\": [")
	warm, first := false, true
	for _, ref := range o.index {
		if ref.warmup && !warm {
			w.WriteString("\n  ],\n  \"warmup\": [")
			warm, first = true, true
		}
		if !first {
			w.WriteByte(',')
		}
		first = false
		buf = slices.Grow(buf[:0], ref.length)[:ref.length]
		if _, err := o.frag.ReadAt(buf, ref.offset); err != nil {
			return err
		}
		w.WriteString("\n    ")
		w.Write(buf)
	}
	if !warm {
		w.WriteString("\n  ],\n  \"warmup\": [")
	}
	w.WriteString("\n  ]\n}\n")
	return w.Flush()
}
