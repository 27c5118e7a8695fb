package metrics

import (
	"encoding/hex"
	"math"
)

// TimingSource says where a part of a request's time came from: surge's
// own stamps, or the server's account of the request in one of the ways
// servers give it.
type TimingSource uint8

// The sources of a request's time breakdown.
const (
	// TimingUnknown: nobody said (the server gave no account of it).
	TimingUnknown TimingSource = iota
	// TimingClient: surge's own stamps (the client part).
	TimingClient
	// TimingLlamaCpp: llama.cpp's `timings` object (prompt_ms,
	// predicted_ms) in its last chunk or body.
	TimingLlamaCpp
	// TimingTGI: TGI's x-queue-time, x-inference-time, x-validation-time
	// and x-compute-time response headers.
	TimingTGI
	// TimingOTLP: the server's OpenTelemetry span (vLLM's gen_ai.latency.*
	// attributes), joined by trace id.
	TimingOTLP
	// TimingSGLang: SGLang's meta_info (queue_time and its stamps).
	TimingSGLang
	// TimingOllama: Ollama's native load_duration, prompt_eval_duration
	// and eval_duration.
	TimingOllama
	// TimingKobold: koboldcpp's /api/extra/perf, asked after each request
	// (one request at a time only).
	TimingKobold
	// TimingMock: surge's mock's own account (a timings object with its
	// queue_ms).
	TimingMock
	numTimingSources
)

var timingSourceNames = [numTimingSources]string{
	"unknown", "client", "llamacpp-timings", "tgi-headers", "otlp", "sglang", "ollama", "koboldcpp-perf", "mock",
}

// String names the source as exports do.
func (s TimingSource) String() string {
	if s < numTimingSources {
		return timingSourceNames[s]
	}
	return "unknown"
}

// ServerFields is a set of the durations a server's account gave.
type ServerFields uint8

// The durations of a ServerTiming.
const (
	// ServerQueue: the wait before the engine took the request.
	ServerQueue ServerFields = 1 << iota
	// ServerPrefill: the prompt's processing, to the first token.
	ServerPrefill
	// ServerDecode: the first token to the last.
	ServerDecode
	// ServerFirstToken: the server's own time to first token, from its
	// arrival.
	ServerFirstToken
	// ServerTotal: the server's own time from arrival to its end.
	ServerTotal
)

// ServerTiming is what a server said of one request's time, read once per
// response (a last chunk's timings, the response's headers, a span): it
// is a value, so the record carries it without an allocation. Durations
// are nanoseconds; Has says which were given (a duration left out is
// unknown, never zero).
type ServerTiming struct {
	Source                                    TimingSource
	Has                                       ServerFields
	Queue, Prefill, Decode, FirstToken, Total int64
}

// Set records duration d (ns) as field f.
func (t *ServerTiming) Set(f ServerFields, d int64) {
	switch f {
	case ServerQueue:
		t.Queue = d
	case ServerPrefill:
		t.Prefill = d
	case ServerDecode:
		t.Decode = d
	case ServerFirstToken:
		t.FirstToken = d
	case ServerTotal:
		t.Total = d
	default:
		return
	}
	t.Has |= f
}

// Known reports whether the server said anything.
func (t *ServerTiming) Known() bool { return t.Source != TimingUnknown && t.Has != 0 }

// toFirst is the server's time from its arrival to the first token: its
// own, else its queue and prefill (ok false: it did not say).
func (t *ServerTiming) toFirst() (int64, bool) {
	switch {
	case t.Has&ServerFirstToken != 0:
		return t.FirstToken, true
	case t.Has&(ServerQueue|ServerPrefill) == ServerQueue|ServerPrefill:
		return t.Queue + t.Prefill, true
	}
	return 0, false
}

// whole is the server's time from its arrival to its end.
func (t *ServerTiming) whole() (int64, bool) {
	switch {
	case t.Has&ServerTotal != 0:
		return t.Total, true
	case t.Has&(ServerQueue|ServerPrefill|ServerDecode) == ServerQueue|ServerPrefill|ServerDecode:
		return t.Queue + t.Prefill + t.Decode, true
	}
	return 0, false
}

// Part is one share of a request's time.
type Part uint8

// The parts of a request's time, in the order they happen.
const (
	// PartClient is the client's own time before the request was on the
	// wire: its lag behind the schedule (and any wait for a slot), the wait
	// for a connection, DNS, connect and TLS, and the write.
	PartClient Part = iota
	// PartNetwork is the rest of the time to the first token that the
	// server's own account does not cover: the request's trip to the
	// server and the first token's trip back (and, for a whole body, the
	// body's trip).
	PartNetwork
	// PartQueue is the server's wait before its engine took the request.
	PartQueue
	// PartPrefill is the server's prompt processing, to its first token.
	PartPrefill
	// PartDecode is the server's first token to its last.
	PartDecode
	// PartDelivery is the gap between the server's last token and the
	// client's read of it, beyond the first token's trip: the stream's
	// delivery and the client's read delay.
	PartDelivery
	// NumParts counts the parts.
	NumParts
)

var partNames = [NumParts]string{"client", "network", "server_queue", "prefill", "decode", "delivery"}

// String names the part as the exports key it.
func (p Part) String() string {
	if p < NumParts {
		return partNames[p]
	}
	return "unknown"
}

// BeforeFirst reports whether the part falls before the first token.
func (p Part) BeforeFirst() bool { return p <= PartPrefill }

// Breakdown is one request's time split into its parts, in ms (NaN: not
// known), each with its source. Total is the whole, from the request's
// start (its intended time when a schedule set one, else its issue) to
// the client's read of its last token; ToFirst its part up to the first
// token's arrival (NaN for a whole body).
type Breakdown struct {
	Ms             [NumParts]float64
	Source         [NumParts]TimingSource
	Total, ToFirst float64
}

// Has reports whether the breakdown was computed at all.
func (b *Breakdown) Has() bool { return b.Source[PartClient] == TimingClient }

// Known reports whether part p is known.
func (b *Breakdown) Known(p Part) bool { return b.Source[p] != TimingUnknown && !math.IsNaN(b.Ms[p]) }

// noBreakdown is the breakdown of a request without one.
var noBreakdown = func() Breakdown {
	var b Breakdown
	for i := range b.Ms {
		b.Ms[i] = math.NaN()
	}
	b.Total, b.ToFirst = math.NaN(), math.NaN()
	return b
}()

// arrivalNs is when token event i arrived (the kernel's stamp when the
// connection had them, whatever the --timestamps mode).
func (r *Record) arrivalNs(i int) int64 {
	t := r.TokenNs[i]
	if !r.KernelStamps && i < len(r.ReadDelayNs) {
		t -= int64(r.ReadDelayNs[i])
	}
	return t
}

// readNs is when the client read token event i.
func (r *Record) readNs(i int) int64 {
	t := r.TokenNs[i]
	if r.KernelStamps && i < len(r.ReadDelayNs) {
		t += int64(r.ReadDelayNs[i])
	}
	return t
}

// breakdownOrigin is where a request's breakdown starts: its intended
// time when it had one, else when it was issued.
func (r *Record) breakdownOrigin() int64 {
	if r.IntendedNs > 0 && r.IntendedNs <= r.Issued() {
		return r.IntendedNs
	}
	return r.Issued()
}

// BreakdownOf splits a successful record's time into its parts. The
// client part is always known; the server's parts are known as far as its
// account (r.Server) goes, and the network and delivery parts where the
// client's stamps and the server's account together give them. always
// computes it for a record whose server said nothing (its parts then
// unknown); without it such a record has no breakdown.
func BreakdownOf(r *Record, always bool) Breakdown {
	b := noBreakdown
	if r.Err != nil || r.SentNs == 0 || (!always && !r.Server.Known()) {
		return b
	}
	origin := r.breakdownOrigin()
	ms := func(ns int64) float64 { return float64(ns) / nsPerMs }
	set := func(p Part, ns int64, src TimingSource) { b.Ms[p], b.Source[p] = ms(ns), src }
	set(PartClient, r.SentNs-origin, TimingClient)
	st := &r.Server
	src := st.Source
	if st.Has&ServerQueue != 0 {
		set(PartQueue, st.Queue, src)
	}
	if st.Has&ServerPrefill != 0 {
		set(PartPrefill, st.Prefill, src)
	}
	if st.Has&ServerDecode != 0 {
		set(PartDecode, st.Decode, src)
	}
	if r.Streamed && len(r.TokenNs) > 0 {
		n := len(r.TokenNs)
		first, lastRead := r.arrivalNs(0), r.readNs(n-1)
		b.Total, b.ToFirst = ms(lastRead-origin), ms(first-origin)
		if toFirst, ok := st.toFirst(); ok && src != TimingUnknown {
			set(PartNetwork, first-r.SentNs-toFirst, src)
		}
		if st.Has&ServerDecode != 0 && src != TimingUnknown {
			set(PartDelivery, lastRead-first-st.Decode, src)
		}
		return b
	}
	// A whole body: its trip back is in the network part; there is no
	// delivery of its own.
	b.Total = ms(r.EndNs - origin)
	if whole, ok := st.whole(); ok && src != TimingUnknown {
		set(PartNetwork, r.EndNs-r.SentNs-whole, src)
	}
	return b
}

// TraceID is the W3C trace id surge sends with a request (its traceparent
// header): the request id's 128 bits. ok is false for an id that is not
// 32 hex digits.
func TraceID(requestID string) (id [16]byte, ok bool) {
	if len(requestID) != 32 {
		return id, false
	}
	if _, err := hex.Decode(id[:], []byte(requestID)); err != nil {
		return id, false
	}
	return id, id != [16]byte{}
}

// AppendJSON appends the breakdown as the JSONL's time_breakdown: an
// object keyed by part, each {"value": ms or null, "unit": "ms",
// "source": …}.
func (b *Breakdown) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	for p := range NumParts {
		if p > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, Part(p).String()...)
		dst = append(dst, `":{"value":`...)
		dst = appendNum(dst, b.Ms[p])
		dst = append(dst, `,"unit":"ms","source":"`...)
		dst = append(dst, b.Source[p].String()...)
		dst = append(dst, `"}`...)
	}
	return append(dst, '}')
}

// MarshalJSON is AppendJSON's encoding.
func (b *Breakdown) MarshalJSON() ([]byte, error) { return b.AppendJSON(nil), nil }
