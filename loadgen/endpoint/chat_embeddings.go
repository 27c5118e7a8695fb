package endpoint

// chatEmbeddings is vLLM's chat-style embeddings request: the input as chat
// messages (the only way vLLM embeds multimodal inputs), answered with
// OpenAI's embeddings list.
type chatEmbeddings struct{}

func init() { Register(ChatEmbeddings, chatEmbeddings{}) }

func (chatEmbeddings) Info() Info { return Info{Path: "/v1/embeddings"} }

func (chatEmbeddings) Body(e *Endpoint, r *Request) ([]byte, error) {
	body := make(map[string]any, 4+len(e.Extra)+len(r.Turn.Extra))
	body["model"] = e.ModelFor(r.Turn)
	body["messages"] = wireMessages(chatMessages(r, true))
	body["encoding_format"] = "float"
	return jsonBody(e, r.Turn, body)
}

func (chatEmbeddings) Decoder(*Endpoint) Decoder { return listDecoder{field: "data"} }
