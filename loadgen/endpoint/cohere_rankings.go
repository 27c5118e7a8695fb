package endpoint

// cohereRankings is Cohere's v2 rerank API (also served by vLLM --task
// score): a query and documents in, results with relevance scores out.
type cohereRankings struct{}

func init() { Register(CohereRankings, cohereRankings{}) }

func (cohereRankings) Info() Info { return Info{Path: "/v2/rerank", Rankings: true} }

func (cohereRankings) Body(e *Endpoint, r *Request) ([]byte, error) {
	if err := needPassages(CohereRankings, r); err != nil {
		return nil, err
	}
	body := make(map[string]any, 4+len(e.Extra)+len(r.Turn.Extra))
	body["model"] = e.ModelFor(r.Turn)
	body["query"] = r.Turn.Content()
	body["documents"] = r.Turn.Passages
	return jsonBody(e, r.Turn, body)
}

func (cohereRankings) Decoder(*Endpoint) Decoder { return listDecoder{field: "results"} }
