package shape

import (
	"strings"
	"testing"
)

// TestCheck: the checker fails on what it must.
func TestCheck(t *testing.T) {
	m := Model{Fields: map[string]Shape{"a": Integer, "b": List(String)}, Optional: []string{"b"}, Extra: map[string]Shape{"x": Number}}
	d := Dict(OneOf{Number, OrNull(Model{Fields: map[string]Shape{"u": String}})})
	for _, tc := range []struct {
		s         Shape
		doc, want string
	}{
		{m, `{"a": 1, "b": ["s"], "x": 2.5}`, ""},
		{m, `{"a": 1}`, ""},
		{m, `{"a": 1.5}`, "d.a: want integer, got number"},
		{m, `{"b": []}`, `d: missing "a"`},
		{m, `{"a": 1, "b": [1]}`, "d.b[0]: want string, got number"},
		{m, `{"a": 1, "y": 0}`, `d: key "y" is neither AIPerf's nor a declared surge addition`},
		{d, `{"x": 1, "y": null, "z": {"u": "s"}}`, ""},
		{d, `{"x": "no"}`, "d.x: matches none of its forms: d.x: want number, got string; d.x: want an object, got string"},
		{d, `[1]`, "d: want an object, got array"},
		{d, `{`, "d: unexpected end of JSON input"},
	} {
		if got := strings.Join(Check("d", []byte(tc.doc), tc.s), "; "); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.doc, got, tc.want)
		}
	}
}
