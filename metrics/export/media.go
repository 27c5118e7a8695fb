package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"
)

// hashMedia returns body with its base64 media replaced by their digests
// (see HashMedia): data URLs under a "url" key (an image_url part's) and
// the "data" of an "input_audio" object; text that merely looks like a
// data URL is kept. A body without media, or that does not parse, is
// returned as it is.
func hashMedia(body []byte) []byte {
	if !bytes.Contains(body, []byte(";base64,")) && !bytes.Contains(body, []byte(`"input_audio"`)) {
		return body
	}
	type span struct {
		start, end int
		with       string
	}
	var spans []span
	// frame is an open object or array: in an object, the key of the
	// value being read and whether a key comes next.
	type frame struct {
		object, wantKey bool
		key             string
	}
	var stack []frame
	d := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return body
		}
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				stack = append(stack, frame{object: v == '{', wantKey: v == '{'})
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if top != nil && top.object && top.wantKey {
				top.key, top.wantKey = v, false
				continue
			}
			end := int(d.InputOffset())
			start := end - len(v) - 2
			// Base64 and data URL heads need no escapes: a literal of
			// another length is not one of them.
			if start < 0 || body[start] != '"' || string(body[start+1:end-1]) != v {
				break
			}
			key := ""
			if top != nil && top.object {
				key = top.key
			}
			if head, data, ok := strings.Cut(v, ";base64,"); ok && key == "url" && strings.HasPrefix(head, "data:") {
				sum := sha256.Sum256([]byte(data))
				spans = append(spans, span{start, end, `"` + head + ";sha256," + hex.EncodeToString(sum[:]) + `"`})
			} else if key == "data" && len(stack) > 1 && stack[len(stack)-2].key == "input_audio" {
				sum := sha256.Sum256([]byte(v))
				spans = append(spans, span{start, end, `"sha256:` + hex.EncodeToString(sum[:]) + `"`})
			}
		}
		// A value was read: in an object, a key comes next.
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].wantKey = true
		}
	}
	if len(spans) == 0 || len(stack) > 0 { // none, or the body ended early
		return body
	}
	out := make([]byte, 0, len(body))
	at := 0
	for _, s := range spans {
		out = append(out, body[at:s.start]...)
		out = append(out, s.with...)
		at = s.end
	}
	return append(out, body[at:]...)
}
