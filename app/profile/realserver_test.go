package profile

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/examples/mockserver"
)

// startMockOf starts a mock of cfg for one test and returns its URL.
func startMockOf(t *testing.T, cfg mockserver.Config) string {
	t.Helper()
	m, err := mockserver.Start(context.Background(), "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m.URL()
}

// runArgs runs `surge profile` with args against url into a fresh folder
// and returns the export, the console and the log.
func runArgs(t *testing.T, url string, args ...string) (*Result, map[string]any, string, string) {
	t.Helper()
	dir := t.TempDir()
	// No preflight: these runs meet the server as it is, not as the
	// preflight adapts the run to it (the cap guard's test needs that).
	base := []string{"--url", url, "--model", "mock", "--streaming", "--ui", "none", "--output-artifact-dir", dir,
		"--no-gpu-telemetry", "--no-server-metrics", "--tokenizer", "builtin", "--skip-preflight"}
	var out, log bytes.Buffer
	res, err := runConfig(context.Background(), parseArgs(t, append(base, args...)...), &out, &log)
	if err != nil {
		t.Fatal(err)
	}
	return res, apptest.ReadExport(t, dir), out.String(), log.String()
}

// TestTruncatedPromptEndToEnd: a mock with llama.cpp's 1,024-token slot
// cuts 1,300-token prompts (about 1,170 of its words) to about 650 without
// an error, as llama.cpp cut 1,100-token prompts to 599. The run counts
// every cut prompt, warns once (in the summary: the dashboard shows it
// live) and puts the server's count beside surge's.
func TestTruncatedPromptEndToEnd(t *testing.T) {
	t.Parallel()
	url := startMockOf(t, mockserver.Config{ContextTokens: 1024})
	_, m, out, log := runArgs(t, url, "--isl", "1300", "--osl", "4", "--request-count", "6", "--concurrency", "2")
	if got := apptest.RunAvg(t, m, "prompt_truncated_count"); got != 6 {
		t.Errorf("prompt_truncated_count %v, want 6", got)
	}
	if strings.Contains(log, "cut") || strings.Count(out, "warning [prompt-cut]") != 1 {
		t.Errorf("the cut prompts are not warned of once, in the summary:\nlog %s\nsummary %s", log, out)
	}
	for _, want := range []string{"the server cut 6 of 6 prompts", "context length",
		"Input sequence length: the metrics use surge's count, avg 1300 (the prompts as sent); the server's usage says 6"} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("console does not say %q:\n%s", want, out)
		}
	}
	if isl, server := apptest.RunAvg(t, m, "input_sequence_length"), apptest.RunAvg(t, m, "usage_prompt_tokens"); isl != 1300 || server > 800 {
		t.Errorf("ISL avg %v, usage_prompt_tokens avg %v: want 1300 and the cut count", isl, server)
	}
	// The same prompts fit a larger context: nothing is flagged.
	_, m, out, _ = runArgs(t, startMockOf(t, mockserver.Config{ContextTokens: 4096}), "--isl", "1300", "--osl", "4", "--request-count", "4")
	if got := apptest.RunAvg(t, m, "prompt_truncated_count"); got != 0 || strings.Contains(out, "cut the prompt") {
		t.Errorf("prompt_truncated_count %v in a context that fits:\n%s", got, out)
	}
}

// TestPerChunkUsageEndToEnd: a mock sending 3 tokens a chunk; with
// --per-chunk-usage the summary counts the chunks of several tokens from
// the server's running usage, without it the tokenizer's count of each
// chunk says the server sends its tokens in batches. OSL is the server's
// count either way.
func TestPerChunkUsageEndToEnd(t *testing.T) {
	t.Parallel()
	url := startMockOf(t, mockserver.Config{TokensPerChunk: 3})
	for _, tc := range []struct {
		flag, want string
	}{
		{"--per-chunk-usage", "warning [chunks]: 12 of 12 chunks carried several tokens"},
		{"", "warning [batched]: 4 of 4 answers came in batches"},
	} {
		args := []string{"--isl", "16", "--osl", "9", "--request-count", "4"}
		if tc.flag != "" {
			args = append(args, tc.flag)
		}
		_, m, out, _ := runArgs(t, url, args...)
		if !strings.Contains(out, tc.want) {
			t.Errorf("%q: console does not say %q:\n%s", tc.flag, tc.want, out)
		}
		if osl := apptest.RunAvg(t, m, "output_sequence_length"); osl != 9 {
			t.Errorf("%q: OSL avg %v, want the server's 9 (not 3 chunks)", tc.flag, osl)
		}
	}
}

// TestCapGuardEndToEnd: a mock that ignores max_completion_tokens and
// streams 400 tokens for a cap of 8. The guard ends each response past
// 32 and records why; --no-cap-guard lets them run.
func TestCapGuardEndToEnd(t *testing.T) {
	t.Parallel()
	url := startMockOf(t, mockserver.Config{IgnoreMaxCompletionTokens: true, DefaultOutputTokens: 400})
	res, m, out, log := runArgs(t, url, "--isl", "16", "--osl", "8", "--request-count", "4")
	if !res.AllFailed() || apptest.RunAvg(t, m, "error_request_count") != 4 {
		t.Errorf("error_request_count %v, want every request ended by the guard", apptest.RunAvg(t, m, "error_request_count"))
	}
	if !strings.Contains(out, "output_cap_exceeded") || strings.Count(out+log, "--use-legacy-max-tokens") != 1 {
		t.Errorf("the console does not name the guard's error, or the fix once:\n%s\n%s", out, log)
	}
	_, m, _, _ = runArgs(t, url, "--isl", "16", "--osl", "8", "--request-count", "4", "--no-cap-guard")
	if osl := apptest.RunAvg(t, m, "output_sequence_length"); osl != 400 {
		t.Errorf("--no-cap-guard: OSL avg %v, want 400", osl)
	}
}

// TestRealServerFlags: the new flags reach input_config, and contradicting
// or out-of-range values are usage errors naming the flag.
func TestRealServerFlags(t *testing.T) {
	t.Parallel()
	c := parseArgs(t, "--server-metrics-timeout", "8", "--per-chunk-usage", "--no-cap-guard", "--retokenize-output")
	if c.ServerTimeout != 8*time.Second || !c.PerChunkUsage || !c.NoCapGuard || !c.RetokenizeOutput {
		t.Errorf("parsed %v %v %v %v", c.ServerTimeout, c.PerChunkUsage, c.NoCapGuard, c.RetokenizeOutput)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--retokenize-output", "--use-server-token-count"}, "--retokenize-output and --use-server-token-count"},
		{[]string{"--server-metrics-timeout", "-1"}, "--server-metrics-timeout"},
	} {
		err := refusal(append(tc.args, "--ui", "none", "--output-artifact-dir", t.TempDir()), func(c cmdline.Config) error {
			_, err := runConfig(context.Background(), c, nil, nil)
			return err
		})
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error naming %s", tc.args, err, tc.want)
		}
	}
}

// TestStreamingHint: a run of a streaming endpoint type without --streaming
// says, in one line of its summary, that TTFT and ITL need it; a streamed
// run and a type that cannot stream (embeddings) do not.
func TestStreamingHint(t *testing.T) {
	t.Parallel()
	url := startMockOf(t, mockserver.Config{})
	const hint = "TTFT and ITL need --streaming"
	for _, tc := range []struct {
		kind   string
		stream bool
		want   int
	}{{"chat", false, 1}, {"completions", false, 1}, {"chat", true, 0}, {"embeddings", false, 0}} {
		c := apptest.RunConfig(url, t.TempDir())
		c.EndpointType, c.Streaming, c.RequestCount = tc.kind, tc.stream, 4
		var out, log strings.Builder
		if _, err := runConfig(context.Background(), c, &out, &log); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(out.String()+log.String(), hint); n != tc.want {
			t.Errorf("%s, streaming %v: the hint %d times, want %d:\n%s", tc.kind, tc.stream, n, tc.want, out.String())
		}
	}
}
