package peers

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/surgebench/surge/app/cmdline"
)

var testFlags = []Flag{
	{Name: "request-rate", Kind: Value},
	{Name: "save-result", Kind: Switch},
	{Name: "goodput", Kind: Many},
	{Name: "rate-type", Aliases: []string{"profile"}, Kind: Value},
	{Name: "c", Kind: Value},
	{Name: "use-beam-search", Kind: Switch, Refused: "surge sends no beam search"},
}

// TestParse: a peer's command line read as argparse and click read it.
func TestParse(t *testing.T) {
	t.Parallel()
	d := Dialect{Tool: "tool", Underscores: true}
	for _, tc := range []struct {
		name  string
		args  []string
		check func(Args) bool
		err   string // part of the usage error ("": none)
	}{
		{"value", []string{"--request-rate", "2.5"}, func(a Args) bool { v, ok := a.Value("request-rate"); return ok && v == "2.5" }, ""},
		{"equals", []string{"--request-rate=inf"}, func(a Args) bool { v, _ := a.Value("request-rate"); return v == "inf" }, ""},
		{"underscores", []string{"--request_rate", "3"}, func(a Args) bool { v, _ := a.Value("request-rate"); return v == "3" }, ""},
		{"negative number is a value", []string{"--request-rate", "-1"}, func(a Args) bool { v, _ := a.Value("request-rate"); return v == "-1" }, ""},
		{"switch", []string{"--save-result"}, func(a Args) bool { return a.Has("save-result") }, ""},
		{"many", []string{"--goodput", "ttft:1", "tpot:2", "--save-result"}, func(a Args) bool {
			return strings.Join(a.Values("goodput"), " ") == "ttft:1 tpot:2" && a.Has("save-result")
		}, ""},
		{"alias", []string{"--profile", "sweep"}, func(a Args) bool { v, _ := a.Value("rate-type"); return v == "sweep" }, ""},
		{"short", []string{"-c", "x.yaml"}, func(a Args) bool { v, _ := a.Value("c"); return v == "x.yaml" }, ""},
		{"last wins", []string{"--request-rate", "1", "--request-rate", "2"}, func(a Args) bool {
			v, _ := a.Value("request-rate")
			return v == "2" && len(a.Values("request-rate")) == 2
		}, ""},
		{"unknown with suggestion", []string{"--request-rat", "1"}, nil, "unknown flag --request-rat (did you mean --request-rate?)"},
		{"refused with reason", []string{"--use-beam-search"}, nil, "--use-beam-search is refused: surge sends no beam search"},
		{"missing value", []string{"--request-rate"}, nil, "--request-rate needs a value"},
		{"value before a flag", []string{"--request-rate", "--save-result"}, nil, "--request-rate needs a value"},
		{"switch with a value", []string{"--save-result=yes"}, nil, "takes no value"},
		{"stray word", []string{"serve"}, nil, `unexpected argument "serve"`},
	} {
		a, err := Parse(tc.args, testFlags, d)
		if tc.err != "" {
			var ue *cmdline.UsageError
			if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want a usage error containing %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || !tc.check(a) {
			t.Errorf("%s: %v, args %+v", tc.name, err, a)
		}
	}
}

// FuzzParse: any command line is read or refused as a usage error, never
// a panic.
func FuzzParse(f *testing.F) {
	f.Add("--request-rate 1 --goodput a b --save-result")
	f.Add("--profile=x -c y --request_rate")
	f.Fuzz(func(t *testing.T, line string) {
		a, err := Parse(strings.Fields(line), testFlags, Dialect{Tool: "t", Underscores: true})
		if err != nil {
			var ue *cmdline.UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("%q: %v is not a usage error", line, err)
			}
			return
		}
		for _, n := range a.Names() {
			if !a.Has(n) {
				t.Fatalf("%q: %s named but not held", line, n)
			}
		}
	})
}

// TestSampleIsNumpy: the statistics match numpy's on the same values
// (np.percentile, np.median, np.mean, np.std, computed by numpy 1.24).
func TestSampleIsNumpy(t *testing.T) {
	t.Parallel()
	s := NewSample([]float64{3.0, 1.0, 4.0, 1.5, 9.25, 2.0, 6.5})
	for p, want := range map[float64]float64{0: 1.0, 1: 1.03, 25: 1.75, 50: 3.0, 90: 7.600000000000001, 99: 9.084999999999999, 99.9: 9.233500000000001, 100: 9.25} {
		if got := s.Percentile(p); math.Abs(got-want) > 1e-12 {
			t.Errorf("p%g = %v, numpy %v", p, got, want)
		}
	}
	if m, md, sd := s.Mean(), s.Median(), s.Std(); math.Abs(m-3.892857142857143) > 1e-12 || md != 3 || math.Abs(sd-2.777001025184822) > 1e-12 {
		t.Errorf("mean %v median %v std %v", m, md, sd)
	}
	empty := NewSample(nil)
	if empty.Mean() != 0 || empty.Percentile(99) != 0 || empty.Std() != 0 {
		t.Error("an empty sample's statistics are not 0 (vLLM's `xs or 0`)")
	}
}

// TestPyFloat: floats written as Python's repr and json.dumps write them
// (each want from Python 3.11).
func TestPyFloat(t *testing.T) {
	t.Parallel()
	for f, want := range map[float64]string{10.0: "10.0", 0.1: "0.1", 1e-05: "1e-05", 1.5e16: "1.5e+16", 1234567890123456.0: "1234567890123456.0",
		0.0001: "0.0001", 123.456: "123.456", -2.5: "-2.5", 1e22: "1e+22", 5e-324: "5e-324", 0.30000000000000004: "0.30000000000000004", 0: "0.0",
		math.Inf(1): "Infinity", math.NaN(): "NaN"} {
		if got := PyFloat(f); got != want {
			t.Errorf("PyFloat(%v) = %s, Python writes %s", f, got, want)
		}
	}
}

// TestObjectKeepsOrderAndPythonForm: keys in the order set, Python's
// separators, floats as floats, text as json.dumps escapes it.
func TestObjectKeepsOrderAndPythonForm(t *testing.T) {
	t.Parallel()
	o := &Object{}
	o.Set("b", 1)
	o.Set("a", 2.0)
	o.Set("t", "é <x>")
	o.Set("l", []float64{1, 0.5})
	o.Set("n", nil)
	o.Set("b", 3) // replaced in place
	o.Delete("n")
	got, err := o.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"b": 3, "a": 2.0, "t": "\u00e9 <x>", "l": [1.0, 0.5]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var back map[string]any
	if err := json.Unmarshal(got, &back); err != nil || back["t"] != "é <x>" {
		t.Errorf("not JSON that reads back: %v %v", err, back)
	}
}

// TestRedacted: the line naming a surge run never shows a credential.
func TestRedacted(t *testing.T) {
	t.Parallel()
	got := Quote(Redacted([]string{"--url", "http://x", "--api-key", "sk-secret", "--header", `{"Authorization":"Bearer t"}`, "--isl", "8"}))
	if strings.Contains(got, "secret") || strings.Contains(got, "Bearer") || !strings.Contains(got, "--isl 8") {
		t.Errorf("%s", got)
	}
}
