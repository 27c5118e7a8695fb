package endpoint

// completions is OpenAI's legacy Completions API: one prompt string in,
// choices[].text out.
type completions struct{}

func init() { Register(Completions, completions{}) }

func (completions) Info() Info {
	return Info{Path: "/v1/completions", Streams: true, ProducesTokens: true, CapField: "max_tokens"}
}

func (completions) Body(e *Endpoint, r *Request) ([]byte, error) {
	body := make(map[string]any, 6+len(e.Extra)+len(r.Turn.Extra))
	body["model"] = e.ModelFor(r.Turn)
	body["prompt"] = promptText(r)
	if r.Turn.MaxTokens > 0 {
		body["max_tokens"] = r.Turn.MaxTokens
	}
	streamOptions(e, body)
	return jsonBody(e, r.Turn, body)
}

func (completions) Decoder(*Endpoint) Decoder { return openAIDecoder{} }
