// Package datasets turns workloads (synthetic prompts, traces, JSONL and
// public datasets) into immutable in-memory conversations that every load
// worker shares.
package datasets

import (
	"strings"
	"time"

	"github.com/surgebench/surge/datasets/media"
)

// Turn is the input of one request.
type Turn struct {
	// Text is the user content of this turn.
	Text string
	// Parts, when non-nil, replaces Text: the content is the concatenation
	// of Parts. Traces use it to share prefix blocks between prompts without
	// copying them (equal hash ids point at the same block string).
	Parts []string
	// InputTokens is the prompt length in tokens when the source knows it
	// (synthetic prompts, traces); 0 when unknown.
	InputTokens int
	// MaxTokens caps the output (sent as max_tokens / max_completion_tokens);
	// 0 sends no cap.
	MaxTokens int
	// Delay is the think time before this turn is sent, after the previous
	// turn of the same conversation finished.
	Delay time.Duration
	// Timestamp is the intended send offset from the run's start for trace
	// replay; valid when HasTimestamp is set.
	Timestamp    time.Duration
	HasTimestamp bool
	// Extra holds per-turn request body fields merged over --extra-inputs.
	Extra map[string]any
	// Passages are the documents a rankings request ranks against its
	// query (the turn's content); nil for other endpoint types.
	Passages []string
	// Model, when set, is the model this turn is sent to (a run that names
	// several assigns one to each turn); empty: the endpoint's.
	Model string
	// Role is the role of the turn's message ("" sends "user"): a dataset
	// may give any role.
	Role string
	// Messages, when set, are OpenAI chat messages sent as the dataset gave
	// them instead of one message built from Text (Mooncake's "messages").
	// They carry the whole conversation so far unless MessagesDelta is
	// set: then they are only this turn's new messages, sent after the
	// earlier turns and the server's replies (message_mode "delta").
	Messages      []map[string]any
	MessagesDelta bool
	// Tools are OpenAI tool definitions the model may call, sent with the
	// turn (with Messages or any other content).
	Tools []map[string]any
	// Thread, when set, is the context sent before the turn's own message,
	// laid out as typed messages (a trace's calls as an agent made them:
	// its tool calls and their results), after any history. Turns of one
	// conversation share its messages; nothing changes them.
	Thread []Message
	// ToolCallID, with Role "tool", makes the turn's message the result of
	// that call of the message before it (Thread's last, or the server's
	// reply in the history).
	ToolCallID string
	// Payload, when set, is the whole request body, sent whatever the
	// endpoint type (Mooncake's "payload"), re-encoded from its fields.
	Payload map[string]any
	// Body, when set, is the whole request body sent byte for byte
	// (raw_payload and inputs_json replay); it wins over Payload.
	Body []byte
	// Standalone marks a turn that carries its whole context (a trace row
	// whose length counts the history): it is sent without the earlier
	// turns and replies of its conversation.
	Standalone bool
	// Media are the images and audio clips sent with the text, as chat
	// content parts after it (texts, then images, then audio, as AIPerf
	// orders them). Their bytes are shared, never copied per turn; the
	// text alone is what InputTokens counts.
	Media []media.Part
}

// Conversation is an ordered list of turns sent one after another, each turn
// carrying the history of the ones before it (multi-turn chat).
type Conversation struct {
	// ID names the conversation in exports (conversation_id).
	ID string
	// SystemPrompt, when set, is sent as the first chat message.
	SystemPrompt string
	Turns        []Turn
}

// Dataset is a loaded workload. It is immutable once built and safe for
// concurrent reads by all workers.
type Dataset struct {
	// Name says where the conversations came from ("synthetic", a file path).
	Name string
	// Type is how it was read: a --custom-dataset-type name, "sharegpt" or
	// TypeSynthetic ("" when built by hand).
	Type          string
	Conversations []Conversation
}

// HasTimestamps reports whether every conversation's first turn carries a
// trace timestamp, so the run can replay it on a fixed schedule.
func (d *Dataset) HasTimestamps() bool {
	if len(d.Conversations) == 0 {
		return false
	}
	for _, c := range d.Conversations {
		if len(c.Turns) == 0 || !c.Turns[0].HasTimestamp {
			return false
		}
	}
	return true
}

// Content returns the turn's full user content: the text of its
// messages or payload when it has them (what its input tokens count).
func (t *Turn) Content() string {
	if t.Thread != nil && t.Body == nil && t.Payload == nil && t.Messages == nil {
		var b strings.Builder
		threadText(&b, t.Thread)
		b.WriteString(t.MessageText())
		return b.String()
	}
	return t.MessageText()
}

// MessageText is the content of the turn's own message: Content without
// the Thread before it.
func (t *Turn) MessageText() string {
	switch {
	case t.Body != nil:
		return bodyText(t.Body)
	case t.Payload != nil:
		return payloadText(t.Payload)
	case t.Messages != nil:
		return messagesText(t.Messages)
	case t.Parts == nil:
		return t.Text
	}
	n := 0
	for _, p := range t.Parts {
		n += len(p)
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range t.Parts {
		b.WriteString(p)
	}
	return b.String()
}
