package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/internal/testbin"
)

// TestMain keeps every test off the user's history: the default database
// ($XDG_DATA_HOME/surge/history.db) is in a temporary folder, for this
// process and every surge it starts. More tests run at once than there
// are CPUs (unless -parallel says otherwise): they wait on surge children
// and servers far longer than they compute, under the race detector too
// (the children are built without it).
func TestMain(m *testing.M) {
	testbin.Parallel(waiting)
	// A shell's exported $COLUMNS would widen what the tests check at 80.
	os.Unsetenv("COLUMNS")
	dir, err := os.MkdirTemp("", "surge-main-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_DATA_HOME", dir)
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// waiting is how many parallel tests run at once (more where there are
// more CPUs).
const waiting = 8

// surge is the command that runs the surge binary built from this tree
// with args, in this process's folder and environment: a child process
// of its own keeps each test's stdout, flags and signals apart from the
// others', so the tests run in parallel.
func surge(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	return exec.Command(testbin.Surge(t), args...)
}

// captured runs surge with args and returns its exit code and what it
// wrote to stdout and stderr.
func captured(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return output(t, surge(t, args...))
}

// output runs cmd to its end and returns its exit code and what it wrote.
func output(t *testing.T, cmd *exec.Cmd) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	return exitCode(t, cmd.Run()), out.String(), errOut.String()
}

// exitCode is the status of a child whose Run or Wait returned err: -1
// when a signal ended it. Any other error (it did not start) fails the
// test.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

func TestExitCodesForBadUsage(t *testing.T) {
	t.Parallel()
	cases := [][]string{
		{"profile", "--endpoint-type", "embeddingz"},
		{"profile", "--request-count", "abc"},
		{"profile", "--nosuchflag"},
		{"profile", "--concurrency", "1,x"},
		{"profile", "--goodput", "ttft:1"},
		{"profile", "--ui", "fancy"},
		{"profile", "--ui", "none", "stray", "--concurrency", "4"}, // flags after a word would go unread
		{"mock-server", "--error-rate", "2"},
		{"mock-server", "--stream-error-rate", "1.5"},
		{"mock-server", "--stream-error-shape", "nginx"},
		{"mock-server", "--tool-call-rate", "-0.1"},
		{"mock-server", "--bad-tool-args-rate", "2"},
		{"mock-server", "--max-model-len", "-1"},
		{"mock-server", "--hub", "/no/such/folder"},
		// Refused AIPerf flag: the run does not start, whatever else was given.
		{"profile", "--video-width", "64", "--request-count", "1", "--ui", "none"},
		// A stray argument is exit 2, not a run of the rest.
		{"profile", "--request-count", "1", "oops", "--ui", "none"},
	}
	for _, args := range cases {
		if got, _, stderr := captured(t, args...); got != cmdline.ExitUsage {
			t.Errorf("surge %v exited %d, want %d:\n%s", args, got, cmdline.ExitUsage, stderr)
		}
	}
}

func TestBadFlagValueIsAUsageError(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"profile", "--benchmark-duration", "soon"}, {"profile", "--isl"}, {"mock-server", "--ttft", "x"}} {
		if got, _, stderr := captured(t, args...); got != cmdline.ExitUsage {
			t.Errorf("surge %v exited %d, want %d:\n%s", args, got, cmdline.ExitUsage, stderr)
		}
	}
}

func TestReportCommand(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "r.html")
	if code, _, stderr := captured(t, "report", "-o", out, "metrics/report/testdata/run-a", "metrics/report/testdata/sweep"); code != cmdline.ExitOK {
		t.Fatalf("surge report exited %d:\n%s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `id="surge-data"`) {
		t.Errorf("%s has no embedded data", out)
	}
	pngs := filepath.Join(t.TempDir(), "charts")
	if code, _, stderr := captured(t, "report", "--format", "png", "-o", pngs, "metrics/report/testdata/sweep"); code != cmdline.ExitOK {
		t.Fatalf("surge report --format png exited %d:\n%s", code, stderr)
	}
	for _, name := range []string{"cdf-time_to_first_token.png", "sweep-ttft.png", "throughput.png"} {
		if st, err := os.Stat(filepath.Join(pngs, name)); err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestReportCommandBadUsage(t *testing.T) {
	t.Parallel()
	cases := [][]string{
		{"report"},                         // no folder
		{"report", "--format", "svg", "x"}, // unknown format
		{"report", "metrics/report/testdata/run-a", "-o"}, // -o with no value
		{"report", filepath.Join(t.TempDir(), "none")},    // no such folder
	}
	for _, args := range cases {
		if got, _, stderr := captured(t, args...); got != cmdline.ExitUsage {
			t.Errorf("surge %v exited %d, want %d:\n%s", args, got, cmdline.ExitUsage, stderr)
		}
	}
}

// The compare test runs (metrics/compare/testdata): the same workload on
// a mock with TTFT 20 ms (slow) and 16 ms (fast), and one with --isl 24.
const (
	cmpSlow  = "metrics/compare/testdata/slow"
	cmpFast  = "metrics/compare/testdata/fast"
	cmpOther = "metrics/compare/testdata/other-isl"
)

// TestCompareExitCodes: 0 compared, 1 a --fail-on rule failed, 2 bad
// usage or runs of different workloads (unless --force).
func TestCompareExitCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{cmpSlow, cmpFast}, cmdline.ExitOK},
		{[]string{"--fail-on", "time_to_first_token.p99>+5%", cmpSlow, cmpFast}, cmdline.ExitOK},
		{[]string{"--fail-on", "time_to_first_token.p99>+5%", cmpFast, cmpSlow}, cmdline.ExitFailed},
		{[]string{"--fail-on", "output_token_throughput<-5%", "--fail-on", "inter_token_latency.p50>+50%", cmpFast, cmpSlow}, cmdline.ExitFailed},
		{[]string{cmpSlow, cmpOther}, cmdline.ExitUsage},
		{[]string{"--force", cmpSlow, cmpOther}, cmdline.ExitOK},
		{[]string{cmpSlow}, cmdline.ExitUsage},
		{[]string{"--fail-on", "time_to_first_token.p99>>5%", cmpSlow, cmpFast}, cmdline.ExitUsage},
		{[]string{"--fail-on", "nope.p99>5%", cmpSlow, cmpFast}, cmdline.ExitUsage},
		{[]string{"--confidence", "95", cmpSlow, cmpFast}, cmdline.ExitUsage},
		{[]string{cmpSlow, filepath.Join(t.TempDir(), "none")}, cmdline.ExitUsage},
	} {
		if got, stdout, stderr := captured(t, append([]string{"compare"}, tc.args...)...); got != tc.want {
			t.Errorf("surge compare %v exited %d, want %d:\n%s%s", tc.args, got, tc.want, stdout, stderr)
		}
	}
}

// TestHelpShowsSurge: profile's and search's --help list surge's own flags
// in a page a reader can scan (AIPerf's unimplemented ones are behind
// --help-aiperf), with no control bytes (saved help stays text to grep):
// the groups people set first (Target, Load, Dataset, Output) come first,
// every line fits 80 columns (the width when stdout is not a terminal),
// and `surge --help` gives each command one line.
func TestHelpShowsSurge(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"profile", "--help"}, {"search", "--help"}, {"profile", "--help-all"}, {"profile", "--help", "load"}, {"profile", "--help-aiperf"}, {"--help"}} {
		code, out, _ := captured(t, args...)
		if code != cmdline.ExitOK {
			t.Errorf("surge %v exited %d", args, code)
		}
		lines := strings.Count(out, "\n")
		last := args[len(args)-1]
		// Wrapped to 80 columns a flag takes two lines on average (its
		// names and usage, a second line for the rest of the usage): about
		// 120 flags and their group headings fit 360 lines (--help-all),
		// AIPerf's 100 unimplemented ones 270; what a first run needs
		// (--help) 160; the cloud group (docs/clouds.md) 15 more, the
		// export group's two flags that turn on a back end 5. More means
		// the help grew a page.
		limit := 160
		switch last {
		case "--help-all":
			limit = 380
		case "--help-aiperf":
			limit = 270
		}
		if lines < 10 || lines > limit {
			t.Errorf("surge %v: %d lines, want 10 to %d", args, lines, limit)
		}
		for i, r := range out {
			if r < 0x20 && r != '\n' || r == 0x7f {
				t.Errorf("surge %v: control byte %#x at %d: %q", args, r, i, out[max(0, i-40):i])
				break
			}
		}
		for i, line := range strings.Split(out, "\n") {
			// A word longer than a line (a metric list) stands alone.
			if utf8.RuneCountInString(line) > 80 && strings.Contains(strings.TrimSpace(line), " ") {
				t.Errorf("surge %v: line %d is wider than 80 columns: %q", args, i+1, line)
			}
		}
		switch last {
		case "--help":
			if strings.Contains(out, "--accuracy-benchmark") || (args[0] != "--help" && !strings.Contains(out, "--concurrency")) {
				t.Errorf("surge %v: AIPerf's unimplemented flags shown or surge's missing:\n%s", args, out)
			}
		case "--help-aiperf":
			if !strings.Contains(out, "--accuracy-benchmark VALUE") || !strings.Contains(out, "refused") {
				t.Errorf("surge %v lists no AIPerf flags:\n%s", args, out)
			}
		}
		if args[0] == "--help" {
			// Each command's summary is one line: its name, then text.
			_, cmds, _ := strings.Cut(out, "COMMANDS:\n")
			cmds, _, _ = strings.Cut(cmds, "\n\n")
			for _, line := range strings.Split(cmds, "\n") {
				if !strings.HasPrefix(line, "   ") || strings.HasPrefix(line, "    ") {
					t.Errorf("surge --help: a command's summary runs onto a second line: %q", line)
				}
			}
			continue
		}
		if last == "--help" || last == "--help-all" {
			at := -1
			for _, group := range []string{"   Target\n", "   Load\n", "   Dataset\n", "   Output\n"} {
				i := strings.Index(out, group)
				if i < at {
					t.Errorf("surge %v: group %q is not after the one before it (Target, Load, Dataset, Output)", args, strings.TrimSpace(group))
				}
				at = i
			}
		}
	}
}

// TestMistakesAreAnswered: an unknown flag, for every command, names the
// nearest known one; an unknown command names the nearest command; each
// exits 2.
func TestMistakesAreAnswered(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"profile", "--concurency", "4"}, "unknown flag --concurency (did you mean --concurrency?)"},
		{[]string{"search", "--sloo", "x"}, "unknown flag --sloo (did you mean --slo?)"},
		{[]string{"report", "--outptu", "x", "DIR"}, "unknown flag --outptu (did you mean --output?)"},
		{[]string{"compare", "A", "B", "--fail-onn", "x"}, "unknown flag --fail-onn (did you mean --fail-on?)"},
		{[]string{"merge", "A", "--ouput", "x"}, "unknown flag --ouput (did you mean --output?)"},
		{[]string{"calibrate", "--max-stream", "8"}, "unknown flag --max-stream (did you mean --max-streams?)"},
		{[]string{"mock-server", "--prot", "8000"}, "unknown flag --prot (did you mean --port?)"},
		{[]string{"profil"}, `unknown command "profil" (did you mean profile?)`},
		{[]string{"comapre", "A", "B"}, `unknown command "comapre" (did you mean compare?)`},
		{[]string{"help", "profil"}, "No help topic"},
		{[]string{"profile", "--measurement-interval", "10000"}, "--measurement-interval is GenAI-Perf's flag, not surge's or AIPerf's: --benchmark-duration SECONDS"},
		{[]string{"vllm-bench", "serve", "--num-promts", "5"}, "unknown flag --num-promts (did you mean --num-prompts?)"},
		{[]string{"vllm-bench", "serve", "--use-beam-search"}, "--use-beam-search is refused: surge sends no beam search"},
		{[]string{"vllm-bench", "bench"}, `unknown subcommand "bench"`},
		{[]string{"guidellm", "benchmark", "--max-errors", "5"}, "--max-errors is refused"},
		{[]string{"guidellm", "runn"}, `unknown command "runn"`},
		{[]string{"inference-perf", "--config_file", "/nonexistent.yml"}, "--config_file"},
		{[]string{"inference-perf", "--analyze", "x"}, "--analyze is refused"},
	} {
		code, _, stderr := captured(t, tc.args...)
		if code != cmdline.ExitUsage {
			t.Errorf("surge %v exited %d, want %d", tc.args, code, cmdline.ExitUsage)
		}
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("surge %v said %q, want %q", tc.args, stderr, tc.want)
		}
	}
}

// TestFlagsAfterFolders: report, compare and merge read a flag after the
// run folders as a flag.
func TestFlagsAfterFolders(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "r.html")
	if code, _, stderr := captured(t, "report", "metrics/report/testdata/run-a", "-o", out); code != cmdline.ExitOK {
		t.Fatalf("surge report DIR -o FILE exited %d:\n%s", code, stderr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("surge report DIR -o FILE: %v", err)
	}
	if code, _, stderr := captured(t, "compare", cmpFast, cmpSlow, "--fail-on", "time_to_first_token.p99>+5%"); code != cmdline.ExitFailed {
		t.Errorf("surge compare A B --fail-on RULE exited %d, want %d (the rule fails):\n%s", code, cmdline.ExitFailed, stderr)
	}
	if code, _, stderr := captured(t, "compare", cmpSlow, cmpOther, "--force"); code != cmdline.ExitOK {
		t.Errorf("surge compare A B --force exited %d, want %d:\n%s", code, cmdline.ExitOK, stderr)
	}
}

// TestWriteFaultExitCode: a run whose records file cannot be written
// (/dev/full: ENOSPC on every write) stops and exits 4; a bad edge flag is
// a usage error.
func TestWriteFaultExitCode(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full here")
	}
	dir := t.TempDir()
	if err := os.Symlink("/dev/full", filepath.Join(dir, "profile_export.jsonl")); err != nil {
		t.Fatal(err)
	}
	if got, _, stderr := captured(t, "profile", "--model", "m", "--benchmark-duration", "60", "--concurrency", "2", "--ui", "none",
		"--no-gpu-telemetry", "--no-server-metrics", "--output-artifact-dir", dir); got != cmdline.ExitWriteFault {
		t.Errorf("exit %d, want %d:\n%s", got, cmdline.ExitWriteFault, stderr)
	}
	for _, bad := range [][]string{{"--connection-retries", "2"}, {"--max-response-mib", "-1"}, {"--control-token", "short"}} {
		if got, _, stderr := captured(t, append([]string{"profile", "--model", "m", "--ui", "none"}, bad...)...); got != cmdline.ExitUsage {
			t.Errorf("surge profile %v exited %d, want %d:\n%s", bad, got, cmdline.ExitUsage, stderr)
		}
	}
}

// TestHistoryExitCodes: what the history's commands and flags refuse is
// bad usage (exit 2); a damaged history fails what reads it (exit 1; a
// gate: exit 3, TestGateFailsClosed) but not a run that writes to it (exit 0, the error on stderr, the artifacts
// written); --no-history records nothing. The first case makes the
// history the others read; the rest run at once.
func TestHistoryExitCodes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	damaged := filepath.Join(dir, "damaged.db")
	if err := os.WriteFile(damaged, []byte("not a database, not at all: just some bytes that are long enough"), 0o644); err != nil {
		t.Fatal(err)
	}
	run1 := []string{"--model", "m", "--request-count", "4", "--ui", "none", "--no-gpu-telemetry", "--no-server-metrics"}
	cases := []struct {
		args []string
		want int
	}{
		{[]string{"history", "--history", db}, cmdline.ExitOK},
		{[]string{"history", "--history", db, "nosuch"}, cmdline.ExitUsage},
		{[]string{"history", "--history", db, "--since", "soon"}, cmdline.ExitUsage},
		{[]string{"history", "--history", damaged}, cmdline.ExitFailed},
		{[]string{"trend", "--history", db}, cmdline.ExitUsage},
		{[]string{"trend", "--history", db, "time_to_first_token"}, cmdline.ExitUsage},
		{[]string{"compare", "--baseline", "history:newest", cmpSlow}, cmdline.ExitUsage},
		{[]string{"compare", "--history", db, cmpFast, cmpSlow}, cmdline.ExitUsage},
		{[]string{"compare", "--history", db, "--baseline", cmpFast, cmpSlow}, cmdline.ExitUsage},
		{[]string{"compare", "--history", filepath.Join(dir, "none.db"), "--baseline", "history:last-matching", cmpSlow}, cmdline.ExitUsage},
		{[]string{"compare", "--history", db, "--baseline", "history:last-matching", cmpSlow}, cmdline.ExitOK},
		{[]string{"compare", "--history", damaged, "--baseline", "history:last-matching", cmpSlow}, cmdline.ExitNoBaseline},
		{[]string{"compare", "--baseline", cmpFast, cmpSlow, "--fail-on", "time_to_first_token.p50>+5%"}, cmdline.ExitFailed},
		{[]string{"compare", "--baseline", cmpSlow, cmpFast, "--fail-on", "time_to_first_token.p50>+5%"}, cmdline.ExitOK},
		{[]string{"compare", "--baseline", cmpSlow, cmpOther}, cmdline.ExitUsage},
		{[]string{"compare", "--baseline", filepath.Join(dir, "nothing"), cmpSlow}, cmdline.ExitUsage},
		{append([]string{"profile", "--history", db, "--no-history"}, run1...), cmdline.ExitUsage},
		{append([]string{"profile", "--no-history", "--history-label", "x"}, run1...), cmdline.ExitUsage},
		{append([]string{"profile", "--cost-per-hour", "-2"}, run1...), cmdline.ExitUsage},
		{append([]string{"search", "--slo", "error_rate:0.1", "--cost-per-hour", "NaN"}, run1...), cmdline.ExitUsage},
	}
	for i, tc := range cases {
		check := func(t *testing.T) {
			if code, stdout, stderr := captured(t, tc.args...); code != tc.want {
				t.Errorf("surge %v exited %d, want %d:\n%s%s", tc.args, code, tc.want, stdout, stderr)
			}
		}
		if i == 0 {
			check(t)
			continue
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			check(t)
		})
	}

	t.Run("damaged history", func(t *testing.T) {
		t.Parallel()
		out := filepath.Join(dir, "run")
		code, _, stderr := captured(t, append([]string{"profile", "--history", damaged, "--output-artifact-dir", out}, run1...)...)
		if code != cmdline.ExitOK || !strings.Contains(stderr, "the run is not in the history") || !strings.Contains(stderr, damaged) {
			t.Errorf("a run with a damaged history: exit %d, want 0 and the error on stderr:\n%s", code, stderr)
		}
		if _, err := os.Stat(filepath.Join(out, "profile_export_aiperf.json")); err != nil {
			t.Errorf("a run with a damaged history wrote no export: %v", err)
		}
	})
	t.Run("no history", func(t *testing.T) {
		t.Parallel()
		code, _, stderr := captured(t, append([]string{"profile", "--no-history", "--output-artifact-dir", filepath.Join(dir, "quiet")}, run1...)...)
		if code != cmdline.ExitOK || strings.Contains(stderr, "history") {
			t.Errorf("--no-history: exit %d, stderr mentions the history:\n%s", code, stderr)
		}
	})
}

// TestMockServerHost: --host takes an IPv6 address bare or bracketed, and
// the mock listens on it.
func TestMockServerHost(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]string{"::1": "[::1]:8100", "[::1]": "[::1]:8100", "127.0.0.1": "127.0.0.1:8100", "localhost": "localhost:8100"} {
		if got := listenAddr(host, 8100); got != want {
			t.Errorf("--host %s --port 8100: %q, want %q", host, got, want)
		}
	}
	srv, err := mockserver.Start(t.Context(), listenAddr("::1", 0), mockserver.Config{})
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	defer srv.Close(context.Background())
	resp, err := http.Get(srv.URL() + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !strings.HasPrefix(srv.URL(), "http://[::1]:") || resp.StatusCode != 200 {
		t.Errorf("mock on ::1: %s answered %d", srv.URL(), resp.StatusCode)
	}
}

// TestFitsEightyColumns: at COLUMNS=80 a default streaming run's summary,
// a sweep's stage table, repeated runs' table and surge history fit 80
// columns, and so do the notes on stderr (a path longer than a line may
// stand alone); off a terminal, progress goes to stderr, not into the
// summary.
func TestFitsEightyColumns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	for _, args := range [][]string{
		{"profile", "--streaming", "--request-count", "40", "--concurrency", "4", "--osl", "8", "--history", db, "--output-artifact-dir", filepath.Join(dir, "one")},
		{"profile", "--streaming", "--concurrency", "1,2,4", "--request-count", "12", "--osl", "8", "--history", db, "--output-artifact-dir", filepath.Join(dir, "sweep")},
		{"profile", "--num-profile-runs", "2", "--request-count", "8", "--concurrency", "4", "--osl", "8", "--history", db, "--output-artifact-dir", filepath.Join(dir, "runs")},
		{"history", "--history", db, "--stages"},
	} {
		// The children's environment alone: this process's stays as it is
		// for the tests running beside this one.
		cmd := surge(t, args...)
		cmd.Env = append(os.Environ(), "COLUMNS=80")
		code, out, errOut := output(t, cmd)
		if code != cmdline.ExitOK {
			t.Fatalf("surge %v exited %d:\n%s", args, code, out)
		}
		for _, line := range strings.Split(out+errOut, "\n") {
			if utf8.RuneCountInString(line) > 80 && strings.Contains(strings.TrimSpace(line), " ") {
				t.Errorf("surge %s: a line of %d columns: %q", args[0], utf8.RuneCountInString(line), line)
			}
		}
		if args[0] == "profile" && args[1] != "--num-profile-runs" && (!strings.Contains(out, "TTFT (ms)") || strings.Contains(out, "[ ")) {
			t.Errorf("surge %v: no headline, or progress lines in the summary:\n%s", args, out)
		}
		if args[1] == "--num-profile-runs" && !strings.Contains(out, "mean ± half the 95% CI") {
			t.Errorf("the repeated runs printed no table:\n%s", out)
		}
		if len(args) > 3 && args[3] == "1,2,4" && !strings.Contains(out, "Stages (latencies in ms)") {
			t.Errorf("the sweep printed no stage table:\n%s", out)
		}
	}
}
