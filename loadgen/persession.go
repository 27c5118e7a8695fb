package loadgen

import (
	"strconv"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/metrics"
)

// WithSessionConversation gives every session its own copy of the
// conversation it sends (a cache-bust marker): f is called once a session,
// before its first body is built, with the conversation and a key that
// names the session in the run (its phase, stage and place in the stage's
// plan, the same on every run of the plan), and returns the conversation
// to send.
func WithSessionConversation(f func(c *datasets.Conversation, key string) *datasets.Conversation) Option {
	return func(g *Generator) { g.perSession = f }
}

// sessionConv is the conversation session index of the current stage sends.
func (g *Generator) sessionConv(c *datasets.Conversation, phase metrics.Phase, index int) *datasets.Conversation {
	if g.perSession == nil {
		return c
	}
	return g.perSession(c, phase.String()+"/"+strconv.FormatInt(g.curStage.Load(), 10)+"/"+strconv.Itoa(index))
}

// contextHistory is what a conversation's first request carries before
// its turn: its user context as a user message (nil without one).
func contextHistory(c *datasets.Conversation) []endpoint.Message {
	if c.UserContext == "" {
		return nil
	}
	return []endpoint.Message{{Role: "user", Content: c.UserContext}}
}
