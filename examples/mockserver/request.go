package mockserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// apiKind is the OpenAI endpoint a request came to.
type apiKind uint8

const (
	chatAPI apiKind = iota
	completionsAPI
)

// request is the part of a chat or completions body the mock acts on.
type request struct {
	Model        string
	Stream       bool
	IncludeUsage bool
	// ContinuousUsage puts the running usage on every chunk (vLLM's
	// stream_options.continuous_usage_stats).
	ContinuousUsage bool
	// MaxTokens is the requested output length; 0 means not given.
	MaxTokens int
	// LegacyMaxTokens is max_tokens alone (0: absent), what a server that
	// ignores max_completion_tokens goes by.
	LegacyMaxTokens int
	PromptTokens    int
	// Media are the request's image and audio parts.
	Media mediaLoad
}

// wireRequest is the JSON shape decoded; fields the mock ignores
// (temperature, ignore_eos, ...) are accepted and skipped.
type wireRequest struct {
	Model               string          `json:"model"`
	Messages            json.RawMessage `json:"messages"`
	Prompt              json.RawMessage `json:"prompt"`
	Stream              bool            `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	N                   *int            `json:"n"`
	IgnoreEOS           bool            `json:"ignore_eos"`
}

type streamOptions struct {
	IncludeUsage    bool `json:"include_usage"`
	ContinuousUsage bool `json:"continuous_usage_stats"`
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type wirePart struct {
	Type       string      `json:"type"`
	Text       string      `json:"text"`
	ImageURL   *imagePart  `json:"image_url"`
	InputAudio *inputAudio `json:"input_audio"`
}

// errBadRequest marks a body the mock rejects with 400.
var errBadRequest = errors.New("invalid request")

// parseRequest decodes body for the given endpoint. Errors wrap
// errBadRequest and name the offending field.
func (c *counter) parseRequest(body []byte, kind apiKind, maxOutput int) (request, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return request{}, fmt.Errorf("%w: body is not a JSON object: %w", errBadRequest, err)
	}
	r := request{Model: w.Model, Stream: w.Stream}
	if w.StreamOptions != nil {
		if !w.Stream {
			return request{}, fmt.Errorf("%w: stream_options is only allowed with stream: true", errBadRequest)
		}
		r.IncludeUsage = w.StreamOptions.IncludeUsage
		r.ContinuousUsage = w.StreamOptions.ContinuousUsage
	}
	if w.N != nil && *w.N != 1 {
		return request{}, fmt.Errorf("%w: n: the mock supports only n = 1, got %d", errBadRequest, *w.N)
	}
	// OpenAI's newer name wins when both are present.
	for _, f := range []struct {
		name string
		v    *int
	}{{"max_completion_tokens", w.MaxCompletionTokens}, {"max_tokens", w.MaxTokens}} {
		if f.v == nil {
			continue
		}
		if *f.v < 1 {
			return request{}, fmt.Errorf("%w: %s must be at least 1, got %d", errBadRequest, f.name, *f.v)
		}
		if *f.v > maxOutput {
			return request{}, fmt.Errorf("%w: %s %d exceeds the mock's limit of %d", errBadRequest, f.name, *f.v, maxOutput)
		}
		r.MaxTokens = *f.v
		break
	}
	if w.MaxTokens != nil {
		r.LegacyMaxTokens = *w.MaxTokens
	}
	var err error
	switch kind {
	case chatAPI:
		r.PromptTokens, err = c.countMessages(w.Messages, &r.Media)
	case completionsAPI:
		r.PromptTokens, err = c.countPrompt(w.Prompt)
	}
	if err != nil {
		return request{}, err
	}
	return r, nil
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// countMessages counts the words in a chat request's messages, and its
// media into m (nil: the parts are another API's, only text is read).
func (c *counter) countMessages(raw json.RawMessage, m *mediaLoad) (int, error) {
	if isNull(raw) {
		return 0, fmt.Errorf("%w: messages is required", errBadRequest)
	}
	var msgs []wireMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return 0, fmt.Errorf("%w: messages must be an array of message objects: %w", errBadRequest, err)
	}
	if len(msgs) == 0 {
		return 0, fmt.Errorf("%w: messages is empty", errBadRequest)
	}
	n := 0
	media := m
	for i, m := range msgs {
		if m.Role == "" {
			return 0, fmt.Errorf("%w: messages[%d].role is required", errBadRequest, i)
		}
		k, err := c.countContent(m.Content, media)
		if err != nil {
			return 0, fmt.Errorf("%w: messages[%d].content: %w", errBadRequest, i, err)
		}
		n += k
	}
	return n, nil
}

// countContent counts words in a message content: a string, null (an
// assistant turn with tool calls) or an array of parts, of which only
// text parts count; image and audio parts are checked and counted into m.
func (c *counter) countContent(raw json.RawMessage, m *mediaLoad) (int, error) {
	if isNull(raw) {
		return 0, nil
	}
	switch bytes.TrimSpace(raw)[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, err
		}
		return c.count(s), nil
	case '[':
		var parts []wirePart
		if err := json.Unmarshal(raw, &parts); err != nil {
			return 0, err
		}
		n := 0
		for i := range parts {
			if m != nil { // nil: another API's parts, only their text counts
				if err := m.add(&parts[i]); err != nil {
					return 0, err
				}
			}
			n += c.count(parts[i].Text)
		}
		return n, nil
	}
	return 0, errors.New("must be a string or an array of content parts")
}

// countPrompt counts a completions prompt: a string, an array of strings,
// an array of token ids or an array of such arrays.
func (c *counter) countPrompt(raw json.RawMessage) (int, error) {
	if isNull(raw) {
		return 0, fmt.Errorf("%w: prompt is required", errBadRequest)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return c.count(s), nil
	}
	var ss []string
	if json.Unmarshal(raw, &ss) == nil {
		if len(ss) != 1 {
			return 0, fmt.Errorf("%w: prompt: the mock supports one prompt per request, got %d", errBadRequest, len(ss))
		}
		return c.count(ss[0]), nil
	}
	var ids []int64
	if json.Unmarshal(raw, &ids) == nil {
		return len(ids), nil
	}
	var idss [][]int64
	if json.Unmarshal(raw, &idss) == nil {
		if len(idss) != 1 {
			return 0, fmt.Errorf("%w: prompt: the mock supports one prompt per request, got %d", errBadRequest, len(idss))
		}
		return len(idss[0]), nil
	}
	return 0, fmt.Errorf("%w: prompt must be a string, an array of strings or an array of token ids", errBadRequest)
}
