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
	// of Parts. Synthetic prompts use it to share the corpus's text between
	// prompts without copying it.
	Parts []string
	// Prompt, when set, replaces Text and Parts: a generated prompt kept as
	// the blocks it is made of (traces), spelled out by Content.
	Prompt *Prompt
	// InputTokens is the prompt length in tokens when the source knows it
	// (synthetic prompts, traces); 0 when unknown.
	InputTokens int
	// MaxTokens caps the output (sent as max_tokens / max_completion_tokens);
	// 0 sends no cap.
	MaxTokens int
	// Delay is the think time before this turn is sent, after the previous
	// turn of the same conversation finished.
	Delay time.Duration
	// RecordedDelay is Delay as the dataset gave it, set on a timestamped
	// turn where --conversation-turn-delay-ratio scaled Delay: a replay
	// takes the recorded think time, not the scaled one, off the gap
	// between two timestamps to find how long the call before it took.
	// Use RecordedThink.
	RecordedDelay time.Duration
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
	// UserContext, when set, is sent as a user message after the system
	// prompt and before the turns, in every request of the conversation
	// (AIPerf's user context prompt).
	UserContext string
	// OpenLoop marks a recorded session whose later turns keep their own
	// timestamps in a trace replay: each is sent at the first turn's send
	// plus the recorded gap, or once the previous reply is in if that is
	// later (Baseten's open-loop replay); otherwise a later turn follows
	// the reply after its Delay.
	OpenLoop bool
}

// Dataset is a loaded workload. It is immutable once built and safe for
// concurrent reads by all workers.
//
// Its conversations are either held (Conversations) or built on demand
// (Source, Options.OnDemand): Len, Conversation and Turns read both, and
// are what a consumer that must work at any size uses.
type Dataset struct {
	// Name says where the conversations came from ("synthetic", a file path).
	Name string
	// Type is how it was read: a --custom-dataset-type name, "sharegpt" or
	// TypeSynthetic ("" when built by hand).
	Type          string
	Conversations []Conversation
	// Source, when set, builds the conversations as they are asked for
	// instead (Conversations is then nil): the dataset holds what a
	// conversation is made from, not its text.
	Source Source
}

// Source builds a dataset's conversations on demand, each the same every
// time it is asked for. Its methods are safe for concurrent use.
type Source interface {
	// Len is how many distinct conversations there are.
	Len() int
	// Turns is how many turns conversation i has, without building it.
	Turns(i int) int
	// UniformTurns is the turn count every conversation has, or 0 when
	// they differ.
	UniformTurns() int
	// Conversation builds conversation i (0 ≤ i < Len()); the caller owns
	// the result.
	Conversation(i int) *Conversation
}

// Len is how many conversations the dataset has (held or built on demand).
func (d *Dataset) Len() int {
	if d.Source != nil {
		return d.Source.Len()
	}
	return len(d.Conversations)
}

// Conversation is conversation i (0 ≤ i < Len()): the one held, or one
// built now, which the caller must not expect to be shared.
func (d *Dataset) Conversation(i int) *Conversation {
	if d.Source != nil {
		return d.Source.Conversation(i)
	}
	return &d.Conversations[i]
}

// Turns is how many turns conversation i has (nothing is built).
func (d *Dataset) Turns(i int) int {
	if d.Source != nil {
		return d.Source.Turns(i)
	}
	return len(d.Conversations[i].Turns)
}

// HasTimestamps reports whether every conversation's first turn carries a
// trace timestamp, so the run can replay it on a fixed schedule.
func (d *Dataset) HasTimestamps() bool {
	if d.Source != nil {
		ts, ok := d.Source.(interface{ HasTimestamps() bool })
		return ok && ts.HasTimestamps()
	}
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

// Timestamp is conversation i's first turn's trace timestamp (ok: it has
// one), read without building the conversation where it is built on
// demand: a fixed schedule reads every row's.
func (d *Dataset) Timestamp(i int) (at time.Duration, ok bool) {
	if ts, is := d.Source.(interface {
		Timestamp(int) (time.Duration, bool)
	}); is {
		return ts.Timestamp(i)
	}
	t := &d.Conversation(i).Turns[0]
	return t.Timestamp, t.HasTimestamp
}

// RecordedThink is the think time the dataset recorded before this turn,
// whatever ratio scaled Delay.
func (t *Turn) RecordedThink() time.Duration {
	if t.RecordedDelay != 0 {
		return t.RecordedDelay
	}
	return t.Delay
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
	case t.Prompt != nil:
		return t.Prompt.String()
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

// ContentPrefix is the first max bytes of Content (all of it when
// shorter), built without spelling out the rest: a fingerprint samples a
// long prompt's start in the time of its start.
func (t *Turn) ContentPrefix(max int) string {
	switch {
	case max <= 0:
		return ""
	case t.Prompt != nil:
		return t.Prompt.prefix(max)
	case t.Parts != nil && t.Body == nil && t.Payload == nil && t.Messages == nil:
		var b strings.Builder
		for _, p := range t.Parts {
			if b.Len()+len(p) >= max {
				b.WriteString(p[:max-b.Len()])
				break
			}
			b.WriteString(p)
		}
		return b.String()
	}
	c := t.Content()
	if len(c) > max {
		c = c[:max]
	}
	return c
}
