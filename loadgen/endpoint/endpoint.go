// Package endpoint speaks the OpenAI-compatible HTTP APIs: it builds request
// bodies for each endpoint type and reads their responses and stream chunks.
package endpoint

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/surgebench/surge/datasets"
)

// Kind is an endpoint type, as --endpoint-type names it.
type Kind string

// The endpoint types surge can drive.
const (
	Chat        Kind = "chat"
	Completions Kind = "completions"
)

// kinds maps each supported type to its default path.
var kinds = map[Kind]string{
	Chat:        "/v1/chat/completions",
	Completions: "/v1/completions",
}

// ParseKind validates an --endpoint-type value.
func ParseKind(s string) (Kind, error) {
	k := Kind(strings.ToLower(strings.TrimSpace(s)))
	if _, ok := kinds[k]; !ok {
		names := slices.Sorted(maps.Keys(kinds))
		return "", fmt.Errorf("--endpoint-type %q is not supported (supported: %s)", s, strings.Join(toStrings(names), ", "))
	}
	return k, nil
}

func toStrings(ks []Kind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

// Path returns the kind's default URL path.
func (k Kind) Path() string { return kinds[k] }

// Message is one chat message of a conversation's history.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Endpoint builds request bodies for one model and endpoint type.
type Endpoint struct {
	Kind      Kind
	Model     string
	Streaming bool
	// Extra fields (from --extra-inputs) are merged into every body; a
	// turn's own Extra wins over them.
	Extra map[string]any
	// LegacyMaxTokens sends a chat request's output cap as max_tokens, the
	// name servers that ignore max_completion_tokens still honour
	// (--use-legacy-max-tokens).
	LegacyMaxTokens bool
}

// MaxTokensField is the body field that carries the output cap.
func (e *Endpoint) MaxTokensField() string {
	if e.Kind == Chat && !e.LegacyMaxTokens {
		return "max_completion_tokens"
	}
	return "max_tokens"
}

// Body returns the JSON request body for turn, after history (the earlier
// turns of its conversation with the replies the server gave).
func (e *Endpoint) Body(system string, history []Message, turn *datasets.Turn) ([]byte, error) {
	body := make(map[string]any, 6+len(e.Extra)+len(turn.Extra))
	body["model"] = e.Model
	switch e.Kind {
	case Chat:
		msgs := make([]Message, 0, len(history)+2)
		if system != "" {
			msgs = append(msgs, Message{Role: "system", Content: system})
		}
		msgs = append(msgs, history...)
		msgs = append(msgs, Message{Role: "user", Content: turn.Content()})
		body["messages"] = msgs
		if turn.MaxTokens > 0 {
			body[e.MaxTokensField()] = turn.MaxTokens
		}
	case Completions:
		var b strings.Builder
		if system != "" {
			b.WriteString(system)
			b.WriteString("\n\n")
		}
		for _, m := range history {
			b.WriteString(m.Content)
			b.WriteString("\n\n")
		}
		b.WriteString(turn.Content())
		body["prompt"] = b.String()
		if turn.MaxTokens > 0 {
			body["max_tokens"] = turn.MaxTokens
		}
	}
	if e.Streaming {
		body["stream"] = true
		// Ask for usage so token counts have a source without a tokenizer.
		body["stream_options"] = map[string]any{"include_usage": true}
	}
	for k, v := range e.Extra {
		body[k] = v
	}
	for k, v := range turn.Extra {
		body[k] = v
	}
	return json.Marshal(body)
}
