package endpoint

// nimRankings is NVIDIA NIM's reranking API: {query: {text}, passages:
// [{text}]} in, rankings with logits out.
type nimRankings struct{}

func init() { Register(NIMRankings, nimRankings{}) }

func (nimRankings) Info() Info { return Info{Path: "/v1/ranking", Rankings: true} }

type nimText struct {
	Text string `json:"text"`
}

func (nimRankings) Body(e *Endpoint, r *Request) ([]byte, error) {
	if err := needPassages(NIMRankings, r); err != nil {
		return nil, err
	}
	passages := make([]nimText, len(r.Turn.Passages))
	for i, p := range r.Turn.Passages {
		passages[i] = nimText{p}
	}
	body := make(map[string]any, 5+len(e.Extra)+len(r.Turn.Extra))
	body["model"] = e.ModelFor(r.Turn)
	body["query"] = nimText{r.Turn.Content()}
	body["passages"] = passages
	body["truncate"] = "END"
	return jsonBody(e, r.Turn, body)
}

func (nimRankings) Decoder(*Endpoint) Decoder { return listDecoder{field: "rankings"} }
