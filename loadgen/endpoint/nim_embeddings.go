package endpoint

import "github.com/surgebench/surge/datasets"

// nimEmbeddings is NVIDIA NIM's embeddings API: OpenAI's shape plus the
// input_type that asymmetric retrieval models require ("query" here;
// --extra-inputs input_type:passage embeds documents).
type nimEmbeddings struct{}

func init() { Register(NIMEmbeddings, nimEmbeddings{}) }

func (nimEmbeddings) Info() Info { return Info{Path: "/v1/embeddings"} }

func (nimEmbeddings) Body(e *Endpoint, r *Request) ([]byte, error) {
	body := make(map[string]any, 5+len(e.Extra)+len(r.Turn.Extra))
	body["model"] = e.ModelFor(r.Turn)
	body["input"] = embeddingInputs(r)
	body["input_type"] = "query"
	body["encoding_format"] = "float"
	return jsonBody(e, r.Turn, body)
}

func (nimEmbeddings) inputs(t *datasets.Turn) int { return 1 + len(t.Passages) }

func (nimEmbeddings) Decoder(*Endpoint) Decoder { return listDecoder{field: "data"} }
