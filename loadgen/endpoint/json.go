package endpoint

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// errSyntax reports JSON the fast scanner cannot read; callers then fall
// back to encoding/json for a precise message.
var errSyntax = errors.New("malformed JSON")

// scanner walks a JSON document in place. It exists so the per-chunk path
// can pick out the few fields it needs without building Go values.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (s *scanner) peek() byte {
	if s.i < len(s.b) && s.b[s.i] > ' ' {
		return s.b[s.i] // servers send compact JSON: no space to skip
	}
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

func (s *scanner) expect(c byte) error {
	if s.peek() != c {
		return errSyntax
	}
	s.i++
	return nil
}

// object calls field for each key of the object at the cursor; field must
// consume the value.
func (s *scanner) object(field func(key []byte) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		key, err := s.rawKey()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := field(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return errSyntax
		}
	}
}

// array calls elem for each element; elem must consume the value.
func (s *scanner) array(elem func(i int) error) error {
	if err := s.expect('['); err != nil {
		return err
	}
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for n := 0; ; n++ {
		if err := elem(n); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return errSyntax
		}
	}
}

// rawKey returns an object key. Keys we look for never need unescaping, so
// an escaped key is returned raw (and simply never matches).
func (s *scanner) rawKey() ([]byte, error) {
	if s.peek() != '"' {
		return nil, errSyntax
	}
	start := s.i + 1
	if j := plainEnd(s.b, start); j < len(s.b) && s.b[j] == '"' {
		s.i = j + 1 // the usual key: no escapes
		return s.b[start:j], nil
	}
	if err := s.skipString(); err != nil {
		return nil, err
	}
	return s.b[start : s.i-1], nil
}

// str appends the unescaped string at the cursor to dst. A JSON null leaves
// dst unchanged.
func (s *scanner) str(dst []byte) ([]byte, error) {
	switch s.peek() {
	case 'n':
		return dst, s.literal("null")
	case '"':
	default:
		return dst, errSyntax
	}
	s.i++
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return dst, nil
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return dst, errSyntax
			}
			e := s.b[s.i+1]
			s.i += 2
			switch e {
			case '"', '\\', '/':
				dst = append(dst, e)
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r, ok := s.hex4()
				if !ok {
					return dst, errSyntax
				}
				if utf16.IsSurrogate(r) {
					r2 := utf8.RuneError
					if s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
						save := s.i
						s.i += 2
						if lo, ok := s.hex4(); ok {
							if d := utf16.DecodeRune(r, lo); d != utf8.RuneError {
								r2 = d
							} else {
								s.i = save
							}
						} else {
							s.i = save
						}
					}
					r = r2
				}
				dst = utf8.AppendRune(dst, r)
			default:
				return dst, errSyntax
			}
		case c < 0x20:
			return dst, errSyntax
		default:
			// Copy the run of plain bytes in one append.
			j := plainEnd(s.b, s.i+1)
			dst = appendValidUTF8(dst, s.b[s.i:j])
			s.i = j
		}
	}
	return dst, errSyntax
}

// appendValidUTF8 appends p, replacing invalid UTF-8 as encoding/json does.
func appendValidUTF8(dst, p []byte) []byte {
	if utf8.Valid(p) {
		return append(dst, p...)
	}
	for len(p) > 0 {
		r, n := utf8.DecodeRune(p)
		dst = utf8.AppendRune(dst, r)
		p = p[n:]
	}
	return dst
}

func (s *scanner) hex4() (rune, bool) {
	if s.i+4 > len(s.b) {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	s.i += 4
	return r, true
}

func (s *scanner) literal(lit string) error {
	s.ws()
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return errSyntax
	}
	s.i += len(lit)
	return nil
}

// number returns the number at the cursor as an int (fractions truncated);
// null gives 0.
func (s *scanner) number() (int, error) {
	if s.peek() == 'n' {
		return 0, s.literal("null")
	}
	start := s.i
	if !s.scanNumber() {
		return 0, errSyntax
	}
	if digits := s.b[start:s.i]; len(digits) <= 18 {
		// The usual count: a plain non-negative integer.
		n := 0
		for _, c := range digits {
			if c < '0' || c > '9' {
				n = -1
				break
			}
			n = n*10 + int(c-'0')
		}
		if n >= 0 {
			return n, nil
		}
	}
	f, err := strconv.ParseFloat(string(s.b[start:s.i]), 64)
	if err != nil {
		return 0, errSyntax
	}
	return int(f), nil
}

// scanNumber consumes a number with JSON's exact grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) scanNumber() bool {
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case digits() == 0:
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}

// skip consumes any value.
func (s *scanner) skip() error {
	switch s.peek() {
	case '{':
		return s.object(func([]byte) error { return s.skip() })
	case '[':
		return s.array(func(int) error { return s.skip() })
	case '"':
		return s.skipString()
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		if !s.scanNumber() { // checked, not converted
			return errSyntax
		}
		return nil
	}
}

// skipString consumes a string, checking its escapes as str does, without
// copying it anywhere.
func (s *scanner) skipString() error {
	s.i++ // the opening quote
	for s.i < len(s.b) {
		s.i = plainEnd(s.b, s.i)
		if s.i >= len(s.b) {
			break
		}
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return nil
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return errSyntax
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				s.i += 2
				if _, ok := s.hex4(); !ok {
					return errSyntax
				}
			default:
				return errSyntax
			}
		case c < 0x20:
			return errSyntax
		default:
			s.i++
		}
	}
	return errSyntax
}

// end checks nothing but white space follows the document.
func (s *scanner) end() error {
	if s.ws(); s.i != len(s.b) {
		return errSyntax
	}
	return nil
}

// plainEnd returns the index of the first byte of b at or after i that
// ends a run of plain string bytes (a quote, a backslash or a control
// character), or len(b). It tests eight bytes at a time: a chunk's ids,
// model names and texts are mostly such runs.
func plainEnd(b []byte, i int) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q, bs := x^(lo*'"'), x^(lo*'\\')
		// A byte's high bit is set where it is zero (q, bs) or below 0x20
		// (x); a borrow can flag bytes above a match, never below it, so
		// the lowest flag is the first match.
		if m := ((q - lo) &^ q) | ((bs - lo) &^ bs) | ((x - lo*0x20) &^ x); m&hi != 0 {
			return i + bits.TrailingZeros64(m&hi)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return i
}

// float returns the number at the cursor as a float64 without
// allocating: the digits (up to 19 significant ones; the rest only scale)
// times a power of ten. ok is false for null.
func (s *scanner) float() (x float64, ok bool, err error) {
	if s.peek() == 'n' {
		return 0, false, s.literal("null")
	}
	start := s.i
	if !s.scanNumber() {
		return 0, false, errSyntax
	}
	b := s.b[start:s.i]
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	var mant uint64
	exp, digits := 0, 0
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if digits < 19 {
			mant = mant*10 + uint64(b[i]-'0')
			if mant > 0 {
				digits++
			}
		} else {
			exp++
		}
	}
	if i < len(b) && b[i] == '.' {
		for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if digits < 19 {
				mant = mant*10 + uint64(b[i]-'0')
				exp--
				if mant > 0 {
					digits++
				}
			}
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		sign := 1
		switch b[i] {
		case '-':
			sign = -1
			i++
		case '+':
			i++
		}
		e := 0
		for ; i < len(b) && e < 10000; i++ {
			e = e*10 + int(b[i]-'0')
		}
		exp += sign * e
	}
	x = float64(mant) * math.Pow10(exp)
	if neg {
		x = -x
	}
	return x, true, nil
}
