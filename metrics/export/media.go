package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
)

// hashMedia returns body with its base64 media replaced by their digests
// (see HashMedia): the data URL of a "url" key (an image_url part's) and
// the "data" of an "input_audio" object. It scans bytes instead of
// decoding the body: a megabyte of base64 through a JSON tokenizer costs
// ten times its hash. The patterns are structural (inside a JSON string
// every quote is escaped, so `"url":"` cannot occur there), and a value
// with an escape in it is kept as it is. A body without media comes back
// as it is.
func hashMedia(body []byte) []byte {
	var out []byte
	at := 0 // body[:at] is in out
	for i := 0; i < len(body); {
		j := bytes.IndexByte(body[i:], '"')
		if j < 0 {
			break
		}
		i += j
		var start, end int // the value's quotes
		var with string
		switch {
		case bytes.HasPrefix(body[i:], []byte(`"url"`)):
			v := valueString(body, i+len(`"url"`))
			if v < 0 || !bytes.HasPrefix(body[v+1:], []byte("data:")) {
				i++
				continue
			}
			end = closingQuote(body, v)
			if end < 0 {
				i++
				continue
			}
			// The head ("data:image/png") is short: look for the base64
			// marker near the start only.
			value := body[v+1 : end]
			m := bytes.Index(value[:min(len(value), 128)], []byte(";base64,"))
			if m < 0 {
				i = end + 1
				continue
			}
			sum := sha256.Sum256(value[m+len(";base64,"):])
			start, with = v, `"`+string(value[:m])+";sha256,"+hex.EncodeToString(sum[:])+`"`
		case bytes.HasPrefix(body[i:], []byte(`"input_audio"`)):
			o := skipColon(body, i+len(`"input_audio"`))
			if o < 0 || body[o] != '{' {
				i++
				continue
			}
			// The object is flat (data, format): its "data" key lies before
			// its first '}'.
			close := bytes.IndexByte(body[o:], '}')
			k := bytes.Index(body[o:], []byte(`"data"`))
			if close < 0 || k < 0 || k > close || !keyAt(body, o+k) {
				i++
				continue
			}
			v := valueString(body, o+k+len(`"data"`))
			if v < 0 {
				i++
				continue
			}
			if end = closingQuote(body, v); end < 0 {
				i++
				continue
			}
			sum := sha256.Sum256(body[v+1 : end])
			start, with = v, `"sha256:`+hex.EncodeToString(sum[:])+`"`
		default:
			i++
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(body)/8)
		}
		out = append(out, body[at:start]...)
		out = append(out, with...)
		at = end + 1
		i = at
	}
	if out == nil {
		return body
	}
	return append(out, body[at:]...)
}

// skipColon returns the index of the first byte after the colon that
// follows a key ending before i (white space skipped), or -1.
func skipColon(b []byte, i int) int {
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	i = skipSpace(b, i+1)
	if i >= len(b) {
		return -1
	}
	return i
}

// valueString returns the index of the opening quote of the string value
// of the key ending before i, or -1 when the value is not a string.
func valueString(b []byte, i int) int {
	v := skipColon(b, i)
	if v < 0 || b[v] != '"' {
		return -1
	}
	return v
}

// closingQuote returns the index of the quote closing the string opened
// at v, or -1 when the string has an escape (kept as it is) or no end.
func closingQuote(b []byte, v int) int {
	k := bytes.IndexByte(b[v+1:], '"')
	if k < 0 || bytes.IndexByte(b[v+1:v+1+k], '\\') >= 0 {
		return -1
	}
	return v + 1 + k
}

// keyAt reports whether the string at i is an object key: after '{' or
// ',' (white space aside).
func keyAt(b []byte, i int) bool {
	for i--; i >= 0; i-- {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			continue
		case '{', ',':
			return true
		}
		return false
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
