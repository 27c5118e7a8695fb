package loadgen

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"syscall"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/datasets/media"
	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/internal/outbound"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/frames"
	"github.com/surgebench/surge/metrics"
)

// Error types of failures the client observes (the server's own types are
// passed through from its error bodies).
const (
	ErrTimeout         = "timeout"
	ErrCancelled       = "cancelled"
	ErrConnection      = "connection_error"
	ErrStream          = "stream_error"
	ErrInvalidResponse = "invalid_response"
	ErrRequest         = "request_error"
)

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// slot is when a turn goes out: its intended send time, how long it waited
// for a concurrency slot, and whether a schedule (not a free slot) set the
// time, which makes its latency from the intended time meaningful.
type slot struct {
	intended, slotWait int64
	scheduled          bool
	// body, when set, is the turn's request body, built ahead of time.
	body []byte
}

// pacer decides when turn ti of a session is sent, after waiting as
// needed, or returns false to end the session. prevEnd is when the previous
// turn's response ended (0 before the first turn).
type pacer func(ti int, prevEnd int64) (slot, bool)

// session runs one conversation's turns in order, each turn carrying the
// earlier turns and the server's live replies. key is the session's place
// among the stage's session starts (the plan's, shards included), which
// with the turn picks the requests cancelled on purpose. With a tool loop,
// a reply that calls tools is answered (tools.go) before the next turn.
func (g *Generator) session(ctx context.Context, conv *datasets.Conversation, phase metrics.Phase, stage, key int, pace pacer) {
	g.sessionRun(ctx, conv, phase, stage, key, pace, sessionOpts{})
}

// sessionOpts shape a session's run.
type sessionOpts struct {
	// from is the first turn sent (a trajectory resumed mid-way: its turns
	// carry their context).
	from int
	// maxTokens, when > 0, caps every turn's output (priming a cache).
	maxTokens int
}

// sessionRun is session with opts. It returns the first turn it did not
// send (len(conv.Turns) when it sent them all) and whether a request
// failed.
func (g *Generator) sessionRun(ctx context.Context, conv *datasets.Conversation, phase metrics.Phase, stage, key int, pace pacer, o sessionOpts) (next int, failed bool) {
	ctx, endSession := g.startSession(ctx)
	defer endSession()
	num, corr := g.nextSession.Add(1)-1, sessionID(ctx)
	if g.bodies != nil {
		defer g.bodies.EndSession(num, stage)
	}
	history := contextHistory(conv)
	// histBytes is what history holds (the context the next request
	// resends); ids keeps the replies' tool-call ids unique.
	histBytes := messagesBytes(history)
	var ids toolIDs
	var prevEnd int64
	// The context so far, in tokens: the earlier inputs and replies (-1:
	// a part of it had no known length).
	sofar := 0
	// done records a finished request: whether the session goes on.
	done := func(rec *metrics.Record, input int, standalone bool) bool {
		rec.Session, rec.CorrelationID = num, corr
		if rec.Err != nil && rec.Err.Type == ErrCancelled {
			rec.Cancelled = true
			rec.CancelledNs = rec.EndNs
		}
		if standalone {
			sofar = 0 // the turn carries its whole context
		}
		if sofar >= 0 && input > 0 {
			sofar += input
			rec.ContextTokens = sofar
		} else {
			sofar = -1
		}
		if out := replyTokens(rec); sofar >= 0 && out >= 0 {
			sofar += out
		} else {
			sofar = -1
		}
		if g.afterResponse != nil && rec.Err == nil {
			g.afterResponse(ctx, rec)
		}
		g.redact(rec)
		failed := rec.Err != nil
		// A cancellation on purpose is not the server's failure.
		planned := rec.CancelPlanned && rec.Cancelled
		g.col.Add(rec)
		if phase == metrics.Profile {
			g.count(failed && !planned)
		}
		return !failed
	}
	loop := g.agentic.tools
	seq := 0 // the session's requests so far
	for ti := o.from; ti < len(conv.Turns); ti++ {
		turn := &conv.Turns[ti]
		if o.maxTokens > 0 {
			t := *turn
			t.MaxTokens = o.maxTokens
			turn = &t
		}
		at, ok := pace(ti, prevEnd)
		if !ok {
			return ti, false
		}
		if why := g.contextLimit(histBytes, ahead(sofar, turn.InputTokens, turn.Standalone)); why != "" && !turn.Standalone {
			done(g.refusal(conv, ti, turn, turnKind(ti, 0, turn), 0, phase, stage, why), 0, false)
			return ti + 1, true
		}
		rec := g.do(ctx, conv, num, ti, seq, history, turn, phase, stage, at.intended, at.body, g.cancelAfter(phase, stage, key, ti))
		seq++
		rec.SlotWaitNs, rec.Scheduled = at.slotWait, at.scheduled
		rec.TurnKind, rec.UnknownToolResults = turnKind(ti, 0, turn), unknownResults(history, turn)
		ids.fix(g, rec)
		prevEnd = rec.EndNs
		if !done(rec, turn.InputTokens, turn.Standalone) {
			return ti + 1, true
		}
		answer := loop != nil && len(rec.ToolCalls) > 0 && !turn.Standalone
		if (ti+1 < len(conv.Turns) || answer) && !turn.Standalone {
			if why := g.replyLimit(rec); why != "" {
				// The reply is not resent: the session ends at the request
				// that would have (the tool round, or the next turn).
				done(g.refusalAfter(conv, ti, turn, answer, 1, phase, stage, why), 0, false)
				return ti + 1, true
			}
			own, r := endpoint.TurnMessages(turn), reply(rec)
			history = append(append(history, own...), r)
			histBytes += messagesBytes(own) + messageBytes(&r)
		}
		for round := 1; answer && len(rec.ToolCalls) > 0; round++ {
			if round > loop.MaxRounds {
				// The bound ends the loop, not the tools: their results go
				// into the history, as a harness's would, so the next turn
				// does not follow calls left unanswered.
				if ti+1 < len(conv.Turns) {
					earlier, last := g.toolRound(rec.ToolCalls, turn)
					own := endpoint.TurnMessages(last)
					history = append(append(history, earlier...), own...)
					histBytes += messagesBytes(earlier) + messagesBytes(own)
				}
				break
			}
			start := g.now()
			if loop.Delay > 0 && !Sleep(ctx, loop.Delay) {
				return ti + 1, false
			}
			waited := g.now() - start
			earlier, nextTurn := g.toolRound(rec.ToolCalls, turn)
			history = append(history, earlier...)
			histBytes += messagesBytes(earlier)
			if why := g.contextLimit(histBytes, ahead(sofar, nextTurn.InputTokens, false)); why != "" {
				done(g.refusal(conv, ti, nextTurn, metrics.TurnToolResult, round, phase, stage, why), 0, false)
				return ti + 1, true
			}
			g.agentic.loopRequests.Add(1)
			rec = g.do(ctx, conv, num, ti, seq, history, nextTurn, phase, stage, g.now(), nil, -1)
			seq++
			rec.TurnKind, rec.ToolRound, rec.ToolWaitNs = metrics.TurnToolResult, round, waited
			ids.fix(g, rec)
			prevEnd = rec.EndNs
			if !done(rec, nextTurn.InputTokens, false) {
				return ti + 1, true
			}
			more := len(rec.ToolCalls) > 0 && round < loop.MaxRounds
			if why := g.replyLimit(rec); why != "" && (more || ti+1 < len(conv.Turns)) {
				done(g.refusalAfter(conv, ti, turn, more, round+1, phase, stage, why), 0, false)
				return ti + 1, true
			}
			own, r := endpoint.TurnMessages(nextTurn), reply(rec)
			history = append(append(history, own...), r)
			histBytes += messagesBytes(own) + messageBytes(&r)
		}
	}
	return len(conv.Turns), false
}

// ahead is the context tokens a request of input tokens resends after
// sofar (-1: not known); a standalone turn carries its own.
func ahead(sofar, input int, standalone bool) int64 {
	switch {
	case standalone:
		return int64(input)
	case sofar < 0:
		return -1
	}
	return int64(sofar + input)
}

// replyTokens is a reply's length in tokens: the server's count when it
// sent one, else its token events (a floor when chunks carry several);
// -1 for a reply that failed.
func replyTokens(rec *metrics.Record) int {
	switch {
	case rec.Err != nil:
		return -1
	case rec.Usage.Present && rec.Usage.Has(metrics.UsageCompletionField):
		return rec.Usage.CompletionTokens
	}
	return len(rec.TokenNs)
}

// redact removes configured secrets, and the credentials in use, from
// what the record will export.
func (g *Generator) redact(rec *metrics.Record) {
	if rec.Raw == nil && rec.Err == nil {
		return
	}
	secrets := g.secrets
	if creds := g.authSecrets(); len(creds) > 0 {
		secrets = append(secrets[:len(secrets):len(secrets)], creds...)
	}
	if raw := rec.Raw; raw != nil {
		for _, s := range secrets {
			if s == "" {
				continue
			}
			raw.Body = bytes.ReplaceAll(raw.Body, []byte(s), []byte("<redacted>"))
			for i := range raw.Events {
				raw.Events[i].Data = bytes.ReplaceAll(raw.Events[i].Data, []byte(s), []byte("<redacted>"))
			}
		}
	}
	if rec.Err == nil {
		return
	}
	for _, s := range secrets {
		if s == "" {
			continue
		}
		rec.Err.Message = strings.ReplaceAll(rec.Err.Message, s, "<redacted>")
		rec.Err.Type = strings.ReplaceAll(rec.Err.Type, s, "<redacted>")
	}
}

// mediaStats records the images, audio and media bytes the request
// carries: the turn's and those of the history it resends.
func mediaStats(rec *metrics.Record, history []endpoint.Message, turn *datasets.Turn) {
	var st media.Stats
	for i := range history {
		st.Add(history[i].Media)
	}
	st.Add(turn.Media)
	rec.Images, rec.AudioSeconds, rec.MediaBytes = st.Images, st.Seconds, st.Bytes
}

// rawBody keeps a whole response body in the record's raw capture.
func rawBody(rec *metrics.Record, b []byte) {
	if rec.Raw != nil {
		rec.Raw.Events = append(rec.Raw.Events, metrics.RawEvent{AtNs: rec.EndNs, Data: b})
	}
}

// Sleep waits d, or until ctx ends: false then.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// do sends one request and reads its response into a record.
// ti is the dataset turn, seq the request's place in its session (the
// turn, or past it when a tool loop sent requests of its own); body is
// the request body when it was built ahead (nil: build it now);
// cancelAfter, when ≥ 0, cancels the request that long after it was sent.
func (g *Generator) do(ctx context.Context, conv *datasets.Conversation, session int64, ti, seq int, history []endpoint.Message, turn *datasets.Turn, phase metrics.Phase, stage int, intended int64, body []byte, cancelAfter time.Duration) *metrics.Record {
	idx := g.nextIndex.Add(1) - 1
	rid, traceparent := requestIDs()
	rec := &metrics.Record{
		Index: idx, RequestID: rid, ConversationID: conv.ID, TurnIndex: ti,
		Phase: phase, Stage: stage, IntendedNs: intended,
		InputTokens: turn.InputTokens, Streamed: g.ep.Streams(), RequestedOSL: turn.MaxTokens,
	}
	if turn.InputTokens == 0 {
		rec.InputText = turn.Content()
	}
	mediaStats(rec, history, turn)
	g.chatMessages(rec, conv, history, turn)
	if info := g.ep.Info(); !info.ProducesTokens || len(turn.Passages) > 0 {
		rec.NoOutput = !info.ProducesTokens
		rec.Inputs = g.ep.Inputs(turn)
		if len(turn.Passages) > 0 && turn.InputTokens == 0 {
			// Passages are input too: the tokenizer counts them with the
			// query (a dataset that knows the lengths counted them all).
			rec.InputText = turn.Content() + "\n" + strings.Join(turn.Passages, "\n")
		}
	}
	var err error
	if body == nil {
		body, err = g.ep.Body(conv.SystemPrompt, history, turn)
	}
	if err != nil {
		rec.SentNs, rec.EndNs = g.now(), g.now()
		rec.Err = &metrics.Error{Type: ErrRequest, Message: "building the request body: " + err.Error()}
		return rec
	}
	if g.bodies != nil {
		g.bodies.Body(session, stage, conv.ID, seq, body)
	}
	if g.raw {
		rec.Raw = &metrics.RawExchange{Body: body}
	}
	url := g.urls[idx%int64(len(g.urls))]
	// The prefill slot is taken before the timeout starts: the wait is
	// the client's, not the server's.
	var pf prefillSlot
	wait := g.now()
	if !g.enterPrefill(ctx, phase, &pf) {
		rec.SentNs, rec.EndNs = g.now(), g.now()
		rec.Err = g.transportError(ctx, ctx, url, ctx.Err())
		return rec
	}
	defer g.leavePrefill(&pf)
	if pf.cap != nil {
		rec.PrefillWaitNs = g.now() - wait
	}
	rctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	tr, ct := g.newTrace()
	tr.sentBytes = int64(len(body))
	sendCtx := rctx
	if cancelAfter >= 0 {
		c := newCut(rctx, cancelAfter, g.now)
		defer c.settle(rec)
		defer c.stop()
		tr.wroteHook = c.arm
		sendCtx = c.ctx
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(sendCtx, ct), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		rec.SentNs, rec.EndNs = g.now(), g.now()
		rec.Err = &metrics.Error{Type: ErrRequest, Message: err.Error()}
		return rec
	}
	for k, vs := range g.headers {
		req.Header[k] = vs
	}
	g.ep.SetHeaders(req.Header)
	g.setSessionHeader(ctx, req.Header)
	req.Header[hdrContentType] = jsonContentType
	// The request id, and the W3C trace context whose trace id is the
	// request id, so a server that traces (vLLM's OTLP spans) names the
	// request in its span. Their value slices live in the request's
	// trace: no allocation of their own. A user's own traceparent (-H)
	// is kept.
	tr.hdrs[0], tr.hdrs[1] = rec.RequestID, traceparent
	req.Header[hdrRequestID] = tr.hdrs[0:1:1]
	if _, own := req.Header[hdrTraceparent]; !own {
		req.Header[hdrTraceparent] = tr.hdrs[1:2:2]
	}
	if g.ep.Streams() {
		req.Header[hdrAccept] = acceptEventStream
	}
	if !g.authorize(req, body, rec) {
		return rec
	}

	g.col.Started(phase)
	resp, err := g.send(req, rec, tr)
	if err == nil && g.ep.Streams() {
		rec.AckNs = g.now() // the response's headers: the server took the request
	}
	// Latencies start when the last byte was written, not when Do was
	// called: the wait for a connection, a cold dial and the transport's
	// write goroutine are reported apart (rec.HTTP).
	rec.SentNs = tr.sent(rec.IssuedNs)
	defer tr.timing(rec)
	if err != nil {
		rec.EndNs = g.now()
		rec.Err = g.transportError(rctx, ctx, url, err)
		return rec
	}
	defer resp.Body.Close()
	resp.Body = tr.wrap(resp.Body, resp.ContentLength)
	if rec.Raw != nil {
		rec.Raw.Status, rec.Raw.ContentType = resp.StatusCode, resp.Header.Get("Content-Type")
	}
	// A server that times a whole body says so in its headers (TGI's); a
	// body's own account (read below) takes their place.
	rec.Server = endpoint.ServerHeaders(resp.Header)
	if resp.StatusCode != http.StatusOK {
		b := bounded.Head(resp.Body, maxErrorBody)
		rec.EndNs = g.now()
		rawBody(rec, b)
		rec.Err = endpoint.ParseErrorBody(resp.StatusCode, b)
		classifyOverflow(rec.Err)
		if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
			// The usual cause is a type or path this server does not serve.
			rec.Err.Message = fmt.Sprintf("the server does not serve endpoint type %s at POST %s: %s", g.ep.Kind, req.URL.Path, rec.Err.Message)
		}
		if e := g.redirectError(resp); e != nil {
			rec.Err = e
		}
		rec.RetryAfter = resp.Header.Get("Retry-After")
		return rec
	}
	if ct := resp.Header.Get("Content-Type"); g.ep.Streams() && frames.Of(ct, g.ep) != frames.Whole {
		g.readStream(rctx, ctx, resp.Body, ct, rec, &pf)
	} else {
		g.readWhole(rctx, ctx, resp, rec)
	}
	// Warned of once the answer is whole, with its final count: the one
	// the cap guard's error gives, when the guard ended it (it warned).
	if limit, got := rec.RequestedOSL, len(rec.TokenNs); limit > 0 && got > limit+overrunSlack && (rec.Err == nil || rec.Err.Type != ErrOverCap) {
		g.overrun(rec, got, "text events")
	}
	if limit, got := rec.RequestedOSL, rec.Usage.CompletionTokens; limit > 0 && rec.Usage.Present && got > limit+overrunSlack && g.onWarn != nil && !g.overran.Load() {
		// Given by the collector, once it believes the usage: a server
		// whose usage is a constant (koboldcpp's 100) did not run past
		// the cap.
		rec.UsageOverrun = g.overrunMessage(rec, got, "completion tokens by the server's usage")
	}
	if rec.Err == nil && !rec.NoOutput && len(rec.TokenNs) == 0 {
		rec.Err = emptyResponse(resp.StatusCode)
	}
	return rec
}

// emptyResponse is the error of an answer that ended cleanly with no
// output: no content, reasoning or tool-call text. AIPerf makes such a
// record an error (its InvalidInferenceResultError: "no responses with
// actual content"), and so does surge: a request with no first token has
// no TTFT or ITL, and an OSL of 0 would pull the run's averages down
// without a word. Servers end a stream empty when they failed without
// saying so, or when the prompt left no room to generate.
func emptyResponse(status int) *metrics.Error {
	return &metrics.Error{Code: status, Type: metrics.ErrEmptyResponse,
		Message: "the response ended without any output (no content, reasoning or tool-call text)"}
}

// readStream times every event as its bytes are read (the reader stamps
// them before any JSON decoding) and decodes just the fields it needs:
// server-sent events, or the framing ct says (an AWS event stream, a JSON
// array: loadgen/frames). The request's prefill slot is given back at its
// first token.
func (g *Generator) readStream(rctx, ctx context.Context, body io.Reader, ct string, rec *metrics.Record, pf *prefillSlot) {
	st := g.stream()
	defer g.putStream(st)
	rd, _ := st.fr.Open(ct, g.ep, body)
	dec, out := st.dec, &st.out
	var done, finished bool
	var firstReadAt int64 // the read that completed the first token's event
	var usageTokens int   // the running completion_tokens of per-chunk usage
	endsAtEOF := g.ep.EndsAtEOF()
	sb, _ := body.(*stampedBody)
	tracked := sb != nil && sb.conn != nil
	if cap(rec.TokenNs) == 0 {
		// Sized once from the requested output (or, with no cap, for a
		// typical answer), the token slices do not grow (and copy) a
		// dozen times per request: the hot path allocates nothing per
		// token. The token times and the event ends share one
		// allocation.
		n := uncappedPrealloc
		if rec.RequestedOSL > 0 {
			n = min(rec.RequestedOSL, maxPrealloc)
		}
		buf := make([]int64, 0, 2*n)
		rec.TokenNs, rec.EventEnds = buf[:0:n], buf[n:n:2*n]
		if tracked {
			rec.ReadDelayNs = make([]int32, 0, n)
		}
	}
	for {
		ev, err := rd.Next()
		if err != nil {
			rec.EndNs = g.now()
			switch {
			case errors.Is(err, io.EOF) && (done || finished || endsAtEOF):
			case errors.Is(err, io.EOF):
				rec.Err = &metrics.Error{Code: http.StatusOK, Type: ErrStream, Message: "stream ended without [DONE] or a finish_reason"}
			default:
				rec.Err = g.streamError(rctx, ctx, err)
			}
			break
		}
		rec.EndNs = ev.At
		if rec.Raw != nil {
			rec.Raw.Stream = true
			rec.Raw.Events = append(rec.Raw.Events, metrics.RawEvent{AtNs: ev.At, Type: string(ev.Type), Data: bytes.Clone(ev.Data), ErrorField: ev.ErrorField})
		}
		d, perr := dec.Event(ev.Type, ev.Data, out)
		if d.Done {
			done = true
			if d.Usage.Present {
				rec.Usage = d.Usage
			}
			if d.Server.Has != 0 {
				rec.Server = d.Server // Ollama's last line: done, with its durations
			}
			break
		}
		if perr != nil {
			rec.Err = &metrics.Error{Code: http.StatusOK, Type: ErrInvalidResponse, Message: perr.Error()}
			if ev.AtEOF {
				// The stream ended inside its last event's payload.
				rec.Err = &metrics.Error{Code: http.StatusOK, Type: ErrStream, Message: cutMidEvent}
			}
			break
		}
		if d.Err != nil {
			rec.Err = d.Err
			if rec.Err.Code == 0 {
				rec.Err.Code = http.StatusOK
			}
			if rec.Err.Type == "" || rec.Err.Type == "error" {
				rec.Err.Type = endpoint.ErrStreamResponse // AIPerf's name
			}
			classifyOverflow(rec.Err)
			break
		}
		if d.Usage.Present {
			rec.Usage = d.Usage
		}
		if d.Server.Has != 0 {
			rec.Server = d.Server // the last account a stream gave
		}
		finished = finished || d.Finished
		// A tool-call delta is output like content (it is what the model
		// generated at that step).
		if d.Content || d.Reasoning || d.ToolCall {
			switch len(rec.TokenNs) {
			case 0:
				g.leavePrefill(pf)
				g.col.FirstToken(rec.Index, rec.Phase, ev.At-rec.SentNs)
				firstReadAt = ev.ReadAt
			case 1:
				rec.FirstTokenShared = ev.ReadAt == firstReadAt
			}
			rec.TokenNs = append(rec.TokenNs, ev.At)
			rec.EventEnds = append(rec.EventEnds, metrics.EventEnd(len(out.Text), len(out.Reasoning)))
			if tracked {
				rec.ReadDelayNs = append(rec.ReadDelayNs, sb.readDelay(ev))
			}
			g.col.Tokens(rec.Index, ev.At, chunkUsage(rec, &usageTokens, &d.Usage))
			if g.overCap(rec, usageTokens) {
				break
			}
			if (d.Content || d.ToolCall) && rec.FirstContentNs == 0 {
				rec.FirstContentNs = ev.At
			}
			if d.Reasoning {
				if rec.ReasoningEvents == 0 {
					g.col.Reasoning(rec.Index)
				}
				rec.ReasoningEvents++
			}
		}
	}
	rec.Text, rec.ReasoningText = string(out.Text), string(out.Reasoning)
	g.toolCalls(rec, out)
}

// stream is what reading one response needs, pooled across requests: the
// stream's readers (SSE and the other framings), the endpoint's decoder
// and the text it collects (copied into the record's strings at the end).
type stream struct {
	fr  *frames.Readers
	dec *endpoint.ResponseDecoder
	out endpoint.Output
}

// stream takes a pooled stream, or makes one.
func (g *Generator) stream() *stream {
	st, _ := g.streams.Get().(*stream)
	if st == nil {
		return &stream{fr: frames.NewReaders(g.now, 0), dec: g.ep.NewDecoder()}
	}
	st.dec.Reset()
	st.out.Reset()
	return st
}

// putStream returns st to the pool, unless an answer grew its text
// buffers past what is worth keeping.
func (g *Generator) putStream(st *stream) {
	st.fr.Release()
	if cap(st.out.Text)+cap(st.out.Reasoning)+st.out.Tools.Held() > maxPooledText {
		return
	}
	g.streams.Put(st)
}

// maxPooledText bounds the text buffers a pooled stream keeps.
const maxPooledText = 1 << 20

// maxPrealloc caps the token slices sized from a request's output cap (a
// 128k cap need not cost a megabyte up front; longer outputs grow).
const maxPrealloc = 4096

// uncappedPrealloc sizes the token slices of a request with no output cap:
// an answer longer than this grows them (by doubling: a few copies for the
// longest answers).
const uncappedPrealloc = 256

// readWhole reads a non-streamed response (or a streamed request the
// server answered with plain JSON).
func (g *Generator) readWhole(rctx, ctx context.Context, resp *http.Response, rec *metrics.Record) {
	b, err := io.ReadAll(resp.Body) // bounded: the stamped body ends at --max-response-mib
	rec.EndNs = g.now()
	rawBody(rec, b)
	if err != nil {
		rec.Err = g.streamError(rctx, ctx, err)
		return
	}
	ct := resp.Header.Get("Content-Type")
	if g.ep.Streams() && !strings.Contains(strings.ToLower(ct), "json") {
		rec.Err = &metrics.Error{Code: resp.StatusCode, Type: ErrInvalidResponse,
			Message: fmt.Sprintf("expected an SSE stream (text/event-stream), got %q", ct)}
		return
	}
	st := g.stream()
	defer g.putStream(st)
	out := &st.out
	d, err := st.dec.Body(b, out)
	switch {
	case err != nil:
		rec.Err = &metrics.Error{Code: resp.StatusCode, Type: ErrInvalidResponse, Message: err.Error()}
		return
	case d.Err != nil:
		rec.Err = d.Err
		classifyOverflow(rec.Err)
		return
	}
	rec.Streamed = false
	rec.Usage = d.Usage
	if d.Server.Has != 0 {
		rec.Server = d.Server
	}
	rec.Text, rec.ReasoningText = string(out.Text), string(out.Reasoning)
	g.toolCalls(rec, out)
	if d.Content || d.Reasoning || d.ToolCall {
		rec.TokenNs = []int64{rec.EndNs}
		g.col.Tokens(rec.Index, rec.EndNs, max(1, d.Usage.CompletionTokens))
		if d.Content || d.ToolCall {
			rec.FirstContentNs = rec.EndNs
		}
	}
}

// cancelReason says why a drained request was cancelled.
func (g *Generator) cancelReason() string {
	if g.hardStop != nil && g.hardStop.Err() != nil {
		return "cancelled when the run was aborted (a second interrupt)"
	}
	return "cancelled when the grace period ended"
}

// transportError classifies a failure before any response arrived.
func (g *Generator) transportError(rctx, ctx context.Context, url string, err error) *metrics.Error {
	switch {
	case ctx.Err() != nil:
		return &metrics.Error{Type: ErrCancelled, Message: g.cancelReason()}
	case rctx.Err() != nil:
		return &metrics.Error{Type: ErrTimeout, Message: fmt.Sprintf("no response within %s (--request-timeout-seconds)", g.timeout)}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &metrics.Error{Type: ErrConnection, Message: "connection refused: " + hostOf(url)}
	case fdExhausted(err):
		return fdError(err)
	case errors.Is(err, errStaleNoRetry):
		return &metrics.Error{Type: ErrConnection, Message: errStaleNoRetry.Error()}
	case errors.Is(err, errUnreadNoRetry):
		return &metrics.Error{Type: ErrConnection, Message: errUnreadNoRetry.Error()}
	case outbound.IsDowngrade(err):
		return &metrics.Error{Type: ErrRedirect, Message: unwrapURLError(err)}
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return &metrics.Error{Type: ErrConnection, Message: "DNS lookup failed: " + dnsErr.Error()}
	}
	return &metrics.Error{Type: ErrConnection, Message: unwrapURLError(err)}
}

// cutMidEvent is the error of a stream that ended inside an event: a
// line, a UTF-8 character or a JSON payload left unfinished.
const cutMidEvent = "stream cut in the middle of an event"

// streamError classifies a failure while reading the body.
func (g *Generator) streamError(rctx, ctx context.Context, err error) *metrics.Error {
	if e := tooLargeError(err); e != nil {
		return e
	}
	var short *shortBody
	var exc *frames.StreamError
	switch {
	case ctx.Err() != nil:
		return &metrics.Error{Code: http.StatusOK, Type: ErrCancelled, Message: g.cancelReason()}
	case errors.As(err, &exc):
		// An exception of an AWS event stream whose payloads carry the
		// answer (SageMaker's ModelStreamError).
		e := endpoint.StreamError(exc.Data)
		e.Code = http.StatusOK
		return e
	case rctx.Err() != nil:
		return &metrics.Error{Code: http.StatusOK, Type: ErrTimeout, Message: fmt.Sprintf("response not finished within %s (--request-timeout-seconds)", g.timeout)}
	case errors.Is(err, syscall.ECONNRESET):
		return &metrics.Error{Code: http.StatusOK, Type: ErrStream, Message: "connection reset by the server mid-stream"}
	case errors.As(err, &short):
		return &metrics.Error{Code: http.StatusOK, Type: ErrStream, Message: short.Error()}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &metrics.Error{Code: http.StatusOK, Type: ErrStream, Message: cutMidEvent}
	}
	return &metrics.Error{Code: http.StatusOK, Type: ErrStream, Message: err.Error()}
}

func hostOf(url string) string {
	s := strings.TrimPrefix(strings.TrimPrefix(url, "http://"), "https://")
	host, _, _ := strings.Cut(s, "/")
	return host
}

// unwrapURLError drops net/http's `Post "url": ` prefix, which repeats
// what the summary already says.
func unwrapURLError(err error) string {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner.Error()
		}
	}
	return err.Error()
}

// requestID returns 128 random bits in hex. They come from the runtime's
// ChaCha8 generator (per thread, seeded from the system's entropy): no
// syscall and no lock per request, unlike crypto/rand, and an id needs to
// be unique, not secret.
func requestID() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	return hex.EncodeToString(b[:])
}

// The canonical names of the headers every request carries (set directly:
// Header.Set would canonicalise, and allocate a value slice).
const (
	hdrRequestID   = "X-Request-Id"
	hdrTraceparent = "Traceparent"
	hdrContentType = "Content-Type"
	hdrAccept      = "Accept"
)

// The fixed headers' values, one slice shared by every request (net/http
// never writes into a request's header values; a Set replaces them).
var (
	jsonContentType   = []string{"application/json"}
	acceptEventStream = []string{"text/event-stream"}
)

// requestIDs returns a request id (requestID's 128 random bits in hex) and
// the W3C traceparent header that carries it as its trace id
// ("00-<id>-<parent id>-01": version 0, sampled, the id's last 64 bits as
// the parent span's id), made in one allocation: the id is a substring
// of the header.
func requestIDs() (id, traceparent string) {
	var raw [16]byte
	for raw == [16]byte{} { // an all-zero trace id is invalid
		binary.LittleEndian.PutUint64(raw[:8], rand.Uint64())
		binary.LittleEndian.PutUint64(raw[8:], rand.Uint64())
	}
	var b [55]byte
	copy(b[:], "00-")
	hex.Encode(b[3:35], raw[:])
	b[35] = '-'
	copy(b[36:52], b[19:35])
	copy(b[52:], "-01")
	tp := string(b[:])
	return tp[3:35], tp
}

// overrunSlack is how far past its cap an answer may run before the
// generator warns: servers count a closing token or two differently.
const overrunSlack = 2

// overrun warns, once per run, that a response ran past the output cap it
// asked for: a server that ignores the cap's field streams until its own
// limit (llama.cpp with ignore_eos runs until the request timeout).
func (g *Generator) overrun(rec *metrics.Record, got int, what string) {
	if g.onWarn == nil || !g.overran.CompareAndSwap(false, true) {
		return
	}
	g.onWarn(g.overrunMessage(rec, got, what))
}

// overrunMessage is the warning that rec ran past its cap: got tokens,
// counted as what says.
func (g *Generator) overrunMessage(rec *metrics.Record, got int, what string) string {
	field := g.ep.MaxTokensField()
	if field == "" {
		field = "the body's own field" // raw bodies and templates
	}
	msg := fmt.Sprintf("responses run past the requested output length: request %s asked for %d tokens (%s), got %d %s; the server likely ignores %s",
		rec.RequestID, rec.RequestedOSL, field, got, what, field)
	if field == "max_completion_tokens" {
		msg += " (some llama.cpp builds do): try --use-legacy-max-tokens, which sends max_tokens"
	} else {
		msg += "; check the server's own output limit"
	}
	return msg
}
