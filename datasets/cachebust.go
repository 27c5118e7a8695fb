package datasets

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// Cache-bust targets, as AIPerf's --cache-bust names them: where a
// session's marker goes. The prefixes come first in the prompt (they
// defeat a prefix cache from token 0), the suffixes after the content.
const (
	CacheBustNone            = "none"
	CacheBustSystemPrefix    = "system_prefix"
	CacheBustSystemSuffix    = "system_suffix"
	CacheBustFirstTurnPrefix = "first_turn_prefix"
	CacheBustFirstTurnSuffix = "first_turn_suffix"
)

// ParseCacheBust checks a cache-bust target ("" is none).
func ParseCacheBust(s string) (string, error) {
	switch t := strings.ToLower(strings.TrimSpace(s)); t {
	case "", CacheBustNone:
		return CacheBustNone, nil
	case CacheBustSystemPrefix, CacheBustSystemSuffix, CacheBustFirstTurnPrefix, CacheBustFirstTurnSuffix:
		return t, nil
	}
	return "", fmt.Errorf("%q: want none, system_prefix, system_suffix, first_turn_prefix or first_turn_suffix", s)
}

// CacheBustMarker is the marker of one session, as AIPerf writes it:
// "[rid:" and the first 12 hex digits of a SHA-256 over the run's seed and
// the session's key, "]", with a blank line after it for a prefix target
// and before it for a suffix one. Equal seeds and keys give equal markers.
func CacheBustMarker(target string, seed uint64, key string) string {
	sum := sha256.Sum256([]byte(strconv.FormatUint(seed, 10) + ":" + key))
	rid := "[rid:" + hex.EncodeToString(sum[:])[:12] + "]"
	if strings.HasSuffix(target, "_prefix") {
		return rid + "\n\n"
	}
	return "\n\n" + rid
}

// CheckCacheBust reports the first conversation whose first turn a
// marker cannot go into: a body sent byte for byte (raw payloads,
// inputs.json) or re-encoded whole (a trace's payload).
func CheckCacheBust(d *Dataset) error {
	for i := range d.Conversations {
		c := &d.Conversations[i]
		if len(c.Turns) > 0 && (c.Turns[0].Body != nil || c.Turns[0].Payload != nil) {
			return fmt.Errorf("conversation %s sends its recorded request body as it is: a cache-bust marker cannot go into it", c.ID)
		}
	}
	return nil
}

// MarkConversation returns a copy of c with marker placed at target, as
// AIPerf's worker places it: a system target in the conversation's system
// prompt, else in a system message of the first turn's, else (there is
// none) as a first-turn target; a first-turn target in the first user
// message (text, message or the first of its content parts). Later turns
// carry the first in their history; one that carries its whole context
// (Standalone: a trace's) opens with a prefix marker too. tokens, the marker's length, is added
// to the first turn's known input length. c itself is not changed: every
// session gets its own marker.
func MarkConversation(c *Conversation, target, marker string, tokens int) *Conversation {
	if target == "" || target == CacheBustNone || len(c.Turns) == 0 {
		return c
	}
	m := *c
	prefix := strings.HasSuffix(target, "_prefix")
	place := func(s string) string {
		if prefix {
			return marker + s
		}
		return s + marker
	}
	if target == CacheBustSystemPrefix || target == CacheBustSystemSuffix {
		if m.SystemPrompt != "" {
			m.SystemPrompt = place(m.SystemPrompt)
			return &m
		}
		if msgs, ok := markMessage(c.Turns[0].Messages, "system", marker, prefix); ok {
			m.Turns = append([]Turn(nil), c.Turns...)
			m.Turns[0].Messages = msgs
			return &m
		}
	}
	m.Turns = append([]Turn(nil), c.Turns...)
	markTurn(&m.Turns[0], marker, prefix, tokens)
	if prefix {
		// A later turn that carries its whole context opens with the
		// first turn's, so it opens with the marker too (a suffix's place
		// inside it is not known).
		for k := 1; k < len(m.Turns); k++ {
			if t := &m.Turns[k]; t.Standalone {
				markStandalone(t, marker, tokens)
			}
		}
	}
	return &m
}

// markTurn places marker in t's own message (first or last).
func markTurn(t *Turn, marker string, prefix bool, tokens int) {
	place := func(s string) string {
		if prefix {
			return marker + s
		}
		return s + marker
	}
	switch {
	case t.Messages != nil:
		if msgs, ok := markMessage(t.Messages, "user", marker, prefix); ok {
			t.Messages = msgs
		}
	case t.Prompt != nil:
		// Spelt out for this session only: a trace's prompt is kept as
		// blocks shared by every session that sends it.
		t.Text, t.Prompt = place(t.Prompt.String()), nil
	case t.Parts != nil:
		parts := make([]string, 0, len(t.Parts)+1)
		if prefix {
			parts = append(append(parts, marker), t.Parts...)
		} else {
			parts = append(append(parts, t.Parts...), marker)
		}
		t.Parts = parts
	default:
		t.Text = place(t.Text)
	}
	if t.InputTokens > 0 {
		t.InputTokens += tokens
	}
}

// markStandalone puts marker before a standalone turn's context: its
// thread's first user message when it has a thread, else its own message.
func markStandalone(t *Turn, marker string, tokens int) {
	for i := range t.Thread {
		if t.Thread[i].Role != "user" {
			continue
		}
		th := append([]Message(nil), t.Thread...)
		msg := &th[i]
		if msg.Parts != nil {
			msg.Parts = append([]string{marker}, msg.Parts...)
		} else {
			msg.Text = marker + msg.Text
		}
		t.Thread = th
		if t.InputTokens > 0 {
			t.InputTokens += tokens
		}
		return
	}
	markTurn(t, marker, true, tokens)
}

// markMessage returns msgs with marker in the first message of role (its
// string content, or a text part added to its parts), copying what it
// changes; false when there is none it can mark.
func markMessage(msgs []map[string]any, role, marker string, prefix bool) ([]map[string]any, bool) {
	for i, msg := range msgs {
		if r, _ := msg["role"].(string); r != role {
			continue
		}
		mm := make(map[string]any, len(msg))
		for k, v := range msg {
			mm[k] = v
		}
		switch content := msg["content"].(type) {
		case string:
			if prefix {
				mm["content"] = marker + content
			} else {
				mm["content"] = content + marker
			}
		case []any:
			part := map[string]any{"type": "text", "text": strings.TrimSpace(marker)}
			parts := make([]any, 0, len(content)+1)
			if prefix {
				parts = append(append(parts, part), content...)
			} else {
				parts = append(append(parts, content...), part)
			}
			mm["content"] = parts
		default:
			return nil, false
		}
		out := append([]map[string]any(nil), msgs...)
		out[i] = mm
		return out, true
	}
	return nil, false
}
