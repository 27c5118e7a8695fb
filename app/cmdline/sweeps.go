package cmdline

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
)

// MaxSweepValues bounds one list flag's values (--isl 128,256,…).
const MaxSweepValues = 32

// Sweep modes (--sweep-mode).
const (
	SweepGrid = "grid" // every combination of the lists (cartesian)
	SweepZip  = "zip"  // the i-th value of every list together
)

// sweepable is a numeric field whose flag also takes a comma list to
// sweep: the field holds the first value, lists[name] all of them (only
// when there are several).
type sweepable struct {
	first any // *int, *float64 or duration
	name  string
	lists *map[string][]float64
}

// sweep binds the list flag name over first.
func sweep(c *Config, name string, first any) sweepable {
	return sweepable{first: first, name: name, lists: &c.SweepLists}
}

// sweepValue parses a sweepable flag: one number, or a comma list (texts:
// the values as given, for messages).
type sweepValue struct {
	s     sweepable
	texts []string
}

func (v *sweepValue) Set(text string) error {
	parts := strings.Split(text, ",")
	if len(parts) > MaxSweepValues {
		return fmt.Errorf("%d values: at most %d", len(parts), MaxSweepValues)
	}
	vals := make([]float64, 0, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		var x float64
		var err error
		if _, isInt := v.s.first.(*int); isInt {
			var n int
			n, err = strconv.Atoi(p)
			x = float64(n)
		} else {
			x, err = strconv.ParseFloat(p, 64)
			if err == nil && (math.IsNaN(x) || math.IsInf(x, 0)) {
				err = errors.New("not finite")
			}
		}
		if err != nil {
			if _, isInt := v.s.first.(*int); isInt {
				return errors.New("want an integer, or a comma list of them")
			}
			return errors.New("want a number, or a comma list of them")
		}
		if d, ok := v.s.first.(duration); ok && math.Abs(x*float64(d.unit)) >= float64(Forever) {
			return durationOverflow(d.unit)
		}
		vals = append(vals, x)
	}
	v.texts = v.texts[:0]
	for _, p := range parts {
		v.texts = append(v.texts, strings.TrimSpace(p))
	}
	v.s.set(vals[0])
	if len(vals) > 1 {
		if *v.s.lists == nil {
			*v.s.lists = map[string][]float64{}
		}
		(*v.s.lists)[v.s.name] = vals
	} else {
		delete(*v.s.lists, v.s.name)
	}
	return nil
}

// set writes x into the field, in its type.
func (s sweepable) set(x float64) {
	switch f := s.first.(type) {
	case *int:
		*f = int(x)
	case *float64:
		*f = x
	case duration:
		*f.d = time.Duration(x * float64(f.unit))
	}
}

// get is the field's value as a number, in the flag's units.
func (s sweepable) get() float64 {
	switch f := s.first.(type) {
	case *int:
		return float64(*f)
	case *float64:
		return *f
	case duration:
		return float64(*f.d) / float64(f.unit)
	}
	return 0
}

func (v *sweepValue) String() string {
	if v.s.lists == nil {
		return ""
	}
	vals, ok := (*v.s.lists)[v.s.name]
	if !ok {
		vals = []float64{v.s.get()}
	}
	if len(v.texts) == len(vals) && v.texts[0] != "" {
		// As given (urfave copies a value to the aliases through String:
		// 99999999999999999 must not come back as 1e17).
		return strings.Join(v.texts, ",")
	}
	parts := make([]string, len(vals))
	for i, x := range vals {
		parts[i] = strconv.FormatFloat(x, 'f', -1, 64)
	}
	return strings.Join(parts, ",")
}

// bindSweep is the generic flag over a sweepable field, its default the
// row's.
func bindSweep(o option, s sweepable) cli.Flag {
	g := cli.GenericFlag{Value: &sweepValue{s: s}}
	switch f := o.flag.(type) {
	case *cli.IntFlag:
		s.set(float64(f.Value))
		g.Category, g.Hidden, g.Name, g.Aliases, g.Usage, g.EnvVars = f.Category, f.Hidden, f.Name, f.Aliases, f.Usage, f.EnvVars
		if f.Value != 0 {
			g.DefaultText = strconv.Itoa(f.Value)
		}
	case *cli.Float64Flag:
		s.set(f.Value)
		g.Category, g.Hidden, g.Name, g.Aliases, g.Usage, g.EnvVars = f.Category, f.Hidden, f.Name, f.Aliases, f.Usage, f.EnvVars
		if f.Value != 0 {
			g.DefaultText = strconv.FormatFloat(f.Value, 'g', -1, 64)
		}
	default:
		panic("flags: a list flag must be an int or float row: " + o.names()[0])
	}
	return NewValueFlag(g)
}

// exportValue is the field as input_config shows it: the list when the
// flag listed several values, else the one value.
func (s sweepable) exportValue() any {
	vals, ok := (*s.lists)[s.name]
	if !ok {
		if f, isInt := s.first.(*int); isInt {
			return *f
		}
		return s.get()
	}
	out := make([]any, len(vals))
	for i, x := range vals {
		if _, isInt := s.first.(*int); isInt {
			out[i] = int64(x)
		} else {
			out[i] = x
		}
	}
	return out
}

// PathOf is where input_config keeps flag's value (the flag's long name,
// without dashes); "" for none.
func PathOf(flag string) string {
	for _, o := range options {
		if o.names()[0] == flag {
			return o.path
		}
	}
	return ""
}

// WithPath returns a copy of m with v at the dotted path, the maps on the
// way copied so m itself is unchanged.
func WithPath(m map[string]any, path string, v any) map[string]any {
	out := make(map[string]any, len(m))
	for k, x := range m {
		out[k] = x
	}
	head, rest, nested := strings.Cut(path, ".")
	if !nested {
		out[head] = v
		return out
	}
	inner, _ := out[head].(map[string]any)
	out[head] = WithPath(inner, rest, v)
	return out
}
