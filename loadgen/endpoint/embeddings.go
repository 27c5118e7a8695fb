package endpoint

import "github.com/surgebench/surge/datasets"

// embeddings is OpenAI's Embeddings API (vLLM --task embed, TEI's OpenAI
// route, Ollama): input texts in, one vector per input out.
type embeddings struct{}

func init() { Register(Embeddings, embeddings{}) }

func (embeddings) Info() Info { return Info{Path: "/v1/embeddings"} }

func (embeddings) Body(e *Endpoint, r *Request) ([]byte, error) {
	body := make(map[string]any, 4+len(e.Extra)+len(r.Turn.Extra))
	body["model"] = e.ModelFor(r.Turn)
	body["input"] = embeddingInputs(r)
	body["encoding_format"] = "float"
	return jsonBody(e, r.Turn, body)
}

// embeddingInputs are the texts to embed: the turn's content, and its
// passages when the dataset gave some (a batch; inputs counts them).
func embeddingInputs(r *Request) []string {
	return append([]string{r.Turn.Content()}, r.Turn.Passages...)
}

func (embeddings) inputs(t *datasets.Turn) int { return 1 + len(t.Passages) }

func (embeddings) Decoder(*Endpoint) Decoder { return listDecoder{field: "data"} }

// listDecoder reads the whole-body answers of the non-generating types: a
// list of results under field (top level when field is ""), counted into
// Delta.Items and skipped unparsed, plus usage and errors.
type listDecoder struct {
	field string
}

func (l listDecoder) Event(_, data []byte, out *Output) (Delta, error) { return l.Body(data, out) }

func (l listDecoder) Body(data []byte, _ *Output) (Delta, error) {
	var d Delta
	s := scanner{b: data}
	found := false
	count := func() error {
		found = true
		if s.peek() != '[' {
			return s.skip()
		}
		return s.array(func(int) error { d.Items++; return s.skip() })
	}
	var err error
	if l.field == "" && s.peek() == '[' {
		err = count()
	} else {
		err = s.object(func(key []byte) error {
			switch k := string(key); {
			case k == l.field && l.field != "": // "" is a top-level list, not the key ""
				return count()
			case k == "usage":
				return parseUsage(&s, &d.Usage)
			case k == "error":
				e, err := parseErrorValue(&s)
				d.Err = e
				return err
			default:
				return s.skip()
			}
		})
	}
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return Delta{}, syntaxError(data)
	}
	if d.Err != nil {
		if d.Err.Type == "" {
			d.Err.Type = "error"
		}
		return d, nil
	}
	if !found {
		if l.field == "" {
			return Delta{}, missing("[results]")
		}
		return Delta{}, missing(l.field)
	}
	d.Finished = true
	return d, nil
}
