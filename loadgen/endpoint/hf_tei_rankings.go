package endpoint

import "fmt"

// hfTEIRankings is Hugging Face Text Embeddings Inference's /rerank: a
// query and texts in, a bare array of {index, score} out.
type hfTEIRankings struct{}

func init() { Register(HFTEIRankings, hfTEIRankings{}) }

func (hfTEIRankings) Info() Info { return Info{Path: "/rerank", Rankings: true} }

func (hfTEIRankings) Body(e *Endpoint, r *Request) ([]byte, error) {
	if err := needPassages(HFTEIRankings, r); err != nil {
		return nil, err
	}
	// TEI serves one model and takes no model field.
	body := make(map[string]any, 3+len(e.Extra)+len(r.Turn.Extra))
	body["query"] = r.Turn.Content()
	body["texts"] = r.Turn.Passages
	return jsonBody(e, r.Turn, body)
}

func (hfTEIRankings) Decoder(*Endpoint) Decoder { return listDecoder{} }

// needPassages rejects a rankings turn with nothing to rank.
func needPassages(k Kind, r *Request) error {
	if len(r.Turn.Passages) == 0 {
		return fmt.Errorf("endpoint type %s needs passages to rank: the turn has only a query (use a rankings dataset)", k)
	}
	return nil
}
