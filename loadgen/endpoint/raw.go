package endpoint

import (
	"encoding/json"
	"fmt"
)

// raw sends each turn's content as the request body, unchanged (a dataset
// of ready-made bodies, e.g. captured from production), to the path given.
// Responses are read as OpenAI chat or completions chunks, or through the
// response field.
type raw struct{}

func init() { Register(Raw, raw{}) }

func (raw) Info() Info {
	return Info{Path: "/v1/chat/completions", Streams: true, ProducesTokens: true, EndsAtEOF: true}
}

func (raw) Body(_ *Endpoint, r *Request) ([]byte, error) {
	b := []byte(r.Turn.Content())
	if !json.Valid(b) {
		return nil, fmt.Errorf("endpoint type raw sends the turn's text as the body, and it is not JSON (%s)", excerpt(b))
	}
	return b, nil
}

func (raw) Decoder(*Endpoint) Decoder { return openAIDecoder{} }
