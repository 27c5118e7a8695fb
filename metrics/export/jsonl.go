package export

import (
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/surgebench/surge/metrics"
)

// JSONL writes profile_export.jsonl as records complete: one line per
// request sent, failed ones included. A line waits at most the hold
// (default 10 ms) for others to share its write, so a killed process loses
// the records in flight and at most the last hold's lines. Each line is
// AIPerf's MetricRecordInfo ({metadata, metrics, error}, loadable by its
// MetricRecordInfo loader), metadata holding AIPerf's keys only and
// surge's own fields in a sibling object (SurgeKey) that AIPerf's loader
// passes over. It is safe for concurrent use by the metric shards.
type JSONL struct {
	mu    sync.Mutex
	out   lineFile // written by the one flushing goroutine
	start time.Time
	err   error
	// onFault hears of the first failed write (WithWriteFault).
	onFault WriteFault
	// worker and processor are the worker_id and record_processor_id
	// every line carries.
	worker, processor string
	// pending holds whole lines not yet written; writing is set while a
	// shard writes them, and spare is the buffer it wrote last.
	pending, spare []byte
	writing        bool
	wrote          *sync.Cond // broadcast when a write ends
	// hold is how long a line may wait for others; timer writes the held
	// lines once it passes (armed while it runs).
	hold  time.Duration
	timer *time.Timer
	armed bool
}

// NewJSONL writes lines to w (an *os.File: unbuffered on purpose; a
// write that fails part way is cut back to the last whole line). start is
// the wall-clock time of the run clock's zero, for epoch timestamps.
func NewJSONL(w io.Writer, start time.Time, opts ...JSONLOption) *JSONL {
	j := &JSONL{out: newLineFile(w), start: start, worker: "worker_0", processor: "record_processor_0", hold: defaultHold}
	j.wrote = sync.NewCond(&j.mu)
	for _, o := range opts {
		o(j)
	}
	return j
}

// JSONLOption configures a JSONL writer.
type JSONLOption func(*JSONL)

// WithWorkerID names the process that sent the requests: lines carry
// worker_id "worker_<id>" and record_processor_id "record_processor_<id>"
// (AIPerf's processes; surge is one).
func WithWorkerID(id string) JSONLOption {
	return func(j *JSONL) { j.worker, j.processor = "worker_"+id, "record_processor_"+id }
}

// WithHold sets how long a line may wait for others before it is written
// (default 10 ms); 0 writes each line at once (lines queued during a write
// still go out together in the next).
func WithHold(d time.Duration) JSONLOption { return func(j *JSONL) { j.hold = max(d, 0) } }

// lineMetadata is AIPerf's MetricRecordMetadata, its keys and no others:
// AIPerf's loader builds the model from the object and refuses a key it
// does not know. AIPerf leaves out what it does not have
// (credit_received_ns, clock_offset_ns); surge has no separate stamps for
// them either.
type lineMetadata struct {
	RequestNum        int64   `json:"request_num"`
	SessionNum        int64   `json:"session_num"`
	RequestID         string  `json:"x_request_id"`
	CorrelationID     *string `json:"x_correlation_id"`
	ConversationID    string  `json:"conversation_id"`
	TurnIndex         int     `json:"turn_index"`
	CreditIssuedNs    *int64  `json:"credit_issued_ns"`
	StartNs           int64   `json:"request_start_ns"`
	AckNs             *int64  `json:"request_ack_ns"`
	EndNs             int64   `json:"request_end_ns"`
	WorkerID          string  `json:"worker_id"`
	RecordProcessorID string  `json:"record_processor_id"`
	Phase             string  `json:"benchmark_phase"`
	WasCancelled      bool    `json:"was_cancelled"`
	CancellationNs    *int64  `json:"cancellation_time_ns"`
}

// SurgeKey is the top-level key of a line's surge-only fields, beside
// AIPerf's metadata, metrics and error: AIPerf's loader reads those three
// (and trace_data) by name and passes over any other key.
const SurgeKey = "surge"

// lineSurge holds surge's own fields of a line: the sweep stage, when the
// schedule wanted the request sent, when its last byte was written, how
// late it went, how long it waited for a concurrency slot, and how its
// numbers were taken.
type lineSurge struct {
	Stage      int   `json:"stage"`
	IntendedNs int64 `json:"intended_ns,omitempty"`
	// SentNs is when the request's last byte was written: the start of
	// the *_from_send metrics (request_start_ns is AIPerf's start).
	SentNs     int64 `json:"request_sent_ns"`
	LagNs      int64 `json:"scheduler_lag_ns"`
	SlotWaitNs int64 `json:"slot_wait_ns"`
	// PrefillWaitNs is the wait for a prefill slot (--prefill-concurrency).
	PrefillWaitNs int64 `json:"prefill_wait_ns,omitempty"`
	// CancelAfterNs is set on a request chosen to be cancelled this long
	// after its send (--request-cancellation-rate), whether or not it
	// ended first.
	CancelAfterNs *int64 `json:"cancel_after_ns,omitempty"`
	RetryAfter    string `json:"retry_after,omitempty"`
	ConnRetries   int    `json:"connection_retries"`
	TokenSource   string `json:"token_count_source,omitempty"`
	// InputTokenSource is where ISL came from (dataset, tokenizer,
	// usage); UsageIgnored the sign that made the server's usage not
	// believable, so that none of its counts was used.
	InputTokenSource string `json:"input_token_count_source,omitempty"`
	UsageIgnored     string `json:"usage_ignored,omitempty"`
	// ITLBatched marks an answer that came in batches: its ITL is the
	// server's delivery cadence. FirstEventTokens and MaxEventTokens say
	// how many tokens its first event and its largest carried, where they
	// were counted.
	ITLBatched       bool `json:"itl_batched,omitempty"`
	FirstEventTokens int  `json:"first_event_tokens,omitempty"`
	MaxEventTokens   int  `json:"max_event_tokens,omitempty"`
	// TimestampSource is kernel or read for a streamed response.
	TimestampSource string `json:"timestamp_source,omitempty"`
	// FirstTokenShared marks a first token read together with the next.
	FirstTokenShared bool  `json:"first_token_shared_read,omitempty"`
	ConnectionReused *bool `json:"connection_reused,omitempty"`
	Good             *bool `json:"good,omitempty"`
	// TurnKind is what the request continued ("user", "tool_result";
	// absent for a session's first request); ToolRound its tool loop
	// round, ToolWaitNs the time its tool results took.
	TurnKind   string `json:"turn_kind,omitempty"`
	ToolRound  int    `json:"tool_round,omitempty"`
	ToolWaitNs int64  `json:"tool_wait_ns,omitempty"`
	// ToolCalls counts the calls the reply made, ToolCallErrors those
	// whose arguments are not JSON; UnknownToolResults the results the
	// request sent that answer no earlier call.
	ToolCalls          int `json:"tool_calls,omitempty"`
	ToolCallErrors     int `json:"tool_call_argument_errors,omitempty"`
	UnknownToolResults int `json:"unknown_tool_results,omitempty"`
	// ContextTokens is the client's count of the context the request
	// carried (its session's earlier turns and replies and its input).
	ContextTokens int `json:"context_tokens,omitempty"`
	// TimeBreakdown is where the request's time went, each part with its
	// source (absent: no breakdown, the server said nothing of its time).
	TimeBreakdown *metrics.Breakdown `json:"time_breakdown,omitempty"`
}

type line struct {
	Metadata lineMetadata   `json:"metadata"`
	Metrics  metricMap      `json:"metrics"`
	Error    *metrics.Error `json:"error"`
	Surge    lineSurge      `json:"surge"`
}

// WriteRecord implements metrics.RecordSink.
func (j *JSONL) WriteRecord(r *metrics.Record, v *metrics.Values, good bool) {
	l := j.line(r, v, good)
	j.write(&l)
}

func (j *JSONL) setErr(err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err == nil {
		j.err = err
	}
}

// Err writes what is held and returns the first write error.
func (j *JSONL) Err() error {
	j.WriteHeld()
	j.mu.Lock()
	if j.timer != nil {
		j.timer.Stop()
	}
	defer j.mu.Unlock()
	return j.err
}

func (j *JSONL) epoch(ns int64) int64 {
	if ns == 0 {
		return 0
	}
	return j.start.Add(time.Duration(ns)).UnixNano()
}

// phaseName is benchmark_phase as AIPerf names it.
func phaseName(p metrics.Phase) string {
	if p == metrics.Warmup {
		return "warmup"
	}
	return "profiling"
}

// epochPtr is epoch for a time that may not have happened (nil: null).
func (j *JSONL) epochPtr(ns int64) *int64 {
	if ns == 0 {
		return nil
	}
	e := j.epoch(ns)
	return &e
}

func (j *JSONL) line(r *metrics.Record, v *metrics.Values, good bool) line {
	l := line{Error: r.Err}
	l.Metadata, l.Surge = j.metadata(r, v, good)
	if r.Err != nil {
		// As AIPerf: a failure keeps its input length only.
		if x := v.ErrorISL; !math.IsNaN(x) {
			l.Metrics = metricMap{{m: &errorISLMetric, x: x}}
		}
		return l
	}
	l.Metrics = make(metricMap, 0, len(lineMetrics))
	for k := range lineMetrics {
		m := &lineMetrics[k]
		switch m.kind {
		case httpMetric:
			if x := v.HTTP[m.i]; !math.IsNaN(x) {
				l.Metrics.add(m, roundTo(x))
			}
		case readDelayMetric:
			if len(r.ReadDelayNs) > 0 {
				// Per request, the worst event: the run's distribution is in
				// the summary.
				var worst int32
				for _, d := range r.ReadDelayNs {
					worst = max(worst, d)
				}
				l.Metrics.add(m, roundTo(float64(worst)/1e6))
			}
		case requestMetric:
			tag := metrics.RequestDefs[m.i].Tag
			if tag == metrics.ICL {
				if len(v.ICL) > 0 {
					xs := make([]float64, len(v.ICL))
					for i, x := range v.ICL {
						xs[i] = roundTo(x)
					}
					l.Metrics = append(l.Metrics, namedValue{m: m, xs: xs, list: true})
				}
				continue
			}
			x := v.Get(tag)
			if math.IsNaN(x) || tag == metrics.ReasoningTokens && x == 0 {
				// Reasoning counts describe reasoning answers only (as AIPerf).
				continue
			}
			l.Metrics.add(m, roundTo(x))
		}
	}
	return l
}

// lineMetric is a metric a line may carry: an http_req_* timing
// (HTTPDefs[i]), the worst client read delay, or a request metric
// (RequestDefs[i]); its name and unit are encoded once.
type lineMetric struct {
	name, unit string
	kind       metricKind
	i          int
	// head is `"name":{"value":`, tail `,"unit":"unit"}`.
	head, tail []byte
}

func newLineMetric(name, unit string, kind metricKind, i int) lineMetric {
	head, _ := appendJSONString(nil, name) // a string always encodes
	tail, _ := appendJSONString([]byte(`,"unit":`), unit)
	return lineMetric{name: name, unit: unit, kind: kind, i: i,
		head: append(head, `:{"value":`...), tail: append(tail, '}')}
}

type metricKind uint8

const (
	httpMetric metricKind = iota
	readDelayMetric
	requestMetric
)

// lineMetrics is every metric a successful request's line may carry,
// sorted by name as encoding/json sorts a map's keys: a line adds its
// metrics in this order and is never sorted.
var lineMetrics = func() []lineMetric {
	var ms []lineMetric
	for i, d := range metrics.HTTPDefs {
		ms = append(ms, newLineMetric(string(d.Tag), d.Unit, httpMetric, i))
	}
	ms = append(ms, newLineMetric("client_read_delay_max", "ms", readDelayMetric, 0))
	for i, d := range metrics.RequestDefs {
		ms = append(ms, newLineMetric(string(d.Tag), d.Unit, requestMetric, i))
	}
	slices.SortFunc(ms, func(a, b lineMetric) int { return strings.Compare(a.name, b.name) })
	return ms
}()

// errorISLMetric is the one metric a failed request's line carries.
var errorISLMetric = newLineMetric(string(metrics.ErrorISL), "tokens", requestMetric, -1)

// metadata is a record's line metadata (AIPerf's) and surge's fields: the
// one place a line's fields are chosen, for the JSONL and the raw JSONL.
// request_start_ns is AIPerf's start (the request handed to the transport),
// credit_issued_ns when the schedule wanted it sent (else the start).
func (j *JSONL) metadata(r *metrics.Record, v *metrics.Values, good bool) (lineMetadata, lineSurge) {
	issued := r.Issued()
	credit := issued
	if r.IntendedNs > 0 {
		credit = r.IntendedNs
	}
	md := lineMetadata{
		RequestNum: r.Index, SessionNum: r.Session, RequestID: r.RequestID, ConversationID: r.ConversationID,
		TurnIndex: r.TurnIndex, CreditIssuedNs: j.epochPtr(credit), StartNs: j.epoch(issued), AckNs: j.epochPtr(r.AckNs),
		EndNs: j.epoch(r.EndNs), WorkerID: j.worker, RecordProcessorID: j.processor, Phase: phaseName(r.Phase),
		WasCancelled: r.Cancelled,
	}
	sg := lineSurge{Stage: r.Stage, IntendedNs: j.epoch(r.IntendedNs), SentNs: j.epoch(r.SentNs),
		SlotWaitNs: r.SlotWaitNs, PrefillWaitNs: r.PrefillWaitNs, RetryAfter: r.RetryAfter, ConnRetries: r.ConnectionRetries,
		ToolRound: r.ToolRound, ToolWaitNs: r.ToolWaitNs, ToolCalls: len(r.ToolCalls), ToolCallErrors: r.ToolCallErrors,
		UnknownToolResults: r.UnknownToolResults, ContextTokens: r.ContextTokens}
	if r.TurnKind != metrics.TurnFirst {
		sg.TurnKind = r.TurnKind.String()
	}
	if r.CorrelationID != "" {
		md.CorrelationID = &r.CorrelationID
	}
	if r.Cancelled {
		at := r.CancelledNs
		if at == 0 {
			at = r.EndNs
		}
		md.CancellationNs = j.epochPtr(at)
	}
	if r.CancelPlanned {
		sg.CancelAfterNs = &r.CancelAfterNs
	}
	if r.IntendedNs > 0 {
		sg.LagNs = r.LagNs()
	}
	if r.Err != nil {
		return md, sg
	}
	sg.TokenSource = v.Source
	sg.InputTokenSource = v.InputSource
	if v.Distrust != nil {
		sg.UsageIgnored = v.Distrust.Sign
	}
	sg.ITLBatched = v.Batched
	if v.Events.Counted {
		sg.FirstEventTokens, sg.MaxEventTokens = v.Events.First, v.Events.Max
	}
	sg.Good = &good
	if r.Streamed {
		sg.TimestampSource = "read"
		if r.KernelStamps {
			sg.TimestampSource = "kernel"
		}
		sg.FirstTokenShared = r.FirstTokenShared
	}
	if r.HTTP.Traced {
		sg.ConnectionReused = &r.HTTP.Reused
	}
	if v.Parts.Has() {
		sg.TimeBreakdown = &v.Parts
	}
	return md, sg
}
