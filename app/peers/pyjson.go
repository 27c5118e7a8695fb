package peers

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Float is a number the peers' Python writes as a float: Python's json
// module writes it as repr() does, always with a fraction or an exponent
// (10.0, 0.25, 1e-05, 1.5e+16), and the non-finite ones as NaN, Infinity
// and -Infinity (which Python's json.load reads back). A reader that
// checks a field's type (pydantic's float, a float in a CSV) sees a float.
type Float float64

// MarshalJSON writes f as Python's json.dumps writes a float.
func (f Float) MarshalJSON() ([]byte, error) { return []byte(PyFloat(float64(f))), nil }

// PyFloat is repr(float(f)) as Python writes it (NaN, Infinity and
// -Infinity as its json module writes them).
func PyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	// The shortest digits that read back as f, and their exponent.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	sign := ""
	if e[0] == '-' {
		sign, e = "-", e[1:]
	}
	mant, expS, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expS)
	digits := strings.Replace(mant, ".", "", 1)
	if exp < -4 || exp >= 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		es := "+"
		if exp < 0 {
			es, exp = "-", -exp
		}
		return sign + m + "e" + es + pad2(exp)
	}
	var s string
	switch {
	case exp < 0:
		s = "0." + strings.Repeat("0", -exp-1) + digits
	case exp+1 >= len(digits):
		s = digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
	default:
		s = digits[:exp+1] + "." + digits[exp+1:]
	}
	return sign + s
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// Object is a JSON object whose keys keep the order they were set in, as
// a Python dict (and so json.dumps) keeps them. Setting a key again
// replaces its value in place.
type Object struct {
	keys []string
	vals map[string]any
}

// Set sets key to v (any value encoding/json writes, a Float, an Object).
func (o *Object) Set(key string, v any) {
	if o.vals == nil {
		o.vals = map[string]any{}
	}
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

// Get is key's value and whether it is set.
func (o *Object) Get(key string) (any, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// Delete removes key.
func (o *Object) Delete(key string) {
	if _, ok := o.vals[key]; !ok {
		return
	}
	delete(o.vals, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

// Keys are the keys in order.
func (o *Object) Keys() []string { return o.keys }

// MarshalJSON writes the object, its keys in order.
func (o *Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteString(", ")
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteString(": ")
		vb, err := marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal writes v as Python's json.dumps would: its default separators
// (", " and ": "), non-ASCII text escaped, a float64 as a Float.
func marshal(v any) ([]byte, error) {
	switch x := v.(type) {
	case float64:
		return Float(x).MarshalJSON()
	case []float64:
		var b bytes.Buffer
		b.WriteByte('[')
		for i, f := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(PyFloat(f))
		}
		b.WriteByte(']')
		return b.Bytes(), nil
	case []any:
		var b bytes.Buffer
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			eb, err := marshal(e)
			if err != nil {
				return nil, err
			}
			b.Write(eb)
		}
		b.WriteByte(']')
		return b.Bytes(), nil
	case string:
		return pyString(x), nil
	case []string:
		var b bytes.Buffer
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			b.Write(pyString(e))
		}
		b.WriteByte(']')
		return b.Bytes(), nil
	case []int:
		var b bytes.Buffer
		b.WriteByte('[')
		for i, n := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Itoa(n))
		}
		b.WriteByte(']')
		return b.Bytes(), nil
	case *Object:
		return x.MarshalJSON()
	}
	return json.Marshal(v)
}

// pyString writes s as json.dumps does with ensure_ascii: every
// character past ASCII as a \u escape (a surrogate pair past the BMP).
func pyString(s string) []byte {
	b, _ := json.Marshal(s)
	ascii := true
	for _, c := range b {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	// encoding/json escapes <, > and & where Python does not.
	out := bytes.NewBuffer(make([]byte, 0, len(b)))
	r := []rune(string(b))
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c == '\\' && i+5 < len(r) && r[i+1] == 'u' && (string(r[i+2:i+6]) == "003c" || string(r[i+2:i+6]) == "003e" || string(r[i+2:i+6]) == "0026"):
			n, _ := strconv.ParseUint(string(r[i+2:i+6]), 16, 16)
			out.WriteByte(byte(n))
			i += 5
		case c == '\\' && i+1 < len(r):
			out.WriteRune(c)
			out.WriteRune(r[i+1])
			i++
		case c < 0x80 || ascii:
			out.WriteRune(c)
		case c > 0xFFFF:
			c -= 0x10000
			out.WriteString("\\u" + hex4(0xD800+(c>>10)) + "\\u" + hex4(0xDC00+(c&0x3FF)))
		default:
			out.WriteString("\\u" + hex4(c))
		}
	}
	return out.Bytes()
}

func hex4(r rune) string {
	s := strconv.FormatInt(int64(r), 16)
	return strings.Repeat("0", 4-len(s)) + s
}
