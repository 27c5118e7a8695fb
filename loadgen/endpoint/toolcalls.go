package endpoint

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/surgebench/surge/datasets"
)

// ToolCalls collects one response's function calls as their pieces arrive:
// OpenAI's delta.tool_calls[i] (an id and a name, then the arguments a few
// characters at a time), the Responses API's function_call items and
// argument deltas, Anthropic's tool_use blocks and input_json_delta pieces.
// Each piece is appended to one buffer and located by offsets, so a
// ToolCalls whose buffers have grown (a pooled Output's) collects a
// response's calls without allocating; Calls puts them together once the
// response has ended.
type ToolCalls struct {
	buf    []byte
	pieces []toolPiece
}

// toolPiece is one piece of a call: which call (the stream's own key: a
// delta's index, an output_index, a content block index), which field,
// and where its bytes are in buf.
type toolPiece struct {
	call       int32
	field      uint8
	start, end int32
}

// The fields of a call a piece belongs to.
const (
	toolID uint8 = iota
	toolName
	toolArgs
)

// Reset empties t, keeping its buffers.
func (t *ToolCalls) Reset() { t.buf, t.pieces = t.buf[:0], t.pieces[:0] }

// Empty reports whether no call has been seen.
func (t *ToolCalls) Empty() bool { return len(t.pieces) == 0 }

// mark is where the pieces of the object being read start: their call is
// set, or they are dropped, when its end shows whose they are.
func (t *ToolCalls) mark() int { return len(t.pieces) }

// str reads the JSON string at s's cursor as a piece of field of call
// (null: no piece). It reports whether the piece had any bytes.
func (t *ToolCalls) str(s *scanner, call int32, field uint8) (bool, error) {
	if s.peek() == 'n' {
		return false, s.literal("null")
	}
	start := len(t.buf)
	var err error
	if t.buf, err = s.str(t.buf); err != nil {
		t.buf = t.buf[:start]
		return false, err
	}
	t.pieces = append(t.pieces, toolPiece{call: call, field: field, start: int32(start), end: int32(len(t.buf))})
	return len(t.buf) > start, nil
}

// add appends b as a piece of field of call.
func (t *ToolCalls) add(call int32, field uint8, b []byte) {
	start := len(t.buf)
	t.buf = append(t.buf, b...)
	t.pieces = append(t.pieces, toolPiece{call: call, field: field, start: int32(start), end: int32(len(t.buf))})
}

// setCall gives the pieces since mark to call.
func (t *ToolCalls) setCall(mark int, call int32) {
	for i := mark; i < len(t.pieces); i++ {
		t.pieces[i].call = call
	}
}

// drop removes the pieces since mark (they were not a call's after all).
func (t *ToolCalls) drop(mark int) {
	if mark < len(t.pieces) {
		t.buf = t.buf[:t.pieces[mark].start]
		t.pieces = t.pieces[:mark]
	}
}

// Text is text followed by every call's name and arguments: the output
// the model generated, which a token count includes. It is built once,
// at its length.
func (t *ToolCalls) Text(text string) string {
	n := len(text)
	for _, p := range t.pieces {
		if p.field != toolID {
			n += int(p.end - p.start)
		}
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(text)
	for _, p := range t.pieces {
		if p.field != toolID {
			b.Write(t.buf[p.start:p.end])
		}
	}
	return b.String()
}

// Calls puts the calls together, in the order they were first seen, each
// field the concatenation of its pieces (nil when there were none).
func (t *ToolCalls) Calls() []datasets.ToolCall {
	calls, _ := t.CallsUpTo(len(t.pieces))
	return calls
}

// CallsUpTo is Calls, the first max calls only, and how many calls there
// were. Its time is linear in the pieces, however many calls a reply
// makes (a server may send thousands): a reply's calls are put together
// once, when it has ended.
func (t *ToolCalls) CallsUpTo(max int) (calls []datasets.ToolCall, total int) {
	if len(t.pieces) == 0 {
		return nil, 0
	}
	// Each piece's call, by its place in the order first seen: a scan
	// for the few calls of a usual reply, a map for many.
	place := make([]int32, len(t.pieces))
	var keys []int32
	var index map[int32]int32
	for i, p := range t.pieces {
		k := int32(-1)
		if index == nil {
			if j := slices.Index(keys, p.call); j >= 0 {
				k = int32(j)
			} else if len(keys) == 16 {
				index = make(map[int32]int32, 64)
				for j, key := range keys {
					index[key] = int32(j)
				}
			}
		}
		if index != nil {
			if j, ok := index[p.call]; ok {
				k = j
			} else {
				index[p.call] = int32(len(keys))
			}
		}
		if k < 0 {
			k = int32(len(keys))
			keys = append(keys, p.call)
		}
		place[i] = k
	}
	total = len(keys)
	n := min(total, max)
	sizes := make([][3]int, n)
	for i, p := range t.pieces {
		if k := place[i]; int(k) < n {
			sizes[k][p.field] += int(p.end - p.start)
		}
	}
	// Each field written once into a builder of its size: its string is
	// the builder's bytes, not a copy of them.
	fields := make([][3]strings.Builder, n)
	for k := range fields {
		for f := range fields[k] {
			fields[k][f].Grow(sizes[k][f])
		}
	}
	for i, p := range t.pieces {
		if k := place[i]; int(k) < n {
			fields[k][p.field].Write(t.buf[p.start:p.end])
		}
	}
	calls = make([]datasets.ToolCall, n)
	for k := range calls {
		calls[k] = datasets.ToolCall{ID: fields[k][toolID].String(), Name: fields[k][toolName].String(), Arguments: fields[k][toolArgs].String()}
	}
	return calls, total
}

// Held is the bytes t's buffers hold (a pooled Output keeps them): a
// toolPiece is 16 bytes.
func (t *ToolCalls) Held() int { return cap(t.buf) + 16*cap(t.pieces) }

// ValidArguments reports whether a call's arguments are usable: JSON, or
// none at all (a call without parameters).
func ValidArguments(args string) bool {
	return args == "" || json.Valid([]byte(args))
}

// toolString reads the string at s's cursor as a piece of field of a call
// not yet known (setCall names it); any other value is skipped.
func toolString(s *scanner, t *ToolCalls, field uint8) (bool, error) {
	if c := s.peek(); c != '"' && c != 'n' {
		return false, s.skip()
	}
	return t.str(s, -1, field)
}

// toolHead reads the object at s's cursor that opens a call in Anthropic's
// content_block or the Responses API's output item: its "type", and its id
// (under idKey) and "name" as pieces of a call not yet known. Any other
// value is skipped.
func toolHead(s *scanner, t *ToolCalls, idKey string) (typ []byte, err error) {
	if s.peek() != '{' {
		return nil, s.skip()
	}
	err = s.object(func(key []byte) error {
		var err error
		switch string(key) {
		case "type":
			if s.peek() != '"' {
				return s.skip()
			}
			typ, err = s.rawKey()
		case idKey:
			_, err = toolString(s, t, toolID)
		case "name":
			_, err = toolString(s, t, toolName)
		default:
			err = s.skip()
		}
		return err
	})
	return typ, err
}
