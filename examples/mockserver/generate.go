package mockserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Fixed pieces of the streamed events, as vLLM lays them out.
const (
	choiceOpen    = `{"index":0,`
	contentOpen   = `"delta":{"content":"`
	reasoningOpen = `"delta":{"reasoning_content":"`
	deltaClose    = `"},"logprobs":null,"finish_reason":null}]}` + "\n\n"
	textOpen      = `"text":"`
	textClose     = `","logprobs":null,"finish_reason":null}]}` + "\n\n"
	roleEvent     = `"delta":{"role":"assistant"},"logprobs":null,"finish_reason":null}]}` + "\n\n"
	doneEvent     = "data: [DONE]\n\n"
)

// startStream sends a streaming response's headers at once, before any
// queueing, as vLLM does: time to headers is not TTFT.
func startStream(w http.ResponseWriter) error {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "server_error", errNoFlush.Error())
		return errNoFlush
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	return nil
}

// stream sends g as server-sent events, flushing after each one, once
// startStream has sent the headers. It returns an error only when the
// client went away or ctx ended.
//
// With continuous set every text chunk carries the running usage (vLLM's
// continuous_usage_stats): a chunk of several tokens shows as such.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, g *generation, includeUsage, continuous bool) error {
	if g.agent != nil && g.agent.call != nil {
		return s.streamToolCall(ctx, w, chatAgent, g, includeUsage)
	}
	fl := w.(http.Flusher) // startStream checked
	hp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(hp)
	ep := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(ep)
	head := s.appendHead((*hp)[:0], g)
	*hp = head[:0]
	ev := (*ep)[:0]
	defer func() { *ep = ev[:0] }()

	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	k := s.cfg.TokensPerChunk
	failAt := -1 // the token before which the stream fails (-1: it does not)
	if s.failsInStream(g.n) {
		failAt = min(s.cfg.StreamErrorAfter, g.out)
		if s.cfg.StreamErrorShape == ShapeEmpty {
			failAt = 0
		}
	}
	for i := 0; i < g.out; {
		if i >= failAt && failAt >= 0 {
			break
		}
		end := min(i+k, g.out)
		if failAt >= 0 {
			end = min(end, failAt)
		}
		reasoning := i < g.reasoning
		if reasoning {
			end = min(end, g.reasoning) // a chunk is all reasoning or all content
		}
		if err := sleepUntil(ctx, &timer, g.due(i, s.cfg.ITL)); err != nil {
			return err
		}
		ev = append(ev[:0], head...)
		if i == 0 && g.kind == chatAPI {
			// The role-only chunk goes with the first token, as vLLM's
			// first iteration does; it carries no text.
			ev = append(ev, choiceOpen...)
			ev = append(ev, roleEvent...)
			ev = append(ev, head...)
		}
		ev = append(ev, choiceOpen...)
		closer := deltaClose
		switch {
		case g.kind == completionsAPI:
			ev = append(ev, textOpen...)
			closer = textClose
		case reasoning:
			ev = append(ev, reasoningOpen...)
		default:
			ev = append(ev, contentOpen...)
		}
		ev = appendWords(ev, g.words, i, end)
		if continuous {
			// The closer without its `}` and blank line, then the usage.
			ev = append(ev, closer[:len(closer)-3]...)
			ev = append(ev, `,"usage":`...)
			ev = appendRunningUsage(ev, g.prompt, end)
			ev = append(ev, "}\n\n"...)
		} else {
			ev = append(ev, closer...)
		}
		if i == 0 {
			// Prefill ends before the first token is written: a client
			// that sends its next request on reading it must not find
			// this one still counted.
			s.prefill.leave(g)
		}
		if _, err := w.Write(ev); err != nil {
			return fmt.Errorf("mock: writing chunk: %w", err)
		}
		fl.Flush()
		g.sent = end
		if i == 0 {
			now := time.Now()
			g.firstAt = now
			s.ttft.record(now.Sub(g.arrival))
			if s.wire != nil {
				s.wire.add(g.id, g.wireAt, g.arrival.UnixNano(), now.UnixNano())
			}
		}
		s.genTokens.Add(uint64(end - i))
		i = end
	}

	if failAt >= 0 {
		if failAt == 0 {
			s.prefill.leave(g) // no first token will come
		}
		var err error
		if ev, err = s.failStream(w, head, g, ev); err != nil {
			return err
		}
		return errStreamFailed
	}
	ev = append(ev[:0], head...)
	ev = append(ev, choiceOpen...)
	if g.kind == chatAPI {
		ev = append(ev, `"delta":{}`...)
	} else {
		ev = append(ev, `"text":""`...)
	}
	ev = append(ev, `,"logprobs":null,"finish_reason":"`...)
	ev = append(ev, g.finish...)
	ev = append(ev, `"}]`...)
	ev = s.appendTimings(ev, g, time.Now())
	ev = append(ev, "}\n\n"...)
	if includeUsage {
		ev = append(ev, head...)
		ev = append(ev, `],"usage":`...)
		ev = appendUsage(ev, g)
		ev = append(ev, "}\n\n"...)
	}
	ev = append(ev, doneEvent...)
	if _, err := w.Write(ev); err != nil {
		return fmt.Errorf("mock: writing final chunks: %w", err)
	}
	fl.Flush()
	return nil
}

// appendHead appends `data: {"id":...,"choices":[`, the start every
// event of g shares.
func (s *Server) appendHead(b []byte, g *generation) []byte {
	b = append(b, `data: {"id":"`...)
	b = g.appendID(b)
	if g.kind == chatAPI {
		b = append(b, `","object":"chat.completion.chunk","created":`...)
	} else {
		b = append(b, `","object":"text_completion","created":`...)
	}
	b = strconv.AppendInt(b, g.arrival.Unix(), 10)
	b = append(b, `,"model":`...)
	m, _ := json.Marshal(g.model) // a string always marshals
	b = append(b, m...)
	return append(b, `,"choices":[`...)
}

// appendRunningUsage appends a usage object of prompt tokens and the done
// tokens generated so far.
func appendRunningUsage(b []byte, prompt, done int) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt+done), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(done), 10)
	return append(b, '}')
}

// appendUsage appends g's usage object.
func appendUsage(b []byte, g *generation) []byte {
	out := g.completion()
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(g.prompt), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(g.prompt+out), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(out), 10)
	b = append(b, `,"completion_tokens_details":{"reasoning_tokens":`...)
	b = strconv.AppendInt(b, int64(g.reasoning), 10)
	if g.agent != nil && g.agent.cached >= 0 {
		b = append(b, `},"prompt_tokens_details":{"cached_tokens":`...)
		b = strconv.AppendInt(b, int64(g.agent.cached), 10)
	}
	return append(b, "}}"...)
}

// Non-streaming response bodies.
type (
	completionBody struct {
		ID      string          `json:"id"`
		Object  string          `json:"object"`
		Created int64           `json:"created"`
		Model   string          `json:"model"`
		Choices []choiceBody    `json:"choices"`
		Usage   json.RawMessage `json:"usage"`
		// Timings is the mock's own account (Config.Timings; omitted:
		// none).
		Timings json.RawMessage `json:"timings,omitempty"`
	}
	choiceBody struct {
		Index        int          `json:"index"`
		Message      *messageBody `json:"message,omitempty"`
		Text         *string      `json:"text,omitempty"`
		Logprobs     any          `json:"logprobs"`
		FinishReason string       `json:"finish_reason"`
	}
	messageBody struct {
		Role             string  `json:"role"`
		Content          string  `json:"content"`
		ReasoningContent *string `json:"reasoning_content"`
	}
)

// respond sends g as one JSON body once its last token is due.
func (s *Server) respond(ctx context.Context, w http.ResponseWriter, g *generation) error {
	if g.agent != nil && g.agent.call != nil {
		return s.respondToolCall(ctx, w, chatAgent, g)
	}
	var timer *time.Timer
	if err := sleepUntil(ctx, &timer, g.due(g.out-1, s.cfg.ITL)); err != nil {
		return err
	}
	body := completionBody{
		ID:      string(g.appendID(nil)),
		Created: g.arrival.Unix(),
		Model:   g.model,
		Usage:   appendUsage(nil, g),
	}
	if t := s.appendTimings(nil, g, time.Now()); len(t) > 0 {
		body.Timings = t[len(`,"timings":`):]
	}
	ch := choiceBody{FinishReason: g.finish}
	if g.kind == chatAPI {
		body.Object = "chat.completion"
		m := &messageBody{Role: "assistant", Content: string(appendWords(nil, g.words, g.reasoning, g.out))}
		if g.reasoning > 0 {
			r := string(appendWords(nil, g.words, 0, g.reasoning))
			m.ReasoningContent = &r
		}
		ch.Message = m
	} else {
		body.Object = "text_completion"
		t := string(appendWords(nil, g.words, 0, g.out))
		ch.Text = &t
	}
	body.Choices = []choiceBody{ch}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(body); err != nil {
		return fmt.Errorf("mock: writing response: %w", err)
	}
	s.genTokens.Add(uint64(g.out))
	return nil
}
