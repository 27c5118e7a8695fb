package endpoint

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/ardanlabs/jinja"
	"github.com/surgebench/surge/datasets/media"
)

// JinjaTemplate is a request body in AIPerf's template syntax: a Jinja2
// template (--extra-inputs payload_template:…) over AIPerf's variables
// (text, texts, query, passages, images, model, max_tokens, stream, …).
// The Go text/template body (Template) is surge's own form.
type JinjaTemplate struct {
	name string
	tpl  *jinja.Template
	// auto reads responses without a response_field; it keeps no state,
	// so every response shares it.
	auto *autoDecoder
}

// namedTemplates are AIPerf's built-in payload templates, by name.
var namedTemplates = map[string]string{
	"nv-embedqa": `{"text": {{ texts|tojson }}}`,
}

// NamedTemplate returns AIPerf's built-in payload template called name.
func NamedTemplate(name string) (string, bool) {
	t, ok := namedTemplates[name]
	return t, ok
}

// ParseJinjaTemplate compiles a body in AIPerf's template syntax; name
// (the template's source) prefixes its errors.
func ParseJinjaTemplate(name, text string) (*JinjaTemplate, error) {
	tpl, err := jinja.Compile(text)
	if err != nil {
		return nil, fmt.Errorf("payload_template %s: %w", name, err)
	}
	return &JinjaTemplate{name: name, tpl: tpl, auto: newAutoDecoder()}, nil
}

// jinjaBody renders the turn through t with AIPerf's variables, checks
// the result is JSON and merges the run's other extra fields into it, as
// AIPerf's template endpoint does.
func jinjaBody(e *Endpoint, t *JinjaTemplate, r *Request) ([]byte, error) {
	turn := r.Turn
	text := turn.Content()
	texts := []any{text}
	if len(turn.Parts) > 1 {
		texts = make([]any, len(turn.Parts))
		for i, p := range turn.Parts {
			texts[i] = p
		}
	}
	passages := make([]any, len(turn.Passages))
	for i, p := range turn.Passages {
		passages[i] = p
	}
	images, audios := mediaValues(turn.Media)
	var maxTokens any
	if turn.MaxTokens > 0 {
		maxTokens = turn.MaxTokens
	}
	role := turn.Role
	if role == "" {
		role = "user"
	}
	first := func(xs []any) any {
		if len(xs) == 0 {
			return nil
		}
		return xs[0]
	}
	model := e.ModelFor(turn)
	turnVal := map[string]any{"texts": texts, "images": images, "audios": audios, "role": role, "max_tokens": maxTokens, "model": model}
	vars := map[string]any{
		"text": text, "texts": texts, "query": text, "queries": texts, "passage": first(passages), "passages": passages,
		"image": first(images), "images": images, "audio": first(audios), "audios": audios, "video": nil, "videos": []any{},
		"texts_by_name": map[string]any{"text": texts}, "images_by_name": map[string]any{}, "audios_by_name": map[string]any{},
		"videos_by_name": map[string]any{}, "model": model, "max_tokens": maxTokens, "stream": e.Streaming, "role": role,
		"turn": turnVal, "turns": []any{turnVal}, "system": r.System,
		"request_info": map[string]any{"model": model, "stream": e.Streaming, "turn": turnVal},
	}
	out, err := t.tpl.Render(vars)
	if err != nil {
		return nil, fmt.Errorf("payload_template %s: %w", t.name, err)
	}
	body := []byte(strings.TrimSpace(out))
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil {
		if !json.Valid(body) {
			return nil, &NotJSONError{Template: "payload_template " + t.name, Excerpt: excerpt(body), Hint: "quote strings with |tojson"}
		}
		return body, nil // a JSON value that is not an object: sent as rendered
	}
	extra := len(e.Extra) + len(turn.Extra)
	if extra == 0 {
		return body, nil
	}
	merged := make(map[string]any, len(obj)+extra)
	maps.Copy(merged, obj)
	maps.Copy(merged, e.Extra)
	maps.Copy(merged, turn.Extra)
	return json.Marshal(merged)
}

// mediaValues are the turn's images and audio clips as AIPerf's template
// variables hold them: an image's URL (a data URL), an audio clip's
// base64 data.
func mediaValues(parts []media.Part) (images, audios []any) {
	images, audios = []any{}, []any{}
	for _, p := range parts {
		var part struct {
			ImageURL struct {
				URL string `json:"url"`
			} `json:"image_url"`
			InputAudio struct {
				Data string `json:"data"`
			} `json:"input_audio"`
		}
		if json.Unmarshal(p.JSON, &part) != nil {
			continue
		}
		switch {
		case part.ImageURL.URL != "":
			images = append(images, part.ImageURL.URL)
		case part.InputAudio.Data != "":
			audios = append(audios, part.InputAudio.Data)
		}
	}
	return images, audios
}

// autoPaths are where AIPerf's template endpoint looks for a response's
// text when no response_field is given: a stream's delta first, then
// OpenAI's shapes, then the plain fields.
var autoPaths = []string{"choices[0].delta.content", "choices[0].text", "choices[0].message.content",
	"text", "content", "response", "output", "result", "generated_text"}

// noTextKeys mark a response that carries no text by design: embeddings
// and rankings, which AIPerf's auto-detection reads before text.
var noTextKeys = map[string]bool{"data": true, "embeddings": true, "embedding": true, "rankings": true, "results": true}

// autoDecoder reads the text of a response in AIPerf's template endpoint
// when no response_field says where it is: the first of autoPaths that
// is there; a response with only embeddings or rankings has none.
type autoDecoder struct {
	paths   []*fieldDecoder
	missing error
}

func newAutoDecoder() *autoDecoder {
	a := &autoDecoder{missing: &ShapeError{Field: "text (" + strings.Join(autoPaths, ", ") + ")"}}
	for _, p := range autoPaths {
		f, err := newFieldDecoder(p)
		if err != nil {
			panic(err) // the list above is fixed
		}
		a.paths = append(a.paths, f)
	}
	return a
}

func (a *autoDecoder) Event(_, data []byte, out *Output) (Delta, error) {
	if isDone(data) {
		return Delta{Done: true}, nil
	}
	return a.Body(data, out)
}

func (a *autoDecoder) Body(data []byte, out *Output) (Delta, error) {
	for _, f := range a.paths {
		d, err := f.Body(data, out)
		if err == f.missing {
			continue
		}
		return d, err
	}
	s := scanner{b: data}
	found := false
	if s.peek() == '{' && s.object(func(key []byte) error {
		found = found || noTextKeys[string(key)]
		return s.skip()
	}) == nil && found {
		return Delta{}, nil
	}
	return Delta{}, a.missing
}
