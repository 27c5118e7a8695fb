package datasets

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// checkMessages validates OpenAI chat messages as AIPerf does: a
// non-empty list of objects, each with a string "role".
func checkMessages(msgs []map[string]any) error {
	if len(msgs) == 0 {
		return errors.New(`"messages" must be a non-empty list`)
	}
	for i, m := range msgs {
		if m == nil {
			return fmt.Errorf("messages[%d] is not an object", i)
		}
		role, ok := m["role"].(string)
		if !ok || role == "" {
			return fmt.Errorf(`messages[%d] has no "role"`, i)
		}
	}
	return nil
}

// checkTools validates OpenAI tool definitions: a non-empty list of
// objects.
func checkTools(tools []map[string]any) error {
	if len(tools) == 0 {
		return errors.New(`"tools" must be a non-empty list`)
	}
	for i, t := range tools {
		if t == nil {
			return fmt.Errorf("tools[%d] is not an object", i)
		}
	}
	return nil
}

// messagesText is the text of chat messages, one message a line: string
// contents, and the text parts of content lists.
func messagesText(msgs []map[string]any) string {
	var b strings.Builder
	for _, m := range msgs {
		n := b.Len()
		appendText(&b, m["content"])
		if b.Len() > n {
			b.WriteByte('\n')
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// payloadText is the prompt text of a verbatim request body: its
// messages, prompt or input, whichever it has.
func payloadText(p map[string]any) string {
	if msgs, ok := p["messages"].([]any); ok {
		var b strings.Builder
		for _, m := range msgs {
			if m, ok := m.(map[string]any); ok {
				n := b.Len()
				appendText(&b, m["content"])
				if b.Len() > n {
					b.WriteByte('\n')
				}
			}
		}
		return strings.TrimSuffix(b.String(), "\n")
	}
	for _, k := range []string{"prompt", "input", "inputs", "text"} {
		if v, ok := p[k]; ok {
			var b strings.Builder
			appendText(&b, v)
			return b.String()
		}
	}
	return ""
}

// appendText writes the text in a content value: a string, a list of
// strings or of {"type": "text", "text": …} parts.
func appendText(b *strings.Builder, v any) {
	switch v := v.(type) {
	case string:
		b.WriteString(v)
	case []any:
		for i, p := range v {
			if i > 0 {
				b.WriteByte('\n')
			}
			switch p := p.(type) {
			case string:
				b.WriteString(p)
			case map[string]any:
				if s, ok := p["text"].(string); ok {
					b.WriteString(s)
				}
			}
		}
	}
}

// bodyText is the prompt text of a verbatim JSON request body (payloadText
// of its fields); "" when it is not a JSON object.
func bodyText(b []byte) string {
	var p map[string]any
	if json.Unmarshal(b, &p) != nil {
		return ""
	}
	return payloadText(p)
}
