package endpoint

import (
	"fmt"
	"strconv"
	"strings"
)

// pathStep is one step of a response field path: an object key or an
// array index.
type pathStep struct {
	key   string
	index int // -1 for a key
}

// parseFieldPath reads a dotted JSON path: "choices.0.delta.content",
// "choices[0].delta.content" or with a leading "$.".
func parseFieldPath(p string) ([]pathStep, error) {
	src := p
	p = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(p), "$"), ".")
	if p == "" {
		return nil, fmt.Errorf("response field %q is empty", src)
	}
	var steps []pathStep
	for _, part := range strings.Split(p, ".") {
		key, rest, bracket := strings.Cut(part, "[")
		if bracket && rest == "" {
			return nil, fmt.Errorf("response field %q: unclosed [", src)
		}
		if key == "" && rest == "" {
			return nil, fmt.Errorf("response field %q has an empty step", src)
		}
		if key != "" {
			if n, err := strconv.Atoi(key); err == nil && n >= 0 {
				steps = append(steps, pathStep{index: n})
			} else {
				steps = append(steps, pathStep{key: key, index: -1})
			}
		}
		for rest != "" {
			idx, after, ok := strings.Cut(rest, "]")
			n, err := strconv.Atoi(idx)
			if !ok || err != nil || n < 0 {
				return nil, fmt.Errorf("response field %q: bad index [%s", src, rest)
			}
			steps = append(steps, pathStep{index: n})
			rest = strings.TrimPrefix(after, "[")
			if after != "" && !strings.HasPrefix(after, "[") {
				return nil, fmt.Errorf("response field %q: unexpected %q after an index", src, after)
			}
		}
	}
	return steps, nil
}

// fieldDecoder takes the text of each event or body from one JSON path;
// [DONE] ends a stream, and an "error" member at the top is an error.
type fieldDecoder struct {
	steps   []pathStep
	missing error // the ShapeError naming the path, made once
}

func newFieldDecoder(path string) (*fieldDecoder, error) {
	steps, err := parseFieldPath(path)
	if err != nil {
		return nil, err
	}
	return &fieldDecoder{steps: steps, missing: &ShapeError{Field: path}}, nil
}

func (f *fieldDecoder) Event(_, data []byte, out *Output) (Delta, error) {
	if isDone(data) {
		return Delta{Done: true}, nil
	}
	return f.Body(data, out)
}

func (f *fieldDecoder) Body(data []byte, out *Output) (Delta, error) {
	n := len(out.Text)
	s := scanner{b: data}
	found, err := s.path(f.steps, &out.Text)
	if err == nil {
		err = s.end()
	}
	if err != nil {
		out.Text = out.Text[:n]
		return Delta{}, syntaxError(data)
	}
	if !found {
		// An error body has no text: report it rather than the path.
		var top Delta
		es := scanner{b: data}
		if es.peek() == '{' && es.object(func(key []byte) error {
			if string(key) == "error" {
				e, err := parseErrorValue(&es)
				top.Err = e
				return err
			}
			return es.skip()
		}) == nil && top.Err != nil {
			if top.Err.Type == "" {
				top.Err.Type = "error"
			}
			return top, nil
		}
		return Delta{}, f.missing
	}
	return Delta{Content: len(out.Text) > n}, nil
}

// path walks steps from the value at the cursor, consuming the whole
// value, and appends the string (or the literal number or boolean) it
// leads to. It reports whether the path was there.
func (s *scanner) path(steps []pathStep, dst *[]byte) (bool, error) {
	if len(steps) == 0 {
		switch c := s.peek(); {
		case c == '"':
			var err error
			*dst, err = s.str(*dst)
			return true, err
		case c == '{' || c == '[':
			return false, s.skip()
		case c == 'n':
			return true, s.literal("null")
		default:
			start := s.i
			if err := s.skip(); err != nil {
				return false, err
			}
			*dst = append(*dst, s.b[start:s.i]...)
			return true, nil
		}
	}
	st := steps[0]
	found := false
	switch {
	case st.index < 0 && s.peek() == '{':
		err := s.object(func(key []byte) error {
			if found || string(key) != st.key {
				return s.skip()
			}
			var err error
			found, err = s.path(steps[1:], dst)
			return err
		})
		return found, err
	case st.index >= 0 && s.peek() == '[':
		err := s.array(func(i int) error {
			if i != st.index {
				return s.skip()
			}
			var err error
			found, err = s.path(steps[1:], dst)
			return err
		})
		return found, err
	default:
		return false, s.skip()
	}
}
