package datasets

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrInvalidUTF8 is the cause (errors.Is) of the *InputError for a dataset
// line that is not UTF-8 text.
//
// JSON text must be UTF-8 (RFC 8259), and encoding/json silently turns
// every invalid byte into U+FFFD, both when a dataset is parsed and when a
// request body is encoded: without this check a Latin-1 or binary line
// would be sent with its bytes replaced and nobody told. With
// Options.AllowInvalidUTF8 the line is read anyway: fields surge decodes
// (prompts, messages) then carry U+FFFD where the bytes were, as a JSON
// string cannot hold them; bodies sent byte for byte (raw_payload,
// inputs_json) carry the bytes themselves, and the server receives JSON
// that is not valid UTF-8.
var ErrInvalidUTF8 = errors.New("not valid UTF-8")

// utf8Check follows a file's bytes as they are read and fails at the
// first byte that is not UTF-8, naming its line and column. A sequence
// split between two reads is checked when its end arrives.
type utf8Check struct {
	file string
	line int // newlines seen so far
	col  int // bytes since the last newline
	pend [utf8.UTFMax]byte
	np   int // bytes of pend in use: an unfinished sequence
}

// scan checks b, the bytes read next.
func (u *utf8Check) scan(b []byte) error {
	if u.np > 0 {
		for u.np < utf8.UTFMax && len(b) > 0 && !utf8.FullRune(u.pend[:u.np]) {
			u.pend[u.np] = b[0]
			u.np++
			b = b[1:]
		}
		if !utf8.FullRune(u.pend[:u.np]) {
			return nil // the sequence goes on in the next read
		}
		if r, size := utf8.DecodeRune(u.pend[:u.np]); r == utf8.RuneError && size <= 1 {
			return u.fail(u.pend[0])
		}
		u.col += u.np
		u.np = 0
	}
	// Keep an unfinished sequence at the end for the next read.
	end := len(b)
	for k := len(b) - 1; k >= 0 && k >= len(b)-utf8.UTFMax; k-- {
		if !utf8.RuneStart(b[k]) {
			continue
		}
		if !utf8.FullRune(b[k:]) {
			end = k
		}
		break
	}
	body := b[:end]
	if !utf8.Valid(body) {
		return u.locate(body)
	}
	if nl := bytes.LastIndexByte(body, '\n'); nl >= 0 {
		u.line += bytes.Count(body, []byte{'\n'})
		u.col = len(body) - nl - 1
	} else {
		u.col += len(body)
	}
	u.np = copy(u.pend[:], b[end:])
	return nil
}

// locate finds the first invalid byte of body (which has one) and fails
// there.
func (u *utf8Check) locate(body []byte) error {
	for i := 0; i < len(body); {
		r, size := utf8.DecodeRune(body[i:])
		if r == utf8.RuneError && size <= 1 {
			return u.fail(body[i])
		}
		if body[i] == '\n' {
			u.line++
			u.col = 0
		} else {
			u.col += size
		}
		i += size
	}
	return nil
}

// end checks that the file did not end inside a sequence.
func (u *utf8Check) end() error {
	if u.np > 0 {
		return u.fail(u.pend[0])
	}
	return nil
}

// fail is the error for byte c, at the position followed.
func (u *utf8Check) fail(c byte) error {
	return &InputError{File: u.file, Line: u.line + 1, Err: ErrInvalidUTF8,
		Msg: fmt.Sprintf("byte 0x%02x at column %d is not UTF-8: the file must be UTF-8 text (--allow-invalid-utf8 reads it anyway, invalid bytes in JSON strings becoming U+FFFD)", c, u.col+1)}
}
