package search

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
)

// searchArgs runs `surge search args…` up to the run and returns the
// spec the run would get.
func searchArgs(t *testing.T, args ...string) (*spec.Spec, error) {
	t.Helper()
	got := &spec.Spec{}
	cmd := command("test", func(_ context.Context, s *spec.Spec) error {
		got = s
		return nil
	})
	app := &cli.App{Name: "surge", Writer: io.Discard, ErrWriter: io.Discard, Commands: []*cli.Command{cmd}}
	full, err := cmdline.CommandArgs(append([]string{"surge", "search"}, args...), app.Commands)
	if err != nil {
		return got, err
	}
	return got, app.Run(full)
}

func TestSearchFlagsAndDefaults(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	for _, tc := range []struct {
		args    []string
		pattern string
		count   int
	}{
		// A rate search is a steady rate unless asked otherwise.
		{[]string{"--slo", "time_to_first_token:p95:200", "--streaming", "--request-rate", "2", "--probe-duration", "3", "--max-probes", "5"}, "constant", 2000},
		{[]string{"--slo", "error_rate:0.01", "--request-rate", "2", "--arrival-pattern", "poisson"}, "poisson", 2000},
		// A concurrency search keeps the profile's default pattern.
		{[]string{"--slo", "error_rate:0.01", "--concurrency", "1", "--request-count", "50"}, "poisson", 50},
	} {
		c, err := searchArgs(t, tc.args...)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		sr := c.Live.Search
		if sr == nil || len(sr.Objectives) == 0 || c.Load.Pattern != tc.pattern || c.Load.RequestCount != tc.count || c.Version != "test" {
			t.Errorf("%q: search %+v, pattern %q, count %d", tc.args, sr, c.Load.Pattern, c.Load.RequestCount)
		}
		if tc.args[len(tc.args)-2] == "--max-probes" && (sr.MinProbe != 3*time.Second || sr.MaxProbes != 5) {
			t.Errorf("%q: probe %s, max probes %d", tc.args, sr.MinProbe, sr.MaxProbes)
		}
	}
	// No start: a rate search whose start the pilot picks.
	c, err := searchArgs(t, "--slo", "error_rate:0.01")
	if err != nil || !c.Live.Search.AutoStart || !slices.Equal(c.Load.Rates, []float64{1}) || c.Load.Concs != nil || c.Load.Pattern != "constant" {
		t.Errorf("no start: %v, search %+v, rates %v, concurrency %v, pattern %q", err, c.Live.Search, c.Load.Rates, c.Load.Concs, c.Load.Pattern)
	}
	if c, _ := searchArgs(t, "--slo", "error_rate:0.01", "--concurrency", "2"); c.Live.Search.AutoStart {
		t.Error("--concurrency 2: the pilot would pick a start that was given")
	}
	if _, err := searchArgs(t, "--request-rate", "2"); err == nil {
		t.Error("a search without --slo ran")
	}
}

// TestSearchReadsAConfigFile: `surge search -f` takes search's own flags
// and profile's from the file, the command line winning.
func TestSearchReadsAConfigFile(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	path := filepath.Join(t.TempDir(), "search.yaml")
	if err := os.WriteFile(path, []byte("slo: error_rate:0.01\nmax-probes: 4\nloadgen:\n  request_rate: 2\n  arrival_pattern: poisson\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := searchArgs(t, "-f", path, "--max-probes", "6")
	if err != nil {
		t.Fatal(err)
	}
	if sr := c.Live.Search; len(sr.Objectives) != 1 || sr.Objectives[0].Tag != "error_rate" || sr.MaxProbes != 6 || !slices.Equal(c.Load.Rates, []float64{2}) || c.Load.Pattern != "poisson" {
		t.Errorf("search %+v, rates %v, pattern %q; want the file's SLO, rate and pattern and 6 probes", sr, c.Load.Rates, c.Load.Pattern)
	}
	if err := os.WriteFile(path, []byte("sloo: error_rate:0.01\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := searchArgs(t, "--config", path); err == nil || !strings.Contains(err.Error(), path+":1: unknown key sloo (did you mean slo?)") {
		t.Errorf("got %v, want the unknown key named with a suggestion", err)
	}
}

// TestSearchNumbers: search's own numeric flags have their limits in
// the one table profile's flags use, and a value past them is refused
// naming the flag.
func TestSearchNumbers(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	for _, f := range searchOptions(&cmdline.SearchConfig{}) {
		switch f.(type) {
		case *cli.IntFlag, *cli.Float64Flag, *cmdline.ValueFlag:
			if _, ok := cmdline.NumberLimits(f.Names()[0]); !ok {
				t.Errorf("--%s holds a number and has no limits (cmdline's numberLimits)", f.Names()[0])
			}
		}
	}
	for _, tc := range []struct{ flag, value, want string }{
		{"--max-probes", "0", "--max-probes must be ≥ 1, got 0"},
		{"--search-resolution", "0", "--search-resolution must be > 0 and < 1, got 0"},
		{"--probe-duration", "1e308", "--probe-duration: at most 9223372036 s"},
		{"--search-max", "NaN", "--search-max must be a finite number"},
	} {
		_, err := searchArgs(t, "--slo", "error_rate:0.01", tc.flag, tc.value)
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: %v, want a usage error with %q", tc.flag, tc.value, err, tc.want)
		}
	}
}
