package cmdline

import (
	"errors"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// searchNumbers are the numeric flags of surge search's own (app/search
// checks they are its flags); the rest of the table is profile's.
var searchNumbers = []string{"search-max", "search-resolution", "probe-duration", "probe-max-duration", "max-probes"}

// numericFlags are profile's flags that hold numbers, by name.
func numericFlags(t *testing.T) map[string]cli.Flag {
	t.Helper()
	out := map[string]cli.Flag{}
	for _, f := range ProfileFlags(&Config{}) {
		numeric := false
		switch f := f.(type) {
		case *intFlag, *float64Flag, *uint64Flag:
			numeric = true
		case *ValueFlag:
			switch f.Value.(type) {
			case *DurationValue, *sweepValue:
				numeric = true
			}
		}
		if numeric {
			out[f.Names()[0]] = f
		}
	}
	return out
}

// TestEveryNumberHasLimits: every numeric flag of surge profile has its
// Limits, and every row of the table is a flag; a flag whose 0 lies
// outside its range but is accepted says in its help what 0 means; each
// default lies within its limits, or is the 0 of a flag left out.
func TestEveryNumberHasLimits(t *testing.T) {
	t.Parallel()
	flags := numericFlags(t)
	for name := range flags {
		if _, ok := numberLimits[name]; !ok {
			t.Errorf("--%s holds a number and has no row in numberLimits", name)
		}
	}
	for name, l := range numberLimits {
		f, ok := flags[name]
		if !ok && !slices.Contains(searchNumbers, name) {
			t.Errorf("numberLimits row %q is no numeric flag of surge profile or surge search", name)
			continue
		}
		if l.Zero && !strings.Contains(usageOf(f), "0:") {
			t.Errorf("--%s accepts 0 below its range: its help must say what 0 means (\"0: …\")", name)
		}
		if !ok {
			continue
		}
		c := &Config{}
		for _, g := range ProfileFlags(c) {
			if g.Names()[0] != name {
				continue
			}
			if d := defaultOf(g); d != 0 && l.check(name, value{x: d}, "") != nil {
				t.Errorf("--%s's default %v is outside its limits: %v", name, d, l.check(name, value{x: d}, ""))
			}
		}
	}
}

func usageOf(f cli.Flag) string {
	if d, ok := f.(cli.DocGenerationFlag); ok {
		return d.GetUsage()
	}
	return ""
}

// defaultOf is a numeric flag's default, in its unit.
func defaultOf(f cli.Flag) float64 {
	switch f := f.(type) {
	case *intFlag:
		return float64(f.Value)
	case *float64Flag:
		return f.Value
	case *uint64Flag:
		return float64(f.Value)
	case *ValueFlag:
		switch v := f.Value.(type) {
		case *DurationValue:
			return v.number()
		case *sweepValue:
			return v.s.get()
		}
	}
	return 0
}

// TestNumbersRefused gives every numeric flag of surge profile the values
// that broke flags before (1e308, -1e308, NaN, 10 times its bound, 0
// where 0 is outside its range, inf where it waits for nothing, a rate
// of 1e-300): each is refused before anything runs, as bad usage that
// names the flag and says its bound in the flag's unit, never with a
// negative or overflowed number (-2562047h47m16s) in the message; a value
// inside the limits is taken.
func TestNumbersRefused(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	overflowed := regexp.MustCompile(`-\d{10,}|h\d+m\d+|9223372036854775807`)
	for name, f := range numericFlags(t) {
		l := numberLimits[name]
		_, isInt := f.(*intFlag)
		if sv, ok := f.(*ValueFlag); ok {
			if s, ok := sv.Value.(*sweepValue); ok {
				_, isInt = s.s.first.(*int)
			}
		}
		type tc struct{ value, why string }
		bad := []tc{{"1e308", "past any bound"}, {"-1e308", "past any bound"}, {"NaN", "not a number"}}
		if !math.IsInf(l.Hi, 1) && l.Hi < math.MaxUint64 {
			bad = append(bad, tc{num(math.Max(10*l.Hi, l.Hi+10)), "ten times its bound"})
		}
		if l.Lo > 0 || l.LoOpen && l.Lo == 0 {
			if !l.Zero {
				bad = append(bad, tc{"0", "0 outside its range"})
			}
			if !isInt {
				bad = append(bad, tc{"1e-300", "a hair above 0"})
			}
		}
		if !l.Inf && !isInt {
			bad = append(bad, tc{"inf", "no bound"})
		}
		if l.Lo > -1 && !(l.Lo == 0 && l.Hi == math.MaxUint64) {
			bad = append(bad, tc{"-1", "below its range"})
		}
		for _, b := range bad {
			if b.value == "1e-300" && l.Lo == 0 && l.LoOpen {
				// > 0 holds: a duration this short is 0 ns, refused as 0
				// by the flags that need more (checked below).
				if _, isDur := f.(*ValueFlag); !isDur {
					continue
				}
			}
			_, err := ParseProfile("--"+name, b.value)
			var ue *UsageError
			switch {
			case err == nil:
				t.Errorf("--%s %s (%s) was taken", name, b.value, b.why)
			case !errors.As(err, &ue) || !strings.Contains(err.Error(), "--"+name):
				t.Errorf("--%s %s: %v, want a usage error naming the flag", name, b.value, err)
			case overflowed.MatchString(err.Error()):
				t.Errorf("--%s %s: %q shows an overflowed number", name, b.value, err)
			}
		}
		good := sampleNumber(l)
		if _, err := ParseProfile("--"+name, good); err != nil {
			t.Errorf("--%s %s, inside its limits: %v", name, good, err)
		}
	}
}

// TestNumbersOfTheIssue: the values issue 59 found accepted, each
// refused with a message in the flag's own unit.
func TestNumbersOfTheIssue(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--benchmark-duration", "1e308"}, `--benchmark-duration: at most 9223372036 s (292 years)`},
		{[]string{"--tool-loop", "--tool-delay", "1e308"}, `--tool-delay: at most 9223372036854 ms (292 years)`},
		{[]string{"--tool-loop", "--tool-loop-max-rounds", "99999999999"}, "--tool-loop-max-rounds must be ≤ 10000, got 99999999999"},
		{[]string{"--session-arrival-rate", "1e-300"}, "--session-arrival-rate must be ≥ 1e-06, got 1e-300"},
		{[]string{"--conversation-num", "0"}, "--conversation-num must be ≥ 1, got 0"},
		{[]string{"--num-profile-runs", "0"}, "--num-profile-runs must be between 1 and 10, got 0"},
		{[]string{"--streaming", "--prefill-concurrency", "0"}, "--prefill-concurrency must be ≥ 1, got 0"},
		{[]string{"--session-arrival-rate", "0"}, "--session-arrival-rate must be ≥ 1e-06, got 0"},
		{[]string{"--benchmark-duration", "10,1e308"}, `--benchmark-duration: at most 9223372036 s`},
		{[]string{"--request-count", "10,0"}, "--request-count must be ≥ 1, got 0"},
	} {
		_, err := ParseProfile(tc.args...)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
}

// TestConfigFileNumbers: a config file's values meet the same limits as
// the command line's, and an input_config read back (which writes every
// flag, those left out at their 0) is not refused for those 0s.
func TestConfigFileNumbers(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	path := writeConfig(t, "conversation-num: 0\nprefill-concurrency: 0\nnum-profile-runs: 1\n")
	if _, err := ParseProfile("-f", path); err != nil {
		t.Errorf("defaults read back from a file: %v", err)
	}
	path = writeConfig(t, "num-profile-runs: 0\n")
	if _, err := ParseProfile("-f", path); err == nil || !strings.Contains(err.Error(), "--num-profile-runs must be between 1 and 10, got 0") {
		t.Errorf("num-profile-runs: 0 in a file: %v", err)
	}
	path = writeConfig(t, "benchmark-grace-period: 1e308\n")
	if _, err := ParseProfile("-f", path); err == nil || !strings.Contains(err.Error(), "at most 9223372036 s") {
		t.Errorf("benchmark-grace-period: 1e308 in a file: %v", err)
	}
}
