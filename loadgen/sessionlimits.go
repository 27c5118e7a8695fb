package loadgen

import (
	"fmt"
	"strconv"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/metrics"
)

// SessionLimits bound what one session may grow to from what a server
// sends: a reply's tool calls and their arguments, and the conversation
// the session resends with each request (its context, in tokens and in
// bytes). An agent harness has such limits; without them one server
// sending 20 MB of arguments a reply, or 10,000 calls, drives a session
// to requests of hundreds of megabytes and the client past its memory.
// A session that would pass one ends there with an ErrSessionLimit
// record for the request it did not send; the run goes on.
type SessionLimits struct {
	// ToolArgumentBytes bounds one tool call's arguments; ToolCalls the
	// calls of one reply.
	ToolArgumentBytes, ToolCalls int
	// ContextTokens and ContextBytes bound the conversation a request
	// resends: the earlier turns, replies and tool results with its own
	// (tokens as the session counts them: the inputs and the replies'
	// lengths).
	ContextTokens, ContextBytes int64
}

// The limits a session has unless WithSessionLimits sets others: far
// past any agent's (a whole file as a call's arguments, a model's
// largest window), near enough that a run of many sessions fits in
// memory.
const (
	DefaultToolArgumentBytes = 4 << 20
	DefaultToolCalls         = 128
	DefaultContextTokens     = 2 << 20
	DefaultContextBytes      = 32 << 20
)

// MaxToolCallID is the longest tool-call id taken as sent: ids are a few
// dozen bytes (call_…, toolu_…, fc_…); a longer one is replaced.
const MaxToolCallID = 256

// ErrSessionLimit is the error type of the request a session did not send
// because the conversation passed one of its SessionLimits.
const ErrSessionLimit = metrics.ErrSessionLimit

// DefaultSessionLimits are the limits a session has by default.
func DefaultSessionLimits() SessionLimits {
	return SessionLimits{ToolArgumentBytes: DefaultToolArgumentBytes, ToolCalls: DefaultToolCalls,
		ContextTokens: DefaultContextTokens, ContextBytes: DefaultContextBytes}
}

// WithSessionLimits bounds every session (SessionLimits; a field ≤ 0
// keeps its default).
func WithSessionLimits(l SessionLimits) Option {
	return func(g *Generator) {
		d := &g.limits
		if l.ToolArgumentBytes > 0 {
			d.ToolArgumentBytes = l.ToolArgumentBytes
		}
		if l.ToolCalls > 0 {
			d.ToolCalls = l.ToolCalls
		}
		if l.ContextTokens > 0 {
			d.ContextTokens = l.ContextTokens
		}
		if l.ContextBytes > 0 {
			d.ContextBytes = l.ContextBytes
		}
	}
}

// ReplacedToolCallIDs is how many tool-call ids replies sent missing,
// repeated within their session or longer than MaxToolCallID, which
// surge replaced with ids of its own.
func (g *Generator) ReplacedToolCallIDs() int64 { return g.agentic.replacedIDs.Load() }

// replyLimit is the limit a reply's tool calls passed ("" when none):
// too many calls, or one call's arguments too long.
func (g *Generator) replyLimit(rec *metrics.Record) string {
	l := &g.limits
	if len(rec.ToolCalls) > l.ToolCalls {
		return fmt.Sprintf("a reply made more than %d tool calls (tool max calls per reply)", l.ToolCalls)
	}
	for i := range rec.ToolCalls {
		if n := len(rec.ToolCalls[i].Arguments); n > l.ToolArgumentBytes {
			return fmt.Sprintf("a tool call's arguments are %s, more than %s (tool max argument bytes)", bounded.Bytes(int64(n)), bounded.Bytes(int64(l.ToolArgumentBytes)))
		}
	}
	return ""
}

// contextLimit is the limit a request resending bytes and tokens of
// context would pass ("" when none; tokens < 0: not known).
func (g *Generator) contextLimit(bytes, tokens int64) string {
	l := &g.limits
	switch {
	case bytes > l.ContextBytes:
		return fmt.Sprintf("the conversation's context would be %s, more than %s (session max context bytes)", bounded.Bytes(bytes), bounded.Bytes(l.ContextBytes))
	case tokens > l.ContextTokens:
		return fmt.Sprintf("the conversation's context would be %d tokens, more than %d (session max context tokens)", tokens, l.ContextTokens)
	}
	return ""
}

// refusal is the record of the request a session did not send because
// it would pass a limit (why): turn ti of conv, of kind and round, at
// once; the server never saw it.
func (g *Generator) refusal(conv *datasets.Conversation, ti int, turn *datasets.Turn, kind metrics.TurnKind, round int,
	phase metrics.Phase, stage int, why string) *metrics.Record {
	now := g.now()
	return &metrics.Record{Index: g.nextIndex.Add(1) - 1, RequestID: requestID(), ConversationID: conv.ID, TurnIndex: ti,
		Phase: phase, Stage: stage, IntendedNs: now, SentNs: now, EndNs: now, Streamed: g.ep.Streams(),
		RequestedOSL: turn.MaxTokens, TurnKind: kind, ToolRound: round,
		Err: &metrics.Error{Type: ErrSessionLimit, Message: why + ": the session ends without sending it"}}
}

// refusalAfter is the refusal of the request that would have followed
// a reply to turn ti: tool round round of the turn when the loop goes
// on, else the next turn.
func (g *Generator) refusalAfter(conv *datasets.Conversation, ti int, turn *datasets.Turn, loop bool, round int,
	phase metrics.Phase, stage int, why string) *metrics.Record {
	if loop || ti+1 >= len(conv.Turns) {
		return g.refusal(conv, ti, turn, metrics.TurnToolResult, round, phase, stage, why)
	}
	nt := &conv.Turns[ti+1]
	return g.refusal(conv, ti+1, nt, turnKind(ti+1, 0, nt), 0, phase, stage, why)
}

// messagesBytes is what msgs add to a conversation's context.
func messagesBytes(msgs []endpoint.Message) int64 {
	var n int64
	for i := range msgs {
		n += messageBytes(&msgs[i])
	}
	return n
}

// messageBytes is what m adds to a conversation's context: its text, its
// tool calls or the call it answers, its media.
func messageBytes(m *endpoint.Message) int64 {
	n := int64(len(m.Content) + len(m.ToolCallID))
	for _, c := range m.ToolCalls {
		n += int64(len(c.ID) + len(c.Name) + len(c.Arguments))
	}
	for _, p := range m.Media {
		n += int64(len(p.JSON))
	}
	return n
}

// toolIDs keeps a session's tool-call ids unique: an id a reply sent
// missing, already used in the session, or past MaxToolCallID is
// replaced by one of surge's (call_surge_N), so each tool result answers
// one call. The session's set starts with its first call.
type toolIDs map[string]struct{}

// fix replaces the ids of rec's calls that cannot be sent back as they
// came, counting them in g.
func (ids *toolIDs) fix(g *Generator, rec *metrics.Record) {
	if len(rec.ToolCalls) == 0 {
		return
	}
	if *ids == nil {
		*ids = make(toolIDs, len(rec.ToolCalls))
	}
	for i := range rec.ToolCalls {
		c := &rec.ToolCalls[i]
		_, seen := (*ids)[c.ID]
		if c.ID == "" || seen || len(c.ID) > MaxToolCallID {
			c.ID = "call_surge_" + strconv.FormatInt(g.agentic.ids.Add(1), 10)
			g.agentic.replacedIDs.Add(1)
		}
		(*ids)[c.ID] = struct{}{}
	}
}
