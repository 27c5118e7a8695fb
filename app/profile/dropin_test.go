package profile

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/metrics"
)

// turnText is a turn's prompt, whether kept whole or in parts.
func turnText(tr datasets.Turn) string {
	if tr.Text != "" {
		return tr.Text
	}
	return strings.Join(tr.Parts, "")
}

// TestSweepValuesGetTheirOwnPrompts: as AIPerf, each value of a sweep
// builds its --num-dataset-entries prompts anew, seeded --random-seed +
// the value's index, so no value replays another's prompts (a prefix
// cache would serve them), and the log says so in one dataset line; one
// value keeps its single pool.
func TestSweepValuesGetTheirOwnPrompts(t *testing.T) {
	t.Parallel()
	c := apptest.RunConfig("http://127.0.0.1:1", t.TempDir())
	c.Concurrency, c.NumDatasetEntries, c.Seed, c.SamplingStrategy = "1,2", 3, 5, "sequential"
	var log strings.Builder
	p, err := prepareConfig(c, &log)
	if err != nil {
		t.Fatal(err)
	}
	// The line wraps at 80 columns: read as words.
	words := strings.Join(strings.Fields(log.String()), " ")
	if n := strings.Count(log.String(), "dataset:"); n != 1 || !strings.Contains(words, ", seeds 5 to 6 → 3 conversations") ||
		!strings.HasSuffix(words, " per stage") {
		t.Errorf("want one dataset line naming both seeds, got:\n%s", log.String())
	}
	if n := p.ds.Len(); n != 6 {
		t.Fatalf("%d conversations, want 3 per value", n)
	}
	v := 0
	for _, st := range p.plan.stages {
		if st.Phase != metrics.Profile {
			continue
		}
		for k := range 7 {
			if got := st.Conversation(k); got/3 != v {
				t.Errorf("value %d's session %d took conversation %d, from another value's pool", v, k, got)
			}
		}
		v++
	}
	// Value 1's pool is what a run seeded 6 builds.
	one := apptest.RunConfig("http://127.0.0.1:1", t.TempDir())
	one.Concurrency, one.NumDatasetEntries, one.Seed = "2", 3, 6
	q, err := prepareConfig(one, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if q.ds.Len() != 3 || q.plan.stages[len(q.plan.stages)-1].Conversation != nil {
		t.Fatalf("one value: %d conversations, per-value pools %v", q.ds.Len(), q.plan.stages[0].Conversation != nil)
	}
	for i := range 3 {
		if a, b := turnText(p.ds.Conversation(3 + i).Turns[0]), turnText(q.ds.Conversation(i).Turns[0]); a != b {
			t.Errorf("value 1's prompt %d differs from seed 6's", i)
		}
	}
	if turnText(p.ds.Conversation(0).Turns[0]) == turnText(p.ds.Conversation(3).Turns[0]) {
		t.Error("values 0 and 1 start with the same prompt")
	}
}

// TestSystemPromptFlags: --system-prompt or --system-prompt-file becomes
// every conversation's system message, before a shared system prompt;
// both, a missing, empty or oversized file are usage errors naming the
// flag.
func TestSystemPromptFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "system.txt")
	if err := os.WriteFile(file, []byte("You are terse."), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.txt")
	big := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, []byte(strings.Repeat("x", 1<<20+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	prep := func(set func(*cmdline.Config)) (*prepared, error) {
		c := apptest.RunConfig("http://127.0.0.1:1", t.TempDir())
		c.NumDatasetEntries = 2
		set(&c)
		return prepareConfig(c, io.Discard)
	}
	for _, tc := range []struct {
		name string
		set  func(*cmdline.Config)
		want string // prefix of every conversation's system prompt
	}{
		{"flag", func(c *cmdline.Config) { c.SystemPrompt = "Be brief." }, "Be brief."},
		{"file", func(c *cmdline.Config) { c.SystemPromptFile = file }, "You are terse."},
		{"before the shared one", func(c *cmdline.Config) { c.SystemPrompt, c.SharedSystemPromptLength = "Be brief.", 8 }, "Be brief.\n\n"},
	} {
		p, err := prep(tc.set)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for i := range p.ds.Len() {
			if conv := p.ds.Conversation(i); !strings.HasPrefix(conv.SystemPrompt, tc.want) {
				t.Errorf("%s: system prompt %q, want it to start %q", tc.name, conv.SystemPrompt, tc.want)
			}
		}
	}
	for _, tc := range []struct {
		set  func(*cmdline.Config)
		want string
	}{
		{func(c *cmdline.Config) { c.SystemPrompt, c.SystemPromptFile = "a", file }, "--system-prompt and --system-prompt-file: give one"},
		{func(c *cmdline.Config) { c.SystemPromptFile = filepath.Join(dir, "none.txt") }, "--system-prompt-file"},
		{func(c *cmdline.Config) { c.SystemPromptFile = empty }, "empty"},
		{func(c *cmdline.Config) { c.SystemPromptFile = big }, "over the 1 MiB limit"},
	} {
		_, err := prep(tc.set)
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want a usage error %q", err, tc.want)
		}
	}
}

// TestTurnDelayRatioZeroRemovesDelays: AIPerf multiplies the turn delays
// by the ratio, so 0 given on the command line removes them.
func TestTurnDelayRatioZeroRemovesDelays(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		noDelays bool
		wantZero bool
	}{{false, false}, {true, true}} {
		c := apptest.RunConfig("http://127.0.0.1:1", t.TempDir())
		c.NumDatasetEntries, c.TurnsMean, c.TurnDelayMean, c.TurnDelayRatio, c.NoTurnDelays = 2, 3, 50e6, 0, tc.noDelays
		p, err := prepareConfig(c, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		for i := range p.ds.Len() {
			for _, tr := range p.ds.Conversation(i).Turns {
				total += int64(tr.Delay)
			}
		}
		if (total == 0) != tc.wantZero {
			t.Errorf("NoTurnDelays %v: turn delays total %d ns", tc.noDelays, total)
		}
	}
}

// TestDefaultServerNote: with no --url, a server answering at AIPerf's
// default address is named in one line (the run still uses the mock);
// with --url, or nothing there, nothing is said.
func TestDefaultServerNote(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	note := defaultServerNote(&spec.Target{Mock: true}, addr)
	if !strings.Contains(note, "a server answers at "+addr) || !strings.Contains(note, "--url "+addr+" benchmarks that server") || strings.Count(note, "\n") > 0 {
		t.Errorf("note %q", note)
	}
	if n := defaultServerNote(&spec.Target{Mock: true, URL: "mock"}, addr); n != "" {
		t.Errorf("--url mock: %q", n)
	}
	if n := defaultServerNote(&spec.Target{URL: "http://x"}, addr); n != "" {
		t.Errorf("--url given: %q", n)
	}
	ln.Close()
	if n := defaultServerNote(&spec.Target{Mock: true}, addr); n != "" {
		t.Errorf("nothing listening: %q", n)
	}
}
