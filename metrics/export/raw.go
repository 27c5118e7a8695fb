package export

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/surgebench/surge/metrics"
)

// RawJSONL writes profile_export_raw.jsonl (--export-level raw): per
// request, AIPerf's RawRecordInfo — the record's metadata (as the
// per-request JSONL has it), the request body sent (payload), the
// response's status and every SSE event as it arrived ({perf_ns, packets:
// [{name, value}]}, AIPerf's SSEMessage) or its whole body ({perf_ns,
// content_type, text}). Times are run-clock nanoseconds. The headers are
// null: they carry the credentials. It is safe for concurrent use by the
// metric shards; records without a capture are skipped.
type RawJSONL struct {
	meta *JSONL // dates lines and names the worker; never writes
	mu   sync.Mutex
	out  lineFile
	err  error
}

// NewRawJSONL writes lines to w. start and opts are as NewJSONL's (a
// write fault is reported as there, and a torn line cut back).
func NewRawJSONL(w io.Writer, start time.Time, opts ...JSONLOption) *RawJSONL {
	return &RawJSONL{meta: NewJSONL(io.Discard, start, opts...), out: newLineFile(w)}
}

type (
	rawLine struct {
		Metadata    lineMetadata `json:"metadata"`
		Surge       lineSurge    `json:"surge"`
		StartPerfNs int64        `json:"start_perf_ns"`
		Payload     any          `json:"payload"`
		// The headers are null: they carry the credentials.
		RequestHeaders  map[string]string `json:"request_headers"`
		Status          *int              `json:"status"`
		ResponseHeaders map[string]string `json:"response_headers"`
		Responses       []any             `json:"responses"`
		Error           *metrics.Error    `json:"error"`
	}
	sseMessage struct {
		PerfNs  int64       `json:"perf_ns"`
		Packets []ssePacket `json:"packets"`
	}
	ssePacket struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	textResponse struct {
		PerfNs      int64  `json:"perf_ns"`
		ContentType string `json:"content_type,omitempty"`
		Text        string `json:"text"`
	}
)

// WriteRecord implements metrics.RecordSink.
func (j *RawJSONL) WriteRecord(r *metrics.Record, v *metrics.Values, good bool) {
	raw := r.Raw
	if raw == nil {
		return
	}
	l := rawLine{StartPerfNs: r.Issued(), Payload: string(raw.Body),
		Responses: make([]any, 0, len(raw.Events)), Error: r.Err}
	l.Metadata, l.Surge = j.meta.metadata(r, v, good)
	if json.Valid(raw.Body) {
		l.Payload = json.RawMessage(raw.Body)
	}
	if raw.Status != 0 {
		l.Status = &raw.Status
	}
	for _, e := range raw.Events {
		if !raw.Stream {
			l.Responses = append(l.Responses, textResponse{PerfNs: e.AtNs, ContentType: raw.ContentType, Text: string(e.Data)})
			continue
		}
		m := sseMessage{PerfNs: e.AtNs, Packets: make([]ssePacket, 0, 2)}
		switch {
		case e.ErrorField:
			// llama.cpp's `error: {...}` line, as the server sent it.
			m.Packets = append(m.Packets, ssePacket{"error", string(e.Data)})
			l.Responses = append(l.Responses, m)
			continue
		case e.Type != "":
			m.Packets = append(m.Packets, ssePacket{"event", e.Type})
		}
		m.Packets = append(m.Packets, ssePacket{"data", string(e.Data)})
		l.Responses = append(l.Responses, m)
	}
	b, err := json.Marshal(l)
	j.mu.Lock()
	if j.err != nil {
		j.mu.Unlock()
		return
	}
	if err != nil {
		j.err = err
		j.mu.Unlock()
		return
	}
	werr, first := j.out.write(append(b, '\n'))
	if werr != nil {
		j.err = werr
	}
	j.mu.Unlock()
	if first && j.meta.onFault != nil {
		j.meta.onFault(werr)
	}
}

// Err returns the first write error.
func (j *RawJSONL) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}
