package profile

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/surgebench/surge/app/internal/apptest"
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
