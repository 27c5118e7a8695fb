// Package otlp is surge's embedded OTLP/HTTP trace receiver: a server
// that traces its requests (vLLM with --otlp-traces-endpoint) sends its
// spans here, and each request's span gives its queue, prefill and decode,
// joined to the request by trace id (surge sends a W3C traceparent whose
// trace id is the request's id).
//
// It is a network-facing surface and bounded like every other input: a
// body over MaxBody (after gzip too) is refused, a request's spans past
// MaxSpans are not read, and the timings kept wait in a store of at most
// MaxKept entries, the oldest dropped first, so its memory does not grow
// with the run's length.
package otlp

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/metrics"
)

// The receiver's bounds.
const (
	// MaxBody bounds one export request's body, decompressed: an OTLP
	// exporter sends batches of 512 spans, far below it.
	MaxBody = 8 << 20
	// MaxSpans bounds the spans read from one export request.
	MaxSpans = 1 << 16
	// MaxKept bounds the timings waiting to be joined to their requests;
	// past it the oldest is dropped.
	MaxKept = 1 << 16
	// maxHandlers bounds the export requests handled at once; more are
	// answered 503 (an exporter retries).
	maxHandlers = 16
)

// Path is where OTLP/HTTP exporters send traces.
const Path = "/v1/traces"

// The span attributes of vLLM's request span (vllm/tracing.py's
// SpanAttributes), in seconds.
const (
	AttrQueue      = "gen_ai.latency.time_in_queue"
	AttrFirstToken = "gen_ai.latency.time_to_first_token"
	AttrE2E        = "gen_ai.latency.e2e"
	AttrPrefill    = "gen_ai.latency.time_in_model_prefill"
	AttrDecode     = "gen_ai.latency.time_in_model_decode"
	AttrRequestID  = "gen_ai.request.id"
)

// Stats counts what the receiver saw.
type Stats struct {
	// Exports counts the export requests answered 200; Refused those
	// refused (a bad body, one too large, a wrong path or method).
	Exports, Refused int64
	// Spans counts the spans read; Timed those that carried a request's
	// timing (a gen_ai.latency.* attribute), kept to be joined.
	Spans, Timed int64
	// Dropped counts the timings dropped unjoined to keep the store
	// within MaxKept.
	Dropped int64
}

// Receiver receives OTLP/HTTP traces and keeps the request timings they
// carry until the requests' records take them.
type Receiver struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
	sem  chan struct{}

	mu   sync.Mutex
	kept map[[16]byte]metrics.ServerTiming
	// order holds the kept ids in arrival order (a ring of MaxKept), so
	// the oldest goes first when the store is full.
	order []([16]byte)
	head  int

	timed                   atomic.Uint64
	exports, refused, spans atomic.Int64
	dropped                 atomic.Int64
}

// Start listens on addr ("127.0.0.1:4318", ":4318": a host-less address
// binds 127.0.0.1 only) and receives traces until ctx ends or Close.
func Start(ctx context.Context, addr string) (*Receiver, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("OTLP receiver address %q: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("OTLP receiver: listening on %s: %w", addr, err)
	}
	r := New()
	r.ln = ln
	r.srv = &http.Server{
		Handler:           r,
		ReadHeaderTimeout: 10 * time.Second,
		// A body dripped in slowly is cut off: an exporter sends one
		// batch at once.
		ReadTimeout:    30 * time.Second,
		WriteTimeout:   10 * time.Second,
		IdleTimeout:    60 * time.Second,
		MaxHeaderBytes: 64 << 10,
		BaseContext:    func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	r.done = make(chan struct{})
	go func() {
		defer close(r.done)
		_ = r.srv.Serve(ln)
	}()
	go func() {
		select {
		case <-ctx.Done():
			_ = r.Close()
		case <-r.done:
		}
	}()
	return r, nil
}

// New returns a receiver that is not listening: its ServeHTTP serves
// whatever server it is given (tests).
func New() *Receiver {
	return &Receiver{kept: map[[16]byte]metrics.ServerTiming{}, order: make([][16]byte, 0, 1024), sem: make(chan struct{}, maxHandlers)}
}

// URL is the traces endpoint a server's exporter is pointed at.
func (r *Receiver) URL() string { return "http://" + r.ln.Addr().String() + Path }

// Close stops receiving.
func (r *Receiver) Close() error {
	if r.srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := r.srv.Shutdown(ctx)
	if err != nil {
		err = r.srv.Close()
	}
	<-r.done
	return err
}

// Stats reads the counts.
func (r *Receiver) Stats() Stats {
	return Stats{Exports: r.exports.Load(), Refused: r.refused.Load(), Spans: r.spans.Load(),
		Timed: int64(r.timed.Load()), Dropped: r.dropped.Load()}
}

// Received counts the timings kept so far (a record waiting for its span
// looks again when it grew).
func (r *Receiver) Received() uint64 { return r.timed.Load() }

// Take returns and forgets the timing of the request whose trace id is
// id.
func (r *Receiver) Take(id [16]byte) (metrics.ServerTiming, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.kept[id]
	if ok {
		delete(r.kept, id)
	}
	return t, ok
}

// keep stores a timing under id, dropping the oldest past MaxKept.
func (r *Receiver) keep(id [16]byte, t metrics.ServerTiming) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.kept[id]; !ok {
		if len(r.order) < MaxKept {
			r.order = append(r.order, id)
		} else {
			old := r.order[r.head]
			if _, waiting := r.kept[old]; waiting {
				delete(r.kept, old)
				r.dropped.Add(1)
			}
			r.order[r.head] = id
			r.head = (r.head + 1) % MaxKept
		}
	}
	r.kept[id] = t
	r.timed.Add(1)
}

// ServeHTTP answers an OTLP/HTTP export: POST /v1/traces, a protobuf
// (application/x-protobuf) or JSON (application/json) body, gzip or not.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != Path {
		r.refuse(w, http.StatusNotFound, "no such path: traces go to "+Path)
		return
	}
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		r.refuse(w, http.StatusMethodNotAllowed, "POST traces")
		return
	}
	select {
	case r.sem <- struct{}{}:
		defer func() { <-r.sem }()
	default:
		r.refuse(w, http.StatusServiceUnavailable, "busy")
		return
	}
	body, err := readBody(req)
	if err != nil {
		status := http.StatusBadRequest
		var tl *bounded.TooLargeError
		if errors.As(err, &tl) {
			status = http.StatusRequestEntityTooLarge
		}
		r.refuse(w, status, err.Error())
		return
	}
	ct := strings.ToLower(req.Header.Get("Content-Type"))
	var n int
	if strings.HasPrefix(ct, "application/json") {
		n, err = r.readJSON(body)
	} else {
		n, err = r.readProto(body)
	}
	r.spans.Add(int64(n))
	if err != nil {
		r.refuse(w, http.StatusBadRequest, err.Error())
		return
	}
	r.exports.Add(1)
	if strings.HasPrefix(ct, "application/json") {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{}")
		return
	}
	// An empty ExportTraceServiceResponse.
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

func (r *Receiver) refuse(w http.ResponseWriter, status int, msg string) {
	r.refused.Add(1)
	http.Error(w, "surge OTLP receiver: "+msg, status)
}

// readBody reads the request's body within MaxBody, gunzipped when it
// says gzip.
func readBody(req *http.Request) ([]byte, error) {
	var src io.Reader = req.Body
	switch enc := strings.ToLower(strings.TrimSpace(req.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(io.LimitReader(req.Body, MaxBody))
		if err != nil {
			return nil, fmt.Errorf("gzip body: %w", err)
		}
		defer zr.Close()
		src = zr
	default:
		return nil, fmt.Errorf("content encoding %q: gzip or none", enc)
	}
	return bounded.ReadAll(req.Context(), src, MaxBody, "OTLP export body")
}

// readProto reads an ExportTraceServiceRequest, which is wire-compatible
// with TracesData (field 1: the resource spans).
func (r *Receiver) readProto(body []byte) (int, error) {
	var td tracepb.TracesData
	if err := proto.Unmarshal(body, &td); err != nil {
		return 0, fmt.Errorf("not an OTLP protobuf export: %w", err)
	}
	n := 0
	for _, rs := range td.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				if n >= MaxSpans {
					return n, nil
				}
				n++
				t, ok := timingOf(func(yield func(string, float64) bool) {
					for _, kv := range sp.GetAttributes() {
						if x, ok := number(kv.GetValue()); ok && !yield(kv.GetKey(), x) {
							return
						}
					}
				})
				if !ok {
					continue
				}
				var id [16]byte
				if len(sp.GetTraceId()) == 16 {
					copy(id[:], sp.GetTraceId())
					r.keepAll(id, t, requestIDOf(sp.GetAttributes()))
				}
			}
		}
	}
	return n, nil
}

// number is an attribute's value as a number (a double, or an int).
func number(v *commonpb.AnyValue) (float64, bool) {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue, true
	case *commonpb.AnyValue_IntValue:
		return float64(x.IntValue), true
	}
	return 0, false
}

// requestIDOf is the gen_ai.request.id attribute ("": none).
func requestIDOf(attrs []*commonpb.KeyValue) string {
	for _, kv := range attrs {
		if kv.GetKey() == AttrRequestID {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

// keepAll keeps t under the span's trace id and, when the server's
// request id ends in a surge request id (vLLM's "chatcmpl-<X-Request-Id>")
// that is another, under that one too.
func (r *Receiver) keepAll(trace [16]byte, t metrics.ServerTiming, requestID string) {
	if trace != ([16]byte{}) {
		r.keep(trace, t)
	}
	if len(requestID) >= 32 {
		if id, ok := metrics.TraceID(requestID[len(requestID)-32:]); ok && id != trace {
			r.keep(id, t)
		}
	}
}

// timingOf reads a span's gen_ai.latency.* attributes (seconds) into a
// timing; ok is false for a span without any.
func timingOf(attrs func(yield func(string, float64) bool)) (metrics.ServerTiming, bool) {
	var t metrics.ServerTiming
	for key, x := range attrs {
		var f metrics.ServerFields
		switch key {
		case AttrQueue:
			f = metrics.ServerQueue
		case AttrPrefill:
			f = metrics.ServerPrefill
		case AttrDecode:
			f = metrics.ServerDecode
		case AttrFirstToken:
			f = metrics.ServerFirstToken
		case AttrE2E:
			f = metrics.ServerTotal
		default:
			continue
		}
		ns := x * 1e9
		if math.IsNaN(ns) || ns < 0 || ns > 24*3600*1e9 {
			continue // not believable: unknown, not kept
		}
		t.Set(f, int64(math.Round(ns)))
	}
	if t.Has == 0 {
		return t, false
	}
	t.Source = metrics.TimingOTLP
	return t, true
}

// The JSON encoding of an export (OTLP/HTTP JSON: ids in hex, 64-bit
// integers as strings or numbers).
type (
	jsonExport struct {
		ResourceSpans []struct {
			ScopeSpans []struct {
				Spans []jsonSpan `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
	}
	jsonSpan struct {
		TraceID    string `json:"traceId"`
		Attributes []struct {
			Key   string `json:"key"`
			Value struct {
				DoubleValue *float64        `json:"doubleValue"`
				IntValue    json.RawMessage `json:"intValue"`
				StringValue *string         `json:"stringValue"`
			} `json:"value"`
		} `json:"attributes"`
	}
)

func (r *Receiver) readJSON(body []byte) (int, error) {
	var ex jsonExport
	if err := json.Unmarshal(body, &ex); err != nil {
		return 0, fmt.Errorf("not an OTLP JSON export: %w", err)
	}
	n := 0
	for _, rs := range ex.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				if n >= MaxSpans {
					return n, nil
				}
				n++
				var reqID string
				t, ok := timingOf(func(yield func(string, float64) bool) {
					for _, a := range sp.Attributes {
						if a.Key == AttrRequestID && a.Value.StringValue != nil {
							reqID = *a.Value.StringValue
						}
						var x float64
						switch {
						case a.Value.DoubleValue != nil:
							x = *a.Value.DoubleValue
						case len(a.Value.IntValue) > 0:
							if err := json.Unmarshal([]byte(strings.Trim(string(a.Value.IntValue), `"`)), &x); err != nil {
								continue
							}
						default:
							continue
						}
						if !yield(a.Key, x) {
							return
						}
					}
				})
				if !ok {
					continue
				}
				var id [16]byte
				if b, err := hex.DecodeString(sp.TraceID); err == nil && len(b) == 16 {
					copy(id[:], b)
				}
				r.keepAll(id, t, reqID)
			}
		}
	}
	return n, nil
}
