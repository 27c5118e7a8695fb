package loadgen

import (
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/metrics"
)

// WithChatMessages makes every chat-style request's record carry the
// messages it sent (system, history, the turn), so that a
// metrics.ChatCounter counts its ISL as the model's chat template renders
// them (AIPerf's --apply-chat-template). Requests that send a dataset's
// own body or payload, or passages, keep the bare count.
func WithChatMessages() Option { return func(g *Generator) { g.chatISL = true } }

// chatMessages sets rec.Chat for a chat-style request when asked to.
func (g *Generator) chatMessages(rec *metrics.Record, conv *datasets.Conversation, history []endpoint.Message, turn *datasets.Turn) {
	if !g.chatISL || turn.Body != nil || turn.Payload != nil || len(turn.Passages) > 0 {
		return
	}
	msgs := endpoint.ChatMessages(conv.SystemPrompt, history, turn)
	rec.Chat = make([]metrics.ChatMessage, len(msgs))
	for i, m := range msgs {
		rec.Chat[i] = metrics.ChatMessage{Role: m.Role, Content: m.Content}
	}
}
