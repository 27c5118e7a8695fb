package search

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/surgebench/surge/app/cmdline"
)

// searchArgs runs `surge search args…` up to the run and returns the
// configuration the run would get.
func searchArgs(t *testing.T, args ...string) (cmdline.Config, error) {
	t.Helper()
	var got cmdline.Config
	cmd := command("test", func(_ context.Context, c cmdline.Config) error {
		got = c
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
		{[]string{"--slo", "time_to_first_token:p95:200", "--request-rate", "2", "--probe-duration", "3", "--max-probes", "5"}, "constant", 2000},
		{[]string{"--slo", "error_rate:0.01", "--request-rate", "2", "--arrival-pattern", "poisson"}, "poisson", 2000},
		// A concurrency search keeps the profile's default pattern.
		{[]string{"--slo", "error_rate:0.01", "--concurrency", "1", "--request-count", "50"}, "poisson", 50},
	} {
		c, err := searchArgs(t, tc.args...)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if c.Search == nil || c.Search.SLO == "" || c.ArrivalPattern != tc.pattern || c.RequestCount != tc.count || c.Version != "test" {
			t.Errorf("%q: search %+v, pattern %q, count %d", tc.args, c.Search, c.ArrivalPattern, c.RequestCount)
		}
		if tc.args[len(tc.args)-2] == "--max-probes" && (c.Search.MinProbe != 3*time.Second || c.Search.MaxProbes != 5) {
			t.Errorf("%q: probe %s, max probes %d", tc.args, c.Search.MinProbe, c.Search.MaxProbes)
		}
	}
	// No start: a rate search whose start the pilot picks.
	c, err := searchArgs(t, "--slo", "error_rate:0.01")
	if err != nil || !c.Search.AutoStart || c.RequestRate != "1" || c.Concurrency != "" || c.ArrivalPattern != "constant" {
		t.Errorf("no start: %v, auto %v, rate %q, concurrency %q, pattern %q", err, c.Search != nil && c.Search.AutoStart, c.RequestRate, c.Concurrency, c.ArrivalPattern)
	}
	if c, _ := searchArgs(t, "--slo", "error_rate:0.01", "--concurrency", "2"); c.Search.AutoStart {
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
	if c.Search.SLO != "error_rate:0.01" || c.Search.MaxProbes != 6 || c.RequestRate != "2" || c.ArrivalPattern != "poisson" {
		t.Errorf("search %+v, rate %q, pattern %q; want the file's SLO, rate and pattern and 6 probes", c.Search, c.RequestRate, c.ArrivalPattern)
	}
	if err := os.WriteFile(path, []byte("sloo: error_rate:0.01\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := searchArgs(t, "--config", path); err == nil || !strings.Contains(err.Error(), path+":1: unknown key sloo (did you mean slo?)") {
		t.Errorf("got %v, want the unknown key named with a suggestion", err)
	}
}
