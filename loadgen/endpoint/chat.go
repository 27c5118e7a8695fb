package endpoint

// chat is OpenAI's Chat Completions API (vLLM, SGLang, TGI, llama.cpp,
// Ollama, NIM and most proxies serve it).
type chat struct{}

func init() { Register(Chat, chat{}) }

func (chat) Info() Info {
	return Info{Path: "/v1/chat/completions", Streams: true, ProducesTokens: true, Media: true, CapField: "max_completion_tokens"}
}

func (chat) Body(e *Endpoint, r *Request) ([]byte, error) {
	body := make(map[string]any, 6+len(e.Extra)+len(r.Turn.Extra))
	body["model"] = e.ModelFor(r.Turn)
	msgs := chatMessages(r, true)
	withMedia := hasMedia(msgs)
	if withMedia {
		body["messages"] = mediaMessages{}
	} else {
		body["messages"] = wireMessages(msgs)
	}
	if r.Turn.Tools != nil {
		body["tools"] = r.Turn.Tools
	}
	if r.Turn.MaxTokens > 0 {
		body[e.MaxTokensField()] = r.Turn.MaxTokens
	}
	streamOptions(e, body)
	if withMedia {
		return mediaBody(e, r.Turn, body, msgs)
	}
	return jsonBody(e, r.Turn, body)
}

// streamOptions asks an OpenAI-style server to stream, and for usage, so
// token counts have a source without a tokenizer; with PerChunkUsage for
// the running usage on every chunk too (vLLM's continuous_usage_stats).
func streamOptions(e *Endpoint, body map[string]any) {
	if e.Streaming {
		body["stream"] = true
		opts := map[string]any{"include_usage": true}
		if e.PerChunkUsage {
			opts["continuous_usage_stats"] = true
		}
		body["stream_options"] = opts
	}
}

func (chat) Decoder(*Endpoint) Decoder { return openAIDecoder{} }

// openAIDecoder reads chat and completions chunks and bodies.
type openAIDecoder struct{}

func (openAIDecoder) Event(_, data []byte, out *Output) (Delta, error) {
	if isDone(data) {
		return Delta{Done: true}, nil
	}
	return parseChunk(data, &out.Text, &out.Reasoning, &out.Tools)
}

func (openAIDecoder) Body(data []byte, out *Output) (Delta, error) {
	return parseChunk(data, &out.Text, &out.Reasoning, &out.Tools)
}
