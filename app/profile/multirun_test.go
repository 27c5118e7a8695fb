package profile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/app/spec"
)

// TestMultiRunFlags: --no-profile-run-disable-warmup-after-first warms up
// before every run; --vary-seed-per-trial and --no-set-consistent-seed
// seed the runs apart (by default both are seeded alike);
// --parameter-sweep-cooldown-seconds waits between a sweep's stages.
func TestMultiRunFlags(t *testing.T) {
	t.Parallel()
	base := []string{"--request-count", "2", "--isl", "8", "--osl", "2", "--num-profile-runs", "2"}
	if n := len(traceRun(t, 0, append(base, "--warmup-request-count", "3")...).arrivals()); n != 3+2*2 {
		t.Errorf("by default: %d requests, want the warmup once", n)
	}
	if n := len(traceRun(t, 0, append(base, "--warmup-request-count", "3", "--no-profile-run-disable-warmup-after-first")...).arrivals()); n != 2*(3+2) {
		t.Errorf("--no-profile-run-disable-warmup-after-first: %d requests, want a warmup a run", n)
	}
	seeds := func(args ...string) string {
		dir := t.TempDir()
		c := parseArgs(t, append(append([]string{"--model", "mock", "--ui", "none", "--tokenizer", "builtin", "--output-artifact-dir", dir,
			"--no-gpu-telemetry", "--no-server-metrics"}, base...), args...)...)
		if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, run := range []string{"run_0001", "run_0002"} {
			ic := apptest.ReadExport(t, filepath.Join(dir, FolderProfileRuns, run))["input_config"].(map[string]any)
			out = append(out, fmt.Sprint(ic["input"].(map[string]any)["random_seed"]))
		}
		return strings.Join(out, " ")
	}
	if got := seeds(); got != "42 42" {
		t.Errorf("default seeds %s, want 42 both", got)
	}
	if got := seeds("--random-seed", "5", "--vary-seed-per-trial"); strings.Fields(got)[0] == "5" || strings.Fields(got)[0] == strings.Fields(got)[1] {
		t.Errorf("--vary-seed-per-trial seeds %s, want two derived", got)
	}
	if got := seeds("--no-set-consistent-seed"); strings.Fields(got)[0] == strings.Fields(got)[1] || strings.Fields(got)[0] == "42" {
		t.Errorf("--no-set-consistent-seed seeds %s, want two drawn", got)
	}
	at := traceRun(t, 0, "--concurrency", "1,2", "--request-count", "2", "--isl", "8", "--osl", "2", "--parameter-sweep-cooldown-seconds", "0.5").arrivals()
	if len(at) != 4 || at[2]-at[1] < 450*time.Millisecond {
		t.Errorf("--parameter-sweep-cooldown-seconds 0.5: arrivals %v, want half a second between the stages", at)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--parameter-sweep-mode", "independent"}, "does not run every trial of one value before the next"},
		{[]string{"--set-consistent-seed", "--no-set-consistent-seed"}, "give one"},
		{[]string{"--parameter-sweep-cooldown-seconds", "-2"}, "must be ≥ 0"},
	} {
		err := refusal(tc.args, func(c cmdline.Config) error {
			_, err := spec.Parse(c)
			return err
		})
		var ue *cmdline.UsageError
		if err == nil || !strings.Contains(err.Error(), tc.want) || !asUsage(err, &ue) {
			t.Errorf("%v: %v, want a usage error saying %q", tc.args, err, tc.want)
		}
	}
}

// asUsage reports whether err is a usage error.
func asUsage(err error, ue **cmdline.UsageError) bool { return errors.As(err, ue) }
