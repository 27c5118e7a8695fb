package export

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// lineBufs are encoding buffers, one per line being encoded.
var lineBufs = sync.Pool{New: func() any { return new([]byte) }}

// flushAt is how much a JSONL holds before it writes at once: a long
// burst is written in pieces this big.
const flushAt = 64 << 10

// defaultHold is how long a line may wait for others. A write(2) per line
// cost ≈ 50 µs of client CPU a request at 800 req/s on a 2-core VM (≈ 10%
// of the client's): the file write is a blocking system call, and one made
// while the process idles wakes the Go runtime's sysmon thread (a futex
// wake, then its polling). Held 10 ms, the lines of 800 req/s go out in
// ≈ 100 writes a second instead of 800.
const defaultHold = 10 * time.Millisecond

// write encodes l and queues it; the hold's timer (armed by the first line
// queued), a full queue, WriteHeld or Err write the queued lines in one
// call (a hold of 0 writes at once).
func (j *JSONL) write(l *line) {
	bp := lineBufs.Get().(*[]byte)
	b, err := appendLine((*bp)[:0], l)
	if err != nil {
		j.setErr(err)
		return
	}
	b = append(b, '\n')
	j.mu.Lock()
	if j.err == nil {
		j.pending = append(j.pending, b...)
	}
	if cap(b) <= 1<<20 {
		*bp = b
		lineBufs.Put(bp)
	}
	if len(j.pending) < flushAt && j.hold > 0 {
		j.armLocked()
		j.mu.Unlock()
		return
	}
	j.flushLocked()
}

// armLocked starts the hold's timer for the queued lines, unless it runs.
func (j *JSONL) armLocked() {
	if j.armed || len(j.pending) == 0 {
		return
	}
	j.armed = true
	if j.timer == nil {
		j.timer = time.AfterFunc(j.hold, j.WriteHeld)
	} else {
		j.timer.Reset(j.hold)
	}
}

// WriteHeld writes the queued lines now, after a write under way ends (so
// every line queued before the call is written when it returns). It
// implements metrics.RecordFlusher.
func (j *JSONL) WriteHeld() {
	j.mu.Lock()
	for j.writing {
		j.wrote.Wait()
	}
	j.armed = false
	j.flushLocked()
}

// flushLocked writes the queued lines and unlocks j.mu: a group commit.
// The caller that finds no write under way writes every queued line in one
// call, then again for those that came meanwhile, until none are left;
// another finding a write under way leaves its lines to it.
func (j *JSONL) flushLocked() {
	if j.writing {
		j.mu.Unlock()
		return
	}
	j.writing = true
	for len(j.pending) > 0 && j.err == nil {
		out := j.pending
		j.pending = j.spare[:0]
		j.mu.Unlock()
		werr, first := j.out.write(out)
		if first && j.onFault != nil {
			// Still writing: WriteHeld and Err return after the report.
			j.onFault(werr)
		}
		j.mu.Lock()
		if werr != nil && j.err == nil {
			j.err = werr
		}
		if cap(out) <= 1<<20 { // a burst's big buffer is not kept
			j.spare = out[:0]
		}
	}
	j.writing = false
	j.wrote.Broadcast()
	j.mu.Unlock()
}

// appendLine appends l as encoding/json would encode it, byte for byte
// (TestAppendLineMatchesEncodingJSON holds it to that), but written by
// hand: encoding/json's reflection over the metadata, the map of metrics
// (its keys sorted through reflect.Value) and each float boxed in an
// interface were most of a line's cost.
func appendLine(b []byte, l *line) ([]byte, error) {
	b = append(b, `{"metadata":`...)
	var err error
	if b, err = appendMetadata(b, &l.Metadata); err != nil {
		return b, err
	}
	b = append(b, `,"metrics":`...)
	if b, err = l.Metrics.appendTo(b); err != nil {
		return b, err
	}
	b = append(b, `,"error":`...)
	if l.Error == nil {
		b = append(b, "null"...)
	} else if b, err = appendMarshalled(b, l.Error); err != nil {
		return b, err
	}
	b = append(b, `,"surge":`...)
	if b, err = appendSurge(b, &l.Surge); err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

// appendMetadata appends md as encoding/json encodes a lineMetadata: its
// fields in order, omitempty ones left out when zero, nil pointers null
// (TestAppendMetadataMatchesEncodingJSON fills every field, so a field
// added to the struct and not here fails it).
func appendMetadata(b []byte, md *lineMetadata) ([]byte, error) {
	var err error
	str := func(key, s string) {
		if err == nil {
			b = append(b, key...)
			b, err = appendJSONString(b, s)
		}
	}
	b = strconv.AppendInt(append(b, `{"request_num":`...), md.RequestNum, 10)
	b = strconv.AppendInt(append(b, `,"session_num":`...), md.SessionNum, 10)
	str(`,"x_request_id":`, md.RequestID)
	if md.CorrelationID == nil {
		b = append(b, `,"x_correlation_id":null`...)
	} else {
		str(`,"x_correlation_id":`, *md.CorrelationID)
	}
	str(`,"conversation_id":`, md.ConversationID)
	b = strconv.AppendInt(append(b, `,"turn_index":`...), int64(md.TurnIndex), 10)
	b = appendIntPtr(append(b, `,"credit_issued_ns":`...), md.CreditIssuedNs)
	b = strconv.AppendInt(append(b, `,"request_start_ns":`...), md.StartNs, 10)
	b = appendIntPtr(append(b, `,"request_ack_ns":`...), md.AckNs)
	b = strconv.AppendInt(append(b, `,"request_end_ns":`...), md.EndNs, 10)
	str(`,"worker_id":`, md.WorkerID)
	str(`,"record_processor_id":`, md.RecordProcessorID)
	str(`,"benchmark_phase":`, md.Phase)
	b = strconv.AppendBool(append(b, `,"was_cancelled":`...), md.WasCancelled)
	b = appendIntPtr(append(b, `,"cancellation_time_ns":`...), md.CancellationNs)
	return append(b, '}'), err
}

// appendSurge appends sg as encoding/json encodes a lineSurge
// (TestAppendSurgeMatchesEncodingJSON holds it to that).
func appendSurge(b []byte, md *lineSurge) ([]byte, error) {
	var err error
	str := func(key, s string) {
		if err == nil {
			b = append(b, key...)
			b, err = appendJSONString(b, s)
		}
	}
	b = strconv.AppendInt(append(b, `{"stage":`...), int64(md.Stage), 10)
	if md.IntendedNs != 0 {
		b = strconv.AppendInt(append(b, `,"intended_ns":`...), md.IntendedNs, 10)
	}
	b = strconv.AppendInt(append(b, `,"request_sent_ns":`...), md.SentNs, 10)
	b = strconv.AppendInt(append(b, `,"scheduler_lag_ns":`...), md.LagNs, 10)
	b = strconv.AppendInt(append(b, `,"slot_wait_ns":`...), md.SlotWaitNs, 10)
	if md.PrefillWaitNs != 0 {
		b = strconv.AppendInt(append(b, `,"prefill_wait_ns":`...), md.PrefillWaitNs, 10)
	}
	if md.CancelAfterNs != nil {
		b = strconv.AppendInt(append(b, `,"cancel_after_ns":`...), *md.CancelAfterNs, 10)
	}
	if md.RetryAfter != "" {
		str(`,"retry_after":`, md.RetryAfter)
	}
	b = strconv.AppendInt(append(b, `,"connection_retries":`...), int64(md.ConnRetries), 10)
	if md.TokenSource != "" {
		str(`,"token_count_source":`, md.TokenSource)
	}
	if md.InputTokenSource != "" {
		str(`,"input_token_count_source":`, md.InputTokenSource)
	}
	if md.UsageIgnored != "" {
		str(`,"usage_ignored":`, md.UsageIgnored)
	}
	if md.ITLBatched {
		b = append(b, `,"itl_batched":true`...)
	}
	if md.FirstEventTokens != 0 {
		b = strconv.AppendInt(append(b, `,"first_event_tokens":`...), int64(md.FirstEventTokens), 10)
	}
	if md.MaxEventTokens != 0 {
		b = strconv.AppendInt(append(b, `,"max_event_tokens":`...), int64(md.MaxEventTokens), 10)
	}
	if md.TimestampSource != "" {
		str(`,"timestamp_source":`, md.TimestampSource)
	}
	if md.FirstTokenShared {
		b = append(b, `,"first_token_shared_read":true`...)
	}
	if md.ConnectionReused != nil {
		b = strconv.AppendBool(append(b, `,"connection_reused":`...), *md.ConnectionReused)
	}
	if md.Good != nil {
		b = strconv.AppendBool(append(b, `,"good":`...), *md.Good)
	}
	if md.TurnKind != "" {
		str(`,"turn_kind":`, md.TurnKind)
	}
	for _, f := range [...]struct {
		key string
		v   int64
	}{{`,"tool_round":`, int64(md.ToolRound)}, {`,"tool_wait_ns":`, md.ToolWaitNs}, {`,"tool_calls":`, int64(md.ToolCalls)},
		{`,"tool_call_argument_errors":`, int64(md.ToolCallErrors)}, {`,"unknown_tool_results":`, int64(md.UnknownToolResults)},
		{`,"context_tokens":`, int64(md.ContextTokens)}} {
		if f.v != 0 {
			b = strconv.AppendInt(append(b, f.key...), f.v, 10)
		}
	}
	if md.TimeBreakdown != nil {
		b = md.TimeBreakdown.AppendJSON(append(b, `,"time_breakdown":`...))
	}
	return append(b, '}'), err
}

// appendIntPtr appends *p, or null.
func appendIntPtr(b []byte, p *int64) []byte {
	if p == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, *p, 10)
}

// metricMap is a JSONL line's "metrics" object, each metric once, in the
// order its names sort (a slice: a map's hashing and iteration were a
// fifth of a line's encoding).
type metricMap []namedValue

// namedValue is one metric's value: a number, or a list of them (list
// set).
type namedValue struct {
	m    *lineMetric
	x    float64
	xs   []float64
	list bool
}

// add appends metric m's value; a line adds its metrics in lineMetrics'
// order.
func (mm *metricMap) add(m *lineMetric, x float64) {
	*mm = append(*mm, namedValue{m: m, x: x})
}

// MarshalJSON encodes m as encoding/json encodes a map of {value, unit}.
func (m metricMap) MarshalJSON() ([]byte, error) {
	if !slices.IsSortedFunc(m, byName) {
		m = slices.SortedFunc(slices.Values(m), byName)
	}
	return m.appendTo(nil)
}

// appendTo appends m, whose names are sorted, with its values in
// encoding/json's notation, as a map of {value, unit} encodes.
func (m metricMap) appendTo(b []byte) ([]byte, error) {
	b = append(b, '{')
	for i := range m {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		b = append(b, m[i].m.head...)
		if m[i].list {
			b, err = appendFloats(b, m[i].xs)
		} else {
			b, err = appendFloat(b, m[i].x)
		}
		if err != nil {
			return nil, err
		}
		b = append(b, m[i].m.tail...)
	}
	return append(b, '}'), nil
}

func byName(a, b namedValue) int { return strings.Compare(a.m.name, b.m.name) }

// appendFloat appends f as encoding/json does, failing as it does on NaN
// and infinities.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if out, ok := appendJSONFloat(b, f); ok {
		return out, nil
	}
	return appendMarshalled(b, f)
}

// appendFloats appends xs as encoding/json encodes a []float64.
func appendFloats(b []byte, xs []float64) ([]byte, error) {
	if xs == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	for i, f := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendFloat(b, f); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

func appendMarshalled(b []byte, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	return append(b, j...), err
}

// appendJSONFloat appends f as encoding/json writes a float64 (reporting
// false for NaN and infinities, which it rejects).
func appendJSONFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	if b, ok := appendMicros(b, f); ok {
		return b, true
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 → e-9, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// appendMicros appends f without strconv's shortest-digits search when f
// is the double nearest a whole number of millionths (what roundTo makes
// of every exported time) between 1e-6 and 1e9 in magnitude: those digits,
// trailing zeros trimmed, are then its shortest form (any other decimal
// that short is ≥ 1e-6 away, more than f's rounding interval this side of
// 4.5e9), so the result is AppendFloat's byte for byte
// (TestAppendMicrosMatchesStrconv). Float formatting was a third of a
// per-token line's encoding.
func appendMicros(b []byte, f float64) ([]byte, bool) {
	k := math.Round(f * 1e6)
	if k == 0 || math.Abs(k) >= 1e15 || k/1e6 != f {
		return b, false
	}
	u := int64(k)
	if u < 0 {
		b = append(b, '-')
		u = -u
	}
	b = strconv.AppendInt(b, u/1e6, 10)
	frac := u % 1e6
	if frac == 0 {
		return b, true
	}
	var d [7]byte
	d[0] = '.'
	for i := 6; i >= 1; i-- {
		d[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := 7
	for d[n-1] == '0' {
		n--
	}
	return append(b, d[:n]...), true
}

// appendJSONString appends s quoted; a plain key or unit (printable ASCII
// that encoding/json would not escape) is copied, anything else is left
// to encoding/json.
func appendJSONString(b []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if !plainJSON[s[i]] {
			return appendMarshalled(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), nil
}

// plainJSON marks the bytes encoding/json copies into a string as they
// are (it escapes control characters, quotes, backslashes and, by
// default, <, > and &; it checks UTF-8, which a non-ASCII byte needs).
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()
