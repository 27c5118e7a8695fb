package endpoint

import (
	"encoding/json"

	"github.com/surgebench/surge/datasets"
)

// hasMedia reports whether any message carries images or audio.
func hasMedia(msgs []Message) bool {
	for i := range msgs {
		if len(msgs[i].Media) > 0 {
			return true
		}
	}
	return false
}

// mediaMessages holds the place of messages with media in a body until
// mediaBody writes them.
type mediaMessages struct{}

// mediaBody is a chat body whose messages carry media. The media parts
// are copied into the body as they were encoded, never re-marshalled: a
// megabyte of base64 through encoding/json is a scan and an escape check
// per byte on every request, a copy is a memmove. The rest of the body
// (its fields, the text) is marshalled as any body is; messages come
// first. An extra field named "messages" replaces them, as it does in any
// body.
func mediaBody(e *Endpoint, t *datasets.Turn, body map[string]any, msgs []Message) ([]byte, error) {
	mergeExtra(e, t, body)
	if _, ok := body["messages"].(mediaMessages); !ok {
		return json.Marshal(body) // the extra's messages won
	}
	delete(body, "messages")
	rest, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	size := len(rest) + 16
	for i := range msgs {
		size += len(msgs[i].Content) + len(msgs[i].Role) + 64
		for _, p := range msgs[i].Media {
			size += len(p.JSON) + 1
		}
	}
	b := make([]byte, 0, size)
	b = append(b, `{"messages":[`...)
	for i := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = appendMessage(b, &msgs[i]); err != nil {
			return nil, err
		}
	}
	b = append(b, ']')
	if len(rest) > 2 { // not "{}"
		b = append(b, ',')
		b = append(b, rest[1:]...)
	} else {
		b = append(b, '}')
	}
	return b, nil
}

// appendMessage appends one message: a message with media as content
// parts (its text first, when it has any, then its media in order, as
// AIPerf orders them), any other as it marshals.
func appendMessage(b []byte, m *Message) ([]byte, error) {
	if m.Raw != nil || len(m.Media) == 0 {
		var v any = m
		if m.Raw != nil {
			v = m.Raw
		}
		j, err := json.Marshal(v)
		return append(b, j...), err
	}
	role, err := json.Marshal(m.Role)
	if err != nil {
		return nil, err
	}
	b = append(b, `{"role":`...)
	b = append(b, role...)
	b = append(b, `,"content":[`...)
	n := 0
	if m.Content != "" {
		text, err := json.Marshal(m.Content)
		if err != nil {
			return nil, err
		}
		b = append(b, `{"type":"text","text":`...)
		b = append(b, text...)
		b = append(b, '}')
		n++
	}
	for _, p := range m.Media {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, p.JSON...)
		n++
	}
	return append(b, "]}"...), nil
}
