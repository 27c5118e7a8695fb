package profile

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/datasets/tokenizer"
	"github.com/surgebench/surge/examples/mockserver"
)

// TestConversationNumNote: --conversation-num that ends the run before
// --request-count (AIPerf's meaning) is said under the summary; one that
// does not end it first says nothing.
func TestConversationNumNote(t *testing.T) {
	t.Parallel()
	url := startMockOf(t, mockserver.Config{})
	for _, tc := range []struct {
		sessions int
		note     bool
	}{{2, true}, {20, false}} {
		c := apptest.RunConfig(url, t.TempDir())
		c.RequestCount, c.ConversationNum, c.Concurrency = 6, tc.sessions, "2"
		var out strings.Builder
		if _, err := runConfig(context.Background(), c, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		said := strings.Join(strings.Fields(out.String()), " ")
		if got := strings.Contains(said, "--conversation-num 2 ended the run after 2 requests, before --request-count 6"); got != tc.note {
			t.Errorf("--conversation-num %d --request-count 6: note %v, want %v:\n%s", tc.sessions, got, tc.note, out.String())
		}
	}
}

// TestServerTokensOverTheSameRequests: the server's token counters are
// read before the run's first request and after its last, and set beside
// surge's counts of the same requests, the warmup's included: against a
// mock that counts as surge does, the two agree exactly, run after run.
func TestServerTokensOverTheSameRequests(t *testing.T) {
	t.Parallel()
	tok, err := tokenizer.Default()
	if err != nil {
		t.Fatal(err)
	}
	url := startMockOf(t, mockserver.Config{Tokenizer: tok, TTFT: 5 * time.Millisecond, ITL: time.Millisecond})
	for run := range 3 {
		dir := t.TempDir()
		c := apptest.RunConfig(url, dir)
		c.NoServerMetrics, c.Tokenizer, c.WarmupCount, c.RequestCount, c.Concurrency = false, "builtin", 6, 10, "4"
		if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		got, _ := apptest.ReadExport(t, dir)["server_token_counts"].(map[string]any)
		if got == nil || got["prompt_diff_pct"] != 0.0 || got["output_diff_pct"] != 0.0 || got["server_window_includes_warmup"] != true {
			t.Errorf("run %d: server_token_counts %v, want the server's counts equal to surge's over the same 16 requests", run, got)
		}
	}
}
