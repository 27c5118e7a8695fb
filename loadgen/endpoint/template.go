package endpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"text/template"
)

// templateType builds each body from a Go text/template over the turn
// (TemplateData), for in-house APIs; responses are read through the
// response field, or as OpenAI chunks without one.
type templateType struct{}

func init() { Register(Template, templateType{}) }

func (templateType) Info() Info {
	return Info{Streams: true, ProducesTokens: true, EndsAtEOF: true}
}

// TemplateData is what a body template sees.
type TemplateData struct {
	Model     string
	Stream    bool
	MaxTokens int // 0: no output length given
	System    string
	// Text is the turn's content (also Query, for rankings templates).
	Text, Query string
	// Messages are the chat messages: system, history, then the turn.
	Messages []Message
	Passages []string
	// Extra is --extra-inputs with the turn's own extra fields over it.
	Extra map[string]any
}

// NotJSONError is a body template whose rendering is not JSON: a
// template that renders no JSON for one turn renders none for most (spec
// tries one before a run starts).
type NotJSONError struct {
	// Template names it (a file, or the flag), Excerpt quotes the start
	// of what it rendered, Hint says how to mend it.
	Template, Excerpt, Hint string
}

func (e *NotJSONError) Error() string {
	return fmt.Sprintf("body template %s rendered invalid JSON (%s); %s", e.Template, e.Excerpt, e.Hint)
}

// ParseTemplate parses a body template. Besides text/template's built-ins
// it has json, which writes any value as JSON (so {{json .Text}} is a
// quoted, escaped string).
func ParseTemplate(name, text string) (*template.Template, error) {
	t, err := template.New(name).Option("missingkey=error").Funcs(template.FuncMap{
		"json": func(v any) (string, error) {
			b, err := json.Marshal(v)
			return string(b), err
		},
	}).Parse(text)
	if err != nil {
		return nil, fmt.Errorf("body template: %w", err)
	}
	return t, nil
}

func (templateType) Body(e *Endpoint, r *Request) ([]byte, error) {
	if e.Jinja != nil {
		return jinjaBody(e, e.Jinja, r)
	}
	if e.Template == nil {
		return nil, fmt.Errorf("endpoint type template needs a body template")
	}
	extra := make(map[string]any, len(e.Extra)+len(r.Turn.Extra))
	for _, m := range []map[string]any{e.Extra, r.Turn.Extra} {
		for k, v := range m {
			extra[k] = v
		}
	}
	content := r.Turn.Content()
	data := TemplateData{Model: e.ModelFor(r.Turn), Stream: e.Streaming, MaxTokens: r.Turn.MaxTokens, System: r.System,
		Text: content, Query: content, Messages: chatMessages(r, true), Passages: r.Turn.Passages, Extra: extra}
	var buf bytes.Buffer
	if err := e.Template.Execute(&buf, data); err != nil {
		return nil, fmt.Errorf("body template: %w", err)
	}
	if !json.Valid(buf.Bytes()) {
		return nil, &NotJSONError{Template: e.Template.Name(), Excerpt: excerpt(buf.Bytes()), Hint: "quote strings with {{json .Text}}"}
	}
	return buf.Bytes(), nil
}

func (templateType) Decoder(e *Endpoint) Decoder {
	if e.Jinja != nil {
		// AIPerf's form: its auto-detection when no response_field says
		// where the text is.
		return e.Jinja.auto
	}
	return openAIDecoder{}
}
