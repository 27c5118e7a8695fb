// Package shape checks JSON documents against schemas written from
// AIPerf's pydantic models, key by key and type by type, so a file AIPerf's
// own models would reject fails a test first. The export tests use it for
// their golden files.
package shape

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Shape is a schema of one JSON value.
type Shape interface {
	check(path string, v any, errs *[]string)
}

// Check decodes doc and returns every way it differs from s, each prefixed
// by name and the path of the value at fault.
func Check(name string, doc []byte, s Shape) []string {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return []string{fmt.Sprintf("%s: %v", name, err)}
	}
	var errs []string
	s.check(name, v, &errs)
	return errs
}

// Kind is a JSON type a field may have.
type Kind string

// The JSON types of model fields.
const (
	String  Kind = "string"
	Number  Kind = "number"
	Integer Kind = "integer"
	Bool    Kind = "boolean"
	Object  Kind = "object" // any object (a dict[str, Any] field)
	Any     Kind = "any"
)

func (k Kind) check(path string, v any, errs *[]string) {
	ok := false
	switch k {
	case String:
		_, ok = v.(string)
	case Number:
		_, ok = v.(float64)
	case Integer:
		f, isNum := v.(float64)
		ok = isNum && f == math.Trunc(f)
	case Bool:
		_, ok = v.(bool)
	case Object:
		_, ok = v.(map[string]any)
	case Any:
		ok = true
	}
	if !ok {
		*errs = append(*errs, fmt.Sprintf("%s: want %s, got %s", path, k, typeOf(v)))
	}
}

func typeOf(v any) string {
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

// Model is a pydantic model: every field listed must be present (Optional
// ones may be null or absent), and no key outside Fields and Extra may
// appear (Extra names surge's own additions, each checked as listed).
type Model struct {
	Fields   map[string]Shape
	Optional []string
	Extra    map[string]Shape
}

func (m Model) check(path string, v any, errs *[]string) {
	o, ok := v.(map[string]any)
	if !ok {
		*errs = append(*errs, fmt.Sprintf("%s: want an object, got %s", path, typeOf(v)))
		return
	}
	for _, k := range keys(m.Fields) {
		fv, present := o[k]
		if !present || fv == nil {
			if !slices.Contains(m.Optional, k) {
				*errs = append(*errs, fmt.Sprintf("%s: missing %q", path, k))
			}
			continue
		}
		m.Fields[k].check(path+"."+k, fv, errs)
	}
	for _, k := range keys(o) {
		if _, known := m.Fields[k]; known {
			continue
		}
		es, ok := m.Extra[k]
		if !ok {
			*errs = append(*errs, fmt.Sprintf("%s: key %q is neither AIPerf's nor a declared surge addition", path, k))
			continue
		}
		if o[k] != nil {
			es.check(path+"."+k, o[k], errs)
		}
	}
}

// List is a list[T] field.
func List(of Shape) Shape { return list{of} }

type list struct{ of Shape }

func (l list) check(path string, v any, errs *[]string) {
	a, ok := v.([]any)
	if !ok {
		*errs = append(*errs, fmt.Sprintf("%s: want an array, got %s", path, typeOf(v)))
		return
	}
	for i, x := range a {
		l.of.check(fmt.Sprintf("%s[%d]", path, i), x, errs)
	}
}

// Dict is a dict[str, T] field.
func Dict(of Shape) Shape { return dict{of} }

type dict struct{ of Shape }

func (d dict) check(path string, v any, errs *[]string) {
	o, ok := v.(map[string]any)
	if !ok {
		*errs = append(*errs, fmt.Sprintf("%s: want an object, got %s", path, typeOf(v)))
		return
	}
	for _, k := range keys(o) {
		d.of.check(path+"."+k, o[k], errs)
	}
}

// OrNull is a T | None field whose key is always written.
func OrNull(of Shape) Shape { return orNull{of} }

type orNull struct{ of Shape }

func (n orNull) check(path string, v any, errs *[]string) {
	if v != nil {
		n.of.check(path, v, errs)
	}
}

// OneOf accepts a value any of its shapes accepts.
type OneOf []Shape

func (o OneOf) check(path string, v any, errs *[]string) {
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

func keys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
