package otlp

import (
	"context"
	"encoding/binary"
	"math/rand/v2"

	"go.opentelemetry.io/otel/trace"

	"github.com/surgebench/surge/metrics"
)

// requestIDs gives a request's span the ids its traceparent header sent
// (the request id as trace id, its last 64 bits as the span id), so the
// server's own spans (vLLM's, under that header) are its children in a
// tracing back end. A span with no request id gets random ids.
type requestIDs struct{}

// spanIDsKey holds a span's ids in the context its tracer starts it with.
type spanIDsKey struct{}

type spanIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

// withRequestIDs is ctx carrying the ids of the request requestID names,
// or ctx itself when requestID is no W3C trace id.
func withRequestIDs(ctx context.Context, requestID string) context.Context {
	tid, ok := metrics.TraceID(requestID)
	if !ok {
		return ctx
	}
	ids := spanIDs{trace: tid}
	copy(ids.span[:], tid[8:])
	return context.WithValue(ctx, spanIDsKey{}, ids)
}

// NewIDs is sdktrace.IDGenerator's: the request's ids, else random ones.
func (requestIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if ids, ok := ctx.Value(spanIDsKey{}).(spanIDs); ok {
		return ids.trace, ids.span
	}
	var tid trace.TraceID
	for !tid.IsValid() {
		binary.LittleEndian.PutUint64(tid[:8], rand.Uint64())
		binary.LittleEndian.PutUint64(tid[8:], rand.Uint64())
	}
	return tid, randomSpanID()
}

// NewSpanID is sdktrace.IDGenerator's: a child span's id, random.
func (requestIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID { return randomSpanID() }

func randomSpanID() trace.SpanID {
	var sid trace.SpanID
	for !sid.IsValid() {
		binary.LittleEndian.PutUint64(sid[:], rand.Uint64())
	}
	return sid
}
