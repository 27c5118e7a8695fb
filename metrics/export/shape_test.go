package export

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// A shape is a JSON schema written from one of AIPerf's pydantic models:
// the golden files are checked against it key by key and type by type, so
// a file AIPerf's own models would reject fails here first.
type shape interface {
	check(path string, v any, errs *[]string)
}

func checkShape(t *testing.T, name string, doc []byte, s shape) {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var errs []string
	s.check(name, v, &errs)
	for _, e := range errs {
		t.Error(e)
	}
}

type jtype string

// The JSON types a model field may have.
const (
	jStr    jtype = "string"
	jNum    jtype = "number"
	jInt    jtype = "integer"
	jBool   jtype = "boolean"
	jObject jtype = "object" // any object (a dict[str, Any] field)
	jAny    jtype = "any"
)

func (k jtype) check(path string, v any, errs *[]string) {
	ok := false
	switch k {
	case jStr:
		_, ok = v.(string)
	case jNum:
		_, ok = v.(float64)
	case jInt:
		f, isNum := v.(float64)
		ok = isNum && f == math.Trunc(f)
	case jBool:
		_, ok = v.(bool)
	case jObject:
		_, ok = v.(map[string]any)
	case jAny:
		ok = true
	}
	if !ok {
		*errs = append(*errs, fmt.Sprintf("%s: want %s, got %s", path, k, jsonType(v)))
	}
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// model is a pydantic model: every field listed must be present (optional
// ones may be null or absent), and no key outside fields and extra may
// appear (extra names surge's own additions, each checked as listed).
type model struct {
	fields   map[string]shape
	optional []string
	extra    map[string]shape
}

func (m model) check(path string, v any, errs *[]string) {
	o, ok := v.(map[string]any)
	if !ok {
		*errs = append(*errs, fmt.Sprintf("%s: want an object, got %s", path, jsonType(v)))
		return
	}
	for _, k := range orderedKeys(m.fields) {
		fv, present := o[k]
		if !present || fv == nil {
			if !slices.Contains(m.optional, k) {
				*errs = append(*errs, fmt.Sprintf("%s: missing %q", path, k))
			}
			continue
		}
		m.fields[k].check(path+"."+k, fv, errs)
	}
	for _, k := range orderedKeys(o) {
		if _, known := m.fields[k]; known {
			continue
		}
		es, ok := m.extra[k]
		if !ok {
			*errs = append(*errs, fmt.Sprintf("%s: key %q is neither AIPerf's nor a declared surge addition", path, k))
			continue
		}
		if o[k] != nil {
			es.check(path+"."+k, o[k], errs)
		}
	}
}

// list is a list[T] field.
type list struct{ of shape }

func (l list) check(path string, v any, errs *[]string) {
	a, ok := v.([]any)
	if !ok {
		*errs = append(*errs, fmt.Sprintf("%s: want an array, got %s", path, jsonType(v)))
		return
	}
	for i, x := range a {
		l.of.check(fmt.Sprintf("%s[%d]", path, i), x, errs)
	}
}

// dict is a dict[str, T] field.
type dict struct{ of shape }

func (d dict) check(path string, v any, errs *[]string) {
	o, ok := v.(map[string]any)
	if !ok {
		*errs = append(*errs, fmt.Sprintf("%s: want an object, got %s", path, jsonType(v)))
		return
	}
	for _, k := range orderedKeys(o) {
		d.of.check(path+"."+k, o[k], errs)
	}
}

// orNull is a T | None field whose key is always written.
type orNull struct{ of shape }

func (n orNull) check(path string, v any, errs *[]string) {
	if v != nil {
		n.of.check(path, v, errs)
	}
}

// oneOf accepts a value any of its shapes accepts.
type oneOf []shape

func (o oneOf) check(path string, v any, errs *[]string) {
	var all []string
	for _, s := range o {
		var e []string
		s.check(path, v, &e)
		if len(e) == 0 {
			return
		}
		all = append(all, e...)
	}
	*errs = append(*errs, fmt.Sprintf("%s: matches none of its forms: %s", path, strings.Join(all, "; ")))
}

func orderedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestShapeChecker: the checker itself fails on what it must.
func TestShapeChecker(t *testing.T) {
	m := model{fields: map[string]shape{"a": jInt, "b": list{jStr}}, optional: []string{"b"}, extra: map[string]shape{"x": jNum}}
	for doc, want := range map[string]string{
		`{"a": 1, "b": ["s"], "x": 2.5}`: "",
		`{"a": 1}`:                       "",
		`{"a": 1.5}`:                     "d.a: want integer, got number",
		`{"b": []}`:                      `d: missing "a"`,
		`{"a": 1, "b": [1]}`:             "d.b[0]: want string, got number",
		`{"a": 1, "y": 0}`:               `d: key "y" is neither AIPerf's nor a declared surge addition`,
	} {
		var v any
		_ = json.Unmarshal([]byte(doc), &v)
		var errs []string
		m.check("d", v, &errs)
		if got := strings.Join(errs, "; "); got != want {
			t.Errorf("%s: %q, want %q", doc, got, want)
		}
	}
	d := dict{oneOf{jNum, orNull{model{fields: map[string]shape{"u": jStr}}}}}
	for doc, want := range map[string]string{
		`{"x": 1, "y": null, "z": {"u": "s"}}`: "",
		`{"x": "no"}`:                          "d.x: matches none of its forms: d.x: want number, got string; d.x: want an object, got string",
		`[1]`:                                  "d: want an object, got array",
	} {
		var v any
		_ = json.Unmarshal([]byte(doc), &v)
		var errs []string
		d.check("d", v, &errs)
		if got := strings.Join(errs, "; "); got != want {
			t.Errorf("%s: %q, want %q", doc, got, want)
		}
	}
}
