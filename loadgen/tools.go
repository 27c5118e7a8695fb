package loadgen

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// ToolLoop is the client side of an agent's tool calls: when a reply calls
// tools, the loop waits as the tools would take, then sends their results
// (synthetic text of a chosen length) with the conversation so far, and
// goes on until a reply calls none or MaxRounds rounds were sent. A
// session's context grows the way an agent's does, and the requests after
// a tool result are the ones a server's prefix cache should serve.
type ToolLoop struct {
	// Results are the texts tool results carry, taken round robin across
	// the run; ResultTokens is their length in tokens.
	Results      []string
	ResultTokens int
	// Delay is how long the tools of one round take (one wait per round:
	// parallel calls run together).
	Delay time.Duration
	// MaxRounds bounds the rounds after one dataset turn.
	MaxRounds int
}

// Validate reports a loop that cannot run.
func (l *ToolLoop) Validate() error {
	switch {
	case len(l.Results) == 0:
		return errors.New("tool loop: no result texts")
	case l.ResultTokens < 0:
		return fmt.Errorf("tool loop: result length %d is negative", l.ResultTokens)
	case l.Delay < 0:
		return fmt.Errorf("tool loop: delay %s is negative", l.Delay)
	case l.MaxRounds < 1:
		return fmt.Errorf("tool loop: at most %d rounds: want at least 1", l.MaxRounds)
	}
	return nil
}

// WithToolLoop answers the tool calls of replies (see ToolLoop). The loop
// does not run after a turn that carries its whole context (a trace's
// row): its recorded calls are the trace's.
func WithToolLoop(l ToolLoop) Option {
	return func(g *Generator) { g.agentic.tools = &l }
}

// agentic is the generator's state for agent workloads.
type agentic struct {
	tools *ToolLoop // nil: no tool loop
	// results counts the tool results sent, to pick the next text.
	results atomic.Int64
	// loopRequests counts the requests the loop sent, and rejected the
	// session starts an admission ceiling turned away (session arrivals).
	loopRequests, rejected atomic.Int64
	// ids numbers the tool-call ids surge makes; replacedIDs counts the
	// replies' ids they replaced (sessionlimits.go).
	ids, replacedIDs atomic.Int64
}

// ToolLoopRequests is how many requests the tool loop sent: they come on
// top of the dataset turns a plan counts.
func (g *Generator) ToolLoopRequests() int64 { return g.agentic.loopRequests.Load() }

// toolCalls fills the record's tool calls from a reply's (rec.Text holds
// the reply's text): its text keeps the calls' names and arguments
// (output the usage counts), its reply text is the rest. Past the session limit on calls a reply, one more
// than it is kept: enough to end the session, not thousands.
func (g *Generator) toolCalls(rec *metrics.Record, out *endpoint.Output) {
	if out.Tools.Empty() {
		return
	}
	// rec.Text holds the reply's text (the caller copied it): it is the
	// reply text, and the output text is it and the calls'.
	rec.ReplyText = rec.Text
	rec.Text = out.Tools.Text(rec.Text)
	calls, _ := out.Tools.CallsUpTo(g.limits.ToolCalls + 1)
	rec.ToolCalls = make([]metrics.ToolCall, len(calls))
	for i, c := range calls {
		rec.ToolCalls[i] = metrics.ToolCall(c)
		if !endpoint.ValidArguments(c.Arguments) {
			rec.ToolCallErrors++
		}
	}
}

// reply is the assistant message a record's response adds to its
// conversation: its text, and its tool calls.
func reply(rec *metrics.Record) endpoint.Message {
	if rec.ToolCalls == nil {
		return endpoint.Message{Role: "assistant", Content: rec.Text}
	}
	m := endpoint.Message{Role: "assistant", Content: rec.ReplyText, ToolCalls: make([]datasets.ToolCall, len(rec.ToolCalls))}
	for i, c := range rec.ToolCalls {
		m.ToolCalls[i] = datasets.ToolCall(c)
	}
	return m
}

// toolRound is the loop's answer to a reply's calls: the results before
// the last, which go into the history, and a turn that sends the last
// (a role "tool" message), with the dataset turn's tools, output cap and
// model.
func (g *Generator) toolRound(calls []metrics.ToolCall, turn *datasets.Turn) ([]endpoint.Message, *datasets.Turn) {
	l := g.agentic.tools
	results := make([]endpoint.Message, len(calls))
	for i, c := range calls {
		k := g.agentic.results.Add(1) - 1
		results[i] = endpoint.Message{Role: "tool", ToolCallID: c.ID, Content: l.Results[k%int64(len(l.Results))]}
	}
	last := results[len(results)-1]
	next := &datasets.Turn{Role: "tool", ToolCallID: last.ToolCallID, Text: last.Content, Tools: turn.Tools,
		MaxTokens: turn.MaxTokens, Model: turn.Model, Extra: turn.Extra, InputTokens: l.ResultTokens * len(calls)}
	return results[:len(results)-1], next
}

// turnKind is what a request for turn ti (round of the tool loop) sends.
func turnKind(ti, round int, turn *datasets.Turn) metrics.TurnKind {
	switch {
	case round > 0 || turn.Role == "tool":
		return metrics.TurnToolResult
	case turn.Messages != nil:
		if n := len(turn.Messages); n > 0 {
			if role, _ := turn.Messages[n-1]["role"].(string); role == "tool" {
				return metrics.TurnToolResult
			}
		}
	}
	if ti == 0 {
		return metrics.TurnFirst
	}
	return metrics.TurnUser
}

// unknownResults counts the tool results a request sends (the turn's
// messages, after history) that answer no tool call before them.
func unknownResults(history []endpoint.Message, turn *datasets.Turn) int {
	if turn.Role != "tool" && turn.Messages == nil {
		return 0
	}
	msgs := endpoint.TurnMessages(turn)
	n := 0
	for i := range msgs {
		if msgs[i].Role != "tool" {
			continue
		}
		if !answered(msgs[i].ToolCallID, history, msgs[:i]) {
			n++
		}
	}
	return n
}

// answered reports whether a call id is among the tool calls of msgs.
func answered(id string, msgs ...[]endpoint.Message) bool {
	for _, list := range msgs {
		for i := range list {
			for _, c := range list[i].ToolCalls {
				if c.ID == id && id != "" {
					return true
				}
			}
		}
	}
	return false
}

// ErrContextOverflow is the error type of a request the server refused
// because its context passes the model's window: what it is, not a
// transport failure.
const ErrContextOverflow = "context_overflow"

// overflowPhrases are what servers say when a prompt passes the window
// (vLLM, SGLang, TGI, OpenAI, Anthropic, llama.cpp); AIPerf's allowlist
// and more.
var overflowPhrases = []string{"maximum context length", "context length", "context_length_exceeded",
	"context window", "prompt is too long", "input is too long", "too many tokens", "reduce the length",
	"exceeds the available context size"}

// classifyOverflow retypes a server error that says the context passed
// the model's window (a 400 or 413 the server answered, or an error in
// the stream), keeping the server's message.
func classifyOverflow(e *metrics.Error) {
	if e == nil || e.Code != 0 && e.Code != http.StatusBadRequest && e.Code != http.StatusRequestEntityTooLarge && e.Code != http.StatusOK {
		return
	}
	switch e.Type {
	case ErrTimeout, ErrCancelled, ErrConnection, ErrStream, ErrRequest:
		return
	}
	msg := strings.ToLower(e.Message)
	for _, p := range overflowPhrases {
		if strings.Contains(msg, p) {
			e.Type = ErrContextOverflow
			return
		}
	}
}

// admit takes a concurrency slot if the cap in force allows one now: a
// session arrival that finds the ceiling reached is turned away and
// counted, not queued (AIPerf's --session-arrival-rate with a
// --concurrency ceiling).
func (g *Generator) admit(limit schedule.Limit, stageStart int64) bool {
	capNow := 0
	if limit != nil {
		capNow = limit(time.Duration(g.now() - stageStart))
	}
	g.col.SetConcurrency(capNow)
	if capNow > 0 && g.inFlight.Load() >= int64(capNow) {
		g.agentic.rejected.Add(1)
		return false
	}
	g.inFlight.Add(1)
	return true
}

// RejectedSessions is how many session starts an admission ceiling turned
// away (Stage.Admission).
func (g *Generator) RejectedSessions() int64 { return g.agentic.rejected.Load() }
