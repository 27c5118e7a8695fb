package datasets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// lineCounter is a reader that keeps the bytes it passed on since the
// last offset asked about, so that a streaming JSON decoder's byte offsets
// can be turned into line numbers without holding the file: it holds about
// what the decoder itself buffers (the value being decoded). Offsets must
// be asked in non-decreasing order (a decoder's are).
type lineCounter struct {
	r      io.Reader
	read   int64  // bytes passed on
	base   int64  // offset of tail[0]
	tail   []byte // bytes from base to read
	before int    // newlines before base
}

func (c *lineCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.tail = append(c.tail, p[:n]...)
	c.read += int64(n)
	return n, err
}

// line is the 1-based line of byte offset off.
func (c *lineCounter) line(off int64) int {
	k := int(min(max(off-c.base, 0), int64(len(c.tail))))
	c.before += bytes.Count(c.tail[:k], []byte{'\n'})
	c.tail = c.tail[k:]
	c.base += int64(k)
	return c.before + 1
}

// valueLine is the line of the first byte at or after off that is not
// white space or a comma: where a value read from off begins.
func (c *lineCounter) valueLine(off int64) int {
	n := c.line(off)
	for _, b := range c.tail {
		switch b {
		case '\n':
			n++
		case ' ', '\t', '\r', ',':
		default:
			return n
		}
	}
	return n
}

// jsonStream decodes a JSON document value by value with line numbers.
type jsonStream struct {
	lc   *lineCounter
	dec  *json.Decoder
	file string
}

func newJSONStream(r io.Reader, file string) *jsonStream {
	lc := &lineCounter{r: r}
	dec := json.NewDecoder(lc)
	dec.UseNumber()
	return &jsonStream{lc: lc, dec: dec, file: file}
}

// fail turns a decoding error at offset off into an *InputError.
func (s *jsonStream) fail(off int64, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return &InputError{File: s.file, Line: s.lc.line(max(off, syn.Offset-1)), Msg: "malformed JSON: " + syn.Error(), Err: err}
	case errors.As(err, &typ):
		where := "entry"
		if typ.Field != "" {
			where = fmt.Sprintf("field %q", typ.Field)
		}
		return &InputError{File: s.file, Line: s.lc.line(max(off, typ.Offset-1)), Msg: fmt.Sprintf("%s: want %s, got %s", where, jsonKind(typ.Type.String()), typ.Value), Err: err}
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return &InputError{File: s.file, Line: s.lc.line(max(off, s.lc.read)), Msg: "malformed JSON: unexpected end of file", Err: err}
	}
	var ie *InputError
	if errors.As(err, &ie) {
		return err
	}
	return &InputError{File: s.file, Line: s.lc.line(off), Msg: "malformed JSON: " + err.Error(), Err: err}
}

// delim reads the delimiter want ('[', '{', ']' or '}') or fails with what.
func (s *jsonStream) delim(want json.Delim, what string) error {
	off := s.dec.InputOffset()
	t, err := s.dec.Token()
	if err != nil {
		return s.fail(off, err)
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return inputErrorf(s.file, s.lc.line(off), "%s", what)
	}
	return nil
}

// key reads an object key (at the decoder's position inside an object).
func (s *jsonStream) key() (string, error) {
	off := s.dec.InputOffset()
	t, err := s.dec.Token()
	if err != nil {
		return "", s.fail(off, err)
	}
	k, ok := t.(string)
	if !ok {
		return "", inputErrorf(s.file, s.lc.line(off), "want an object key")
	}
	return k, nil
}

// value decodes the next value into v; it returns the line the value
// starts on.
func (s *jsonStream) value(v any) (int, error) {
	off := s.dec.InputOffset()
	if err := s.dec.Decode(v); err != nil {
		return 0, s.fail(off, err)
	}
	return s.lc.valueLine(off), nil
}

// end checks that nothing but white space follows the document.
func (s *jsonStream) end() error {
	off := s.dec.InputOffset()
	if _, err := s.dec.Token(); !errors.Is(err, io.EOF) {
		return inputErrorf(s.file, s.lc.line(off), "data after the JSON document")
	}
	return nil
}
